"""Recovering rows with the sqlite3 shell's .recover into a new file; the damaged one untouched."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from palimpsest.storage.recovery import recover_rows
from palimpsest.storage.sessions import SessionStore


def test_rows_come_back_in_a_new_file_and_the_source_is_left_alone(tmp_path: Path) -> None:
    if shutil.which("sqlite3") is None:
        pytest.skip("the sqlite3 command-line shell is not installed")
    db = tmp_path / "state.db"
    with SessionStore(db) as store:
        store.create_session("20260101_000000_aaaaaa", "cli")
        store.append_messages(
            "20260101_000000_aaaaaa",
            [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
        )
    before = db.read_bytes()
    found = recover_rows(db)
    assert found.target == tmp_path / "state.recovered.db"
    assert (found.sessions, found.messages) == (1, 2)
    assert db.read_bytes() == before
    with SessionStore(found.target) as recovered:
        assert [m["content"] for m in recovered.get_messages("20260101_000000_aaaaaa")] == [
            "hi",
            "hello",
        ]
    again = recover_rows(db)  # an existing recovered file is never overwritten
    assert again.target == tmp_path / "state.recovered-2.db"


def test_without_the_shell_it_says_so(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    db.write_bytes(b"SQLite format 3\x00" + b"\x00" * 200)
    found = recover_rows(db, shell=str(tmp_path / "no-such-sqlite3"))
    assert found.target is None and "sqlite3 .recover failed" in found.reason


def test_an_unreadable_file_recovers_nothing_and_says_why(tmp_path: Path) -> None:
    if shutil.which("sqlite3") is None:
        pytest.skip("the sqlite3 command-line shell is not installed")
    db = tmp_path / "state.db"
    db.write_bytes(b"SQLite format 3\x00" + b"\xab" * 5000)
    found = recover_rows(db)
    assert found.target is None and found.reason
    assert not list(tmp_path.glob("*.recovered*"))
