"""join_for: a sliced wait that ends at the thread's end, the timeout or a stop event."""

from __future__ import annotations

import threading
import time

from palimpsest.agent.waiting import join_for


def _sleeper(release: threading.Event) -> threading.Thread:
    thread = threading.Thread(target=release.wait, args=(10,), daemon=True)
    thread.start()
    return thread


def test_the_timeout_ends_the_wait() -> None:
    release = threading.Event()
    thread = _sleeper(release)
    started = time.monotonic()
    join_for(thread, 0.3)
    assert thread.is_alive() and 0.25 < time.monotonic() - started < 5
    release.set()


def test_a_stop_event_ends_the_wait_before_the_timeout() -> None:
    release, stop = threading.Event(), threading.Event()
    thread = _sleeper(release)
    threading.Timer(0.2, stop.set).start()
    started = time.monotonic()
    join_for(thread, 30, stop=stop)
    assert thread.is_alive() and time.monotonic() - started < 5
    release.set()


def test_the_thread_ending_ends_the_wait() -> None:
    release = threading.Event()
    thread = _sleeper(release)
    threading.Timer(0.2, release.set).start()
    join_for(thread, 30)
    assert not thread.is_alive()
