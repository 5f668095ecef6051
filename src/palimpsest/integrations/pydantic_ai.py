"""palimpsest as a pydantic-ai history processor.

pydantic-ai 2.x (``pydantic-ai-slim>=2``, the current major version) takes history
processors as a capability::

    Agent(model, capabilities=[ProcessHistory(history_processor(128_000))])

and the callable has the shape 1.x's ``Agent(history_processors=[...])`` takes (the extra
requires 2.x; 1.x is not tested). Before each model request the processor converts the
history to our dicts, compacts it with
:class:`~palimpsest.compaction.ContextCompressor` once it reaches the threshold, and hands
back pydantic-ai messages; pydantic-ai keeps the processed list as the run's history, so
later requests build on the compacted one. With a ``store`` each conversation (pydantic-ai's
``conversation_id``) is a session of the store (source ``pydantic-ai``); a compaction starts
a linked continuation, as in our own agent. Needs ``pip install 'palimpsest[pydantic-ai]'``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from ..errors import MissingDependencyError
from ..storage.contract import Store
from ..tokens import TokenCounter
from .keeper import ConversationKeeper, SummarizerSpec, make_compressor

try:
    from pydantic_ai import RunContext
    from pydantic_ai.messages import ModelMessage
except ImportError as exc:  # pragma: no cover - exercised with the module hidden
    raise MissingDependencyError("pydantic-ai-slim", "pydantic-ai") from exc

from .pydantic_ai_messages import dicts_to_messages, messages_to_dicts

__all__ = ["PalimpsestHistory", "history_processor"]

log = logging.getLogger(__name__)

SOURCE = "pydantic-ai"
"""The ``source`` of sessions this processor stores."""


class PalimpsestHistory:
    """The history processor :func:`history_processor` returns (async, takes the run
    context). ``keeper`` holds the compressor and the store binding."""

    def __init__(self, keeper: ConversationKeeper[ModelMessage]) -> None:
        self.keeper = keeper

    async def __call__(
        self, ctx: RunContext[Any], messages: list[ModelMessage]
    ) -> list[ModelMessage]:
        key = getattr(ctx, "conversation_id", None) or ""  # absent before 2.x
        # compaction and the store are blocking work: off the event loop
        view = await asyncio.to_thread(self.keeper.view, messages, key)
        log.debug("model request: %d messages, %d tokens", len(view.messages), view.tokens)
        return view.messages

    def record(self, messages: Sequence[ModelMessage]) -> None:
        """Store what ``messages`` (say ``result.all_messages()``) add: a processor sees
        only what goes to the model, so a run's final reply is stored by its next request
        or by this call. The conversation is the one the messages name."""
        ids = [m.conversation_id for m in messages if m.conversation_id]
        self.keeper.record(messages, ids[-1] if ids else "")


def history_processor(
    context_length: int,
    *,
    summarizer: SummarizerSpec = None,
    store: Store | None = None,
    session_id: str | None = None,
    token_counter: TokenCounter | None = None,
    **compressor_options: Any,
) -> PalimpsestHistory:
    """A pydantic-ai history processor keeping requests inside ``context_length`` tokens.

    ``summarizer`` is a :class:`~palimpsest.Summarizer`, a ``ChatModel`` or a
    :func:`~palimpsest.connect` spec (default: the offline extractive summarizer);
    ``store`` and ``session_id`` keep the conversation in a
    :class:`~palimpsest.SessionStore`. Other keywords go to
    :class:`~palimpsest.ContextCompressor`.
    """
    compressor = make_compressor(context_length, summarizer, token_counter, **compressor_options)
    keeper = ConversationKeeper(
        compressor,
        messages_to_dicts,
        dicts_to_messages,
        store=store,
        session_id=session_id,
        source=SOURCE,
    )
    return PalimpsestHistory(keeper)
