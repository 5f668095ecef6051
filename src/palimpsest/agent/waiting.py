"""Waiting for a worker thread in short slices, so the waiter stays interruptible.

Python runs signal handlers in the main thread, and a blocking wait there is cut short
only when the kernel delivers the signal to that thread. Linux may hand a terminal's
SIGINT to any thread of the process (a tool's worker, a shell command's output copier),
and then one long ``join`` sits out the whole tool before the user's Ctrl-C takes effect.
Waking every :data:`JOIN_SLICE` seconds bounds that delay, and lets a waiter notice a
``stop`` event set from elsewhere.
"""

from __future__ import annotations

import threading
import time

__all__ = ["JOIN_SLICE", "join_for"]

JOIN_SLICE = 0.1
"""Longest single wait on a thread, in seconds."""


def join_for(
    thread: threading.Thread,
    timeout: float,
    *,
    stop: threading.Event | None = None,
    slice_seconds: float = JOIN_SLICE,
) -> None:
    """Wait until ``thread`` ends, ``timeout`` seconds pass or ``stop`` is set, whichever
    comes first, never blocking longer than ``slice_seconds`` at a time."""
    deadline = time.monotonic() + timeout
    while thread.is_alive() and not (stop is not None and stop.is_set()):
        left = deadline - time.monotonic()
        if left <= 0:
            return
        thread.join(min(left, slice_seconds))
