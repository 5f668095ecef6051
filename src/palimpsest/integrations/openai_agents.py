"""palimpsest as an OpenAI Agents SDK session.

:class:`PalimpsestSession` implements the SDK's ``Session`` protocol (``get_items``,
``add_items``, ``pop_item``, ``clear_session``, all async) on our
:class:`~palimpsest.storage.SessionStore`: items are stored as chat messages (source
``openai-agents``), so ``palimpsest sessions search`` finds those conversations, and they
come back as the same items. When the stored conversation reaches the compressor's
threshold, :meth:`PalimpsestSession.get_items` compacts it with
:class:`~palimpsest.compaction.ContextCompressor`: the session ends with ``compression`` and
a linked continuation holds the compacted list, as in our own agent; the ``session_id``
you passed keeps finding its newest continuation. The session also answers the SDK's
compaction hook (``run_compaction``), and :meth:`PalimpsestSession.call_model_input_filter`
(for ``RunConfig(call_model_input_filter=...)``) fits each model call inside the window
even when a single turn's tool outputs would overflow it.

Needs ``pip install 'palimpsest[openai-agents]'``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any, cast

from ..errors import MissingDependencyError, PalimpsestError
from ..storage.contract import Store
from ..storage.factory import open_store
from ..summarizers.base import Summarizer
from ..tokens import TokenCounter
from .keeper import SummarizerSpec, compact, make_compressor, storable

try:
    from agents import SessionSettings
    from agents.items import TResponseInputItem
    from agents.memory.session_settings import resolve_session_limit
    from agents.run_config import CallModelData, ModelInputData
except ImportError as exc:  # pragma: no cover - exercised with the module hidden
    raise MissingDependencyError("openai-agents", "openai-agents") from exc

from .openai_agents_items import dicts_to_items, items_to_dicts

__all__ = ["PalimpsestSession"]

log = logging.getLogger(__name__)

SOURCE = "openai-agents"
"""The ``source`` of sessions this class stores."""


class PalimpsestSession:
    """An Agents SDK session kept in a :class:`~palimpsest.SessionStore`, compacted when it
    reaches the threshold of ``context_length`` (see the module docstring).

    ``store`` defaults to the store at ``$PALIMPSEST_HOME/state.db``; ``summarizer`` is a
    :class:`~palimpsest.Summarizer`, a ``ChatModel`` or a :func:`~palimpsest.connect` spec
    (default: the offline extractive summarizer). Other keywords go to
    :class:`~palimpsest.ContextCompressor`.
    """

    def __init__(
        self,
        session_id: str,
        *,
        context_length: int,
        store: Store | None = None,
        summarizer: SummarizerSpec = None,
        token_counter: TokenCounter | None = None,
        session_settings: SessionSettings | None = None,
        **compressor_options: Any,
    ) -> None:
        self.session_id = session_id
        self.session_settings = session_settings
        self._owns_store = store is None
        self.store = store if store is not None else open_store()
        self.compressor = make_compressor(
            context_length, summarizer, token_counter, **compressor_options
        )
        # Per-call compaction is not stored: it gets a compressor of its own, so its
        # summaries and anti-thrashing counts never mix with the stored conversation's.
        self.call_compressor = make_compressor(
            context_length,
            self.compressor.summarizer,
            self.compressor.token_counter,
            **compressor_options,
        )
        self._lock = asyncio.Lock()

    @property
    def summarizer(self) -> Summarizer:
        return self.compressor.summarizer

    def close(self) -> None:
        """Close the store if this session opened it (a store you passed stays open)."""
        if self._owns_store:
            self.store.close()

    # -- the Session protocol ----------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The conversation's items, oldest first (the latest ``limit`` with a limit),
        compacted first when they reach the threshold."""
        async with self._lock:
            messages = await asyncio.to_thread(self._compacted_messages, False)
        items: list[Any] = dicts_to_items(messages)
        wanted = resolve_session_limit(limit, self.session_settings)
        if wanted is not None:
            items = items[-wanted:] if wanted > 0 else []
        return items

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        if not items:
            return
        async with self._lock:
            await asyncio.to_thread(self._append, items_to_dicts(items))

    async def pop_item(self) -> TResponseInputItem | None:
        async with self._lock:
            popped = await asyncio.to_thread(self._pop)
        return cast("TResponseInputItem | None", popped)

    async def clear_session(self) -> None:
        async with self._lock:
            await asyncio.to_thread(self._clear)

    async def run_compaction(self, args: Mapping[str, Any] | None = None) -> None:
        """The SDK's compaction hook: compact now if the stored items reach the threshold,
        or regardless with ``{"force": True}``."""
        force = bool((args or {}).get("force"))
        async with self._lock:
            await asyncio.to_thread(self._compacted_messages, force)

    # -- per model call ----------------------------------------------------------------

    def call_model_input_filter(self, data: CallModelData[Any]) -> ModelInputData:
        """For ``RunConfig(call_model_input_filter=session.call_model_input_filter)``: the
        model input compacted when it reaches the threshold (the session is not changed;
        a turn whose tool outputs overflow the window still reaches the model inside it)."""
        model_data = data.model_data
        system = [{"role": "system", "content": model_data.instructions or ""}]
        dicts = system + items_to_dicts(model_data.input)
        tokens = self.call_compressor.token_counter.count_messages(dicts)
        if not self.call_compressor.should_compress(tokens):
            return model_data
        result = compact(self.call_compressor, dicts, tokens)
        if result is None:
            return model_data
        instructions = model_data.instructions
        if result and result[0].get("role") == "system":
            instructions = str(result.pop(0).get("content") or "") or instructions
        return ModelInputData(input=list(dicts_to_items(result)), instructions=instructions)  # type: ignore[arg-type]

    # -- the store (blocking; called in a worker thread) -------------------------------

    def _tip(self) -> str:
        """The session holding the conversation now: the newest continuation."""
        if self.store.get_session(self.session_id) is None:
            self.store.create_session(self.session_id, source=SOURCE)
            return self.session_id
        return self.store.get_compression_tip(self.session_id)

    def _compacted_messages(self, force: bool) -> list[dict[str, Any]]:
        tip = self._tip()
        messages = [dict(m) for m in self.store.get_messages(tip)]
        if not messages:
            return messages
        tokens = self.compressor.token_counter.count_messages(messages)
        if not (force or self.compressor.should_compress(tokens)):
            return messages
        result = compact(self.compressor, messages, tokens, force=force)
        if result is None:
            return messages
        try:
            new = self.store.start_continuation(tip, messages=storable(result))
        except (PalimpsestError, ValueError) as exc:
            log.warning("could not start the continuation of %s: %s", tip, exc)
            return result
        log.info(
            "compacted session %s: %d -> %d messages, continued in %s",
            tip,
            len(messages),
            len(result),
            new,
        )
        return result

    def _append(self, dicts: list[dict[str, Any]]) -> None:
        self.store.append_messages(self._tip(), storable(dicts))

    def _last_row(self, tip: str) -> int | None:
        found = self.store.database.query(
            "SELECT id FROM messages WHERE session_id = ? AND active = 1 ORDER BY id DESC LIMIT 1",
            (tip,),
        )
        return int(found[0]["id"]) if found else None

    def _pop(self) -> dict[str, Any] | None:
        """Take the newest item: its message is retired (``active = 0``, kept in the file);
        when the message held several items, one holding the rest replaces it."""
        tip = self._tip()
        messages = self.store.get_messages(tip)
        row = self._last_row(tip)
        if not messages or row is None:
            return None
        items = dicts_to_items([messages[-1]])
        self.store.database.write(
            lambda con: con.execute("UPDATE messages SET active = 0 WHERE id = ?", (row,))
        )
        if len(items) > 1:
            self.store.append_messages(tip, storable(items_to_dicts(items[:-1])))
        return items[-1]

    def _clear(self) -> None:
        tip = self._tip()
        self.store.database.write(
            lambda con: con.execute(
                "UPDATE messages SET active = 0 WHERE session_id = ? AND active = 1", (tip,)
            )
        )
        self.compressor.on_session_reset()
