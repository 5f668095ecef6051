"""What one input record became, and the guard every engine runs a record through.

The engines (one process, a process pool, Ray workers, the asyncio model path) differ in
where a record is processed, never in what a timeout or an exception means (spec TJ-24):

- a record that runs past ``per_trajectory_timeout`` is **dropped** and counted ``timed_out``;
- a record whose function raises keeps its **original** entry and is counted ``failed``;
- a record the reader could not parse (not JSON, not an object) never reaches the function:
  it becomes ``bad_input`` with its raw text kept so the writer can copy it through.

So all of them call :func:`run_guarded` (or :func:`run_guarded_async`) and hand back
:class:`Outcome` values, which pickle, so they cross process and Ray boundaries unchanged.

A timeout in a synchronous engine is a ``SIGALRM`` timer armed around the call, which works
in the main thread of a process (the one-process engine, pool workers and Ray task workers).
It interrupts Python code; a single long call into C (a tokenizer on one huge string) is
interrupted when it returns. Off the main thread no timer can be armed, and the elapsed time
is checked after the call instead.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from .metrics import TrajectoryMetrics

__all__ = [
    "AsyncEntryFunction",
    "EntryFunction",
    "EntryResultLike",
    "Item",
    "Outcome",
    "one_line",
    "run_guarded",
    "run_guarded_async",
]


class EntryResultLike(Protocol):
    """What a per-entry function returns (``trajectories.entry.EntryResult`` fits)."""

    @property
    def entry(self) -> Mapping[str, Any] | None: ...

    @property
    def metrics(self) -> TrajectoryMetrics | None: ...

    @property
    def status(self) -> str: ...

    @property
    def error(self) -> str | None: ...


EntryFunction = Callable[[dict[str, Any]], EntryResultLike]
"""A picklable function of one entry: the unit every engine runs."""

AsyncEntryFunction = Callable[[dict[str, Any]], Awaitable[EntryResultLike]]


@dataclass(frozen=True, slots=True)
class Item:
    """One record read from the input, parsed or not.

    ``location`` is what an error line starts with (``data.jsonl:12``, ``data.parquet: row
    12``). ``raw`` is kept only for a record that could not be parsed, so it can be copied
    through byte for byte; ``problem`` says why it could not.
    """

    position: int
    location: str
    entry: dict[str, Any] | None
    raw: str | None = None
    problem: str | None = None
    deferred: bool = False
    """``raw`` is a JSONL line not parsed yet: a pool worker parses it, so the parent that
    reads the file does not (``trajectories.engine_local``)."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """What became of one item: the entry to write (``None``: nothing) and how it went."""

    status: str
    entry: dict[str, Any] | None
    metrics: TrajectoryMetrics | None = None
    error: str | None = None
    raw: str | None = None
    """The unparsed input text of a ``bad_input`` record, for copying it through."""
    line: str | None = None
    """The entry already written as its JSONL line (``entry`` is then ``None``): a pool
    worker serializes what it sends back, so the parent only writes text."""


class _EntryTimedOut(BaseException):
    """Raised by the timer inside the entry's call; a BaseException so that no
    ``except Exception`` in the per-entry code can swallow it."""


def _on_alarm(signum: int, frame: object) -> None:
    raise _EntryTimedOut


def one_line(exc: BaseException) -> str:
    """``TypeName: message`` on one line, for the error report."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _timed_out(timeout: float) -> Outcome:
    return Outcome("timed_out", None, error=f"timed out after {timeout:g} s; entry dropped")


def _from_result(result: EntryResultLike) -> Outcome:
    entry = result.entry
    return Outcome(
        status=result.status,
        entry=dict(entry) if entry is not None else None,
        metrics=result.metrics,
        error=result.error,
    )


def _unparsed(item: Item) -> Outcome:
    return Outcome("bad_input", None, error=item.problem, raw=item.raw)


def _can_arm_timer() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


def run_guarded(fn: EntryFunction, item: Item, timeout: float | None) -> Outcome:
    """``fn(item.entry)`` as an :class:`Outcome`, under ``timeout`` seconds (None: no limit)."""
    if item.entry is None:
        return _unparsed(item)
    limit = timeout if timeout and timeout > 0 else None
    armed = limit is not None and _can_arm_timer()
    previous: Any = None
    started = time.monotonic()
    try:
        if armed:
            previous = signal.signal(signal.SIGALRM, _on_alarm)
            signal.setitimer(signal.ITIMER_REAL, limit)  # type: ignore[arg-type]
        try:
            result = fn(item.entry)
        finally:
            if armed:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)
    except _EntryTimedOut:
        return _timed_out(limit or 0.0)
    except Exception as exc:
        return Outcome("failed", item.entry, error=one_line(exc))
    if limit is not None and not armed and time.monotonic() - started > limit:
        return _timed_out(limit)
    return _from_result(result)


async def run_guarded_async(fn: AsyncEntryFunction, item: Item, timeout: float | None) -> Outcome:
    """The asynchronous twin of :func:`run_guarded`, timed out by ``asyncio.wait_for``."""
    if item.entry is None:
        return _unparsed(item)
    limit = timeout if timeout and timeout > 0 else None
    try:
        result = await asyncio.wait_for(fn(item.entry), limit)
    except TimeoutError:
        return _timed_out(limit or 0.0)
    except Exception as exc:
        return Outcome("failed", item.entry, error=one_line(exc))
    return _from_result(result)
