"""``Agent``: a tool loop over any ``ChatModel`` that stays inside its context window.

The agent owns the three representations of AL-02 and keeps them apart: the **history**
(``messages``: user, assistant and tool messages, each stored as it is added), the cached
**system prompt** (``system_prompt``) and the **request**, rebuilt before every call from the
two plus request-only injections (the ``<memory-context>`` fence). What a turn does, step by
step, is in :mod:`.turn`; what happens around a compaction in :mod:`.compaction_step`; the
slash commands in :mod:`.commands`. This module binds the parts together (model, tools,
store, memory, engine), owns the state they share, and drives the one turn flow
synchronously (:meth:`Agent.run`) or asynchronously (:meth:`Agent.arun`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ..compaction.compressor import ContextCompressor
from ..compaction.engine import ContextEngine
from ..config import Settings, load_settings
from ..errors import ConfigError, PalimpsestError
from ..memory.manager import MemoryManager
from ..messages import for_provider
from ..outputs.budget import BudgetConfig
from ..outputs.guard import OutputGuard
from ..outputs.store import OutputStore
from ..pricing import prices_from_settings
from ..providers.base import ChatModel, Completion
from ..storage.search import SessionSearch
from ..storage.sessions import SessionStore
from ..tokens import (
    estimate_messages_tokens_rough,
    estimate_request_tokens_rough,
)
from ..usage import CanonicalUsage
from .ahead import make_speculative
from .binding import bind_session, start_new_session
from .commands import CommandResult, run_command
from .compaction_step import UndoRecord, compress_context
from .driver import Flow, drive_async, drive_sync
from .events import AgentEvent, CompactionEvent, TurnEnd, UsageEvent, WarningEvent
from .flush import flush_memories
from .history import attach_fence, cancelled_results
from .ledger import StateLedger
from .persistence import GuardState, SessionWriter, load_guards, load_state, save_guards, save_state
from .recovery import max_attempts
from .registry import ToolRegistry
from .speculative import SpeculativeCompactor
from .status import context_status
from .system_prompt import SystemPromptBuilder
from .todo import TodoStore, todo_tool
from .tools import Tool
from .turn import turn_flow
from .usage_tracking import UsageTracker
from .workspace import workspace_tools

__all__ = ["AFTER_COMPACTION_SHARE", "Agent"]

AFTER_COMPACTION_SHARE = 0.6
"""Of the compaction threshold, what a compaction aims to leave the whole request at most
(head, summary and a tail within the seed's 20% tail budget fit under it in any window
where the system prompt and tool schemas are small beside the threshold)."""

log = logging.getLogger("palimpsest.agent")


class Agent:
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

    recovery_delay: float = 0.0
    """Seconds between a recovery compaction and its retry (AL-14 says 2 in profile
    ``refined``; the seed default waits for nothing)."""

    def __init__(
        self,
        model: ChatModel,
        *,
        tools: Iterable[Tool | Callable[..., Any]] = (),
        store: SessionStore | None = None,
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
        self.speculative: SpeculativeCompactor | None = None
        self.profile = self.settings.context.profile
        self.compression_enabled = self.settings.compression.enabled
        self.flush_enabled = self.settings.memory.flush_before_compression
        self.max_attempts = max_attempts(getattr(self.settings.compression, "max_attempts", 3))
        if self.profile == "refined":
            self.recovery_delay = 2.0
        self.compressor = compressor or self._default_compressor(context_length)
        if compressor is not None and context_length and context_length != self.context_length:
            compressor.update_model(self.model_name, context_length)
        self.usage = UsageTracker(
            self.model_name,
            provider=getattr(model, "provider", None),
            base_url=getattr(model, "base_url", None),
            prices=prices_from_settings(self.settings),
        )

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

        self.messages: list[dict[str, Any]] = []
        self.turn = 0
        self.undo: UndoRecord | None = None
        self.guards: GuardState | None = None
        self.last_request_len: int | None = None
        self._fence_target: str | None = None
        self._interrupt = threading.Event()
        self._busy = threading.Lock()
        self._blocked_warned = False
        self.session_id: str | None = None
        self.writer = SessionWriter(store, None)
        self.prompt_builder = SystemPromptBuilder(
            system_message=system_message, memory=memory, source=source, workdir=self.workdir
        )
        self.system_prompt = ""
        bind_session(self, session_id)

    # -- construction helpers ------------------------------------------------------------

    @property
    def model_name(self) -> str:
        return str(getattr(self.model, "model", "") or "")

    @property
    def context_length(self) -> int:
        return int(self.compressor.context_length)

    def _default_compressor(self, context_length: int | None) -> ContextEngine:
        window = (
            context_length
            or self.settings.model.context_length
            or getattr(self.model, "context_length", None)
        )
        if not isinstance(window, int) or window <= 0:
            raise ConfigError(
                "the agent needs the model's context length: pass context_length=, set "
                "model.context_length in the config, or pass a compressor",
                key="model.context_length",
            )
        overrides: dict[str, Any] = {"model": self.model_name}
        if self.max_tokens is not None:
            overrides["max_tokens"] = self.max_tokens
        return ContextCompressor.from_settings(self.settings, context_length=window, **overrides)

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

    def output_budget(self) -> BudgetConfig:
        """The tool-output budgets for the model's current window (``tool_budget.*``)."""
        return BudgetConfig.from_settings(self.settings.tool_budget, self.context_length)

    # -- state the flows share -----------------------------------------------------------

    def is_interrupted(self) -> bool:
        return self._interrupt.is_set()

    def append(self, message: dict[str, Any]) -> None:
        """Add a message to the history and store it at once."""
        self.messages.append(message)
        self.save()

    def save(self) -> None:
        self.writer.save(self.messages)

    def save_state(self) -> None:
        """Store the ledger and the todo list with the current session (a restart resumes
        them, and a continuation inherits them when it is resumed)."""
        state = {"ledger": self.ledger.to_dict(), "todos": self.todos.to_list()}
        save_state(self.store, self.session_id, state)

    def restore_state(self, session_id: str | None) -> None:
        """Take back what :meth:`save_state` kept for ``session_id``; bad data is ignored."""
        data = load_state(self.store, session_id)
        if data is None:
            return
        try:
            self.ledger = StateLedger.from_dict(data.get("ledger") or {}, self.workdir)
            self.todos = TodoStore.from_list(data.get("todos") or [])
        except (ValueError, TypeError) as exc:
            log.warning("stored agent state of %s ignored: %s", session_id, exc)

    def close_open_calls(self) -> None:
        """Give every tool call of the last round a result (a cancelled one says so)."""
        self.messages.extend(cancelled_results(self.messages))

    def prefetch(self, user_message: str) -> str:
        """This turn's fenced recall (``""`` when none or trivial, MEM-05/09)."""
        self._fence_target = user_message
        if self.memory is None:
            return ""
        try:
            return self.memory.memory_context_block(user_message)
        except Exception:
            log.warning("memory prefetch failed", exc_info=True)
            return ""

    def build_request(self, fence: str = "") -> list[dict[str, Any]]:
        """``[system] + history + request-only injections`` (AL-02), built fresh."""
        history = attach_fence(for_provider(self.messages), fence, self._fence_target)
        return [{"role": "system", "content": self.system_prompt}, *history]

    def estimate_request(self) -> int:
        """Rough tokens of the next request: prompt + messages + tool schemas (AL-04)."""
        schemas = self.tools.schemas()
        measure = getattr(self.compressor, "estimate_request_tokens", None)
        if callable(measure):
            return int(measure(self.messages, self.system_prompt, schemas))
        return estimate_request_tokens_rough(self.messages, self.system_prompt, schemas)

    def flush_flow(self, messages: list[dict[str, Any]], *, min_turns: int = 0) -> Flow:
        """The memory flush of ``messages`` with this agent's prompt, caps and window."""
        return flush_memories(
            self.memory,
            self.system_prompt,
            messages,
            min_turns=min_turns,
            max_tokens=self.max_tokens,
            window=self.context_length,
            measure=self.calibrated,
        )

    def compaction_context(self, messages: list[dict[str, Any]]) -> str:
        """What the summarizer gets beside the turns: the memory providers' checkpoint
        (MEM-62) and the note on what the ledger carries."""
        context = self.memory.on_pre_compress(messages) if self.memory is not None else ""
        note = self.ledger.summarizer_note()
        return "\n\n".join(t for t in (context, note) if t and t.strip())

    def aim_compaction(self) -> None:
        """Tell the engine how much room the messages have after a compaction: a share of
        the threshold (:data:`AFTER_COMPACTION_SHARE`) less what every request carries
        besides them (system prompt, tool schemas). In a small window that overhead would
        otherwise leave each compaction just under the threshold, and the next turn would
        compact again."""
        if not hasattr(self.compressor, "compaction_target_tokens"):
            return
        share = int(self.compressor.threshold_tokens * AFTER_COMPACTION_SHARE)
        self.compressor.compaction_target_tokens = max(0, share - self.request_overhead())

    def request_overhead(self) -> int:
        """What every request carries besides the messages: system prompt and tool schemas
        (calibrated to the model's count when its usage has been seen)."""
        schemas = self.tools.schemas()
        return self.calibrated(estimate_request_tokens_rough([], self.system_prompt, schemas))

    def current_prompt_tokens(self) -> int:
        """AL-08's token figure: the last real prompt tokens plus the rough size of what
        was appended since that request (tool results can be large); the estimate when
        no real figure is current (e.g. right after a compaction)."""
        real = int(getattr(self.compressor, "last_prompt_tokens", 0) or 0)
        if real > 0 and self.last_request_len is not None:
            added = self.messages[self.last_request_len :]
            return real + estimate_messages_tokens_rough(added)
        return self.estimate_request()

    def calibrated(self, rough_estimate: int) -> int:
        """A rough estimate scaled by what this model's real usage has shown so far."""
        return self.usage.calibrator.calibrated(self.usage.model, rough_estimate)

    def compaction_allowed(self, tokens: int) -> Flow:
        """Should an automatic compaction run at ``tokens``? Warns once per blocked period."""
        engine = self.compressor
        fire, blocked = engine.should_compress_info(tokens)
        if blocked is not None and not fire:
            load_guards(self.store, self.session_id, engine)  # another process may have cleared
            fire, blocked = engine.should_compress_info(tokens)
        if fire:
            self._blocked_warned = False
            return True
        if blocked is not None and not self._blocked_warned:
            self._blocked_warned = True
            yield WarningEvent(
                "compression_blocked",
                f"The context is over the compression threshold (~{tokens:,} tokens >= "
                f"{engine.threshold_tokens:,}) but compression is blocked ({blocked}); the "
                "model may stop responding. Use /new to start fresh or /compress to force it.",
            )
        return False

    def record_usage(self, completion: Completion, rough_estimate: int) -> Flow:
        """AL-07: normalize, feed the engine, add to totals, store; one UsageEvent.

        Unreported usage feeds the engine the calibrated estimate (it needs a size) but is
        recorded as unknown: nothing added to the token sums, one unreported call."""
        usage, estimated = self.usage.normalize(completion, rough_estimate)
        self.compressor.update_from_response(usage.for_engine())
        self.last_request_len = len(self.messages)
        reported = None if estimated else usage
        cost = self.usage.add(reported)
        if self.store is not None and self.session_id is not None:
            try:
                self.store.record_usage(self.session_id, reported, cost, model=self.model_name)
            except PalimpsestError as exc:
                log.warning("could not record usage: %s", exc)
        self.guards = save_guards(self.store, self.session_id, self.compressor, self.guards)
        yield UsageEvent(
            usage=reported,
            estimated=estimated,
            cost_usd=cost,
            estimate=usage if estimated else None,
        )
        check = getattr(self.compressor, "check_pressure", None)
        warning = check(usage.prompt_tokens) if callable(check) else None
        if isinstance(warning, str):  # CC-118: once per approach, to the host only
            yield WarningEvent("context_pressure", warning)

    @property
    def usage_total(self) -> CanonicalUsage:
        """The summed usage of the session's calls that reported it; calls that did not
        are counted in ``usage.unreported_calls`` (so this is then a lower bound)."""
        return self.usage.total

    @property
    def cost_usd(self) -> float | None:
        """What the session's calls cost so far; ``None`` when any call's price is unknown."""
        return self.usage.cost_usd

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
        tokens = self.estimate_request()
        outcome = yield from compress_context(
            self, "manual", approx_tokens=tokens, focus_topic=focus or None, force=True
        )
        return outcome

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
