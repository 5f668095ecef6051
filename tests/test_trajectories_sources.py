"""Chunking is a function of the input alone; every line becomes an item or a blank."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.trajectories.sources import (
    count_jsonl_records,
    format_of,
    jsonl_chunks,
    parquet_bounds,
    parquet_chunks,
    parse_line,
)


def test_jsonl_chunks_cover_line_ranges_and_keep_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'{"a": 1}\n\n[1]\r\n{"a": 2}\nnot json\n{"a": 3}')
    chunks = list(jsonl_chunks(path, 2))
    assert [(c.start, c.stop) for c in chunks] == [(0, 2), (2, 4), (4, 6)]
    assert [[i.location for i in c.items] for c in chunks] == [
        [f"{path}:1"],
        [f"{path}:3", f"{path}:4"],
        [f"{path}:5", f"{path}:6"],
    ]
    assert chunks[1].items[0].problem == "not a JSON object (a JSON list)"
    assert chunks[1].items[0].raw == "[1]"
    assert chunks[2].items[1].entry == {"a": 3}
    assert count_jsonl_records(path) == 5
    again = list(jsonl_chunks(path, 2))
    assert [c.digest for c in again] == [c.digest for c in chunks]
    assert len({c.digest for c in chunks}) == 3


def test_parse_line_reports_what_is_wrong() -> None:
    assert parse_line(b"   \n", 0, "x") is None
    bad = parse_line(b"\xff\xfe{}\n", 0, "x:1")
    assert bad is not None and bad.problem == "not UTF-8 (byte 0)"
    broken = parse_line(b'{"a": }\n', 0, "x:1")
    assert broken is not None and broken.problem is not None
    assert broken.problem.startswith("not valid JSON (Expecting value at column 7")


@given(st.lists(st.integers(0, 50), max_size=8), st.integers(1, 20))
def test_parquet_bounds_tile_each_row_group(groups: list[int], size: int) -> None:
    bounds = parquet_bounds(groups, size)
    assert [b for b in bounds if b[0] >= b[1]] == []
    flat = [r for lo, hi in bounds for r in range(lo, hi)]
    assert flat == list(range(sum(groups)))
    edges = {sum(groups[:i]) for i in range(len(groups) + 1)}
    assert all(hi - lo <= size for lo, hi in bounds)
    assert edges <= {lo for lo, _ in bounds} | {sum(groups)}  # no chunk spans a group edge


def test_parquet_chunks_follow_the_bounds(tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    pq.write_table(pa.Table.from_pylist([{"n": i} for i in range(23)]), path, row_group_size=10)
    chunks = list(parquet_chunks(path, 4))
    assert [(c.start, c.stop) for c in chunks] == parquet_bounds([10, 10, 3], 4)
    assert [i.entry for c in chunks for i in c.items] == [{"n": i} for i in range(23)]
    assert chunks[0].items[2].location == f"{path}: row 3"
    assert format_of(path) == "parquet" and format_of("x.JSONL") == "jsonl"


def test_unparsed_chunks_leave_the_json_to_the_workers(tmp_path: Path) -> None:
    """``parse=False`` (the pool): same lines, records and digests; text not yet parsed."""
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'{"a": 1}\n\n[1]\r\n\xff\n{"a": 3}')
    parsed, text = list(jsonl_chunks(path, 2)), list(jsonl_chunks(path, 2, parse=False))
    assert [c.digest for c in text] == [c.digest for c in parsed]
    items = [i for c in text for i in c.items]
    assert [i.location for i in items] == [i.location for c in parsed for i in c.items]
    assert [(i.deferred, i.entry, i.raw) for i in items[:2]] == [
        (True, None, '{"a": 1}'),
        (True, None, "[1]"),
    ]
    assert items[2].problem == "not UTF-8 (byte 0)" and not items[2].deferred
