"""A wall-clock limit on one summary call, for summarizers that block.

A summarizer is a plain synchronous ``summarize(request) -> str``; a model behind it can
hang far longer than any HTTP timeout catches (a server that trickles a byte a minute, a
local model stuck in a loop; users of other tools report 23-minute compactions). The
compressor therefore runs every summary call through :func:`call_with_deadline`: the call
runs on a daemon thread and the caller waits at most ``seconds``. Past that the call is
**abandoned**: the caller gets a :class:`~palimpsest.errors.SummaryError` (``cause_kind``
``"timeout"``) and goes on with its deterministic fallback, and the thread is left to end
on its own. Its result is never read, so a late answer cannot reach the conversation.

A summarizer that can do better reads :func:`current_deadline` inside the call: the time
left (to pass on as the model call's own ``timeout``, so the SDK drops the connection
itself) and whether the call was abandoned (so it makes no further calls and records
nothing when a late reply arrives). :class:`~.llm.LLMSummarizer` does both.
"""

from __future__ import annotations

import contextvars
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from ..errors import SummaryError

__all__ = [
    "DEFAULT_SUMMARY_TIMEOUT",
    "Deadline",
    "call_with_deadline",
    "current_deadline",
    "summary_thread_name",
]

T = TypeVar("T")

DEFAULT_SUMMARY_TIMEOUT = 300.0
"""Seconds one summary call may take (``compression.summary_timeout_seconds``): a slow
local model writing a long summary finishes well inside it, a hung call is cut at 5 minutes."""


@dataclass
class Deadline:
    """When the running summary call must be done, and whether its caller gave up on it."""

    ends_at: float
    """On the :func:`time.monotonic` clock."""
    abandoned: threading.Event = field(default_factory=threading.Event)

    def remaining(self) -> float:
        return max(0.0, self.ends_at - time.monotonic())

    def expired(self) -> bool:
        return self.abandoned.is_set() or self.remaining() <= 0.0


_CURRENT: contextvars.ContextVar[Deadline | None] = contextvars.ContextVar(
    "palimpsest_summary_deadline", default=None
)


def summary_thread_name(caller: str) -> str:
    """The name of the thread a summary call asked for on thread ``caller`` runs on."""
    return f"{caller}/summary"


def current_deadline() -> Deadline | None:
    """The deadline of the summary call running in this thread, ``None`` outside one."""
    return _CURRENT.get()


def call_with_deadline(
    function: Callable[[], T], seconds: float | None, *, what: str = "the summary call"
) -> T:
    """``function()``, abandoned with a ``SummaryError`` when it runs past ``seconds``.

    ``None`` runs it in this thread with no limit. An exception of ``function`` is raised
    here as it is. An interrupt (Ctrl-C) while waiting abandons the call too.
    """
    if seconds is None:
        return function()
    if seconds <= 0:
        raise ValueError(f"a summary timeout must be positive, got {seconds}")
    deadline = Deadline(time.monotonic() + seconds)
    box: queue.Queue[tuple[bool, object]] = queue.Queue(maxsize=1)

    context = contextvars.copy_context()  # the caller's context vars (tracing, ...) go along

    def run() -> object:
        _CURRENT.set(deadline)  # set in the copy: never seen by the caller
        return function()

    def work() -> None:
        try:
            box.put((True, context.run(run)))
        except BaseException as exc:  # handed to the caller, who decides
            box.put((False, exc))

    name = summary_thread_name(threading.current_thread().name)
    threading.Thread(target=work, name=name, daemon=True).start()
    try:
        done, value = box.get(timeout=seconds)
    except queue.Empty:
        deadline.abandoned.set()
        raise SummaryError(
            f"{what} did not finish within {seconds:g} s and was abandoned",
            cause_kind="timeout",
        ) from None
    except BaseException:
        deadline.abandoned.set()
        raise
    if not done and isinstance(value, BaseException):
        raise value
    return value  # type: ignore[return-value]
