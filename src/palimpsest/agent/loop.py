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

from ..calibration import EstimateCalibrator
from ..compaction.compressor import ContextCompressor
from ..compaction.engine import ContextEngine
from ..config import Settings, load_settings
from ..errors import ConfigError, PalimpsestError
from ..memory.manager import MemoryManager
from ..messages import content_text, for_provider, role_of, tool_calls_of
from ..pricing import estimate_usage_cost, prices_from_settings
from ..providers.base import ChatModel, Completion
from ..storage.search import SessionSearch
from ..storage.sessions import SessionStore, new_session_id
from ..tokens import (
    estimate_messages_tokens_rough,
    estimate_request_tokens_rough,
    estimate_tokens_rough,
)
from ..usage import CanonicalUsage
from .commands import CommandResult, run_command
from .compaction_step import UndoRecord, compress_context
from .driver import Flow, drive_async, drive_sync
from .events import AgentEvent, CompactionEvent, TurnEnd, UsageEvent, WarningEvent
from .ledger import StateLedger
from .persistence import GuardState, SessionWriter, load_guards, read_guards, save_guards
from .recovery import max_attempts
from .registry import ToolRegistry
from .status import context_status
from .system_prompt import SystemPromptBuilder
from .todo import TodoStore, todo_tool
from .tools import Tool
from .turn import CANCELLED_RESULT, turn_flow
from .workspace import workspace_tools

__all__ = ["Agent"]

log = logging.getLogger("palimpsest.agent")


def _usage_unknown(usage: CanonicalUsage) -> bool:
    """No usage came back (a llama.cpp stream sends none): unknown, not zero."""
    return usage.raw_usage is None and usage.prompt_tokens == 0 and usage.output_tokens == 0


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
        speculative: Any | None = None,
        max_iterations: int = 50,
        settings: Settings | None = None,
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
        self.workdir = Path(workdir).resolve() if workdir is not None else None
        self.speculative = speculative
        self.profile = self.settings.context.profile
        self.compression_enabled = self.settings.compression.enabled
        self.flush_enabled = self.settings.memory.flush_before_compression
        self.max_attempts = max_attempts(getattr(self.settings.compression, "max_attempts", 3))
        if self.profile == "refined":
            self.recovery_delay = 2.0
        self.compressor = compressor or self._default_compressor(context_length)
        if compressor is not None and context_length and context_length != self.context_length:
            compressor.update_model(self.model_name, context_length)
        self.calibrator = EstimateCalibrator()
        self.prices = prices_from_settings(self.settings)

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

        self.messages: list[dict[str, Any]] = []
        self.usage_total = CanonicalUsage(request_count=0)
        self._cost_sum = 0.0
        self._cost_unknown = False
        self.turn = 0
        self.undo: UndoRecord | None = None
        self.guards: GuardState | None = None
        self.last_request_len: int | None = None
        self.last_usage_estimated = False
        self.estimated_calls = 0
        self._interrupt = threading.Event()
        self._busy = threading.Lock()
        self._blocked_warned = False
        self.session_id: str | None = None
        self.writer = SessionWriter(store, None)
        self.prompt_builder = SystemPromptBuilder(
            system_message=system_message, memory=memory, source=source, workdir=self.workdir
        )
        self.system_prompt = ""
        self._bind(session_id)

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
        items.append(read_output_tool(self._outputs_dir()))
        items.append(context_status_tool(self.context_status))
        return items

    def _outputs_dir(self) -> Path:
        base = self.store.path.parent if self.store is not None else Path.home() / ".palimpsest"
        return base / "tool_outputs"

    def _bind(self, session_id: str | None, *, fresh: bool = False) -> None:
        """Start a new session, or resume the tip of ``session_id``'s lineage."""
        store = self.store
        resumed = False
        if (
            not fresh
            and store is not None
            and session_id is not None
            and store.get_session(session_id)
        ):
            sid = store.resume_target(session_id)
            row = store.require_session(sid)
            if row.get("ended_at") is not None and row.get("end_reason") != "compression":
                store.reopen_session(sid)
            self.messages = [dict(m) for m in store.get_messages(sid)]
            self.compressor.compression_count = max(0, len(store.compression_chain(sid)) - 1)
            self.system_prompt = str(row.get("system_prompt") or "")
            self.turn = sum(1 for m in self.messages if role_of(m) == "user")
            resumed = True
        else:
            sid = session_id or new_session_id()
        self.session_id = sid
        if self.memory is not None and not fresh:
            self.memory.initialize_all(sid, platform=self.source)
        elif self.memory is not None:
            self.memory.store.load_from_disk()  # a new session takes a new snapshot
        if not self.system_prompt:
            self.system_prompt = self.prompt_builder.build(
                compression_count=self.compressor.compression_count
            )
        if store is not None and not resumed:
            store.create_session(
                sid, source=self.source, model=self.model_name, system_prompt=self.system_prompt
            )
        self.writer.rebind(sid, len(self.messages))
        try:
            self.compressor.on_session_start(sid, platform=self.source, model=self.model_name)
        except Exception:
            log.warning("engine.on_session_start failed", exc_info=True)
        load_guards(store, sid, self.compressor)
        self.guards = read_guards(store, sid) if store is not None else None

    # -- state the flows share -----------------------------------------------------------

    def is_interrupted(self) -> bool:
        return self._interrupt.is_set()

    def append(self, message: dict[str, Any]) -> None:
        """Add a message to the history and store it at once."""
        self.messages.append(message)
        self.save()

    def save(self) -> None:
        self.writer.save(self.messages)

    def close_open_calls(self) -> None:
        """Give every tool call of the last assistant message a result (cancelled ones)."""
        for index in range(len(self.messages) - 1, -1, -1):
            message = self.messages[index]
            if role_of(message) == "assistant" and tool_calls_of(message):
                answered = {
                    str(m.get("tool_call_id"))
                    for m in self.messages[index + 1 :]
                    if role_of(m) == "tool"
                }
                for call in tool_calls_of(message):
                    cid = str(call.get("id") or "")
                    if cid and cid not in answered:
                        name = str((call.get("function") or {}).get("name") or "")
                        self.messages.append(
                            {
                                "role": "tool",
                                "tool_call_id": cid,
                                "name": name,
                                "content": CANCELLED_RESULT,
                            }
                        )
                return
            if role_of(message) == "user":
                return

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
        history = for_provider(self.messages)
        if fence:
            target = getattr(self, "_fence_target", None)
            users = [i for i, m in enumerate(history) if role_of(m) == "user"]
            exact = [i for i in users if content_text(history[i].get("content")) == target]
            chosen = exact[-1] if exact else (users[-1] if users else None)
            if chosen is not None:
                content = history[chosen].get("content")
                if isinstance(content, list):
                    new: Any = [*content, {"type": "text", "text": fence}]
                else:
                    new = f"{content}\n\n{fence}" if content else fence
                history[chosen] = {**history[chosen], "content": new}
        return [{"role": "system", "content": self.system_prompt}, *history]

    def estimate_request(self) -> int:
        """Rough tokens of the next request: prompt + messages + tool schemas (AL-04)."""
        schemas = self.tools.schemas()
        measure = getattr(self.compressor, "estimate_request_tokens", None)
        if callable(measure):
            return int(measure(self.messages, self.system_prompt, schemas))
        return estimate_request_tokens_rough(self.messages, self.system_prompt, schemas)

    def current_prompt_tokens(self) -> int:
        """AL-08's token figure: the last real prompt tokens plus the rough size of what
        was appended since that request (tool results can be large); the estimate when
        no real figure is current (e.g. right after a compaction)."""
        real = int(getattr(self.compressor, "last_prompt_tokens", 0) or 0)
        if real > 0 and self.last_request_len is not None:
            added = self.messages[self.last_request_len :]
            return real + estimate_messages_tokens_rough(added)
        return self.estimate_request()

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
        """AL-07: normalize, feed the engine, add to totals, store; one UsageEvent."""
        usage = completion.usage
        estimated = _usage_unknown(usage)
        if estimated:
            out = estimate_tokens_rough(completion.content or "")
            out += estimate_messages_tokens_rough([completion.to_message()]) if not out else 0
            usage = CanonicalUsage(
                input_tokens=self.calibrator.calibrated(self.model_name, rough_estimate),
                output_tokens=out,
            )
        else:
            self.calibrator.observe_usage(self.model_name, rough_estimate, usage)
        self.last_usage_estimated = estimated
        self.estimated_calls += estimated
        self.compressor.update_from_response(usage.for_engine())
        self.last_request_len = len(self.messages)
        self.usage_total = self.usage_total + usage
        cost = estimate_usage_cost(
            self.model_name,
            usage,
            provider=getattr(self.model, "provider", None),
            base_url=getattr(self.model, "base_url", None),
            prices=self.prices,
        )
        if cost.amount_usd is None:
            self._cost_unknown = True
        else:
            self._cost_sum += cost.amount_usd
        if self.store is not None and self.session_id is not None:
            try:
                self.store.record_usage(
                    self.session_id, usage, cost.amount_usd, model=self.model_name
                )
            except PalimpsestError as exc:
                log.warning("could not record usage: %s", exc)
        self.guards = save_guards(self.store, self.session_id, self.compressor, self.guards)
        yield UsageEvent(usage=usage, estimated=estimated, cost_usd=cost.amount_usd)

    @property
    def cost_usd(self) -> float | None:
        """What the session's calls cost so far; ``None`` when any call's price is unknown."""
        return None if self._cost_unknown else self._cost_sum

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
        old, history = self.session_id, list(self.messages)
        self.save()
        if self.store is not None and old is not None:
            try:
                self.store.end_session(old, "new_session")
            except PalimpsestError as exc:
                log.warning("could not end session %s: %s", old, exc)
        try:
            self.compressor.on_session_end(old or "", history)
            self.compressor.on_session_reset()
        except Exception:
            log.warning("engine session hooks failed", exc_info=True)
        self.messages = []
        self.todos.write([])
        self.ledger = StateLedger(self.workdir)
        self.undo = None
        self.turn = 0
        self.last_request_len = None
        self.usage_total = CanonicalUsage(request_count=0)
        self._cost_sum, self._cost_unknown, self.estimated_calls = 0.0, False, 0
        self.system_prompt = ""
        new_id = new_session_id()
        if self.memory is not None:
            self.memory.session_boundary(history, new_id, reset=True, reason="new_session")
        self._bind(new_id, fresh=True)

    def interrupt(self) -> None:
        """Ask the running turn to stop at its next safe point (thread-safe)."""
        self._interrupt.set()

    def close(self) -> None:
        """Finish background memory work and store anything still pending."""
        self.save()
        if self.memory is not None:
            self.memory.drain()
