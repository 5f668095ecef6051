"""What gateway hygiene keeps in the store: the admission lease and the per-lineage state.

A gateway may run several processes (workers) and many threads, all delivering messages to
the same stored session. Hygiene must compact that session once, and store every inbound
message exactly once, in one order. Two things make that true across processes:

* **the admission lease.** A delivery holds a lease for its whole check-compact-append
  step. The lease is a row of ``compression_locks`` (the same table and the same
  expiry and dead-holder rules as the per-session compression lock of :mod:`.lock`) under
  the key ``gateway-hygiene:<root>``, where ``<root>`` is the first session of the
  conversation's compression chain: it does not change when a compaction rotates the
  session, so a delivery that waited on the old id is serialized with one that arrives
  for the new id. Threads of one process first queue on an in-process lock, so only one
  of them polls the database;
* **the lineage state** (one JSON value in ``state_meta``): the admission ``sequence`` (the
  count of messages admitted so far, written in the same transaction that stores the
  message, so the stored order is the sequence order), the hygiene ``failure_streak``
  and the ``cooldown_until`` after a failure (AL-35, refined).

The last real prompt tokens of a session (AL-33) are not kept by the session store (its
token columns are running totals), so the gateway records them here per session id with
:func:`record_prompt_tokens`; a compaction's continuation starts with none (AL-34.4).
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

import apsw

from ..errors import DatabaseLockedError, PalimpsestError
from ..storage.contract import Store
from ..storage.fts_layout import get_meta, set_meta
from .lock import LEASE_SECONDS, holder_id, release_compression_lock, take_compression_lock

__all__ = [
    "ADMISSION_WAIT_SECONDS",
    "LineageState",
    "admission",
    "admission_key",
    "clear_prompt_tokens",
    "forget_prompt_tokens",
    "next_sequence",
    "read_lineage_state",
    "read_prompt_tokens",
    "record_prompt_tokens",
    "write_lineage_state",
]

log = logging.getLogger("palimpsest.agent")

ADMISSION_WAIT_SECONDS = LEASE_SECONDS
"""How long a delivery waits for the admission lease before it gives up (with an error,
the message not stored): as long as a lease lasts, so a compaction that is still running
is waited for, and only a stuck one makes deliveries fail."""

_POLL_FIRST = 0.005
_POLL_MAX = 0.1


def admission_key(root: str) -> str:
    """The ``compression_locks`` key of a conversation's admission lease."""
    return f"gateway-hygiene:{root}"


def _state_key(root: str) -> str:
    return f"gateway_hygiene:{root}"


def _prompt_key(session_id: str) -> str:
    return f"gateway_hygiene_prompt:{session_id}"


@dataclass(frozen=True)
class LineageState:
    """Hygiene's state for one conversation (a compression chain)."""

    sequence: int = 0
    """How many inbound messages were admitted (the last one's sequence number)."""
    failure_streak: int = 0
    """Hygiene compactions in a row that did not rewrite the stored transcript."""
    cooldown_until: float | None = None
    """Wall-clock seconds before which hygiene does not try to compact again."""


def read_lineage_state(con: apsw.Connection, root: str) -> LineageState:
    """The stored state (the empty state when none or unreadable: logged)."""
    raw = get_meta(con, _state_key(root))
    if raw is None:
        return LineageState()
    try:
        data = json.loads(raw)
        until = data.get("cooldown_until")
        return LineageState(
            sequence=int(data.get("sequence", 0)),
            failure_streak=int(data.get("failure_streak", 0)),
            cooldown_until=float(until) if until is not None else None,
        )
    except (ValueError, TypeError, AttributeError) as exc:
        log.warning("gateway hygiene state of %s unreadable (%s); starting afresh", root, exc)
        return LineageState()


def write_lineage_state(con: apsw.Connection, root: str, state: LineageState) -> None:
    """Store ``state`` (inside the caller's write transaction)."""
    payload = {
        "sequence": state.sequence,
        "failure_streak": state.failure_streak,
        "cooldown_until": state.cooldown_until,
    }
    set_meta(con, _state_key(root), json.dumps(payload))


def next_sequence(con: apsw.Connection, root: str, state: LineageState) -> int:
    """Write ``state`` with the sequence advanced by one; returns the new number."""
    stored = read_lineage_state(con, root)
    number = stored.sequence + 1
    write_lineage_state(con, root, replace(state, sequence=number))
    return number


def record_prompt_tokens(store: Store, session_id: str, prompt_tokens: int) -> None:
    """Remember a session's last **real** prompt tokens (a provider's count, not an
    estimate) for the next hygiene check (AL-33). Zero or less clears the figure."""
    if prompt_tokens <= 0:
        clear_prompt_tokens(store, session_id)
        return
    store.database.write(lambda con: set_meta(con, _prompt_key(session_id), str(prompt_tokens)))


def clear_prompt_tokens(store: Store, session_id: str) -> None:
    """Forget ``session_id``'s recorded prompt tokens (the rough estimate is used next)."""
    store.database.write(lambda con: forget_prompt_tokens(con, session_id))


def forget_prompt_tokens(con: apsw.Connection, session_id: str) -> None:
    """:func:`clear_prompt_tokens` inside the caller's write transaction."""
    con.execute("DELETE FROM state_meta WHERE key = ?", (_prompt_key(session_id),))


def read_prompt_tokens(store: Store, session_id: str) -> int:
    """The recorded last real prompt tokens of ``session_id`` (0 when none)."""
    with store.database.reader() as con:
        raw = get_meta(con, _prompt_key(session_id))
    try:
        return max(0, int(raw)) if raw is not None else 0
    except ValueError:
        return 0


class _KeyLock:
    """A lock that can live in a WeakValueDictionary (a bare ``threading.Lock`` cannot)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()


_local_locks: weakref.WeakValueDictionary[tuple[str, str], _KeyLock] = weakref.WeakValueDictionary()
_registry = threading.Lock()


def _local_lock(store: Store, key: str) -> _KeyLock:
    with _registry:
        found = _local_locks.get((store.location, key))
        if found is None:
            found = _KeyLock()
            _local_locks[(store.location, key)] = found
        return found


@contextmanager
def admission(
    store: Store,
    root: str,
    *,
    wait: float = ADMISSION_WAIT_SECONDS,
    lease: float = LEASE_SECONDS,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[str]:
    """Hold the admission lease of the conversation rooted at ``root`` for the block.

    Waits up to ``wait`` seconds; then raises :class:`DatabaseLockedError` naming the
    holder, and the caller stores nothing (the gateway can retry the delivery).
    """
    key = admission_key(root)
    local = _local_lock(store, key)
    deadline = clock() + wait
    if not local.lock.acquire(timeout=max(0.0, wait)):
        raise _busy(store, key, "another thread of this process")
    try:
        holder = holder_id()
        delay = _POLL_FIRST
        while (busy := take_compression_lock(store, key, holder, lease=lease)) is not None:
            if clock() >= deadline:
                raise _busy(store, key, busy)
            sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, _POLL_MAX)
        try:
            yield holder
        finally:
            try:
                release_compression_lock(store, key, holder)
            except PalimpsestError as exc:
                log.warning("could not release the hygiene admission lease %s: %s", key, exc)
    finally:
        local.lock.release()


def _busy(store: Store, key: str, holder: str) -> DatabaseLockedError:
    return DatabaseLockedError(
        f"{store.location}: the gateway hygiene lease {key!r} stayed held by {holder}; the "
        "message was not stored. Retry the delivery; a holder that crashed is taken over "
        "when its lease expires.",
        path=store.location,
    )
