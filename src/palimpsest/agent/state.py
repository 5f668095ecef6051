"""The state an agent's steps share, in a module of its own (issue 24).

:class:`AgentState` is what the step modules (:mod:`.turn`, :mod:`.tool_round`,
:mod:`.compaction_step`, :mod:`.binding`, :mod:`.undo`, :mod:`.commands`, :mod:`.status`,
:mod:`.ahead`) read and change: the history and the session it is stored in, the engine,
the tools and guards, the ledger and todos, and the small operations on them (append and
save, build and measure the next request, the flush, usage recording). It imports no step
module, and no step module imports :mod:`.loop`: :class:`~.loop.Agent` is an
``AgentState`` that adds the construction and the public API and calls the steps. The
dependency runs one way, state <- steps <- loop, so the package has no import cycle.

``AgentState`` has no constructor of its own: :class:`~.loop.Agent` fills every attribute
declared here before it binds a session.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..compaction.engine import ContextEngine
from ..config import Settings
from ..errors import PalimpsestError
from ..memory.manager import MemoryManager
from ..outputs.budget import BudgetConfig
from ..outputs.guard import OutputGuard
from ..outputs.store import OutputStore
from ..providers.base import ChatModel, Completion
from ..storage.contract import Store
from ..tokens import estimate_messages_tokens_rough, estimate_request_tokens_rough
from ..usage import CanonicalUsage
from .driver import Flow
from .events import UsageEvent, WarningEvent
from .flush import flush_memories
from .history import cancelled_results
from .ledger import StateLedger
from .native_traffic import NativeTraffic
from .persistence import GuardState, SessionWriter, load_guards, load_state, save_guards, save_state
from .registry import ToolRegistry
from .request_view import RequestView, fenced
from .speculative import SpeculativeCompactor
from .system_prompt import SystemPromptBuilder
from .todo import TodoStore
from .usage_tracking import UsageTracker

__all__ = ["AFTER_COMPACTION_SHARE", "AgentState", "UndoRecord"]

AFTER_COMPACTION_SHARE = 0.6
"""Of the compaction threshold, what a compaction aims to leave the whole request at most
(head, summary and a tail within the seed's 20% tail budget fit under it in any window
where the system prompt and tool schemas are small beside the threshold)."""

log = logging.getLogger("palimpsest.agent")


@dataclass
class UndoRecord:
    """What ``/undo`` needs to put the last compaction back."""

    before: list[dict[str, Any]]
    after_len: int
    old_session_id: str | None
    new_session_id: str | None
    compression_count_before: int
    previous_summary_before: str | None
    system_prompt_before: str
    in_place: bool = False
    """The compaction archived the rows under the same session id (``compression.in_place``)."""


class AgentState:
    """The fields and operations every step of the agent shares (module docstring)."""

    # -- what the agent is bound to ------------------------------------------------------
    model: ChatModel
    settings: Settings
    store: Store | None
    memory: MemoryManager | None
    compressor: ContextEngine
    source: str
    workdir: Path | None
    max_tokens: int | None
    max_iterations: int
    stream: bool
    profile: str
    compression_enabled: bool
    flush_enabled: bool
    max_attempts: int
    recovery_delay: float = 0.0
    """Seconds between a recovery compaction and its retry (AL-14 says 2 in profile
    ``refined``; the seed default waits for nothing)."""

    # -- the parts the steps use ---------------------------------------------------------
    usage: UsageTracker
    outputs: OutputStore
    output_guard: OutputGuard
    todos: TodoStore
    ledger: StateLedger
    tools: ToolRegistry
    speculative: SpeculativeCompactor | None
    writer: SessionWriter
    prompt_builder: SystemPromptBuilder

    # -- the conversation ----------------------------------------------------------------
    messages: list[dict[str, Any]]
    session_id: str | None
    system_prompt: str
    turn: int
    undo: UndoRecord | None
    guards: GuardState | None
    last_request_len: int | None
    last_request: tuple[list[dict[str, Any]], list[dict[str, Any]] | None] | None = None
    """The messages and tool schemas of the last model call, as sent (the provider's
    cached prefix; a summary may continue it: :mod:`.cache_hooks`)."""
    _fence_target: str | None
    _interrupt: threading.Event
    _blocked_warned: bool
    checkpoint_failed_turn: int | None = None
    """The turn in which a required memory checkpoint last failed (:mod:`.checkpoint_gate`):
    the tool rounds after it in the same turn do not try again."""
    _request_view: RequestView | None = None
    _native: NativeTraffic | None = None

    @property
    def model_name(self) -> str:
        return str(getattr(self.model, "model", "") or "")

    @property
    def context_length(self) -> int:
        return int(self.compressor.context_length)

    def output_budget(self) -> BudgetConfig:
        """The tool-output budgets for the model's current window (``tool_budget.*``)."""
        return BudgetConfig.from_settings(self.settings.tool_budget, self.context_length)

    # -- operations the steps share -------------------------------------------------------

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
        if self._request_view is None:
            self._request_view = RequestView()  # provider copies, made once per message
        system = {"role": "system", "content": self.system_prompt}
        request = self._request_view.copies(self.messages, first=system)
        return fenced(request, fence, self._fence_target, start=1)

    def native_traffic(self, history: list[dict[str, Any]]) -> bool:
        """Whether ``history`` (the agent's messages) acts through native tool calls,
        each message scanned once (:mod:`.native_traffic`)."""
        if self._native is None:
            self._native = NativeTraffic()
        return self._native.of(history)

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
        observe = getattr(self.compressor, "observe_call", None)
        if callable(observe):  # the prompt cache's state, for cache-aware pruning
            observe(reported, self.last_request_len)
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
