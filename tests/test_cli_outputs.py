"""``palimpsest outputs``: list, show, grep, path and gc.

Mostly in-process through the console script's ``main`` (:func:`run_here`); an empty home and
the issue-10 ``gc`` acceptance test run as real subprocesses (``python -m palimpsest.cli``;
the package itself has no ``__main__``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_inproc import invoke_cli
from palimpsest.outputs.store import OutputStore
from palimpsest.storage.sessions import SessionStore

SRC = Path(__file__).resolve().parents[1] / "src"
DAY = 86_400.0


def run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PALIMPSEST_HOME": str(home), "PYTHONPATH": str(SRC)}
    env.pop("PALIMPSEST_CONFIG", None)
    return subprocess.run(
        [sys.executable, "-m", "palimpsest.cli", "outputs", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def run_here(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """:func:`run` in this process (issue 27): the same entry point and exit codes, no
    interpreter start-up; the tests of what a real process does keep :func:`run`."""
    env = {"PALIMPSEST_HOME": str(home), "PALIMPSEST_CONFIG": None}
    return invoke_cli("outputs", *args, env=env)


def age(store: OutputStore, digest: str, days: float) -> None:
    when = time.time() - days * DAY
    store.index.write(
        lambda con: con.execute("UPDATE objects SET last_used = ? WHERE digest = ?", (when, digest))
    )


def test_list_and_path_on_an_empty_home_create_nothing(isolated_home: Path) -> None:
    done = run(isolated_home, "list")
    assert done.returncode == 0 and done.stdout == "" and "No saved outputs" in done.stderr
    assert json.loads(run_here(isolated_home, "list", "--json").stdout) == []
    assert run_here(isolated_home, "path").stdout.strip() == str(isolated_home / "outputs")
    assert not isolated_home.exists()


def test_list_show_and_grep(isolated_home: Path) -> None:
    with OutputStore() as store:
        text = "".join(f"line {i}\n" for i in range(1, 2001))
        found = store.put_text(text, tool_name="pytest", session_id="s1")
        store.put_text("other\n", session_id="s2")
    rows = json.loads(run_here(isolated_home, "list", "--json", "--session", "s1").stdout)
    assert [r["digest"] for r in rows] == [found.digest] and rows[0]["tool_name"] == "pytest"
    table = run_here(isolated_home, "list")
    assert found.digest[:12] in table.stdout and "2 outputs" in table.stderr
    shown = run_here(isolated_home, "show", found.digest[:10], "--offset", "7", "--limit", "14")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == "line 2\nline 3\n" and "next: --offset 21" in shown.stderr
    window = json.loads(
        run_here(isolated_home, "show", str(found.path), "--json", "--limit", "7").stdout
    )
    assert window["text"] == "line 1\n" and window["has_more"] and window["end"] == 7
    grep = run_here(isolated_home, "show", found.digest, "--grep", "line 10", "--max-matches", "2")
    assert grep.stdout.splitlines() == ["10:63: line 10", "100:783: line 100"]
    regex = json.loads(
        run_here(
            isolated_home, "show", found.digest, "--grep", r"^line 19\d\d$", "--regex", "--json"
        ).stdout
    )
    assert len(regex) == 50 and regex[0]["line_number"] == 1900  # --max-matches default


def test_user_mistakes_are_one_line_and_exit_2(isolated_home: Path) -> None:
    with OutputStore() as store:
        image = store.put_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 100)
        text = store.put_text("text\n")
    for args, needle in (
        (("show", "0" * 64), "no saved output matches"),
        (("show", image.digest), "PNG image"),
        (("show", "abc"), "at least 8"),
        (("show", "/etc/passwd"), "outside the output store"),
        (("show", text.digest, "--grep", "(", "--regex"), "invalid regular expression"),
        (("gc", "--max-size", "0"), "--max-size must be a positive number"),
    ):
        done = run_here(isolated_home, *args)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stdout == "" and len(done.stderr.strip().splitlines()) == 1
        assert needle in done.stderr and "Traceback" not in done.stderr


def test_gc_keeps_what_open_sessions_point_at(isolated_home: Path) -> None:
    """The acceptance test of issue 10: `outputs gc` never removes an output an open session
    refers to, yet removes an equally old unreferenced one and one held only by an ended
    session whose lineage has no open continuation."""
    block = "<persisted-output>\nFull output saved to: {}\n</persisted-output>"
    with OutputStore() as store, SessionStore() as sessions:
        sessions.create_session("open", "cli")
        by_ref = store.put_text("referenced by an open session\n", session_id="open")
        sessions.create_session("parent", "cli")
        by_path = store.put_text("mentioned in the continuation\n", session_id="parent")
        sessions.append_message("parent", "tool", block.format(by_path.path), tool_call_id="c")
        sessions.start_continuation(
            "parent",
            session_id="child",
            messages=[{"role": "tool", "tool_call_id": "c", "content": block.format(by_path.path)}],
        )
        sessions.create_session("ended", "cli")
        ended_only = store.put_text("held by an ended session\n", session_id="ended")
        sessions.append_message("ended", "tool", block.format(ended_only.path), tool_call_id="e")
        sessions.end_session("ended", "user_exit")
        loose = store.put_text("referenced by nobody\n")
        for found in (by_ref, by_path, ended_only, loose):
            age(store, found.digest, days=365)
    dry = json.loads(run(isolated_home, "gc", "--dry-run", "--json").stdout)
    assert set(dry["removed"]) == {ended_only.digest, loose.digest} and dry["dry_run"]
    assert ended_only.path.exists() and loose.path.exists()
    done = run(isolated_home, "gc")
    assert done.returncode == 0, done.stderr
    assert "removed 2 outputs" in done.stdout and "kept 2 outputs" in done.stdout
    assert by_ref.path.exists() and by_path.path.exists()
    assert not ended_only.path.exists() and not loose.path.exists()


def test_gc_without_a_session_database_says_nothing_is_live(isolated_home: Path) -> None:
    with OutputStore() as store:
        big = store.put_text("x" * 3000)
        small = store.put_text("y" * 10)
        age(store, big.digest, days=1)
    done = run_here(isolated_home, "gc", "--max-size", "0.001", "--json")
    report = json.loads(done.stdout)
    assert report["removed"] == [big.digest] and "no session database" in report["live_note"]
    assert small.path.exists() and not (isolated_home / "state.db").exists()
    with OutputStore() as store:  # older than --max-age for sure (in-process, no start-up)
        age(store, small.digest, days=1)
    text = run_here(isolated_home, "gc", "--max-age", "0.000001")
    assert "no session database" in text.stderr and "removed 1 outputs" in text.stdout


def test_gc_rebuilds_a_damaged_index(isolated_home: Path) -> None:
    with OutputStore() as store:
        found = store.put_text("keep me\n")
    index = isolated_home / "outputs" / "index.db"
    for suffix in ("-wal", "-shm"):
        index.with_name(index.name + suffix).unlink(missing_ok=True)
    index.write_bytes(b"garbage" * 1000)
    broken = run_here(isolated_home, "list")
    assert (
        broken.returncode == 1
        and "--rebuild-index" in broken.stderr
        and str(index) in broken.stderr
    )
    fixed = run_here(isolated_home, "gc", "--rebuild-index")
    assert fixed.returncode == 0, fixed.stderr
    assert "rebuilt the index from 1 saved files" in fixed.stderr
    assert [r["digest"] for r in json.loads(run_here(isolated_home, "list", "--json").stdout)] == [
        found.digest
    ]


def test_every_outputs_command_has_help() -> None:
    from palimpsest.cli.outputs import outputs_app

    names = {c.name for c in outputs_app.registered_commands}
    assert names == {"list", "show", "path", "gc"}
    for command in outputs_app.registered_commands:
        assert command.callback is not None and (command.callback.__doc__ or "").strip()


@pytest.mark.parametrize("args", [("--help",), ("gc", "--help")])
def test_help_runs(isolated_home: Path, args: tuple[str, ...]) -> None:
    done = run_here(isolated_home, *args)
    assert done.returncode == 0 and "Usage" in done.stdout
