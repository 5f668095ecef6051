"""Several real processes on one store file: concurrent writers, a checkpointing reader, SIGKILL.

These guard the write discipline (BEGIN IMMEDIATE, bounded jittered retries, one
transaction per batch): a writer must never surface "database is locked" while others
write and a reader forces checkpoints, and a writer killed mid-batch must leave a file
that opens, passes the integrity check, and holds exactly the batches it reported as
committed.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from palimpsest.storage.sessions import SessionStore

WORKER = r"""
import sys, time
from pathlib import Path
from palimpsest.storage.sessions import SessionStore

role, db, name, total, batch = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
go = Path(db + ".go")
while not go.exists():
    time.sleep(0.005)
store = SessionStore(db)
if role == "writer":
    store.create_session(name, "cron")
    for b in range(total // batch):
        print("begin", b, flush=True)
        store.append_messages(
            name,
            [
                {"role": "user", "content": f"{name} batch{b} item{i} the quick brown fox "
                 "jumps over the lazy dog while 数据库迁移 runs"}
                for i in range(batch)
            ],
        )
        print(b, flush=True)
else:  # searcher: query and force checkpoints until told to stop
    stop = Path(db + ".stop")
    rounds = 0
    while not stop.exists():
        store.search_messages("quick fox", limit=20)
        store.search_messages("数据库迁移", limit=5)
        store.checkpoint("TRUNCATE" if rounds % 2 else "PASSIVE")
        rounds += 1
    print(rounds, flush=True)
store.close()
"""


def start(script: Path, *args: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(script), *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
def test_four_writers_and_a_checkpointing_searcher(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    SessionStore(db).close()
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    writers = [start(script, "writer", db, f"w{i}", 5000, 100) for i in range(4)]
    searcher = start(script, "searcher", db, "s", 0, 0)
    Path(f"{db}.go").touch()
    outputs = [w.communicate(timeout=120) for w in writers]
    Path(f"{db}.stop").touch()
    search_out, search_err = searcher.communicate(timeout=60)

    for proc, (out, err) in zip(writers, outputs, strict=True):
        assert proc.returncode == 0, err
        assert "locked" not in err.lower() and err == ""
        assert [x for x in out.splitlines() if x.isdigit()] == [str(b) for b in range(50)]
    assert searcher.returncode == 0, search_err
    assert int(search_out) > 0
    with SessionStore(db) as store:
        assert store.message_count() == 20_000
        for i in range(4):
            assert store.require_session(f"w{i}")["message_count"] == 5000
        assert store.verify() == []
        # every word (match="all"): the default, auto, would fill up with either word
        assert len(store.search_messages("w3 batch49", limit=200, match="all")) == 100


def committed_batches(store: SessionStore) -> dict[int, int]:
    """batch number -> stored messages of that batch."""
    counts: dict[int, int] = {}
    for message in store.get_messages("w"):
        batch = int(str(message["content"]).split()[1].removeprefix("batch"))
        counts[batch] = counts.get(batch, 0) + 1
    return counts


@pytest.mark.slow
def test_sigkill_mid_batch_keeps_every_committed_batch(tmp_path: Path) -> None:
    rng = random.Random(20260521)
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    killed_mid_batch = 0
    for run in range(3):
        db = tmp_path / f"crash{run}.db"
        SessionStore(db).close()
        proc = start(script, "writer", db, "w", 400 * 1000, 400)
        Path(f"{db}.go").touch()
        assert proc.stdout is not None and proc.stderr is not None
        reported: list[int] = []
        wanted = rng.randint(2, 8)
        began = time.perf_counter()
        in_flight = -1
        while True:
            line = proc.stdout.readline().split()
            assert line, proc.stderr.read()
            if line[0] == "begin":
                in_flight = int(line[1])
                if len(reported) >= wanted:
                    break
                began = time.perf_counter()
            else:
                reported.append(int(line[0]))
                batch_seconds = time.perf_counter() - began
        # Kill inside the batch that just began, at a random point of its expected time.
        time.sleep(rng.uniform(0.1, 0.6) * batch_seconds)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        assert proc.returncode == -signal.SIGKILL
        # A commit line printed just before the kill still names a committed batch.
        reported += [int(x) for x in proc.stdout.read().splitlines() if x.isdigit()]
        proc.stdout.close()
        proc.stderr.close()

        with SessionStore(db) as store:
            assert store.verify() == []
            with store.connection_for_reads() as con:
                assert con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            counts = committed_batches(store)
            assert set(reported) <= set(counts)
            # Every stored batch is whole: a batch is one transaction.
            assert set(counts.values()) == {400}
            assert sorted(counts) == list(range(len(counts)))
            assert store.require_session("w")["message_count"] == 400 * len(counts)
            killed_mid_batch += in_flight not in counts
    # The kill really landed inside a transaction at least once (usually every time).
    assert killed_mid_batch >= 1


OPENER = r"""
import sys, time
from pathlib import Path
from palimpsest.storage.sessions import SessionStore

db, name = sys.argv[1], sys.argv[2]
while not Path(db + ".go").exists():
    time.sleep(0.002)
with SessionStore(db) as store:
    store.create_session(name)
    store.append_message(name, "user", f"hello from {name}")
"""


@pytest.mark.slow
def test_processes_racing_to_create_and_migrate_a_new_file(tmp_path: Path) -> None:
    db = tmp_path / "fresh.db"
    script = tmp_path / "opener.py"
    script.write_text(OPENER)
    procs = [start(script, db, f"p{i}") for i in range(4)]
    Path(f"{db}.go").touch()
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
    with SessionStore(db) as store:
        assert store.session_count() == 4 and store.message_count() == 4
        assert store.verify() == []
        with store.connection_for_reads() as con:
            names = [r[0] for r in con.execute("SELECT name FROM migrations")]
        assert len(names) == len(set(names))
