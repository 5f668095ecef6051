"""The per-session compression lock (agent-loop.md AL-30, compaction.md CC-116).

Only one compaction of a session runs at a time, whichever path started it (manual,
automatic, hygiene) and whichever process. The lock is a lease in ``compression_locks``:
a row per session with its holder (host, process id and thread) and an expiry. A lease
that expired, or whose holder is a process on this host that no longer exists, is taken
over. Taking, checking and writing happen in one write transaction, so two processes can
never both believe they hold it.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable

import apsw

from ..storage.contract import Store

__all__ = [
    "LEASE_SECONDS",
    "busy_message",
    "holder_id",
    "release_compression_lock",
    "take_compression_lock",
]

LEASE_SECONDS = 600.0
"""How long a lease lasts; a compaction that takes longer loses it to a waiting one."""


def holder_id() -> str:
    """``host:pid:thread``: the process id lets another process prove the holder dead."""
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"


def _holder_dead(holder: str) -> bool:
    host, _, rest = holder.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False  # another machine's process cannot be checked from here
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # it exists (we may just not be allowed to signal it)
    return False


def take_compression_lock(
    store: Store,
    session_id: str,
    holder: str,
    *,
    lease: float = LEASE_SECONDS,
    clock: Callable[[], float] = time.time,
) -> str | None:
    """Take the lease; ``None`` on success, else the current holder's id."""

    def take(con: apsw.Connection) -> str | None:
        now = clock()
        found = con.execute(
            "SELECT holder, expires_at FROM compression_locks WHERE session_id = ?",
            (session_id,),
        ).fetchall()
        if found:
            current, expires = str(found[0][0]), float(found[0][1] or 0.0)
            if current != holder and expires > now and not _holder_dead(current):
                return current
        con.execute(
            "INSERT OR REPLACE INTO compression_locks (session_id, holder, acquired_at,"
            " expires_at) VALUES (?, ?, ?, ?)",
            (session_id, holder, now, now + lease),
        )
        return None

    return store.database.write(take)


def release_compression_lock(store: Store, session_id: str, holder: str) -> None:
    """Give the lease back (only our own)."""
    store.database.write(
        lambda con: con.execute(
            "DELETE FROM compression_locks WHERE session_id = ? AND holder = ?",
            (session_id, holder),
        )
    )


def busy_message(holder: str | None) -> str:
    """CC-116: what a manual ``/compress`` says when another compaction holds the lock."""
    if holder:
        return (
            f"⏳ Compression already in progress for this session (holder: {holder}). "
            "Please wait for it to finish."
        )
    return (
        "Compression was skipped: the session's compression lock could not be acquired. "
        "Another compression may still be running, or the check failed; try again shortly."
    )
