"""Idle compaction: a session picked up after a long pause compacts before its first call.

After ``compression.idle_minutes`` without a stored message (a session resumed the next
day, or a live agent left alone) the provider's prompt cache is cold, so the first request
pays full price for the whole context anyway; compacting then costs no cache and leaves a
smaller context for everything after. It runs only when the request is large, at least
``compression.idle_min_share`` of the threshold, and when there is a middle to compact; a
small context is left alone. The idle time is measured from the store
(:meth:`~palimpsest.storage.sessions.SessionStore.last_message_time`) before the turn adds
its user message, so it covers both a resumed agent and a live one. Without a store, or
with ``idle_minutes`` unset (the default), nothing happens.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Generator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..errors import PalimpsestError
from .compaction_step import compress_context
from .driver import Flow
from .events import CompactionEvent

if TYPE_CHECKING:
    from .state import AgentState

__all__ = ["idle_compaction", "idle_seconds"]

log = logging.getLogger("palimpsest.agent")


def idle_seconds(agent: AgentState, now: float | None = None) -> float | None:
    """Seconds since the session's newest stored message, or ``None`` when unknown or
    when idle compaction is off. Call it before the turn stores its own message."""
    if agent.settings.compression.idle_minutes is None:
        return None
    if agent.store is None or agent.session_id is None:
        return None
    try:
        last = agent.store.last_message_time(agent.session_id)
    except PalimpsestError as exc:
        log.warning("could not read the session's last message time: %s", exc)
        return None
    if last is None:
        return None
    return max(0.0, (time.time() if now is None else now) - last)


def idle_compaction(agent: AgentState, idle: float | None) -> Flow:
    """Compact before the first call when the session was idle long enough and is large."""
    minutes = agent.settings.compression.idle_minutes
    if idle is None or minutes is None or idle < minutes * 60 or not agent.compression_enabled:
        return
    engine = agent.compressor
    estimate = agent.estimate_request()
    floor = int(engine.threshold_tokens * agent.settings.compression.idle_min_share)
    if estimate < floor:
        log.info(
            "idle for %.0f min; %d tokens is under %d: not compacted", idle / 60, estimate, floor
        )
        return
    if not engine.has_content_to_compress(agent.messages):
        return
    reason = (
        f"idle for {idle / 60:,.0f} minutes (compression.idle_minutes: {minutes:g}) with "
        f"~{estimate:,} tokens, over {floor:,} (compression.idle_min_share of the threshold)"
    )
    yield from _with_reason(compress_context(agent, "idle", approx_tokens=estimate), reason)


def _with_reason(flow: Flow, reason: str) -> Generator[Any, Any, Any]:
    """``flow`` passed through, its :class:`CompactionEvent` given ``reason`` when it has
    none (a summary failure's reason is kept). Sends and throws reach ``flow`` unchanged."""
    sent: Any = None
    thrown: BaseException | None = None
    while True:
        try:
            item = flow.throw(thrown) if thrown is not None else flow.send(sent)
        except StopIteration as stop:
            return stop.value
        thrown = None
        if isinstance(item, CompactionEvent) and item.reason is None:
            item = replace(item, reason=reason)
        try:
            sent = yield item
        except GeneratorExit:
            flow.close()
            raise
        except BaseException as exc:  # the driver's error for an offloaded step
            thrown = exc
            sent = None
