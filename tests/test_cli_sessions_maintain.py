"""``palimpsest sessions maintain`` on a real store file: in-process through the console script's
``main`` (``cli_inproc``), and a user mistake in a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from cli_inproc import invoke_cli
from palimpsest.storage.sessions import SessionStore


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return invoke_cli("sessions", "maintain", *args)


def run_process(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "palimpsest.cli", "sessions", "maintain", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def _store_with_segments(home: Path) -> Path:
    # No upkeep thread: it would merge the segments this test leaves for the command.
    with SessionStore(background_upkeep=False) as store:
        store.create_session("20260101_090000_aaaaaa")
        for i in range(150):
            store.append_message("20260101_090000_aaaaaa", "user", f"deploy note {i} rollback")
        path = store.path
    assert path.parent == home
    return path


def test_optimize_merges_and_truncates_the_wal(isolated_home: Path) -> None:
    path = _store_with_segments(isolated_home)
    done = run("--optimize", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["finished"] is True and report["optimized"] is True
    assert report["merge_steps"]["messages_fts"] >= 1
    assert report["checkpointed"] is True and report["wal_bytes_after"] == 0
    with SessionStore(path) as store:
        assert store.verify() == []
        assert len(store.search_messages("rollback", limit=200)) == 150
    again = json.loads(run("--optimize", "--json").stdout)
    assert again["merge_steps"]["messages_fts"] == 0


def test_plain_output_and_budget(isolated_home: Path) -> None:
    _store_with_segments(isolated_home)
    done = run("--budget", "0")
    assert done.returncode == 0, done.stderr
    assert "budget reached, run again to continue" in done.stdout
    done = run()
    assert done.returncode == 0, done.stderr
    assert "(done)" in done.stdout and "WAL checkpointed" in done.stdout


def test_bad_option_is_a_user_error(isolated_home: Path) -> None:
    done = run_process("--step-pages", "0")
    assert done.returncode == 2
    assert "step-pages" in done.stderr
