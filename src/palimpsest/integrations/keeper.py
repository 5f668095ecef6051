"""One conversation seen through a framework's hook: what the model sees, and what is kept.

Every framework adapter does the same three things before a model call, and none of them
may do it differently: convert the framework's history to our dicts, compact it with the
one :class:`~palimpsest.compaction.ContextCompressor` when it reaches the threshold, and
keep the conversation in a :class:`~palimpsest.storage.SessionStore` when one is given
(a compaction ends the session and starts a linked continuation holding the compacted
list, as our own agent does). :class:`ConversationKeeper` is that shared part; an adapter
gives it two converters and calls :meth:`ConversationKeeper.view` from its hook.

Frameworks differ in what they do with the list a hook returns. LangChain's middleware
changes only the request: the graph state keeps the full history, so the next call brings
the whole history again. pydantic-ai's ``ProcessHistory`` writes the processed list back
into the run: the next call brings our compacted list plus what came after it. The keeper
recognises both by prefix digests: a compaction remembers the digest of the history it
stood for and of the list it handed out, and either one found at the start of a later
history means "this is the compacted part".
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from ..compaction.compressor import ContextCompressor
from ..errors import PalimpsestError
from ..messages.markers import SUMMARY_FLAG, SUMMARY_USER_TURN_FLAG
from ..providers.base import ChatModel
from ..providers.connect import connect
from ..storage.contract import Store
from ..storage.sessions import new_session_id
from ..summarizers.base import Summarizer
from ..summarizers.llm import LLMSummarizer
from ..tokens import ExactCounter, TokenCounter

__all__ = [
    "ConversationKeeper",
    "KeeperView",
    "SummarizerSpec",
    "compact",
    "make_compressor",
    "make_summarizer",
    "storable",
    "visible",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

SummarizerSpec = Summarizer | ChatModel | str | None
"""What an adapter accepts as ``summarizer``: a :class:`Summarizer`, a ``ChatModel`` (wrapped
in :class:`LLMSummarizer`), a :func:`~palimpsest.connect` model spec such as
``"openai:gpt-4o-mini"``, or ``None`` for the offline extractive summarizer."""

_KEPT_PRIVATE = "_compressed_summary"


def make_summarizer(spec: SummarizerSpec) -> Summarizer | None:
    """The summarizer ``spec`` names (``None``: the compressor's extractive default)."""
    if spec is None:
        return None
    if isinstance(spec, str):
        return LLMSummarizer(connect(spec))
    if isinstance(spec, ChatModel):
        return LLMSummarizer(spec)
    return spec


def make_compressor(
    context_length: int,
    summarizer: SummarizerSpec = None,
    token_counter: TokenCounter | None = None,
    **compressor_options: Any,
) -> ContextCompressor:
    """A compressor measuring with exact ``o200k_base`` counts unless told otherwise, so
    "under the window" means under it by the exact count."""
    return ContextCompressor(
        context_length,
        make_summarizer(summarizer),
        token_counter=token_counter or ExactCounter("o200k_base"),
        **compressor_options,
    )


def visible(message: Mapping[str, Any]) -> dict[str, Any]:
    """The message without private keys (``_...``): what a provider would be sent."""
    return {k: v for k, v in message.items() if not str(k).startswith("_")}


def _json_safe(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def _json_part(value: Any) -> Any:
    """``value`` without what JSON cannot hold: a mapping keeps its encodable entries."""
    if isinstance(value, Mapping):
        return {k: v for k, v in value.items() if _json_safe(v)}
    return value if _json_safe(value) else None


def storable(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Copies the store can encode: what a private key holds that is not JSON (a live
    framework object) is left out; everything a provider reads is kept."""
    out = []
    for message in messages:
        copy = dict(message)
        for key in [k for k in copy if str(k).startswith("_") and k != _KEPT_PRIVATE]:
            kept = _json_part(copy[key])
            if kept is None:
                del copy[key]
            else:
                copy[key] = kept
        out.append(copy)
    return out


def _unmerged(message: Mapping[str, Any], newest: Mapping[str, Any]) -> Any:
    """The summary text ``message`` holds in front of ``newest``'s content (``None`` when
    ``message`` is not the summary merged into ``newest``)."""
    merged, original = message.get("content"), newest.get("content")
    if isinstance(merged, list) and isinstance(original, list):
        if merged[1:] == original and merged and isinstance(merged[0], Mapping):
            return merged[0].get("text")
        return None
    if (
        isinstance(merged, str)
        and isinstance(original, str)
        and original
        and merged.endswith("\n\n" + original)
    ):
        return merged[: -len(original) - 2]
    return None


def _newest_user_verbatim(
    result: list[dict[str, Any]], source: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``result`` with the newest user message as it was written.

    When the head ends where the tail's first message is a user message, the compressor
    merges the summary into that message (strict-alternation providers refuse two user
    messages in a row). If that message is the newest request, the model would read the
    request behind a summary; the frameworks here all accept consecutive user messages
    (and join them for providers that need it), so the two are split again."""
    users = [m for m in source if m.get("role") == "user"]
    if not users:
        return result
    newest = users[-1]
    for index, message in enumerate(result):
        if message.get("role") != "user" or not message.get(SUMMARY_FLAG):
            continue
        summary = _unmerged(message, newest)
        if summary is None:
            continue
        flags = {k: message[k] for k in (SUMMARY_FLAG, SUMMARY_USER_TURN_FLAG) if k in message}
        block = {"role": "user", "content": summary, **flags}
        return [*result[:index], block, dict(newest), *result[index + 1 :]]
    return result


def compact(
    compressor: ContextCompressor,
    messages: list[dict[str, Any]],
    tokens: int,
    *,
    force: bool = False,
) -> list[dict[str, Any]] | None:
    """``messages`` compacted, or ``None`` when the compressor left them as they were.

    Unchanged trailing messages are the originals (with their private keys, so they map
    back to the framework's own objects) and the newest user message stays verbatim."""
    result = compressor.compress(messages, tokens, force=force)
    if not compressor.last_stats.compressed:
        return None
    result = _newest_user_verbatim(result, messages)
    out = list(result)
    for back in range(1, min(len(result), len(messages)) + 1):
        if visible(result[-back]) != visible(messages[-back]):
            break
        out[-back] = messages[-back]
    return out


def _digest_chain(converted: Sequence[Sequence[Mapping[str, Any]]]) -> list[bytes]:
    """``chain[j]`` is a digest of the first ``j`` dicts of the history, by what they say to
    a provider (ids and metadata a framework fills in later do not count).

    The chain runs over dicts, not framework messages, because a framework may regroup the
    list a hook handed out: pydantic-ai merges consecutive requests into one message, which
    changes the message count but not the dicts they convert to.
    """
    chain = [b""]
    for dicts in converted:
        for d in dicts:
            step = hashlib.blake2b(chain[-1], digest_size=16)
            step.update(
                json.dumps(visible(d), sort_keys=True, default=repr).encode("utf-8", "replace")
            )
            chain.append(step.digest())
    return chain


def _boundaries(converted: Sequence[Sequence[Any]]) -> dict[int, int]:
    """Dict count at the end of each leading run of framework messages -> that run's length."""
    out = {0: 0}
    total = 0
    for index, dicts in enumerate(converted, start=1):
        total += len(dicts)
        out.setdefault(total, index)
    return out


def _flat(converted: Sequence[Sequence[dict[str, Any]]]) -> list[dict[str, Any]]:
    return [d for dicts in converted for d in dicts]


def _kept_tail(result: Sequence[Mapping[str, Any]], converted: Sequence[Sequence[Any]]) -> int:
    """How many trailing framework messages ``result`` ends with unchanged (whole messages:
    one framework message may be several dicts)."""
    flat = _flat(converted)
    same = 0
    while same < min(len(result), len(flat)) and visible(result[-1 - same]) == visible(
        flat[-1 - same]
    ):
        same += 1
    kept = covered = 0
    for dicts in reversed(converted):
        if covered + len(dicts) > same:
            break
        covered += len(dicts)
        kept += 1
    return kept


@dataclass
class _Thread(Generic[T]):
    """What the keeper knows about one conversation."""

    session_id: str | None
    compacted: list[dict[str, Any]] = field(default_factory=list)
    """Our dicts standing for the start of the history (empty before any compaction)."""
    head: list[T] = field(default_factory=list)
    """``compacted`` as framework messages, handed to the model in its place."""
    aliases: dict[int, bytes] = field(default_factory=lambda: {0: b""})
    """Prefix length (dicts) -> digest of a history start ``compacted`` stands for."""
    stored: int = 0
    """Framework messages after that start already in the store."""
    last: tuple[int, bytes] | None = None
    """Length (dicts) and digest of the history last seen since the last compaction: a
    later history must extend it to be the same conversation."""


@dataclass(frozen=True)
class KeeperView(Generic[T]):
    """What one model call should see."""

    messages: list[T]
    changed: bool
    """``messages`` differ from the history the hook was given."""
    compacted: bool
    """A compaction ran in this call."""
    tokens: int
    """Exact size of ``messages`` (our dicts, by the compressor's counter)."""


class ConversationKeeper(Generic[T]):
    """Compaction and persistence for framework hooks (see the module docstring).

    ``to_dicts`` and ``from_dicts`` convert the framework's messages to our dicts and back;
    ``key`` (a LangGraph thread id, a pydantic-ai conversation id) separates conversations
    that share one hook. With a ``store``, every message is appended as it is first seen,
    under ``session_id`` for the first conversation (a new id otherwise) and ``source``.
    """

    def __init__(
        self,
        compressor: ContextCompressor,
        to_dicts: Callable[[Sequence[T]], list[dict[str, Any]]],
        from_dicts: Callable[[Sequence[Mapping[str, Any]]], list[T]],
        *,
        store: Store | None = None,
        session_id: str | None = None,
        source: str = "integration",
    ) -> None:
        self.compressor = compressor
        self.to_dicts = to_dicts
        self.from_dicts = from_dicts
        self.store = store
        self.source = source
        self._first_session_id = session_id
        self._threads: dict[str, _Thread[T]] = {}
        self._last_key = ""
        self._lock = threading.Lock()

    def session_id(self, key: str | None = None) -> str | None:
        """The store session now holding conversation ``key`` (by default the one seen
        last); ``None`` without a store or before the first call."""
        thread = self._threads.get(self._last_key if key is None else key)
        return thread.session_id if thread is not None else None

    # -- the hook's calls ------------------------------------------------------------

    def view(self, history: Sequence[T], key: str = "") -> KeeperView[T]:
        """What the model should see for ``history``: the history itself while it is under
        the compressor's threshold, else a compacted list ending in its newest messages."""
        with self._lock:
            return self._view(list(history), key)

    def record(self, history: Sequence[T], key: str = "") -> None:
        """Store what ``history`` adds (call it with the model's reply appended)."""
        with self._lock:
            converted = [self.to_dicts([m]) for m in history]
            thread, base = self._thread(key, converted)
            self._persist(thread, converted, base)

    # -- inside ----------------------------------------------------------------------

    def _view(self, history: list[T], key: str) -> KeeperView[T]:
        converted = [self.to_dicts([m]) for m in history]
        thread, base = self._thread(key, converted)
        self._persist(thread, converted, base)
        candidate = thread.compacted + _flat(converted[base:])
        counter = self.compressor.token_counter
        tokens = counter.count_messages(candidate)
        if self.compressor.should_compress(tokens):
            result = compact(self.compressor, candidate, tokens)
            if result is not None:
                return self._adopt(thread, history, converted, result, key)
            log.info("compaction left the history as it was: %s", self.compressor.last_stats.reason)
        head = history[:base]
        if not thread.compacted or (
            len(head) == len(thread.head)
            and all(a is b for a, b in zip(head, thread.head, strict=True))
        ):
            # nothing compacted yet, or the framework already holds our compacted list
            return KeeperView(history, False, False, tokens)
        return KeeperView(thread.head + history[base:], True, False, tokens)

    def _adopt(
        self,
        thread: _Thread[T],
        history: list[T],
        converted: list[list[dict[str, Any]]],
        result: list[dict[str, Any]],
        key: str,
    ) -> KeeperView[T]:
        """A compaction ran: hand out ``result`` (the unchanged tail as the framework's own
        objects), remember both prefixes it stands for, and split the stored session."""
        kept = _kept_tail(result, converted)
        kept_dicts = sum(len(dicts) for dicts in converted[len(converted) - kept :])
        head = self.from_dicts(result[: len(result) - kept_dicts])
        out = head + history[len(history) - kept :]
        stats = self.compressor.last_stats
        if not stats.fits:
            log.warning("the compacted history does not fit: %s", stats.not_fit_reason)
        thread.compacted = result
        thread.head = out
        handed = [self.to_dicts([m]) for m in out]
        thread.aliases = {
            len(_flat(converted)): _digest_chain(converted)[-1],
            len(_flat(handed)): _digest_chain(handed)[-1],
        }
        thread.stored = 0
        thread.last = None
        self._split(thread, result)
        tokens = self.compressor.token_counter.count_messages(result)
        log.info(
            "compacted %d messages to %d (%d tokens) for conversation %r",
            sum(len(dicts) for dicts in converted),
            len(result),
            tokens,
            key,
        )
        return KeeperView(out, True, True, tokens)

    def _thread(self, key: str, converted: list[list[dict[str, Any]]]) -> tuple[_Thread[T], int]:
        """The conversation ``converted`` continues and the length of its compacted start."""
        self._last_key = key
        thread = self._threads.get(key)
        chain = _digest_chain(converted)
        if thread is not None:
            base = self._base(thread, chain, _boundaries(converted))
            if base is not None:
                thread.last = (len(chain) - 1, chain[-1])
                return thread, base
            log.info("conversation %r no longer starts as it did: starting afresh", key)
        thread = _Thread(self._new_session(key))
        thread.last = (len(chain) - 1, chain[-1])
        self._threads[key] = thread
        return thread, 0

    @staticmethod
    def _base(thread: _Thread[T], chain: list[bytes], boundaries: dict[int, int]) -> int | None:
        """How many leading framework messages of the history whose dicts digest to
        ``chain`` the thread's compacted list stands for (``None``: not this thread)."""
        size = len(chain) - 1
        last = thread.last
        if last is not None and (last[0] > size or chain[last[0]] != last[1]):
            return None
        for length in sorted(thread.aliases, reverse=True):
            if length in boundaries and chain[length] == thread.aliases[length]:
                return boundaries[length]
        return None

    def _new_session(self, key: str) -> str | None:
        if self.store is None:
            return None
        sid = self._first_session_id if not self._threads else None
        sid = sid or new_session_id()
        self._first_session_id = None
        try:
            if self.store.get_session(sid) is None:
                self.store.create_session(sid, source=self.source, title=None)
        except PalimpsestError as exc:
            log.warning("could not create session %s for %r: %s", sid, key, exc)
        return sid

    def _persist(
        self, thread: _Thread[T], converted: list[list[dict[str, Any]]], base: int
    ) -> None:
        if self.store is None or thread.session_id is None:
            return
        if not thread.compacted and thread.stored == 0 and base == 0:
            thread.stored = self._already_stored(thread.session_id, converted)
        pending = converted[base + thread.stored :]
        if not pending:
            return
        try:
            self.store.append_messages(thread.session_id, storable(_flat(pending)))
        except PalimpsestError as exc:
            log.warning("could not store %d message(s): %s", len(pending), exc)
            return
        thread.stored += len(pending)

    def _already_stored(self, session_id: str, converted: list[list[dict[str, Any]]]) -> int:
        """How many leading messages a resumed session holds already (its message count,
        in framework messages), so a run that replays its history does not store it twice."""
        try:
            count = self.store.message_count(session_id) if self.store is not None else 0
        except PalimpsestError:
            return 0
        covered = 0
        for index, dicts in enumerate(converted):
            if covered == count:
                return index
            covered += len(dicts)
        return len(converted) if covered == count else 0

    def _split(self, thread: _Thread[T], result: list[dict[str, Any]]) -> None:
        """End the stored session with ``compression``; the continuation holds ``result``."""
        if self.store is None or thread.session_id is None:
            return
        try:
            thread.session_id = self.store.start_continuation(
                thread.session_id, messages=storable(result), model=self.compressor.model or None
            )
        except (PalimpsestError, ValueError) as exc:
            log.warning("could not start the continuation of %s: %s", thread.session_id, exc)
