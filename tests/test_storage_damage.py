"""Damaged files, made by the test: flipped bytes in real pages, undecodable rows, repair.

Issue 11 measured: 256 flipped bytes gave ``UnicodeDecodeError`` tracebacks from
``sessions show``, ``export`` and ``get_messages``. Every read path must raise
``DatabaseCorruptError`` saying what to do, and ``verify --repair`` must rebuild what can
be rebuilt and name the rows it cannot read, never dropping them.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import apsw
import pytest
from typer.testing import CliRunner

from palimpsest.cli.sessions import sessions_app
from palimpsest.errors import DatabaseCorruptError
from palimpsest.storage.damage import unreadable_rows
from palimpsest.storage.sessions import SessionStore

MARK = "BROKEN-ROW-MARKER"


def build(path: Path, sessions: int = 40) -> None:
    rng = random.Random(3)
    words = ["alpha", "beta", "gamma", "deploy", "kubernetes", "database", "lorem", "ipsum"]
    with SessionStore(path) as store:
        for i in range(sessions):
            sid = store.create_session(f"s{i:03d}", source="cli", title=f"session {i}")
            store.append_messages(
                sid,
                [
                    {"role": "user", "content": " ".join(rng.choice(words) for _ in range(60))}
                    for _ in range(15)
                ],
            )
        store.append_message("s005", "user", f"{MARK} the deploy notes")
        store.checkpoint("TRUNCATE")  # every page in the main file, where the test flips


def break_marker(path: Path) -> None:
    """Make the marked message's text invalid UTF-8 in place (its record stays sound)."""
    data = bytearray(path.read_bytes())
    at = data.find(MARK.encode())
    assert at > 4096
    data[at : at + 4] = b"\xff\xfe\xff\xfe"
    path.write_bytes(bytes(data))


def flip_message_pages(path: Path, count: int, seed: int) -> None:
    """Flip ``count`` bytes at random inside leaf pages of ``messages``."""
    con = apsw.Connection(str(path))
    pages = [
        r[0]
        for r in con.execute(
            "SELECT pageno FROM dbstat WHERE name = 'messages' AND pagetype = 'leaf'"
        )
    ]
    size = int(con.execute("PRAGMA page_size").fetchall()[0][0])
    con.close()
    data = bytearray(path.read_bytes())
    rng = random.Random(seed)
    for _ in range(count):
        data[(rng.choice(pages) - 1) * size + rng.randrange(size // 4, size)] ^= 0xFF
    path.write_bytes(bytes(data))


READS: dict[str, Callable[[SessionStore], Any]] = {
    "get_messages": lambda s: [s.get_messages(f"s{i:03d}") for i in range(40)],
    "export": lambda s: [s.export_session(f"s{i:03d}") for i in range(40)],
    "list": lambda s: s.list_sessions(limit=100),
    "search": lambda s: s.search_messages("deploy", limit=200),
}


def test_an_undecodable_row_is_named_by_every_read_path(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    build(path)
    break_marker(path)
    with SessionStore(path) as store:
        bad = store.get_messages("s004")  # other sessions still read
        assert len(bad) == 15
        mid = int(store.database.scalar("SELECT max(id) FROM messages"))
        for name in ("get_messages", "export"):
            with pytest.raises(DatabaseCorruptError) as caught:
                READS[name](store)
            assert caught.value.message_ids == (mid,), name
            assert f"message {mid}" in str(caught.value)
            assert "sessions verify --repair" in str(caught.value)
            assert "backup" in str(caught.value) and str(path) in str(caught.value)
        try:  # the inline index keeps its own copy of the text, which may be intact
            store.search_messages("deploy notes", limit=200)
        except DatabaseCorruptError as exc:
            assert "verify --repair" in str(exc)
        problems = store.verify()
        assert any(f"message {mid}: content: not UTF-8 text" in p for p in problems)


def test_repair_rebuilds_indexes_and_keeps_the_unreadable_row(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    build(path)
    with SessionStore(path) as store:  # a damaged index beside the damaged row
        store.database.write(
            lambda con: con.execute("INSERT INTO messages_fts (rowid, content) VALUES (99999, 'x')")
        )
        store.checkpoint("TRUNCATE")
    break_marker(path)
    with SessionStore(path) as store:
        before = store.message_count()
        done = store.repair()
        assert any("rebuilt the full-text indexes" in line for line in done)
        assert any(line.startswith("done: REINDEX") for line in done)
        kept = [line for line in done if line.startswith("kept: 1 unreadable")]
        assert kept and "message" in kept[0]
        assert store.message_count() == before  # nothing dropped
        remaining = store.verify()
        assert len(remaining) == 1 and "not UTF-8 text" in remaining[0]


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_256_flipped_bytes_give_corrupt_errors_never_tracebacks(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "state.db"
    build(path)
    flip_message_pages(path, 256, seed)
    try:
        store = SessionStore(path)
    except DatabaseCorruptError:
        return  # damage reached what opening reads: that is the error to get
    with store:
        failures = 0
        for read in READS.values():
            try:
                read(store)
            except DatabaseCorruptError as exc:
                failures += 1
                assert "verify --repair" in str(exc)
        problems = store.verify()  # reports, never raises
        assert problems, "256 flipped bytes in message pages went unnoticed"
        assert failures > 0
        store.repair()  # runs to the end whatever it finds


def test_a_damaged_page_is_stepped_over_and_its_ids_reported(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    build(path)
    con = apsw.Connection(str(path))
    page = con.execute(
        "SELECT pageno FROM dbstat WHERE name = 'messages' AND pagetype = 'leaf'"
        " ORDER BY pageno LIMIT 1 OFFSET 3"
    ).fetchall()[0][0]
    size = int(con.execute("PRAGMA page_size").fetchall()[0][0])
    total = int(con.execute("SELECT count(*) FROM messages").fetchall()[0][0])
    con.close()
    data = bytearray(path.read_bytes())
    data[(page - 1) * size : (page - 1) * size + 8] = b"\xee" * 8  # the page header
    path.write_bytes(bytes(data))
    con = apsw.Connection(str(path))
    found = unreadable_rows(con)
    con.close()
    damaged = [r for r in found if "page damaged" in r.problem]
    assert len(damaged) == 1 and damaged[0].row.startswith("ids after ")
    assert total > 0


def test_cli_show_on_a_damaged_row_is_one_line_and_repair_names_it(
    isolated_home: Path,
) -> None:
    path = isolated_home / "state.db"
    isolated_home.mkdir(parents=True)
    build(path)
    break_marker(path)
    runner = CliRunner()
    shown = runner.invoke(sessions_app, ["show", "s005"])
    assert shown.exit_code == 1
    assert len(shown.stderr.strip().splitlines()) == 1
    assert "damaged" in shown.stderr and "verify --repair" in shown.stderr
    exported = runner.invoke(sessions_app, ["export", "s005"])
    assert exported.exit_code == 1 and "damaged" in exported.stderr
    verified = runner.invoke(sessions_app, ["verify"])
    assert verified.exit_code == 1 and "not UTF-8 text" in verified.stderr
    repaired = runner.invoke(sessions_app, ["verify", "--repair"])
    assert repaired.exit_code == 1  # the row itself cannot be rebuilt: it stays a problem
    assert "repair: done: rebuilt the full-text indexes" in repaired.stderr
    assert "repair: kept: 1 unreadable row(s)" in repaired.stderr
