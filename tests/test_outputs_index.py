"""The outputs index: lazy creation, upserts, references, damage and salvage."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from palimpsest.errors import DatabaseCorruptError
from palimpsest.outputs.index import SCHEMA_VERSION, OutputIndex

D1, D2 = "a" * 64, "b" * 64


def record(index: OutputIndex, digest: str, now: float, tool: str = "t") -> None:
    index.write(
        lambda con: index.record(
            con,
            digest=digest,
            suffix="txt",
            size_bytes=10,
            chars=10,
            kind="text",
            tool_name=tool,
            now=now,
        )
    )


def test_reads_of_a_missing_index_create_nothing(tmp_path: Path) -> None:
    index = OutputIndex(tmp_path / "store" / "index.db")
    assert index.objects() == [] and index.get(D1) is None and index.total_bytes() == 0
    assert index.refs(D1) == [] and index.referenced_by(["s"]) == set()
    assert not (tmp_path / "store").exists()


def test_record_keeps_the_first_facts_and_the_latest_use(tmp_path: Path) -> None:
    index = OutputIndex(tmp_path / "index.db")
    record(index, D1, 100.0, tool="first")
    record(index, D1, 50.0, tool="second")
    record(index, D1, 200.0, tool="third")
    row = index.get(D1)
    assert row is not None
    assert (row["created"], row["last_used"], row["tool_name"]) == (100.0, 200.0, "first")
    con = apsw.Connection(str(index.path))
    assert con.execute("PRAGMA user_version").fetchall()[0][0] == SCHEMA_VERSION
    assert con.execute("PRAGMA journal_mode").fetchall()[0][0] == "wal"
    assert oct(index.path.stat().st_mode)[-3:] == "600"


def test_references_and_their_cascade(tmp_path: Path) -> None:
    index = OutputIndex(tmp_path / "index.db")
    record(index, D1, 1.0)
    record(index, D2, 2.0)
    index.write(lambda con: index.add_ref(con, D1, "s1", "call-1", 5.0))
    index.write(lambda con: index.add_ref(con, D1, "s1", "call-1", 6.0))  # idempotent
    index.write(lambda con: index.add_ref(con, D1, "s2", None, 7.0))
    assert [(r["session_id"], r["call_id"]) for r in index.refs(D1)] == [
        ("s1", "call-1"),
        ("s2", ""),
    ]
    assert index.referenced_by({"s2", "other"}) == {D1}
    assert [r["digest"] for r in index.objects("s1")] == [D1]
    assert [r["digest"] for r in index.objects()] == [D2, D1]  # newest first
    index.write(lambda con: index.delete(con, [D1]))
    assert index.refs(D1) == [] and index.total_bytes() == 10


def test_a_failed_transaction_leaves_nothing(tmp_path: Path) -> None:
    index = OutputIndex(tmp_path / "index.db")

    def half(con: apsw.Connection) -> None:
        index.record(
            con, digest=D1, suffix="txt", size_bytes=1, chars=1, kind="text", tool_name="", now=1.0
        )
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        index.write(half)
    assert index.get(D1) is None


def test_a_damaged_index_names_the_file_and_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "index.db"
    path.write_bytes(b"this is not sqlite" * 500)
    index = OutputIndex(path)
    with pytest.raises(DatabaseCorruptError) as caught:
        index.objects()
    message = str(caught.value)
    assert str(path) in message and "palimpsest outputs gc --rebuild-index" in message
    assert caught.value.path == str(path)
    assert index.salvage() is None
    moved = index.discard(keep_copy=True)
    assert moved is not None and moved.read_bytes().startswith(b"this is not sqlite")
    assert not path.exists()


def test_salvage_returns_rows_of_a_sound_index(tmp_path: Path) -> None:
    index = OutputIndex(tmp_path / "index.db")
    record(index, D1, 1.0)
    index.write(lambda con: index.add_ref(con, D1, "s", None, 1.0))
    salvaged = index.salvage()
    assert salvaged is not None
    assert [r["digest"] for r in salvaged[0]] == [D1] and salvaged[1][0]["session_id"] == "s"
    assert index.discard(keep_copy=False) is None and not index.path.exists()
