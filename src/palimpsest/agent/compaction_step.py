"""``_compress_context`` (agent-loop.md AL-16): everything that happens around a compaction.

Every compaction path of the agent (preflight, after-round, reactive, manual) runs this one
flow, so none of them can skip a step:

1. **memory flush** (MEM-57..61) and the providers' pre-compression checkpoint, whose text
   becomes the summarizer's ``memory_context``; the state ledger's
   :meth:`~.ledger.StateLedger.summarizer_note` is added to that same ``memory_context``,
   so the summarizer knows which facts the ledger re-injects and need not repeat them;
2. **compress** with only the keyword arguments the engine accepts;
3. the **state ledger** and the **todo snapshot** appended (AL-17), stale copies from an
   earlier compaction removed first;
4. the **system prompt rebuilt** with the memory files re-read (AL-19);
5. the **session split**: the old session ends with ``compression``, a continuation holds
   the whole compacted list (AL-20); a store failure is logged and the compacted list is
   still used;
6. **notifications** to the memory manager and the engine (AL-21), the durable guards
   written to the new row (CC-22);
7. **warnings** for the host only (AL-24, CC-117) and the retry state reset (AL-23, by the
   caller from :attr:`CompactionOutcome.compacted`).

It yields :class:`~.events.WarningEvent` and :class:`~.events.CompactionEvent` and returns a
:class:`CompactionOutcome`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import PalimpsestError
from ..messages import content_text, role_of
from ..safety.redact import redact
from ..storage.sessions import new_session_id
from ..tokens import estimate_messages_tokens_rough
from .ahead import take
from .binding import switch_session
from .cache_hooks import record_compaction, summary_usage_before
from .checkpoint_gate import BLOCKED_CODE, RETRY_NEXT_TURN, blocked_message, required_checkpoint
from .driver import Flow, Offload
from .engine_call import (
    accepted_kwargs,
    compress_with_a_short_head,
    engine_facts,
    head_and_tail_are_everything,
)
from .events import CompactionEvent, CompactionMode, CompactionPath, WarningEvent
from .flush import FlushResult
from .in_place import archive_step, in_place_enabled
from .ledger import LEDGER_HEADER
from .lock import busy_message, holder_id, release_compression_lock, take_compression_lock
from .persistence import save_guards
from .rehydrate import (
    REHYDRATION_HEADER,
    REHYDRATION_MARKER,
    RehydrationBudget,
    rehydration_message,
)
from .state import AgentState, UndoRecord
from .todo import INJECTION_HEADER

__all__ = [
    "COUNT_WARNING",
    "LEDGER_MARKER",
    "CompactionOutcome",
    "UndoRecord",
    "compress_context",
    "count_warning",
    "manual_compaction",
]

log = logging.getLogger("palimpsest.agent")

COUNT_WARNING = (
    "Session compressed {count} times — accuracy may degrade. Consider /new to start fresh."
)
"""CC-117, shown to the host after the second and every later compaction."""

LEDGER_MARKER = "_agent_ledger"
"""Key marking the state-ledger message the agent injected (stripped before a request)."""


def count_warning(count: int) -> str:
    return COUNT_WARNING.format(count=count)


@dataclass
class CompactionOutcome:
    """What one pass of :func:`compress_context` did."""

    event: CompactionEvent
    compacted: bool
    flush: FlushResult = field(default_factory=FlushResult)
    feedback_facts: dict[str, Any] = field(default_factory=dict)
    locked: bool = False
    """Another compaction of this session held the lock; nothing was done."""
    blocked: str | None = None
    """Why a required memory checkpoint stopped this compaction (:mod:`.checkpoint_gate`)."""


def _is_injection(message: Mapping[str, Any]) -> bool:
    """A todo snapshot, ledger or re-attached files the agent added after a compaction."""
    if role_of(message) != "user":
        return False
    if message.get(LEDGER_MARKER) or message.get(REHYDRATION_MARKER):
        return True
    headers = (INJECTION_HEADER, LEDGER_HEADER, REHYDRATION_HEADER)
    return content_text(message.get("content")).startswith(headers)


def _unchanged(
    agent: AgentState,
    path: CompactionPath,
    messages: list[dict[str, Any]],
    reason: str,
    started: float | None = None,
    tokens: int | None = None,
) -> CompactionEvent:
    """The event of a compaction that left the history as it was, and why."""
    size = estimate_messages_tokens_rough(messages) if tokens is None else tokens
    return CompactionEvent(
        path=path,
        before_messages=len(messages),
        after_messages=len(messages),
        before_tokens=size,
        after_tokens=size,
        compacted=False,
        session_id=agent.session_id,
        reason=reason,
        seconds=0.0 if started is None else time.perf_counter() - started,
    )


def compress_context(
    agent: AgentState,
    path: CompactionPath,
    *,
    approx_tokens: int | None = None,
    focus_topic: str | None = None,
    force: bool = False,
) -> Flow:
    """One compaction of ``agent.messages`` with every step around it (module docstring).

    With a store, the session's compression lock is held throughout (AL-30); when another
    compaction holds it, nothing happens and the outcome says so (``locked``).
    """
    store, locked_id, holder = agent.store, agent.session_id, holder_id()
    if store is not None and locked_id is not None:
        try:
            busy = take_compression_lock(store, locked_id, holder)
        except PalimpsestError as exc:
            log.warning("could not check the compression lock: %s", exc)
            busy = ""
        if busy is not None:
            reason = busy_message(busy or None)
            yield WarningEvent("compression_locked", reason)
            event = _unchanged(agent, path, agent.messages, reason)
            yield event
            return CompactionOutcome(event, False, locked=True)
    try:
        return (yield from _compress_locked(agent, path, approx_tokens, focus_topic, force))
    finally:
        if store is not None and locked_id is not None:
            try:
                release_compression_lock(store, locked_id, holder)
            except PalimpsestError as exc:
                log.warning("could not release the compression lock: %s", exc)


def manual_compaction(agent: AgentState, focus: str | None = None) -> Flow:
    """The manual path (``/compress [focus]``): the whole request measured, force semantics,
    flush first; returns the :class:`CompactionOutcome`."""
    tokens = agent.estimate_request()
    outcome = yield from compress_context(
        agent, "manual", approx_tokens=tokens, focus_topic=focus or None, force=True
    )
    return outcome


def _compress_locked(
    agent: AgentState,
    path: CompactionPath,
    approx_tokens: int | None,
    focus_topic: str | None,
    force: bool,
) -> Flow:
    engine = agent.compressor
    started = time.perf_counter()
    before = list(agent.messages)
    before_tokens = estimate_messages_tokens_rough(before)

    # 0. A candidate prepared in the background (speculative compaction) is swapped in at
    # once: its flush and checkpoint already ran, before this transcript changes.
    count_before = engine.compression_count
    summary_usage = summary_usage_before(engine)
    previous_summary = getattr(engine, "previous_summary", None)
    agent.aim_compaction()
    taken = take(agent, path, before)
    if taken is not None:
        skipped = FlushResult(skipped="ran in the background, before the candidate's summary")
        base = _Base(
            path, before, before_tokens, started, count_before, previous_summary, summary_usage
        )
        return (yield from _finish(agent, base, taken, skipped, engine_facts(engine)))

    required = agent.settings.memory.checkpoint_required
    if required and path == "after_round" and agent.checkpoint_failed_turn == agent.turn:
        # the checkpoint failed earlier in this turn: one try per turn (checkpoint_gate)
        event = _unchanged(agent, path, before, RETRY_NEXT_TURN, started, before_tokens)
        yield event
        return CompactionOutcome(event, False, blocked=RETRY_NEXT_TURN)

    # 1. Flush, then the providers' checkpoint; the ledger's note rides along.
    flush = FlushResult(skipped="memory.flush_before_compression is off")
    if agent.flush_enabled:
        flush = yield from agent.flush_flow(before)
    if flush.error:
        yield WarningEvent("memory_flush_failed", f"Memory flush failed: {flush.error}")
    if required:  # fail closed (:mod:`.checkpoint_gate`)
        note = agent.ledger.summarizer_note()
        memory_context, failed = required_checkpoint(agent.memory, before, flush, note)
        if failed is not None:
            agent.checkpoint_failed_turn = agent.turn
            yield WarningEvent(BLOCKED_CODE, blocked_message(failed))
            reason = f"memory checkpoint failed: {failed}"
            event = _unchanged(agent, path, before, reason, started, before_tokens)
            yield event
            return CompactionOutcome(event, False, flush, blocked=blocked_message(failed))
    else:
        memory_context = agent.compaction_context(before)

    # 2. Compress (blocking work: offloaded so an async host keeps its event loop).
    kwargs = accepted_kwargs(engine, {"force": force, "memory_context": memory_context})
    # A provider-proven overflow is answered even when abort mode is configured (AL-13).
    abort_mode = getattr(engine, "abort_on_summary_failure", None)

    def run() -> list[dict[str, Any]]:
        if path == "reactive" and abort_mode:
            engine.abort_on_summary_failure = False  # type: ignore[attr-defined]
        try:
            result = engine.compress(before, approx_tokens, focus_topic, **kwargs)
            if path != "manual" and head_and_tail_are_everything(engine):
                result = compress_with_a_short_head(engine, before, approx_tokens, kwargs)
            return result
        finally:
            if path == "reactive" and abort_mode:
                engine.abort_on_summary_failure = abort_mode  # type: ignore[attr-defined]

    try:
        result: list[dict[str, Any]] = yield Offload(run)
    except PalimpsestError as exc:
        return (yield from _not_compacted(agent, path, before, before_tokens, started, exc, flush))
    except (ValueError, TypeError, RuntimeError) as exc:
        log.warning("compaction failed", exc_info=True)
        return (yield from _not_compacted(agent, path, before, before_tokens, started, exc, flush))
    facts = engine_facts(engine)
    stats = getattr(engine, "last_stats", None)
    if stats is not None and hasattr(stats, "compressed"):
        compacted = bool(stats.compressed)
    else:
        compacted = engine.compression_count > count_before or result != before
    agent.guards = save_guards(agent.store, agent.session_id, engine, agent.guards)
    if not compacted:
        reason = getattr(stats, "reason", None) or facts["failure_reason"] or "nothing to compact"
        event = _unchanged(agent, path, before, redact(str(reason)), started, before_tokens)
        yield event
        return CompactionOutcome(event, False, flush, facts)

    base = _Base(
        path, before, before_tokens, started, count_before, previous_summary, summary_usage
    )
    return (yield from _finish(agent, base, result, flush, facts))


@dataclass(frozen=True)
class _Base:
    """What a compaction knew before it ran (for the event, the undo record, the checks)."""

    path: CompactionPath
    before: list[dict[str, Any]]
    before_tokens: int
    started: float
    count_before: int
    previous_summary: str | None
    summary_usage: Any = None
    """The summarizer's last usage before this compaction (a new object means a new call)."""


def _finish(
    agent: AgentState,
    base: _Base,
    result: list[dict[str, Any]],
    flush: FlushResult,
    facts: dict[str, Any],
) -> Flow:
    """Steps 3 to 7 of AL-16 around a compacted ``result``, however it was made."""
    engine = agent.compressor
    path, before, before_tokens, started = base.path, base.before, base.before_tokens, base.started
    count_before, previous_summary = base.count_before, base.previous_summary
    # 3. Ledger and todo snapshot, after the summary (stale copies removed first).
    compacted_list = [m for m in result if not _is_injection(m)]
    present = [content_text(m.get("content")) for m in compacted_list if role_of(m) == "user"]
    ledger_text = agent.ledger.render(agent.todos, present)
    if ledger_text:
        ledger = {"role": "user", "content": ledger_text, LEDGER_MARKER: True}
        if (
            path in ("preflight", "idle")
            and compacted_list
            and role_of(compacted_list[-1]) == "user"
        ):
            # the turn's own request stays the last thing the model reads
            compacted_list.insert(len(compacted_list) - 1, ledger)
        else:
            compacted_list.append(ledger)
    snapshot = agent.todos.format_for_injection()
    if snapshot:
        compacted_list.append({"role": "user", "content": snapshot})
    if ledger_text and estimate_messages_tokens_rough(compacted_list) >= before_tokens:
        # In a tiny window the ledger can outweigh what the summary saved; a compaction
        # must shrink the context (a recovery pass that grows it makes no progress), so
        # the ledger yields: the summary already names the files and the failure.
        compacted_list = [m for m in compacted_list if not m.get(LEDGER_MARKER)]
    _rehydrate(agent, compacted_list, before_tokens, path)

    # 4. The prompt, rebuilt from the files as they are now (the flush may have written).
    prompt_before = agent.system_prompt
    agent.system_prompt = agent.prompt_builder.build(
        compression_count=engine.compression_count, reload_memory=True
    )

    # 5. The split: a continuation holds the whole compacted list (or, in place, the
    # session keeps its id and archives the rows it had: .in_place).
    old_id = agent.session_id
    in_place = in_place_enabled(agent)
    mode: CompactionMode | None = None
    if in_place:
        new_id = old_id
        stored = yield from archive_step(
            agent, old_id, compacted_list, prompt_before=prompt_before, count_before=count_before
        )
        mode = "in_place" if stored else None
    else:
        new_id = yield from _split(agent, old_id, compacted_list)
        rotated = agent.store is not None and new_id is not None and new_id != old_id
        mode = "rotation" if rotated else None
    # 6. Notifications, and the guards on the new row.
    switch_session(agent, new_id, old_id, compacted_list, "compression")
    agent.undo = UndoRecord(
        before=before,
        after_len=len(compacted_list),
        old_session_id=old_id,
        new_session_id=new_id,
        compression_count_before=count_before,
        previous_summary_before=previous_summary,
        system_prompt_before=prompt_before,
        in_place=in_place,
    )

    after_tokens = estimate_messages_tokens_rough(compacted_list)
    event = CompactionEvent(
        path=path,
        before_messages=len(before),
        after_messages=len(compacted_list),
        before_tokens=before_tokens,
        after_tokens=after_tokens,
        compacted=True,
        session_id=new_id,
        parent_session_id=old_id if new_id != old_id else None,
        reason=redact(facts["failure_reason"]) if facts["fallback_used"] else None,
        fallback_used=facts["fallback_used"],
        seconds=time.perf_counter() - started,
        mode=mode,
        cost=record_compaction(agent, before_tokens, after_tokens, base.summary_usage),
    )
    yield event
    # 7. Host-only warnings (never in the messages, CC-119).
    if facts["fallback_used"]:
        yield WarningEvent(
            "summary_failed",
            "Summary generation failed; a fallback summary was used"
            + (f": {redact(str(facts['failure_reason']))}" if facts["failure_reason"] else "."),
        )
    if engine.compression_count >= 2:
        yield WarningEvent("compression_count", count_warning(engine.compression_count))
    return CompactionOutcome(event, True, flush, facts)


def _rehydrate(
    agent: AgentState, compacted: list[dict[str, Any]], before_tokens: int, path: CompactionPath
) -> None:
    """Re-attach the files the agent wrote last (:mod:`.rehydrate`) after the ledger, in
    the room the compaction leaves below ``before_tokens`` (it must still shrink) and below
    the size it aimed for (:meth:`AgentState.aim_compaction`: the rest is the room the next
    tool rounds need; without that cap a 16K window overflowed one round later)."""
    budget = RehydrationBudget.from_settings(agent.settings.compression, agent.context_length)
    if budget.files <= 0 or agent.ledger.workdir is None or not agent.ledger.files_modified():
        return  # nothing to attach: not even a measurement
    if path == "reactive":
        return  # the provider just refused the request as too long: every token goes
    after = estimate_messages_tokens_rough(compacted)
    room = before_tokens - after - 1
    aim = getattr(agent.compressor, "compaction_target_tokens", None)
    if isinstance(aim, int) and aim > 0:
        room = min(room, aim - after)
    files = rehydration_message(agent.ledger, budget, room)
    if files is None:
        return
    at = next((i + 1 for i, m in enumerate(compacted) if m.get(LEDGER_MARKER)), len(compacted))
    if at == len(compacted) and path == "preflight" and role_of(compacted[-1]) == "user":
        at -= 1  # the turn's own request stays the last thing the model reads
    compacted.insert(at, files)


def _split(agent: AgentState, old_id: str | None, compacted: list[dict[str, Any]]) -> Flow:
    """End ``old_id`` with ``compression`` and start the continuation (AL-20)."""
    store = agent.store
    if store is None or old_id is None:
        return new_session_id() if old_id is not None else None
    if agent.memory is not None:
        agent.memory.drain()  # commit pending memory work for the old session first
    try:
        new_id: str = yield Offload(
            lambda: store.start_continuation(
                old_id,
                messages=compacted,
                model=agent.model_name,
                system_prompt=agent.system_prompt,
            )
        )
    except (PalimpsestError, ValueError) as exc:
        log.warning("could not start the continuation of %s: %s", old_id, exc)
        yield WarningEvent(
            "session_split_failed",
            f"The compacted conversation could not be stored as a new session ({exc}); "
            "it continues in the current one.",
        )
        return old_id
    return new_id


def _not_compacted(
    agent: AgentState,
    path: CompactionPath,
    before: list[dict[str, Any]],
    before_tokens: int,
    started: float,
    exc: BaseException,
    flush: FlushResult,
) -> Flow:
    reason = redact(f"{type(exc).__name__}: {exc}")
    yield WarningEvent("compaction_failed", f"Compaction failed: {reason}")
    event = _unchanged(agent, path, before, reason, started, before_tokens)
    yield event
    return CompactionOutcome(event, False, flush, {"failure_reason": reason})
