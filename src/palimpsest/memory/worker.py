"""One background thread that runs memory jobs in arrival order.

Turn syncs and queued prefetches share it, so turn N is written before turn N+1 and a
session switch runs after the syncs queued before it (MEM-51, MEM-54). The thread is
created on first use and is a daemon: a stuck provider can delay shutdown by at most the
drain timeout, never keep the process alive.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["BackgroundWorker"]

log = logging.getLogger(__name__)

_Job = tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]] | None


class BackgroundWorker:
    """A FIFO job queue drained by one daemon thread."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._queue: queue.Queue[_Job] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def submit(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()
        self._queue.put((fn, args, kwargs))

    def _run(self) -> None:
        while True:
            job = self._queue.get()
            try:
                if job is None:
                    return
                fn, args, kwargs = job
                fn(*args, **kwargs)
            except Exception:
                log.warning("background memory job failed", exc_info=True)
            finally:
                self._queue.task_done()

    def drain(self, timeout: float) -> bool:
        """Wait until every job queued so far has run; ``False`` on timeout."""
        if self._thread is None or not self._thread.is_alive():
            return True
        done = threading.Event()
        self._queue.put((done.set, (), {}))
        return done.wait(timeout)

    def stop(self) -> None:
        """Let the thread exit after the jobs already queued."""
        if self._thread is not None and self._thread.is_alive():
            self._queue.put(None)
        self._thread = None
