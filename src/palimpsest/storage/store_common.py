"""The half of a session store that is the same on every backend: one copy for both.

:class:`~.sessions.SessionStore` (SQLite) and :class:`~.pg_store.PostgresSessionStore`
differ in how they write (one retrying write path against row locks and one
transaction per continuation), where their vectors live and how a word search runs. What
they do *on top of* that is the same, and lives here once, in :class:`StoreCommon`:
methods written only against the contract's other methods, the SQL gateway's SQLite
dialect (``?`` parameters, :class:`~.contract.SqlGateway`; PostgreSQL's gateway
translates it) and ``connection_for_reads()`` (a connection the shared modules
:mod:`.lineage`, :mod:`.session_admin`, :mod:`.session_secrets` and :mod:`.search_text`
read through on either backend).

A backend provides the rest of the contract (``create_session``, ``append_messages``,
``get_session``, ``connection_for_reads``, ``close``, ...) and ``_update(session_id, assignments, params)`` (assignments
written with ``?``) and ``_search(query, filters)``: the ranked hits without snippets
for one search (:class:`SearchFilters`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, cast

from ..errors import AmbiguousSessionIdError, SessionNotFoundError
from ..messages import Message
from . import lineage as _lineage
from .accounting import TokenAccounting
from .codec import message_of
from .writes import seed_key

if TYPE_CHECKING:
    from .contract import Store

__all__ = ["SearchFilters", "StoreCommon"]


@dataclass(frozen=True)
class SearchFilters:
    """Everything a search takes besides its query (see ``Store.search_hits``)."""

    role_filter: str | Iterable[str] | None = None
    source: str | Iterable[str] | None = None
    limit: int = 20
    offset: int = 0
    exclude_session_ids: tuple[str, ...] = ()
    exclude_sources: str | Iterable[str] | None = None
    match: str = "auto"

    def conditions(self) -> tuple[list[str], list[Any]]:
        """The SQL conditions (over ``m`` = messages, ``s`` = sessions, written with
        ``?``) and parameters every route of either backend applies, the vector search
        included (:func:`.fts_query.search_filters`)."""
        from .fts_query import search_filters

        return search_filters(
            self.role_filter, self.source, self.exclude_sources, self.exclude_session_ids
        )


class StoreCommon(TokenAccounting):
    """Backend-neutral store methods (see the module docstring)."""

    # -- what the backend provides -------------------------------------------------------

    def connection_for_reads(self) -> AbstractContextManager[Any]:
        raise NotImplementedError

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def _update(self, session_id: str, assignments: str, params: Sequence[Any] = ()) -> None:
        raise NotImplementedError

    def _search(self, query: str, filters: SearchFilters) -> list[dict[str, Any]]:
        raise NotImplementedError

    # -- opening, closing ----------------------------------------------------------------

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- sessions ------------------------------------------------------------------------

    def ensure_session(self, session_id: str, source: str = "unknown", **fields: Any) -> str:
        """Same as ``create_session``; reads as "make sure it exists"."""
        return cast("Store", self).create_session(session_id, source, **fields)

    def require_session(self, session_id: str) -> dict[str, Any]:
        """The session row; :class:`SessionNotFoundError` when there is none."""
        row = self.get_session(session_id)
        if row is None:
            raise SessionNotFoundError(session_id)
        return row

    def resolve_session_id(self, id_or_prefix: str) -> str | None:
        """The exact id, else the one id starting with ``id_or_prefix``, else the one whose
        short handle (the id's last ``_`` part) starts with it, else ``None``."""
        from .session_admin import resolve_prefix

        with self.connection_for_reads() as con:
            try:
                return resolve_prefix(con, id_or_prefix)
            except (SessionNotFoundError, AmbiguousSessionIdError):
                return None

    def reopen_session(self, session_id: str) -> None:
        """Clear ``ended_at`` and ``end_reason``."""
        self._update(session_id, "ended_at = NULL, end_reason = NULL")

    def update_system_prompt(self, session_id: str, prompt: str | None) -> None:
        self._update(session_id, "system_prompt = ?", (prompt,))

    def session_count(self, source: str | None = None) -> int:
        if source is None:
            return int(self._db.scalar("SELECT count(*) FROM sessions"))
        return int(self._db.scalar("SELECT count(*) FROM sessions WHERE source = ?", (source,)))

    def message_count(self, session_id: str | None = None) -> int:
        if session_id is None:
            return int(self._db.scalar("SELECT count(*) FROM messages"))
        return int(
            self._db.scalar("SELECT count(*) FROM messages WHERE session_id = ?", (session_id,))
        )

    # -- messages ------------------------------------------------------------------------

    def append_message(
        self,
        session_id: str,
        role: str,
        content: Any = None,
        tool_name: str | None = None,
        tool_calls: Any = None,
        tool_call_id: str | None = None,
        token_count: int | None = None,
        finish_reason: str | None = None,
        reasoning: str | None = None,
        reasoning_content: str | None = None,
        reasoning_details: Any = None,
    ) -> int:
        """Append one message (SS-21) and return its id."""
        message = message_of(
            role,
            content,
            name=tool_name,
            tool_calls=tool_calls,
            tool_call_id=tool_call_id,
            finish_reason=finish_reason,
            reasoning=reasoning,
            reasoning_content=reasoning_content,
            reasoning_details=reasoning_details,
        )
        return cast("Store", self).append_messages(
            session_id, [message], token_counts=[token_count]
        )[0]

    # -- lineage -------------------------------------------------------------------------

    def get_compression_tip(self, session_id: str) -> str:
        """The latest compression continuation of ``session_id`` (itself if none)."""
        with self.connection_for_reads() as con:
            return _lineage.compression_tip(con, session_id)

    def resume_target(self, session_id: str) -> str:
        """The session to reopen on resume: the tip, or its first descendant with messages."""
        with self.connection_for_reads() as con:
            return _lineage.resume_target(con, session_id)

    def compression_chain(self, session_id: str) -> list[str]:
        """The ids of ``session_id``'s compression chain, oldest first."""
        with self.connection_for_reads() as con:
            return _lineage.compression_chain(con, session_id)

    def lineage(self, session_id: str) -> list[str]:
        """Ancestors and descendants of ``session_id`` through any parent link, root first."""
        with self.connection_for_reads() as con:
            return _lineage.lineage(con, session_id)

    def lineage_root(self, session_id: str) -> str:
        with self.connection_for_reads() as con:
            return _lineage.lineage_root(con, session_id)

    def seed_message_count(self, session_id: str) -> int:
        """How many messages a continuation was created with (the compacted copy)."""
        value = self._db.scalar(
            "SELECT value FROM state_meta WHERE key = ?", (seed_key(session_id),)
        )
        return int(value or 0)

    # -- search --------------------------------------------------------------------------

    def search_hits(
        self,
        query: str,
        role_filter: str | Iterable[str] | None = None,
        source: str | Iterable[str] | None = None,
        limit: int = 20,
        offset: int = 0,
        exclude_session_ids: Iterable[str] = (),
        exclude_sources: str | Iterable[str] | None = None,
        match: str = "auto",
    ) -> list[dict[str, Any]]:
        """Ranked hits for ``query``, best first, without snippets (``snippet`` is ``''``).

        Each hit has ``rank`` (BM25, lower is better, including ``SESSION_WEIGHT *
        session_rank``) and ``session_rank`` (the session metadata's match, 0.0 when none):
        what :func:`.ranking.rank_sessions` and the ``session_search`` tool read. With an
        embedder the word and meaning scores are fused (:mod:`.fusion`) and ``similarity``
        is set on the hits the vectors found.
        """
        filters = SearchFilters(
            role_filter=role_filter,
            source=source,
            limit=limit,
            offset=offset,
            exclude_session_ids=tuple(exclude_session_ids),
            exclude_sources=exclude_sources,
            match=match,
        )
        return self._search(query, filters)

    def search_messages(
        self,
        query: str,
        role_filter: str | Iterable[str] | None = None,
        source: str | Iterable[str] | None = None,
        limit: int = 20,
        offset: int = 0,
        exclude_session_ids: Iterable[str] = (),
        exclude_sources: str | Iterable[str] | None = None,
        match: str = "auto",
    ) -> list[dict[str, Any]]:
        """Full-text hits for ``query``, best first, each with a snippet (SS-47).

        ``match``: ``auto`` (default: every term for a short keyword query when that finds
        enough rows, else BM25 over any term), ``all`` or ``any``; see docs/search.md.
        Each ``snippet`` is made from the stored text redacted first, then cut and marked
        ``>>>match<<<`` (never SQLite's own ``snippet()``, which marks raw text).
        """
        from .search_text import hit_snippets

        hits = self.search_hits(
            query, role_filter, source, limit, offset, exclude_session_ids, exclude_sources, match
        )
        with self.connection_for_reads() as con:
            for hit, snippet in zip(hits, hit_snippets(con, hits, query), strict=True):
                hit["snippet"] = snippet.marked()
        return hits

    def session_secrets(self, session_ids: Iterable[str]) -> dict[str, frozenset[str]]:
        """``session id -> the secret values its messages revealed`` (see
        :mod:`.session_secrets`), for readers that redact stored text."""
        from .session_secrets import session_secrets

        with self.connection_for_reads() as con:
            return session_secrets(con, session_ids)

    def keep_secrets(self, budget_seconds: float | None = None) -> bool:
        """Bring the kept session secrets up to the newest message (what the background
        keeper does in steps, :mod:`.session_secrets`); False when ``budget_seconds``
        passed first. A read-only store has nothing to keep."""
        from .secrets_keeper import keep_all

        store = cast("Store", self)
        if store.read_only:
            return True
        return keep_all(store.database, budget_seconds)

    # -- transcripts ---------------------------------------------------------------------

    def export_session(self, session_id: str, *, chain: bool = False) -> list[Message]:
        """The session as OpenAI-format messages; see :func:`.transfer.export_messages`."""
        from .transfer import export_messages

        return export_messages(cast("Store", self), session_id, chain=chain)

    def import_transcript(
        self,
        path: str | Path,
        format: str = "auto",
        source: str = "import",
        title: str | None = None,
        again: bool = False,
        lenient: bool = False,
    ) -> str:
        """Store a transcript file as a new session; see :func:`.transfer.import_file`."""
        from .transfer import import_file

        return import_file(
            cast("Store", self),
            path,
            format=format,
            source=source,
            title=title,
            again=again,
            lenient=lenient,
        )
