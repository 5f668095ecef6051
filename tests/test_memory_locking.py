"""Temp files of killed memory writers are cleaned up; a live writer's never (issue 12, item 4).

Issue 12 found up to 26 orphaned ``.mem_*.tmp`` copies of MEMORY.md left for an hour after
SIGKILLs during writes. Temp files now carry the target and the writer's pid; the next
write (under the target's lock) removes every orphan of its target, and the next load
removes those whose writer process is gone.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import time
from pathlib import Path

import pytest

from palimpsest.errors import MemoryCapacityError
from palimpsest.memory import locking
from palimpsest.memory.store import MemoryStore
from test_memory_concurrency import _writer_loop

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork and SIGKILL")


def temps(directory: Path) -> list[Path]:
    return sorted(directory.glob(f"{locking.TEMP_PREFIX}*{locking.TEMP_SUFFIX}"))


def _dead_pid() -> int:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid


def test_temp_name_carries_target_and_pid(tmp_path: Path) -> None:
    prefix = locking.temp_prefix(tmp_path / "MEMORY.md")
    assert prefix == f".mem_MEMORY.md.{os.getpid()}."


def test_sweep_locked_removes_only_its_targets_temps(tmp_path: Path) -> None:
    memory, user = tmp_path / "MEMORY.md", tmp_path / "USER.md"
    mine = tmp_path / f"{locking.temp_prefix(memory, 4242)}abc.tmp"
    other = tmp_path / f"{locking.temp_prefix(user, os.getpid())}def.tmp"
    foreign = tmp_path / ".mem_legacy.tmp"  # no pid: an older version's name
    for path in (mine, other, foreign):
        path.write_text("x")
    with locking.file_lock(memory):
        assert locking.sweep_locked(memory) == 1
    assert not mine.exists() and other.exists() and foreign.exists()


def test_sweep_dead_keeps_live_writers(tmp_path: Path) -> None:
    target = tmp_path / "MEMORY.md"
    dead = tmp_path / f"{locking.temp_prefix(target, _dead_pid())}abc.tmp"
    live = tmp_path / f"{locking.temp_prefix(target)}def.tmp"  # this process
    for path in (dead, live):
        path.write_text("x")
    assert locking.sweep_dead(tmp_path) == 1
    assert not dead.exists() and live.exists()


def test_load_keeps_the_temp_file_of_a_writer_in_progress(isolated_home: Path) -> None:
    """A real second process holds the lock and its temp file: load must not touch it."""
    store = MemoryStore()
    store.load_from_disk()
    path = store.path("memory")
    ready = isolated_home / "ready"
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: a writer paused between creating its temp file and the rename
        try:
            os.close(write_fd)
            with locking.file_lock(path):
                (path.parent / f"{locking.temp_prefix(path)}x.tmp").write_text("half")
                ready.touch()
                os.read(read_fd, 1)  # until the parent has loaded
        finally:
            os._exit(0)
    os.close(read_fd)
    try:
        deadline = time.monotonic() + 30
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert ready.exists()
        store.load_from_disk()
        assert [t.name for t in temps(store.directory)] == [f".mem_MEMORY.md.{pid}.x.tmp"]
    finally:
        os.write(write_fd, b"x")
        os.close(write_fd)
        os.waitpid(pid, 0)
    store.load_from_disk()  # now the writer is gone
    assert temps(store.directory) == []


@pytest.mark.slow
def test_sigkilled_writers_leave_no_orphans_after_the_next_write(isolated_home: Path) -> None:
    store = MemoryStore(memory_char_limit=60_000)
    store.add("memory", "anchor")
    rnd = random.Random(20_240_612)
    orphans_seen = 0
    for run in range(60):
        pid = os.fork()
        if pid == 0:  # child: write until killed, never return into pytest
            try:
                _writer_loop(run)
            finally:
                os._exit(1)
        if run % 3 == 0:
            # aimed: kill as soon as a temp file shows, so some kills land mid-write on any
            # machine (random delays alone missed every write once, on a fast CI run)
            deadline = time.monotonic() + 2.0
            while not temps(store.directory) and time.monotonic() < deadline:
                pass
        else:
            time.sleep(rnd.uniform(0.0, 0.03))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        orphans_seen += len(temps(store.directory))
        if run % 2:
            with contextlib.suppress(MemoryCapacityError):  # sweeps before it checks size
                store.add("memory", f"after crash {run}")  # the next write sweeps...
        else:
            MemoryStore(memory_char_limit=60_000).load_from_disk()  # ...and so does a load
        assert temps(store.directory) == [], f"orphans after crash {run}"
    # The kills landed mid-write often enough for the sweep to have had work to do.
    assert orphans_seen > 0
