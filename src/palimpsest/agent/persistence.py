"""The agent's side of the session store: binding, the write pointer, durable guards.

Three promises are kept here:

* **Every message is stored as it joins the history**, in order, never a request-only
  injection or a flush message. :class:`SessionWriter` keeps an "already persisted"
  pointer into the live history; each save writes everything after it in one
  transaction. A failed write is logged and retried with the next save, so a transient
  lock never loses a message and never stores one twice (AL-20 step 5 resets the pointer
  when a continuation starts holding the compacted list).
* **Resuming lands on the tip** of a compression lineage (``resume_target``), with its
  messages and stored system prompt.
* **The anti-thrashing state is durable** (compaction.md CC-22): the compressor's
  ineffective count, fallback streak, summary-failure cooldown and its error live in the
  session row, are loaded when the agent binds to a session, written only when they
  change, and re-read before a "blocked" answer is believed (another process may have
  cleared them). The compressor's cooldown deadline is on its own monotonic clock; the
  row holds wall-clock seconds, converted at the edge.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import apsw

from ..compaction.engine import ContextEngine
from ..errors import PalimpsestError
from ..storage.contract import Store
from ..storage.fts_layout import get_meta, set_meta

__all__ = [
    "GuardState",
    "SessionWriter",
    "load_guards",
    "load_state",
    "read_guards",
    "save_guards",
    "save_state",
]

log = logging.getLogger("palimpsest.agent")


class SessionWriter:
    """Appends the live history to one session, tolerating store failures."""

    def __init__(self, store: Store | None, session_id: str | None) -> None:
        self.store = store
        self.session_id = session_id
        self.persisted = 0
        """How many messages of the live history are already in the store."""
        self.last_error: str | None = None

    def rebind(self, session_id: str | None, persisted: int) -> None:
        """A new session holds the first ``persisted`` messages already (a continuation)."""
        self.session_id = session_id
        self.persisted = persisted

    def save(self, messages: Sequence[Mapping[str, Any]]) -> bool:
        """Store ``messages[persisted:]``; ``False`` (logged) when the store refused."""
        if self.store is None or self.session_id is None:
            self.persisted = len(messages)
            return True
        pending = messages[self.persisted :]
        if not pending:
            return True
        try:
            self.store.append_messages(self.session_id, pending)
        except PalimpsestError as exc:
            self.last_error = str(exc)
            log.warning("could not store %d message(s): %s", len(pending), exc)
            return False
        self.persisted = len(messages)
        self.last_error = None
        return True


@dataclass(frozen=True)
class GuardState:
    """The compressor's anti-thrashing state as stored on the session row."""

    ineffective: int = 0
    fallback_streak: int = 0
    cooldown_until: float | None = None
    """Wall-clock seconds (``time.time()``) until which summaries are not attempted."""
    error: str | None = None


def _has_guards(engine: ContextEngine) -> bool:
    return all(
        hasattr(engine, name)
        for name in (
            "ineffective_compression_count",
            "fallback_streak",
            "summary_failure_cooldown_until",
        )
    )


def engine_guards(engine: ContextEngine) -> GuardState | None:
    """The engine's current guards, or ``None`` for an engine without them."""
    if not _has_guards(engine):
        return None
    remaining = 0.0
    cooldown = getattr(engine, "cooldown_remaining", None)
    if callable(cooldown):
        remaining = float(cooldown())
    until = round(time.time() + remaining, 3) if remaining > 0 else None
    return GuardState(
        ineffective=int(engine.ineffective_compression_count),  # type: ignore[attr-defined]
        fallback_streak=int(engine.fallback_streak),  # type: ignore[attr-defined]
        cooldown_until=until,
        error=getattr(engine, "summary_failure_error", None) if until else None,
    )


def read_guards(store: Store, session_id: str) -> GuardState | None:
    """The guards stored on ``session_id``'s row (``None`` when the row is missing)."""
    row = store.get_session(session_id)
    if row is None:
        return None
    until = row.get("compression_failure_cooldown_until")
    return GuardState(
        ineffective=int(row.get("compression_ineffective_count") or 0),
        fallback_streak=int(row.get("compression_fallback_streak") or 0),
        cooldown_until=float(until) if until else None,
        error=row.get("compression_failure_error"),
    )


def apply_guards(engine: ContextEngine, state: GuardState) -> None:
    """Put stored guards into the engine (its cooldown clock is monotonic: convert)."""
    if not _has_guards(engine):
        return
    engine.ineffective_compression_count = state.ineffective  # type: ignore[attr-defined]
    engine.fallback_streak = state.fallback_streak  # type: ignore[attr-defined]
    remaining = (state.cooldown_until or 0.0) - time.time()
    clock = getattr(engine, "_clock", time.monotonic)
    if remaining > 0:
        engine.summary_failure_cooldown_until = clock() + remaining  # type: ignore[attr-defined]
        engine.summary_failure_error = state.error  # type: ignore[attr-defined]
    elif getattr(engine, "summary_failure_cooldown_until", 0.0) > clock():
        # CC-22: an empty row does not clear a local deadline that is still running.
        return
    else:
        engine.summary_failure_cooldown_until = 0.0  # type: ignore[attr-defined]
        engine.summary_failure_error = None  # type: ignore[attr-defined]


def load_guards(store: Store | None, session_id: str | None, engine: ContextEngine) -> None:
    """Bind: the engine takes the guards stored on the session (CC-22)."""
    if store is None or session_id is None or not _has_guards(engine):
        return
    try:
        state = read_guards(store, session_id)
    except PalimpsestError as exc:
        log.warning("could not read the compaction guards of %s: %s", session_id, exc)
        return
    if state is not None:
        apply_guards(engine, state)


def save_guards(
    store: Store | None,
    session_id: str | None,
    engine: ContextEngine,
    last: GuardState | None,
) -> GuardState | None:
    """Write the engine's guards when they differ from ``last``; returns what is stored."""
    if store is None or session_id is None:
        return last
    state = engine_guards(engine)
    if state is None or _same(state, last):
        return last
    try:
        store.database.write(
            lambda con: con.execute(
                "UPDATE sessions SET compression_ineffective_count = ?,"
                " compression_fallback_streak = ?, compression_failure_cooldown_until = ?,"
                " compression_failure_error = ? WHERE id = ?",
                (
                    state.ineffective,
                    state.fallback_streak,
                    state.cooldown_until,
                    state.error,
                    session_id,
                ),
            )
        )
    except PalimpsestError as exc:
        log.warning("could not store the compaction guards of %s: %s", session_id, exc)
        return last
    return state


def _same(a: GuardState, b: GuardState | None) -> bool:
    if b is None:
        return a == GuardState()
    # A running cooldown's deadline moves by rounding only; compare it to the second.
    same_until = (a.cooldown_until is None) == (b.cooldown_until is None) and (
        a.cooldown_until is None or abs(a.cooldown_until - (b.cooldown_until or 0.0)) < 1.0
    )
    return (
        a.ineffective == b.ineffective
        and a.fallback_streak == b.fallback_streak
        and same_until
        and a.error == b.error
    )


def _state_key(session_id: str) -> str:
    return f"agent_state:{session_id}"


def save_state(store: Store | None, session_id: str | None, state: dict[str, Any]) -> None:
    """Keep the ledger and the todo list with the session (``state_meta``), so an agent
    resumed after a restart still knows the files it changed, the last failure and its
    tasks. A store failure is logged: the conversation goes on without it."""
    if store is None or session_id is None:
        return
    payload = json.dumps(state, ensure_ascii=False)
    try:
        store.database.write(lambda con: set_meta(con, _state_key(session_id), payload))
    except (PalimpsestError, apsw.Error) as exc:
        log.warning("could not store the agent state of %s: %s", session_id, exc)


def load_state(store: Store | None, session_id: str | None) -> dict[str, Any] | None:
    """What :func:`save_state` kept for ``session_id`` (``None`` when nothing or unreadable)."""
    if store is None or session_id is None:
        return None
    try:
        with store.database.reader() as con:
            raw = get_meta(con, _state_key(session_id))
        data = json.loads(raw) if isinstance(raw, str) else None
    except (PalimpsestError, apsw.Error, ValueError) as exc:
        log.warning("could not read the agent state of %s: %s", session_id, exc)
        return None
    return data if isinstance(data, dict) else None
