"""``palimpsest sessions maintain`` and ``verify`` on a real store file: in-process through the console script's
``main`` (``cli_inproc``), and a user mistake in a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import apsw

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


def verify(*args: str) -> tuple[int, str, str]:
    done = invoke_cli("sessions", "verify", *args)
    return done.returncode, done.stdout, done.stderr


def test_verify_reports_and_repairs_a_damaged_index(isolated_home: Path) -> None:
    with SessionStore() as store:
        store.create_session("20260101_000000_aaaaaa", "cli")
        store.append_message("20260101_000000_aaaaaa", "user", "hello")
        store.database.write(
            lambda con: con.execute("INSERT INTO messages_fts (rowid, content) VALUES (77, 'x')")
        )
    code, _, err = verify()
    assert code == 1 and "problem:" in err
    code, out, err = verify("--repair")
    assert code == 0 and "rebuilt" in err and out.startswith("ok:")


def test_verify_repair_on_a_file_sqlite_cannot_open_says_what_it_did(
    isolated_home: Path,
) -> None:
    with SessionStore() as store:
        store.create_session("20260101_000000_aaaaaa", "cli")
        store.append_message("20260101_000000_aaaaaa", "user", "hello")
    db = isolated_home / "state.db"
    data = bytearray(db.read_bytes())
    data[16:18] = b"\x00\x03"  # an impossible page size: SQLite refuses the file
    db.write_bytes(bytes(data))
    listed = invoke_cli("sessions", "list")
    assert listed.returncode == 1 and "damaged" in listed.stderr
    code, _, err = verify()
    assert code == 1 and "--repair tries to recover its rows" in err
    code, _, err = verify("--repair")
    assert code == 1 and "trying to recover its rows into a new file" in err
    # Either rows came back into a new file, or it says plainly that none could.
    assert "recovered " in err or "nothing could be recovered" in err
    assert "Run 'palimpsest sessions verify --repair'" not in err.split("recover its rows")[1]
    assert db.read_bytes() == bytes(data)


def test_maintain_keeps_the_session_secrets_not_yet_kept(isolated_home: Path) -> None:
    path = _store_with_segments(isolated_home)
    # as a file from before the table: nothing kept, the watermark at the start (a raw
    # connection: a store that wrote would keep them again as it closes)
    con = apsw.Connection(str(path))
    con.execute(
        "DELETE FROM session_secrets; DELETE FROM state_meta WHERE key = 'session_secrets_through'"
    )
    con.close()
    done = run("--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["secrets_kept"] is True
    with SessionStore(path, background_upkeep=False) as store:
        kept = store.database.query("SELECT session_id, covered FROM session_secrets")
    assert kept == [{"session_id": "20260101_090000_aaaaaa", "covered": 150}]
    assert "session secrets kept" in run().stdout
