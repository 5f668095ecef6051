"""Local engines: order kept, bounded in-flight work, pool timeouts, the request semaphore."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from palimpsest.trajectories.engine_local import (
    map_async,
    map_in_pool,
    map_in_process,
    start_method,
)
from palimpsest.trajectories.outcome import Item
from trajectories_batch_helpers import Result, shout


def items(n: int, **extra: Any) -> list[Item]:
    return [Item(i, f"x:{i + 1}", {"id": i, "conversations": [], **extra}) for i in range(n)]


def test_the_pool_keeps_input_order_and_enforces_timeouts_in_workers() -> None:
    rows = items(30)
    rows[7] = Item(7, "x:8", {"id": 7, "sleep": 5, "conversations": []})
    rows[11] = Item(11, "x:12", {"id": 11, "raise": "no", "conversations": []})
    out = list(map_in_pool(shout, rows, workers=2, timeout=0.5, batch=4))
    assert [o.status for o in out].count("compressed") == 28
    assert out[7].status == "timed_out" and out[11].status == "failed"
    assert [o.entry["id"] for o in out if o.entry] == [i for i in range(30) if i != 7]


def test_the_pool_pulls_input_lazily_within_its_window() -> None:
    pulled = []

    def source() -> Iterator[Item]:
        for row in items(200):
            pulled.append(row.position)
            yield row

    stream = map_in_pool(shout, source(), workers=2, timeout=None, batch=2, window=3)
    first = next(stream)
    assert first.entry is not None and first.entry["id"] == 0
    assert len(pulled) <= 2 * 3 + 1  # window x batch (+ the one that ended a batch)
    assert len(list(stream)) == 199


def test_one_process_is_the_same_as_the_pool() -> None:
    a = [o.entry for o in map_in_process(shout, items(10), timeout=None)]
    b = [o.entry for o in map_in_pool(shout, items(10), workers=2, timeout=None)]
    assert a == b


class Gauge:
    def __init__(self) -> None:
        self.now = 0
        self.peak = 0

    async def __call__(self, entry: dict[str, Any]) -> Result:
        self.now += 1
        self.peak = max(self.peak, self.now)
        await asyncio.sleep(0.02)
        self.now -= 1
        return Result(entry, None, "unchanged")


def test_async_runs_at_most_max_concurrent_and_keeps_order() -> None:
    gauge = Gauge()
    out = list(map_async(gauge, items(40), timeout=5, max_concurrent=3))
    assert [o.entry["id"] for o in out if o.entry] == list(range(40))
    assert gauge.peak == 3


def test_a_parent_with_another_thread_spawns_its_workers() -> None:
    release = threading.Event()
    helper = threading.Thread(target=release.wait, name="holds-a-lock-maybe")
    helper.start()
    try:
        assert start_method() == "spawn"
    finally:
        release.set()
        helper.join()


_FORKED = """
import os, sys, threading
sys.path.insert(0, {tests!r})
import trajectories_batch_helpers as helpers
from palimpsest.trajectories.engine_local import map_in_pool, start_method
from palimpsest.trajectories.outcome import Item
assert threading.active_count() == 1
helpers.PARENT_MARK = "from the parent"
rows = [Item(i, f"x:{{i + 1}}", {{"id": i, "conversations": []}}) for i in range(6)]
out = list(map_in_pool(helpers.report_mark, rows, workers=2, timeout=None, batch=1))
print(start_method(), sorted({{o.entry["mark"] for o in out}}), [o.entry["id"] for o in out],
      len({{o.entry["pid"] for o in out}} - {{os.getpid()}}) >= 1)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork is used on Linux only")
def test_a_single_threaded_parent_forks_workers_that_keep_its_state() -> None:
    # A fresh interpreter: this one may hold threads from other tests.
    tests = str(Path(__file__).parent)
    done = subprocess.run(
        [sys.executable, "-c", _FORKED.format(tests=tests)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == "fork ['from the parent'] [0, 1, 2, 3, 4, 5] True"
