"""Several processes writing one PostgreSQL store: nothing acknowledged is lost, and a
writer killed mid-continuation leaves no half-written chain (real subprocesses, SIGKILL).
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psycopg
import pytest

from palimpsest import open_store

WRITERS = 4

APPENDER = textwrap.dedent(
    """
    import sys
    from palimpsest import open_store

    url, name, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = open_store(url, pool_size=2)
    own = store.create_session(f"own-{name}", source="cli")
    for i in range(rounds):
        target = "shared" if i % 2 else own
        if i % 3 == 0:
            batch = [{"role": "user", "content": f"{name} {i} {k}"} for k in range(3)]
            ids = store.append_messages(target, batch)
        else:
            ids = [store.append_message(target, "assistant", f"{name} {i} 0")]
        store.update_token_counts(target, input_tokens=1)
        for message_id in ids:
            print(target, message_id, flush=True)
    store.close()
    """
)

CONTINUER = textwrap.dedent(
    """
    import sys
    from palimpsest import open_store

    url, name = sys.argv[1], sys.argv[2]
    store = open_store(url, pool_size=1)
    current = store.create_session(f"root-{name}", source="cli", title=f"chain {name}")
    store.append_message(current, "user", "start")
    seed = [{"role": "user", "content": "summary " + "x" * 200}] * 400
    while True:
        current = store.start_continuation(current, messages=seed)
        print(current, flush=True)
    """
)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[1] / "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    return env


@pytest.mark.slow
def test_concurrent_appenders_lose_nothing(pg_url: str) -> None:
    with open_store(pg_url) as store:
        store.create_session("shared", source="gateway")
    rounds = 60
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", APPENDER, pg_url, f"w{n}", str(rounds)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
        )
        for n in range(WRITERS)
    ]
    acknowledged: dict[int, str] = {}
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        for line in out.splitlines():
            session, message_id = line.split()
            assert int(message_id) not in acknowledged  # ids are never handed out twice
            acknowledged[int(message_id)] = session
    per_writer = sum(3 if i % 3 == 0 else 1 for i in range(rounds))
    assert len(acknowledged) == WRITERS * per_writer
    with psycopg.connect(pg_url) as con:
        stored = dict(con.execute("SELECT id, session_id FROM messages").fetchall())
        counters = dict(con.execute("SELECT id, message_count FROM sessions").fetchall())
        tokens = dict(con.execute("SELECT id, input_tokens FROM sessions").fetchall())
    assert stored == acknowledged  # every acknowledged message, and nothing else
    for session in counters:
        assert counters[session] == sum(1 for s in stored.values() if s == session)
    assert tokens["shared"] == WRITERS * (rounds // 2)
    with open_store(pg_url) as store:
        assert store.verify() == []


@pytest.mark.slow
def test_killed_continuations_leave_whole_chains(pg_url: str) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CONTINUER, pg_url, f"k{n}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
        )
        for n in range(WRITERS)
    ]
    acknowledged: list[str] = []
    for proc in procs:  # wait until every writer has finished one continuation
        assert proc.stdout is not None
        first = proc.stdout.readline().strip()
        assert first, proc.stderr.read() if proc.stderr else ""
        acknowledged.append(first)
    # Kill each writer at a different moment, mostly in the middle of a continuation.
    for n, proc in enumerate(procs):
        time.sleep(0.05 + 0.07 * n)
        proc.send_signal(signal.SIGKILL)
    for proc in procs:
        out, _err = proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        acknowledged += out.split()
    assert acknowledged, "no writer finished a continuation before being killed"
    with open_store(pg_url) as store:
        for n in range(WRITERS):
            root = f"root-k{n}"
            chain = store.compression_chain(root)
            tip = chain[-1]
            for parent, child in itertools.pairwise(chain):
                assert store.require_session(parent)["end_reason"] == "compression"
                assert store.message_count(child) == 400 == store.seed_message_count(child)
                assert store.require_session(child)["message_count"] == 400
            # the tip is live: an ended parent always has its continuation
            assert store.require_session(tip)["ended_at"] is None
            assert store.session_count() >= len(chain)
        assert set(acknowledged) <= {
            s["id"] for s in store.list_sessions(1000, include_children=True)
        }
        orphans = store.database.query(
            "SELECT id FROM sessions WHERE end_reason = 'compression' AND NOT EXISTS"
            " (SELECT 1 FROM sessions AS c WHERE c.parent_session_id = sessions.id)"
        )
        assert orphans == []
        assert store.verify() == []


@pytest.mark.parametrize("holders", [WRITERS])
def test_the_hygiene_lease_has_one_holder(pg_url: str, holders: int) -> None:
    """The compaction lease (agent.lock) taken by several processes at once: one wins."""
    script = textwrap.dedent(
        """
        import sys, time
        from palimpsest import open_store
        from palimpsest.agent.lock import take_compression_lock

        store = open_store(sys.argv[1], pool_size=1)
        wins = 0
        for i in range(30):
            if take_compression_lock(store, f"lease-{i}", sys.argv[2], lease=600) is None:
                wins += 1
        print(wins, flush=True)
        """
    )
    with open_store(pg_url):
        pass  # migrate once before the race
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, pg_url, f"host:{n}:holder"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
        )
        for n in range(holders)
    ]
    wins = 0
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        wins += int(out.strip())
    assert wins == 30  # each lease went to exactly one process
