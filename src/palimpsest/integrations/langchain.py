"""palimpsest for LangChain v1 agents and LangGraph's prebuilt ReAct agent.

:class:`PalimpsestMiddleware` goes into ``create_agent(..., middleware=[...])``. It wraps
every model call (``wrap_model_call`` and ``awrap_model_call``) and changes only what the
model is sent: the graph state keeps the whole conversation, the model sees it compacted
by :class:`~palimpsest.compaction.ContextCompressor` once it reaches the threshold, with
the newest messages as they are. :func:`pre_model_hook` does the same for
``langgraph.prebuilt.create_react_agent(..., pre_model_hook=...)``, answering with
``{"llm_input_messages": ...}`` so the graph state is left alone there too.

With a ``store``, each LangGraph thread becomes a session of the store (source
``langchain``); a compaction starts a linked continuation, as in our own agent. Needs
``pip install 'palimpsest[langchain]'``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast

from ..errors import MissingDependencyError
from ..storage.contract import Store
from ..tokens import TokenCounter
from .keeper import ConversationKeeper, KeeperView, SummarizerSpec, make_compressor

try:
    from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
    from langchain_core.messages import AnyMessage, BaseMessage, SystemMessage
    from langgraph.config import get_config
except ImportError as exc:  # pragma: no cover - exercised with the module hidden
    raise MissingDependencyError("langchain", "langchain") from exc

from .langchain_messages import dicts_to_messages, messages_to_dicts

__all__ = ["PalimpsestMiddleware", "pre_model_hook"]

log = logging.getLogger(__name__)

SOURCE = "langchain"
"""The ``source`` of sessions these hooks store."""


def _thread_key() -> str:
    """The LangGraph thread id of the running graph (``""`` outside a graph or without one)."""
    try:
        config = get_config()
    except RuntimeError:
        return ""
    thread = (config.get("configurable") or {}).get("thread_id")
    return "" if thread is None else str(thread)


def _keeper(
    context_length: int,
    summarizer: SummarizerSpec,
    store: Store | None,
    session_id: str | None,
    token_counter: TokenCounter | None,
    options: Mapping[str, Any],
) -> ConversationKeeper[BaseMessage]:
    compressor = make_compressor(context_length, summarizer, token_counter, **options)
    return ConversationKeeper(
        compressor,
        messages_to_dicts,
        dicts_to_messages,
        store=store,
        session_id=session_id,
        source=SOURCE,
    )


def _replies(response: object) -> list[BaseMessage]:
    if isinstance(response, ModelResponse):
        return list(response.result)
    if isinstance(response, BaseMessage):
        return [response]
    return []


class PalimpsestMiddleware(AgentMiddleware):
    """Compacts what the model sees before every model call of a ``create_agent`` agent.

    ``context_length`` is the model's window in tokens; ``summarizer`` a
    :class:`~palimpsest.Summarizer`, a ``ChatModel`` or a :func:`~palimpsest.connect` spec
    (default: the offline extractive summarizer); ``store`` and ``session_id`` keep the
    conversation in a :class:`~palimpsest.SessionStore`. Other keywords go to
    :class:`~palimpsest.ContextCompressor` (``threshold_percent``, ``protect_last_n``, ...).
    """

    def __init__(
        self,
        context_length: int,
        *,
        summarizer: SummarizerSpec = None,
        store: Store | None = None,
        session_id: str | None = None,
        token_counter: TokenCounter | None = None,
        **compressor_options: Any,
    ) -> None:
        super().__init__()
        self.keeper = _keeper(
            context_length, summarizer, store, session_id, token_counter, compressor_options
        )

    @property
    def name(self) -> str:
        return "PalimpsestMiddleware"

    @staticmethod
    def _history(request: ModelRequest) -> list[BaseMessage]:
        system = [request.system_message] if request.system_message is not None else []
        return [*system, *request.messages]

    @staticmethod
    def _request(request: ModelRequest, view: KeeperView[BaseMessage]) -> ModelRequest:
        log.debug("model call: %d messages, %d tokens", len(view.messages), view.tokens)
        if not view.changed:
            return request
        messages = list(view.messages)
        system = request.system_message
        first = messages[0] if messages else None
        if isinstance(first, SystemMessage):
            system = first
            messages = messages[1:]
        return request.override(messages=cast("list[AnyMessage]", messages), system_message=system)

    def wrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], ModelResponse],
    ) -> ModelResponse:
        key = _thread_key()
        history = self._history(request)
        view = self.keeper.view(history, key)
        response = handler(self._request(request, view))
        if self.keeper.store is not None:
            self.keeper.record([*history, *_replies(response)], key)
        return response

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        key = _thread_key()
        history = self._history(request)
        # compaction and the store are blocking work: off the event loop
        view = await asyncio.to_thread(self.keeper.view, history, key)
        response = await handler(self._request(request, view))
        if self.keeper.store is not None:
            await asyncio.to_thread(self.keeper.record, [*history, *_replies(response)], key)
        return response


class _PreModelHook:
    """The callable :func:`pre_model_hook` returns; ``keeper`` is there for inspection."""

    def __init__(self, keeper: ConversationKeeper[BaseMessage]) -> None:
        self.keeper = keeper

    def __call__(self, state: Any) -> dict[str, list[AnyMessage]]:
        messages = state["messages"] if isinstance(state, Mapping) else state.messages
        view = self.keeper.view(list(messages), _thread_key())
        return {"llm_input_messages": cast("list[AnyMessage]", view.messages)}


def pre_model_hook(
    context_length: int,
    *,
    summarizer: SummarizerSpec = None,
    store: Store | None = None,
    session_id: str | None = None,
    token_counter: TokenCounter | None = None,
    **compressor_options: Any,
) -> Callable[[Any], dict[str, list[AnyMessage]]]:
    """A ``pre_model_hook`` for ``langgraph.prebuilt.create_react_agent``.

    It answers ``{"llm_input_messages": [...]}``: the model sees the compacted list, the
    graph state keeps every message. Arguments as for :class:`PalimpsestMiddleware`. With a
    store, the last reply of a thread is stored with the next model call.
    """
    return _PreModelHook(
        _keeper(context_length, summarizer, store, session_id, token_counter, compressor_options)
    )
