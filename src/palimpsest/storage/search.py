"""The ``session_search`` tool: on-demand recall across every past session (memory layer L2).

Full-text search is cheap and wide; understanding is expensive and narrow. So the tool
first asks the store's FTS5 indexes for hits (BM25-ranked), groups them by conversation
(lineage root), drops the caller's own lineage (already in its context), cuts a window of
each conversation around the matches, and only then has a helper model summarize each
window *with respect to the query* (spec SS-44..SS-67). The model sees at most
``concurrency`` windows at a time and all summaries share one deadline; a session whose
summary fails or is late still comes back, as its raw match-centred preview. Every string
returned (and every window sent to the model) passes through
:func:`palimpsest.safety.redact.redact`, with the secret values the whole session revealed
(:mod:`.session_secrets`). Results are JSON strings, as a tool returns.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..config import Settings, load_settings
from ..providers.base import ChatModel
from ..safety.redact import redact
from .fts_query import build_search, clean_query, run_search, search_filters
from .ranking import rank_sessions
from .search_plan import MatchMode
from .search_text import (
    format_conversation,
    format_when,
    match_window,
    truncate_around_matches,
)
from .session_secrets import session_secrets

if TYPE_CHECKING:
    from .sessions import SessionStore

__all__ = [
    "DEFAULT_CONCURRENCY",
    "DEFAULT_LIMIT",
    "DEFAULT_TIMEOUT",
    "MAX_CONCURRENCY",
    "MAX_LIMIT",
    "SESSION_SEARCH_SCHEMA",
    "SUMMARY_SYSTEM_PROMPT",
    "SessionSearch",
    "coerce_limit",
]

log = logging.getLogger(__name__)

DEFAULT_LIMIT = 3
MAX_LIMIT = 5
DEFAULT_CONCURRENCY = 3
MAX_CONCURRENCY = 5
DEFAULT_TIMEOUT = 90.0
"""SS-62: one deadline, in seconds, shared by all summaries of a search."""
SEARCH_HITS = 50
"""SS-46: how many message hits are read to find the sessions."""
WINDOW_CHARS = 100_000
"""SS-61/SS-65: characters of conversation a summarizer reads per session."""
PREVIEW_CHARS = 2_000
"""SS-65: characters of the match-centred window returned when there is no summary."""
SUMMARY_MAX_TOKENS = 2_000
SUMMARY_TEMPERATURE = 0.1
SUMMARY_ATTEMPTS = 3
HIDDEN_SOURCES: tuple[str, ...] = ("tool",)
"""SS-57: sessions from these sources are never returned."""
MATCH_MODES: tuple[MatchMode, ...] = ("auto", "any", "all")

SESSION_SEARCH_SCHEMA: dict[str, Any] = {
    "name": "session_search",
    "description": (
        "Search the full history of past conversations (all sessions, all platforms) and "
        "get a focused recap of each matching session. Use it when the user refers to "
        "something discussed before ('like last time', 'the bug we fixed'), or to recall "
        "commands, files, decisions and outcomes from earlier work. Call it with an empty "
        "query to list the most recent sessions."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": (
                    'Keywords to search for. Supports quoted phrases ("exact words"), '
                    "AND / OR / NOT, and prefix terms (deploy*). Empty: list recent sessions."
                ),
                "default": "",
            },
            "role_filter": {
                "type": "string",
                "description": (
                    "Optional comma-separated roles whose messages are searched, "
                    "e.g. 'user,assistant'. Empty searches every role."
                ),
                "default": "",
            },
            "match": {
                "type": "string",
                "enum": list(MATCH_MODES),
                "description": (
                    "auto (default): all keywords for a short keyword query when that "
                    "finds enough, else any of the words, best first; any; all."
                ),
                "default": "auto",
            },
            "limit": {
                "type": "integer",
                "description": "How many sessions to return (default 3, at most 5).",
                "default": DEFAULT_LIMIT,
                "minimum": 1,
                "maximum": MAX_LIMIT,
            },
        },
        "required": [],
    },
}

SUMMARY_SYSTEM_PROMPT = """\
You are reviewing the transcript of a past conversation so that an assistant can recall \
what happened in it. Summarize the conversation with a focus on the search topic given \
by the user. Cover:
1. what the user asked for or wanted;
2. the actions taken and their outcomes;
3. key decisions, solutions or conclusions;
4. specific commands, files, URLs and technical details;
5. anything left unresolved or otherwise notable.
Be thorough but concise. Keep concrete details exactly as they appear (commands, paths, \
error messages, names). Write a factual recap in the past tense. If the transcript has \
little to do with the topic, say so in one sentence."""


def coerce_limit(value: Any) -> int:
    """SS-59: an int in 1..5; anything that is not an integer becomes 3."""
    if isinstance(value, bool):
        return DEFAULT_LIMIT
    try:
        number = int(value)
    except (TypeError, ValueError):
        return DEFAULT_LIMIT
    return min(max(number, 1), MAX_LIMIT)


def _match_mode(value: Any, default: MatchMode = "auto") -> MatchMode:
    """A valid match mode; anything else (a model's typo) becomes ``default``."""
    text = str(value or "").strip().lower()
    for mode in MATCH_MODES:
        if text == mode:
            return mode
    return default


def _roles(role_filter: str | Sequence[str] | None) -> list[str] | None:
    if not role_filter:
        return None
    items = role_filter.split(",") if isinstance(role_filter, str) else list(role_filter)
    roles = [str(r).strip().lower() for r in items if str(r).strip()]
    return roles or None


@dataclass
class _Pick:
    """One session chosen for the answer: its best hit and the text around the matches."""

    session: dict[str, Any]
    root: str
    window: str = ""
    preview: str = ""
    summary: str | None = None
    known: frozenset[str] = frozenset()


class SessionSearch:
    """The ``session_search`` tool over a :class:`~palimpsest.storage.sessions.SessionStore`.

    ``model`` summarizes each matching session; without one, results carry the raw
    preview. ``concurrency`` (1..5) bounds simultaneous model calls; ``timeout`` is the
    deadline shared by all summaries of one search. The other knobs are the cost limits
    of SS-65. Call :meth:`run` (or the instance, with the tool's arguments).
    """

    def __init__(
        self,
        store: SessionStore | None,
        model: ChatModel | None = None,
        *,
        concurrency: int = DEFAULT_CONCURRENCY,
        timeout: float = DEFAULT_TIMEOUT,
        window_chars: int = WINDOW_CHARS,
        preview_chars: int = PREVIEW_CHARS,
        max_tokens: int = SUMMARY_MAX_TOKENS,
        attempts: int = SUMMARY_ATTEMPTS,
        retry_delay: float = 1.0,
        hidden_sources: Sequence[str] = HIDDEN_SOURCES,
        match: MatchMode = "auto",
    ) -> None:
        self.store = store
        self.model = model
        self.concurrency = min(max(int(concurrency), 1), MAX_CONCURRENCY)
        self.timeout = max(0.0, float(timeout))
        self.window_chars = max(1, int(window_chars))
        self.preview_chars = max(1, int(preview_chars))
        self.max_tokens = int(max_tokens)
        self.attempts = max(1, int(attempts))
        self.retry_delay = max(0.0, float(retry_delay))
        self.hidden_sources = tuple(hidden_sources)
        self.match: MatchMode = _match_mode(match)

    @classmethod
    def from_settings(
        cls,
        store: SessionStore | None,
        model: ChatModel | None = None,
        settings: Settings | None = None,
    ) -> SessionSearch:
        """A tool with the limits of ``auxiliary.session_search`` (loaded when not given)."""
        conf = (settings or load_settings()).auxiliary.session_search
        return cls(
            store,
            model,
            concurrency=conf.max_concurrency,
            timeout=conf.timeout,
            window_chars=conf.window_chars,
            preview_chars=conf.preview_chars,
            max_tokens=conf.max_tokens,
            attempts=conf.attempts,
        )

    def __call__(self, **arguments: Any) -> str:
        """Tool-call entry point: ``query``, ``role_filter``, ``limit``, ``match``,
        ``current_session_id``."""
        return self.run(
            str(arguments.get("query") or ""),
            role_filter=arguments.get("role_filter"),
            limit=arguments.get("limit", DEFAULT_LIMIT),
            current_session_id=arguments.get("current_session_id"),
            match=arguments.get("match"),
        )

    def run(
        self,
        query: str = "",
        role_filter: str | Sequence[str] | None = None,
        limit: Any = DEFAULT_LIMIT,
        current_session_id: str | None = None,
        match: Any = None,
    ) -> str:
        """Search and return the JSON payload of SS-66 (errors are payloads too, SS-67)."""
        return json.dumps(
            self.search(query, role_filter, limit, current_session_id, match), ensure_ascii=False
        )

    def search(
        self,
        query: str = "",
        role_filter: str | Sequence[str] | None = None,
        limit: Any = DEFAULT_LIMIT,
        current_session_id: str | None = None,
        match: Any = None,
    ) -> dict[str, Any]:
        """Like :meth:`run`, returning the payload as a dict."""
        store = self.store
        if store is None:
            return {"success": False, "error": "Session database not available."}
        count = coerce_limit(limit)
        text = clean_query(query or "")
        if not text:
            try:
                return self._recent(store, count, current_session_id)
            except Exception as exc:
                log.exception("listing recent sessions failed")
                return {"success": False, "error": redact(f"Failed to list recent sessions: {exc}")}
        try:
            mode = _match_mode(match, self.match)
            return self._search(store, text, _roles(role_filter), count, current_session_id, mode)
        except Exception as exc:
            log.exception("session search failed")
            return {"success": False, "error": redact(f"Search failed: {exc}")}

    # -- recent mode ---------------------------------------------------------------------

    @staticmethod
    def _own_lineage(store: SessionStore, current: str | None) -> tuple[set[str], str | None]:
        if not current:
            return set(), None
        return {current, *store.lineage(current)}, store.lineage_root(current)

    def _recent(self, store: SessionStore, limit: int, current: str | None) -> dict[str, Any]:
        """SS-45: the newest conversations, from the database alone (no model call)."""
        own, own_root = self._own_lineage(store, current)
        results = []
        for row in store.list_sessions(limit=limit + 5 + len(own)):
            root = row.get("_lineage_root_id") or row["id"]
            if row.get("source") in self.hidden_sources:
                continue
            if row["id"] in own or root in own or root == own_root:
                continue
            with store.connection_for_reads() as con:
                known = session_secrets(con, [row["id"]])[row["id"]]
            results.append(
                {
                    "session_id": row["id"],
                    "lineage_root_id": root,
                    "title": redact(row["title"], known) if row.get("title") else None,
                    "preview": redact(row.get("preview") or "", known),
                    "when": format_when(row.get("last_active") or row.get("started_at")),
                    "source": row.get("source"),
                    "message_count": row.get("message_count"),
                }
            )
            if len(results) >= limit:
                break
        payload: dict[str, Any] = {
            "success": True,
            "mode": "recent",
            "results": results,
            "count": len(results),
        }
        if not results:
            payload["message"] = "No recent sessions found."
        return payload

    # -- keyword mode --------------------------------------------------------------------

    def _hits(
        self,
        store: SessionStore,
        query: str,
        roles: list[str] | None,
        own: set[str],
        match: MatchMode,
    ) -> list[dict[str, Any]]:
        """SS-46: up to 50 ranked message hits (and session-metadata hits) in ``match`` mode."""
        plan = build_search(
            query,
            role_filter=roles,
            exclude_sources=self.hidden_sources,
            limit=SEARCH_HITS,
            exclude_session_ids=sorted(own),
            has_trigram=store.has_trigram,
            has_fts=store.has_fts5,
            match=match,
            snippets=False,  # the tool builds its windows from redacted text
        )
        vectors = getattr(store, "vectors", None)
        if vectors is not None:
            vectors.catch_up()
        with store.connection_for_reads() as con:
            hits = run_search(con, plan)
            if vectors is None:
                return hits
            # by meaning too (the [vectors] extra or the store's own embedder): each
            # conversation is then ranked by its best fused turn (storage.fusion)
            where, params = search_filters(roles, None, self.hidden_sources, sorted(own))
            fused: list[dict[str, Any]] = vectors.fuse(
                con, query, hits, filters=where, params=params
            )
            return fused

    def _search(
        self,
        store: SessionStore,
        query: str,
        roles: list[str] | None,
        limit: int,
        current: str | None,
        match: MatchMode = "auto",
    ) -> dict[str, Any]:
        own, own_root = self._own_lineage(store, current)
        hits = self._hits(store, query, roles, own, match)
        picks: dict[str, _Pick] = {}
        roots: dict[str, str] = {}

        def root_of(sid: str) -> str:
            if sid not in roots:
                roots[sid] = store.lineage_root(sid)
            return roots[sid]

        for root, sid in rank_sessions(hits, root_of, skip_root=own_root):
            session = store.get_session(sid)
            if session is None:
                continue
            picks[root] = _Pick(session=session, root=root)
            if len(picks) >= limit:
                break
        searched = len({str(h["session_id"]) for h in hits})
        if not picks:
            return {
                "success": True,
                "query": query,
                "results": [],
                "count": 0,
                "sessions_searched": searched,
                "message": "No matching sessions found.",
            }
        chosen = list(picks.values())
        with store.connection_for_reads() as con:
            secrets = session_secrets(con, [pick.session["id"] for pick in chosen])
        for pick in chosen:
            # every value the session revealed goes from all of it (storage.session_secrets)
            pick.known = secrets[pick.session["id"]]
            messages = store.get_messages(pick.session["id"])
            text = redact(format_conversation(messages, pick.known), pick.known)
            pick.window = truncate_around_matches(text, query, self.window_chars)
            start, end = match_window(text, query, self.preview_chars)
            if start > 0:  # begin at a word, not mid-word (the match is 25% further in)
                space = text.find(" ", start, start + 40)
                start = space + 1 if space != -1 else start
            pick.preview = text[start:end]
        self._summarize(query, chosen)
        results = [self._result(pick) for pick in chosen]
        return {
            "success": True,
            "query": query,
            "results": results,
            "count": len(results),
            "sessions_searched": searched,
        }

    def _result(self, pick: _Pick) -> dict[str, Any]:
        session = pick.session
        result: dict[str, Any] = {
            "session_id": session["id"],
            "lineage_root_id": pick.root,
            "when": format_when(session.get("started_at")),
            "source": session.get("source"),
            "model": session.get("model"),
            "title": redact(session["title"], pick.known) if session.get("title") else None,
            "summary": pick.summary,
        }
        if pick.summary is None:
            result["preview"] = pick.preview  # SS-64: the raw window stands in
        return result

    # -- summaries -----------------------------------------------------------------------

    def _summarize(self, query: str, picks: list[_Pick]) -> None:
        """SS-62: summarize every window, ``concurrency`` at a time, before one deadline."""
        model = self.model
        if model is None or not picks:
            return
        deadline = time.monotonic() + self.timeout
        pool = ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="session-search")
        try:
            futures = [pool.submit(self._summarize_one, model, query, p, deadline) for p in picks]
            done, _late = wait(futures, timeout=max(0.0, deadline - time.monotonic()))
            for pick, future in zip(picks, futures, strict=True):
                if future in done and future.exception() is None:
                    pick.summary = future.result()
                else:
                    pick.summary = None
        finally:
            # Late calls are abandoned, not awaited: the search answers at the deadline.
            pool.shutdown(wait=False, cancel_futures=True)

    def _messages(self, query: str, pick: _Pick) -> list[dict[str, Any]]:
        session = pick.session
        user = (
            f"Search topic: {query}\n"
            f"Session source: {session.get('source') or 'unknown'}\n"
            f"Session date: {format_when(session.get('started_at'))}\n\n"
            f"Transcript:\n{pick.window}\n\n"
            f"Summarize this conversation with a focus on: {query}"
        )
        return [
            {"role": "system", "content": SUMMARY_SYSTEM_PROMPT},
            {"role": "user", "content": user},
        ]

    def _summarize_one(
        self, model: ChatModel, query: str, pick: _Pick, deadline: float
    ) -> str | None:
        """SS-63: up to ``attempts`` calls, sleeping 1 s, 2 s, ... between them."""
        messages = self._messages(query, pick)
        for attempt in range(self.attempts):
            if time.monotonic() >= deadline:
                return None
            try:
                completion = model.complete(
                    messages, max_tokens=self.max_tokens, temperature=SUMMARY_TEMPERATURE
                )
                text = (completion.content or "").strip()
                if text:
                    return redact(text, pick.known)
                log.warning("session_search summary for %s was empty", pick.session["id"])
            except Exception as exc:
                log.warning("session_search summary for %s failed: %s", pick.session["id"], exc)
            if attempt + 1 < self.attempts:
                pause = self.retry_delay * (attempt + 1)
                time.sleep(max(0.0, min(pause, deadline - time.monotonic())))
        return None
