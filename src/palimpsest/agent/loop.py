"""``Agent``: a tool loop over any ``ChatModel`` that stays inside its context window.

The agent owns the three representations of AL-02 and keeps them apart: the **history**
(``messages``: user, assistant and tool messages, each stored as it is added), the cached
**system prompt** (``system_prompt``) and the **request**, rebuilt before every call from the
two plus request-only injections (the ``<memory-context>`` fence). What a turn does, step by
step, is in :mod:`.turn`; what happens around a compaction in :mod:`.compaction_step`; the
slash commands in :mod:`.commands`; the state they all share (and its small operations) in
:mod:`.state`, which :class:`Agent` extends. This module binds the parts together (model,
tools, store, memory, engine) and drives the one turn flow synchronously
(:meth:`Agent.run`) or asynchronously (:meth:`Agent.arun`); no step module imports it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ..compaction.engine import ContextEngine
from ..config import Settings, load_settings
from ..memory.manager import MemoryManager
from ..outputs.guard import OutputGuard
from ..outputs.store import OutputStore
from ..pricing import prices_from_settings
from ..providers.base import ChatModel
from ..storage.contract import Store
from ..storage.search import SessionSearch
from .ahead import make_speculative
from .binding import bind_session, start_new_session
from .cache_hooks import configure_cache
from .commands import CommandResult, run_command
from .compaction_step import manual_compaction
from .driver import Flow, drive_async, drive_sync
from .events import AgentEvent, CompactionEvent, TurnEnd
from .ledger import StateLedger
from .persistence import SessionWriter
from .recovery import max_attempts
from .registry import ToolRegistry
from .speculative import SpeculativeCompactor
from .state import AFTER_COMPACTION_SHARE, AgentState
from .status import context_status
from .system_prompt import SystemPromptBuilder
from .todo import TodoStore, todo_tool
from .tools import Tool
from .turn import turn_flow
from .usage_tracking import UsageTracker
from .window_setup import default_engine, use_callers_window
from .workspace import workspace_tools

__all__ = ["AFTER_COMPACTION_SHARE", "Agent"]

log = logging.getLogger("palimpsest.agent")


class Agent(AgentState):
    """A tool loop that compacts before it overflows, recovers when it does, remembers,
    and carries its state across compactions (spec agent-loop.md).

    ``model`` is any :class:`~palimpsest.providers.base.ChatModel`. ``tools`` are
    :class:`~.tools.Tool` objects or plain functions (their schema comes from the
    signature). ``store`` persists every message and the session lineage; ``memory`` gives
    the frozen memory snapshot, recall and the ``memory`` tool; ``compressor`` defaults to
    the built-in :class:`~palimpsest.compaction.compressor.ContextCompressor` configured
    from ``settings`` for ``context_length`` (which may also come from
    ``model.context_length`` in the settings or the model object). ``session_id`` resumes
    the tip of that session's compression lineage (or creates a session with that id).
    ``workdir`` adds the workspace tools (read, write, edit, shell) confined to it.
    ``outputs`` is where tool outputs too large for the context are saved (default: the
    store of ``outputs.path``, ``$PALIMPSEST_HOME/outputs``; docs/tool-output.md).
    """

    def __init__(
        self,
        model: ChatModel,
        *,
        tools: Iterable[Tool | Callable[..., Any]] = (),
        store: Store | None = None,
        memory: MemoryManager | None = None,
        compressor: ContextEngine | None = None,
        context_length: int | None = None,
        system_message: str | None = None,
        session_id: str | None = None,
        source: str = "cli",
        max_tokens: int | None = None,
        builtin_tools: bool = True,
        workdir: Path | None = None,
        speculative: SpeculativeCompactor | bool | None = None,
        max_iterations: int = 50,
        settings: Settings | None = None,
        stream: bool = False,
        outputs: OutputStore | None = None,
    ) -> None:
        if max_iterations < 1:
            raise ValueError("max_iterations must be at least 1")
        self.model = model
        self.settings = settings if settings is not None else load_settings()
        self.store = store
        self.memory = memory
        self.source = source
        self.max_tokens = max_tokens
        self.max_iterations = max_iterations
        self.stream = stream
        """Replies' text as it arrives (``TextDelta`` pieces) from models that can stream it
        (the OpenAI and Anthropic backends), in :meth:`run`; :meth:`arun` yields it whole."""
        self.workdir = Path(workdir).resolve() if workdir is not None else None
        self.speculative = None
        self.profile = self.settings.context.profile
        self.compression_enabled = self.settings.compression.enabled
        self.flush_enabled = self.settings.memory.flush_before_compression
        self.max_attempts = max_attempts(getattr(self.settings.compression, "max_attempts", 3))
        if self.profile == "refined":
            self.recovery_delay = 2.0
        self.compressor = compressor or default_engine(
            self.settings, model, context_length, max_tokens
        )
        if compressor is not None:
            use_callers_window(compressor, self.model_name, context_length)
        self.usage = UsageTracker(
            self.model_name,
            provider=getattr(model, "provider", None),
            base_url=getattr(model, "base_url", None),
            prices=prices_from_settings(self.settings),
        )
        configure_cache(self)  # the route's cache lifetime and prices (cache_hooks)

        self._owns_outputs = outputs is None
        self.outputs = outputs if outputs is not None else OutputStore.from_settings(self.settings)
        """Where tool outputs too large for the context are saved (``read_output`` reads them)."""
        self.output_guard = OutputGuard(
            self.outputs, self.output_budget(), session_id=lambda: self.session_id
        )
        self.todos = TodoStore()
        self.ledger = StateLedger(self.workdir)
        self.tools = ToolRegistry()
        if builtin_tools:
            for item in self._builtin_tools():
                self.tools.register(item)
        if self.workdir is not None:
            for item in workspace_tools(self.workdir):
                self.tools.register(item)
        for extra in tools:
            self.tools.register(extra)
        self.speculative = make_speculative(self, speculative)

        self.messages = []
        self.turn = 0
        self.undo = None
        self.guards = None
        self.last_request_len = None
        self._fence_target = None
        self._interrupt = threading.Event()
        self._busy = threading.Lock()
        self._blocked_warned = False
        self.session_id = None
        self.writer = SessionWriter(store, None)
        self.prompt_builder = SystemPromptBuilder(
            system_message=system_message, memory=memory, source=source, workdir=self.workdir
        )
        self.system_prompt = ""
        bind_session(self, session_id)

    # -- construction helpers ------------------------------------------------------------

    def _builtin_tools(self) -> list[Tool]:
        from .builtin_tools import (
            context_status_tool,
            memory_tool,
            read_output_tool,
            session_search_tool,
        )

        items = [todo_tool(self.todos)]
        if self.memory is not None:
            items.append(memory_tool(self.memory))
        if self.store is not None:
            # Raw previews (no summarizing model): recall never spends the main model's turns.
            items.append(session_search_tool(SessionSearch(self.store), lambda: self.session_id))
        items.append(read_output_tool(self.outputs))
        items.append(context_status_tool(self.context_status))
        return items

    # -- public API ----------------------------------------------------------------------

    def run(self, user_message: str) -> Iterator[AgentEvent]:
        """One turn: the events as they happen, ending with one :class:`TurnEnd`.

        A ``KeyboardInterrupt`` inside the turn ends it with ``TurnEnd(interrupted=True)``
        and a valid, stored history.
        """
        if not self._busy.acquire(blocking=False):
            raise RuntimeError("a turn is already running on this agent")
        try:
            self._interrupt.clear()
            yield from drive_sync(self.model, turn_flow(self, user_message))
        finally:
            self._busy.release()

    async def arun(self, user_message: str) -> AsyncIterator[AgentEvent]:
        """The same turn as :meth:`run`, with ``acomplete`` and blocking work in threads."""
        if not self._busy.acquire(blocking=False):
            raise RuntimeError("a turn is already running on this agent")
        try:
            self._interrupt.clear()
            async for event in drive_async(self.model, turn_flow(self, user_message)):
                yield event
        finally:
            self._busy.release()

    def ask(self, user_message: str) -> TurnEnd:
        """Run a turn to its end and return the :class:`TurnEnd`."""
        end: TurnEnd | None = None
        for event in self.run(user_message):
            if isinstance(event, TurnEnd):
                end = event
        if end is None:  # the flow always ends with one; this is a broken invariant
            raise RuntimeError("the turn ended without a TurnEnd event")
        return end

    def command(self, line: str) -> CommandResult | None:
        """Run a slash command (``/compress``, ``/new``, ``/usage``, ``/status``, ``/undo``);
        ``None`` when ``line`` is not one, so the host sends it to the model instead."""
        return run_command(self, line)

    def compress(self, focus: str | None = None) -> CompactionEvent:
        """Manual compaction (``/compress [focus]``): force semantics, flush first."""
        events = list(drive_sync(self.model, self.compress_flow(focus)))
        found = [e for e in events if isinstance(e, CompactionEvent)]
        if not found:
            raise RuntimeError("the compaction ended without a CompactionEvent")
        return found[-1]

    def compress_flow(self, focus: str | None = None) -> Flow:
        """The manual path as a flow (the command renders its feedback)."""
        return manual_compaction(self, focus)

    def context_status(self) -> dict[str, Any]:
        """Context use for the UI and the ``context_status`` tool (pull-based, item 7)."""
        return context_status(self)

    def start_new_session(self) -> None:
        """``/new``: end this session (``new_session``) and start a fresh, empty one."""
        start_new_session(self)

    def interrupt(self) -> None:
        """Ask the running turn to stop at its next safe point (thread-safe)."""
        self._interrupt.set()

    def close(self) -> None:
        """Finish background memory work and store anything still pending."""
        if self.speculative is not None:
            self.speculative.close()
        self.save()
        if self.memory is not None:
            self.memory.drain()
        if self._owns_outputs:
            self.outputs.close()  # its index connection; it reopens if used again
