"""The local engines: one process, a process pool, and the asyncio path for model summaries.

Each engine maps a stream of :class:`~.outcome.Item` to a stream of
:class:`~.outcome.Outcome` **in input order**, pulling input lazily so memory is bounded by
the in-flight window, not by the dataset:

- :func:`map_in_process`: one item at a time in this process (``--workers 1``).
- :func:`map_in_pool`: a process pool of ``workers`` processes. Items travel in
  small batches (one pickling round trip per batch, not per entry); at most ``window``
  batches are in flight, and results are yielded in submission order. JSONL records
  travel as their text and come back as their output line (``Item.deferred``,
  ``Outcome.line``): the workers parse and serialize, and the parent, which shares the
  two cores with them, only reads and writes bytes. Each worker receives
  the per-entry function once, at start-up. The workers are forked (:func:`start_method`)
  when the parent runs no other thread: they then start with the parent's imports and its
  tokenizer already built (``counting.make_counter`` keeps one per process), where a
  spawned worker spends ~1-1.5 s of CPU importing the package and building the BPE
  vocabulary again. A parent that holds threads (the progress bar, an SDK client), which
  a fork would copy mid-state, or a platform where fork is unsafe, gets ``spawn``.
- :func:`map_async`: for model summaries, which wait on the network rather than the CPU. An
  event loop in a helper thread runs the asynchronous per-entry function, at most ``window``
  entries in flight; the cap on concurrent model calls (``max_concurrent_requests``) is a
  semaphore shared by all of them.

Every engine runs entries through :func:`~.outcome.run_guarded` (or its async twin), so the
timeout and failure rules are the same everywhere.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import multiprocessing
import sys
import threading
from collections import deque
from collections.abc import Iterable, Iterator
from functools import partial
from itertools import islice

from .outcome import (
    AsyncEntryFunction,
    EntryFunction,
    Item,
    Outcome,
    run_guarded,
    run_guarded_async,
)
from .sinks import dump_entry
from .sources import parse_text

__all__ = ["DEFAULT_POOL_BATCH", "map_async", "map_in_pool", "map_in_process", "start_method"]

DEFAULT_POOL_BATCH = 8
"""Items per pool task: amortizes pickling without starving workers on small inputs."""


def map_in_process(
    fn: EntryFunction, items: Iterable[Item], *, timeout: float | None
) -> Iterator[Outcome]:
    """Run every item here, one after the other."""
    for item in items:
        yield run_guarded(fn, item, timeout)


def start_method() -> str:
    """``fork`` on Linux when this process runs no other thread, else ``spawn``.

    Forking copies only the calling thread: a lock another thread held at that moment
    stays held in the child forever, so with threads alive the pool spawns. macOS and
    Windows spawn too (system libraries there are not fork-safe).
    """
    if sys.platform.startswith("linux") and threading.active_count() == 1:
        return "fork"
    return "spawn"


_worker_fn: EntryFunction | None = None
_worker_timeout: float | None = None


def _init_worker(fn: EntryFunction, timeout: float | None) -> None:
    global _worker_fn, _worker_timeout
    _worker_fn = fn
    _worker_timeout = timeout


def _run_batch(items: list[Item]) -> list[Outcome]:
    if _worker_fn is None:  # pragma: no cover - the initializer always ran
        raise RuntimeError("pool worker was not initialized")
    return [_run_one(_worker_fn, item, _worker_timeout) for item in items]


def _run_one(fn: EntryFunction, item: Item, timeout: float | None) -> Outcome:
    """One record in a worker; a deferred JSONL line is parsed here and comes back as its
    output line, so the parent neither parses nor serializes it."""
    if not item.deferred:
        return run_guarded(fn, item, timeout)
    parsed = parse_text(item.raw or "", item.position, item.location)
    if parsed is None:  # blank: the reader keeps those out; never a record
        return Outcome("bad_input", None, error="blank line", raw=item.raw)
    outcome = run_guarded(fn, parsed, timeout)
    if outcome.entry is None:
        return outcome
    return Outcome(
        outcome.status, None, outcome.metrics, outcome.error, line=dump_entry(outcome.entry)
    )


def map_in_pool(
    fn: EntryFunction,
    items: Iterable[Item],
    *,
    workers: int,
    timeout: float | None,
    batch: int = DEFAULT_POOL_BATCH,
    window: int | None = None,
) -> Iterator[Outcome]:
    """Run items in ``workers`` processes; yields outcomes in input order."""
    if workers <= 1:
        yield from map_in_process(fn, items, timeout=timeout)
        return
    limit = window if window is not None else 4 * workers
    context = multiprocessing.get_context(start_method())
    executor = concurrent.futures.ProcessPoolExecutor(
        max_workers=workers,
        mp_context=context,
        initializer=_init_worker,
        initargs=(fn, timeout),
    )
    source = iter(items)
    in_flight: deque[concurrent.futures.Future[list[Outcome]]] = deque()
    try:
        while True:
            while len(in_flight) < limit:
                group = list(islice(source, batch))
                if not group:
                    break
                in_flight.append(executor.submit(_run_batch, group))
            if not in_flight:
                break
            yield from in_flight.popleft().result()
    finally:
        for future in in_flight:
            future.cancel()
        executor.shutdown(wait=True, cancel_futures=True)


def map_async(
    fn: AsyncEntryFunction,
    items: Iterable[Item],
    *,
    timeout: float | None,
    max_concurrent: int,
    window: int | None = None,
) -> Iterator[Outcome]:
    """Run an asynchronous per-entry function over items, ``max_concurrent`` at a time."""
    limit = window if window is not None else max(2 * max_concurrent, 16)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="trajectories-async", daemon=True)
    thread.start()
    semaphore = asyncio.run_coroutine_threadsafe(_make_semaphore(max_concurrent), loop).result()
    run = partial(_bounded, fn, semaphore, timeout)
    in_flight: deque[concurrent.futures.Future[Outcome]] = deque()
    try:
        for item in items:
            in_flight.append(asyncio.run_coroutine_threadsafe(run(item), loop))
            if len(in_flight) >= limit:
                yield in_flight.popleft().result()
        while in_flight:
            yield in_flight.popleft().result()
    finally:
        for future in in_flight:
            future.cancel()
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()


async def _make_semaphore(size: int) -> asyncio.Semaphore:
    return asyncio.Semaphore(max(1, size))


async def _bounded(
    fn: AsyncEntryFunction, semaphore: asyncio.Semaphore, timeout: float | None, item: Item
) -> Outcome:
    async with semaphore:
        return await run_guarded_async(fn, item, timeout)
