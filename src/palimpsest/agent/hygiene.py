"""Gateway session hygiene (agent-loop.md §6, AL-31..AL-38).

A gateway (a messaging bot serving many people, one stored session per chat) calls
:meth:`GatewayHygiene.deliver` (or the one-shot :func:`deliver`) for **each** inbound
message, before any agent reads the session. One delivery:

1. resolves the live end of the conversation (``resume_target``: the tip of the
   compression chain), whatever id the gateway still routes to;
2. checks the stored session, when compression is enabled and it holds at least 4
   messages (AL-31): its last **real** prompt tokens when recorded and above 0, else the
   rough estimate of the stored history, with no safety multiplier (AL-33, AL-36); due at
   ``int(context_length * compression.hygiene_threshold)`` (AL-32) or at
   ``compression.hygiene_hard_message_limit`` messages;
3. when due, compacts with a throwaway :class:`~.loop.Agent` bound to the session (quiet,
   4 iterations, only the ``memory`` tool when a memory manager is given) through the
   agent's own compaction path ``hygiene`` (flush, continuation, ledger, guards: AL-34),
   then forgets the recorded prompt tokens and warns when the result still fills 95% of
   the window. Only a rotation rewrites the stored transcript, and only a rotation
   resets the failure streak (AL-37); a failure starts a cooldown (AL-35);
4. stores the inbound message in the (possibly new) tip and numbers it (``sequence``).

All of it runs under the conversation's admission lease (:mod:`.hygiene_state`), so
concurrent deliveries, from threads or processes, compact once and store every message
exactly once, in the order of their sequence numbers.

The compaction timeouts of AL-35 (inactivity and total ceiling) are not enforced here: a
compaction runs to its end, and the admission lease (600 s) bounds how long others wait.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

import apsw

from ..config import Settings, load_settings
from ..errors import ConfigError, TranscriptError
from ..memory.manager import MemoryManager
from ..providers.base import ChatModel
from ..storage.contract import Store
from ..summarizers.base import Summarizer
from ..tokens import estimate_messages_tokens_rough
from .events import AgentEvent, CompactionEvent, WarningEvent
from .hygiene_state import (
    ADMISSION_WAIT_SECONDS,
    LineageState,
    admission,
    forget_prompt_tokens,
    next_sequence,
    read_lineage_state,
    read_prompt_tokens,
    record_prompt_tokens,
)
from .hygiene_turn import CONTEXT_ERROR_MESSAGE, detach_pending, is_context_error

__all__ = [
    "CONTEXT_ERROR_MESSAGE",
    "FAILURE_COOLDOWN_SECONDS",
    "MIN_MESSAGES",
    "WARN_SHARE",
    "GatewayHygiene",
    "HygieneCheck",
    "HygieneResult",
    "check_hygiene",
    "deliver",
    "detach_pending",
    "is_context_error",
]

log = logging.getLogger("palimpsest.agent")

MIN_MESSAGES = 4
"""AL-31: a stored history shorter than this is never checked."""

WARN_SHARE = 0.95
"""AL-34.5: a compacted session still at this share of the window gets a warning."""

FAILURE_COOLDOWN_SECONDS = 300.0
"""AL-35 (``hygiene_failure_cooldown_seconds``, a constant here): after a hygiene
compaction that did not rewrite the session, the next attempt waits this long."""

HYGIENE_MAX_ITERATIONS = 4
"""AL-34.1: the throwaway agent's iteration limit."""


@dataclass(frozen=True)
class HygieneCheck:
    """Whether a stored session needs hygiene now, and why (no I/O: :func:`check_hygiene`)."""

    due: bool
    threshold: int
    reason: str


def check_hygiene(
    *,
    enabled: bool,
    message_count: int,
    tokens: int,
    context_length: int,
    threshold_ratio: float,
    hard_limit: int,
) -> HygieneCheck:
    """AL-31/32 and the hard message limit: is a hygiene compaction due?"""
    threshold = int(context_length * threshold_ratio)
    if not enabled:
        return HygieneCheck(False, threshold, "compression is disabled")
    if message_count < MIN_MESSAGES:
        return HygieneCheck(False, threshold, f"fewer than {MIN_MESSAGES} messages")
    if message_count >= hard_limit:
        return HygieneCheck(True, threshold, f"{message_count:,} messages >= {hard_limit:,}")
    if tokens >= threshold:
        return HygieneCheck(True, threshold, f"~{tokens:,} tokens >= {threshold:,}")
    return HygieneCheck(False, threshold, f"~{tokens:,} tokens < {threshold:,}")


@dataclass(frozen=True)
class HygieneResult:
    """What one delivery did. ``session_id`` is the session the gateway must use from now
    on (route the chat to it: AL-22); the message is stored there."""

    session_id: str
    compacted: bool
    tokens_before: int
    tokens_after: int
    threshold: int
    warning: str | None
    sequence: int
    """The message's admission number in its conversation (1, 2, ...): stored order."""
    previous_session_id: str | None = None
    """The session the compaction ended (set when ``compacted``)."""
    token_source: Literal["prompt_tokens", "estimate"] = "estimate"
    reason: str = ""
    """Why hygiene compacted, or why it did not."""
    events: tuple[AgentEvent, ...] = ()
    """The compaction's events (its :class:`CompactionEvent` and warnings), for logs."""


@dataclass(frozen=True)
class _Attempt:
    rotated: bool
    """The store recorded the compaction: a continuation, or the session archived in place."""
    session_id: str
    locked: bool
    why: str
    events: tuple[AgentEvent, ...]


class GatewayHygiene:
    """Hygiene for the stored sessions of one gateway (module docstring).

    ``model`` is what the throwaway agent holds: the memory flush calls it when ``memory``
    is given. ``summarizer`` writes the summaries (default: the deterministic extractive
    one, no model call). ``context_length`` is the window of the model that will answer.
    New chats get sessions with ``source``.
    """

    def __init__(
        self,
        store: Store,
        *,
        model: ChatModel,
        context_length: int,
        settings: Settings | None = None,
        memory: MemoryManager | None = None,
        summarizer: Summarizer | None = None,
        source: str = "gateway",
        wait: float = ADMISSION_WAIT_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if isinstance(context_length, bool) or not isinstance(context_length, int):
            raise ConfigError("context_length must be a whole number of tokens")
        if context_length <= 0:
            raise ConfigError(
                f"context_length must be positive, got {context_length}",
                key="model.context_length",
            )
        self.store = store
        self.model = model
        self.context_length = context_length
        self.settings = settings if settings is not None else load_settings()
        self.memory = memory
        self.summarizer = summarizer
        self.source = source
        self.wait = wait
        self.clock = clock

    @property
    def threshold(self) -> int:
        return int(self.context_length * self.settings.compression.hygiene_threshold)

    def deliver(self, session_id: str, message: str | Mapping[str, Any]) -> HygieneResult:
        """Check (and compact) ``session_id``'s conversation, then store ``message`` in its
        tip. A new id starts a session. Raises ``DatabaseLockedError`` (nothing stored)
        when the conversation's lease stays held past ``wait`` seconds."""
        inbound = _inbound(message)
        store = self.store
        if store.get_session(session_id) is None:
            store.ensure_session(session_id, source=self.source)
        root = store.compression_chain(session_id)[0]
        with admission(store, root, wait=self.wait):
            tip = self._tip(session_id)
            with store.database.reader() as con:
                state = read_lineage_state(con, root)
            history = store.get_messages(tip)
            real = read_prompt_tokens(store, tip)
            tokens = real if real > 0 else estimate_messages_tokens_rough(history)
            c = self.settings.compression
            check = check_hygiene(
                enabled=c.enabled,
                message_count=len(history),
                tokens=tokens,
                context_length=self.context_length,
                threshold_ratio=c.hygiene_threshold,
                hard_limit=c.hygiene_hard_message_limit,
            )
            now = self.clock()
            attempt: _Attempt | None = None
            reason, warning = check.reason, None
            if check.due and state.cooldown_until is not None and now < state.cooldown_until:
                reason = (
                    f"{check.reason}, but hygiene is cooling down after "
                    f"{state.failure_streak} failed compaction(s)"
                )
            elif check.due:
                attempt = self._compact(tip, tokens)
                state, reason, warning = self._judge(attempt, state, check, now)
            compacted = attempt is not None and attempt.rotated
            live = attempt.session_id if attempt is not None and compacted else tip
            after = (
                estimate_messages_tokens_rough(store.get_messages(live)) if compacted else tokens
            )
            if compacted and after >= int(self.context_length * WARN_SHARE):
                warning = (
                    f"The session is still ~{after:,} tokens after compaction, at least "
                    f"{WARN_SHARE:.0%} of the {self.context_length:,}-token window; the model "
                    "may refuse it. Consider /reset to start a fresh conversation."
                )

            def admit(con: apsw.Connection) -> int:
                store.append_messages(live, [inbound])  # joins this transaction
                if compacted:
                    forget_prompt_tokens(con, tip)  # AL-34.4
                return next_sequence(con, root, state)

            sequence = store.database.write(admit)
        return HygieneResult(
            session_id=live,
            compacted=compacted,
            tokens_before=tokens,
            tokens_after=after,
            threshold=check.threshold,
            warning=warning,
            sequence=sequence,
            previous_session_id=tip if compacted else None,
            token_source="prompt_tokens" if real > 0 else "estimate",
            reason=reason,
            events=attempt.events if attempt is not None else (),
        )

    def record_prompt_tokens(self, session_id: str, prompt_tokens: int) -> None:
        """After a turn: the provider's real prompt tokens of its last request (AL-33)."""
        record_prompt_tokens(self.store, session_id, prompt_tokens)

    def state(self, session_id: str) -> LineageState:
        """The conversation's admission count, failure streak and cooldown."""
        root = self.store.compression_chain(session_id)[0]
        with self.store.database.reader() as con:
            return read_lineage_state(con, root)

    # -- steps -----------------------------------------------------------------------------

    def _tip(self, session_id: str) -> str:
        """Where the conversation lives now; a session the user ended is reopened (as an
        agent resuming it would)."""
        tip = self.store.resume_target(session_id)
        row = self.store.require_session(tip)
        if row.get("ended_at") is not None and row.get("end_reason") != "compression":
            self.store.reopen_session(tip)
        return tip

    def _compact(self, tip: str, tokens: int) -> _Attempt:
        """One compaction of ``tip`` by a throwaway agent on the ``hygiene`` path."""
        from ..compaction.compressor import ContextCompressor
        from .builtin_tools import memory_tool
        from .compaction_step import compress_context
        from .driver import drain
        from .loop import Agent

        # quiet (AL-34.1): the compressor's status lines stay out of the gateway's log
        compressor = ContextCompressor.from_settings(
            self.settings,
            context_length=self.context_length,
            summarizer=self.summarizer,
            model=str(getattr(self.model, "model", "") or ""),
            quiet_mode=True,
        )
        row = self.store.require_session(tip)
        agent = Agent(
            self.model,
            store=self.store,
            memory=self.memory,
            compressor=compressor,
            context_length=self.context_length,
            session_id=tip,
            source=str(row.get("source") or self.source),
            builtin_tools=False,
            tools=[memory_tool(self.memory)] if self.memory is not None else (),
            speculative=False,
            max_iterations=HYGIENE_MAX_ITERATIONS,
            settings=self.settings,
        )
        try:
            events, outcome = drain(
                self.model, compress_context(agent, "hygiene", approx_tokens=tokens)
            )
        except Exception as exc:
            # The inbound message must be stored whatever the compaction did; a failure
            # is the streak's business and the host's warning, not a lost message.
            log.warning("gateway hygiene: compaction of %s failed", tip, exc_info=True)
            return _Attempt(False, tip, False, f"{type(exc).__name__}: {exc}", ())
        finally:
            agent.close()
        new_id = agent.session_id or tip
        in_place = bool(outcome.compacted) and outcome.event.mode == "in_place"
        rotated = in_place or (
            bool(outcome.compacted) and new_id != tip and self.store.get_session(new_id)
        )
        warnings = [e.message for e in events if isinstance(e, WarningEvent)]
        found = [e for e in events if isinstance(e, CompactionEvent)]
        why = (found[-1].reason if found else None) or "; ".join(warnings) or "nothing compacted"
        return _Attempt(bool(rotated), new_id, bool(outcome.locked), why, tuple(events))

    def _judge(
        self, attempt: _Attempt, state: LineageState, check: HygieneCheck, now: float
    ) -> tuple[LineageState, str, str | None]:
        """AL-35/37: the new streak and cooldown, the reason, and the warning."""
        if attempt.rotated:
            return replace(state, failure_streak=0, cooldown_until=None), check.reason, None
        if attempt.locked:  # another compaction of the session is running: not a failure
            return state, f"{check.reason}; skipped: {attempt.why}", None
        streak = state.failure_streak + 1
        failed = replace(
            state, failure_streak=streak, cooldown_until=now + FAILURE_COOLDOWN_SECONDS
        )
        warning = (
            f"Session hygiene could not compact this conversation ({attempt.why}); it is "
            f"left as it was (failure {streak} in a row, next try in "
            f"{FAILURE_COOLDOWN_SECONDS:.0f} s)."
        )
        return failed, f"{check.reason}; not compacted: {attempt.why}", warning


def deliver(
    store: Store,
    session_id: str,
    message: str | Mapping[str, Any],
    *,
    model: ChatModel,
    context_length: int,
    settings: Settings | None = None,
    memory: MemoryManager | None = None,
    summarizer: Summarizer | None = None,
) -> HygieneResult:
    """One delivery with a one-off :class:`GatewayHygiene` (see there)."""
    hygiene = GatewayHygiene(
        store,
        model=model,
        context_length=context_length,
        settings=settings,
        memory=memory,
        summarizer=summarizer,
    )
    return hygiene.deliver(session_id, message)


def _inbound(message: str | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(message, str):
        return {"role": "user", "content": message}
    if isinstance(message, Mapping) and isinstance(message.get("role"), str):
        return dict(message)
    raise TranscriptError(
        f"an inbound message must be text or a message dict with a 'role', not "
        f"{type(message).__name__}"
    )
