"""The batch runner on real files: example 12, bad input, naming, stdout, metrics, directories."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from palimpsest.errors import UserError
from palimpsest.trajectories.runner import (
    BatchOptions,
    Observer,
    output_name,
    plan_jobs,
    run_batch,
)
from trajectories_batch_helpers import compress_words, long_entry, shout


class Lines(Observer):
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.done = 0
        self.total: int | None = None

    def start(self, total: int | None) -> None:
        self.total = total

    def advance(self, records: int, metrics: Any) -> None:
        self.done += records

    def problem(self, line: str) -> None:
        self.lines.append(line)


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows),
        encoding="utf-8",
    )
    return path


def run(
    source: Path, fn: Any = compress_words, output: str | None = None, **opts: Any
) -> tuple[Any, Lines, Path | None]:
    seen = Lines()
    jobs, root = plan_jobs(str(source), output, "_compressed")
    options = BatchOptions(**{"workers": 1, "timeout": 5.0, **opts})
    metrics = run_batch(jobs, root, fn=fn, options=options, settings={}, observer=seen,
                        metrics_path=source.parent / "metrics.json")  # fmt: skip
    return metrics, seen, root


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_acceptance_example_12_timeout_dropped_raise_kept_third_compressed(tmp_path: Path) -> None:
    source = write_jsonl(
        tmp_path / "batch.jsonl",
        [long_entry(1, marker="SLOW"), long_entry(2, **{"raise": "boom"}), long_entry(3)],
    )
    metrics, seen, root = run(source, timeout=0.5)
    assert root == tmp_path / "batch_compressed.jsonl"
    out = read_jsonl(root)
    assert [e["id"] for e in out] == [2, 3]
    assert out[0] == long_entry(2, **{"raise": "boom"})  # the original, untouched
    assert "compression_metrics" not in out[0]
    assert out[1]["compression_metrics"]["was_compressed"] is True
    report = metrics.to_json()
    assert (report["timed_out"], report["failed"], report["compressed"]) == (1, 1, 1)
    assert report["total_trajectories"] == 3
    assert json.loads((tmp_path / "metrics.json").read_text()) == report
    assert seen.lines[0].startswith(f"{source}:1: timed out: timed out after 0.5 s")
    assert seen.lines[1] == f"{source}:2: failed: RuntimeError: boom"


def test_empty_input_gives_an_empty_output_and_the_empty_aggregate(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "empty.jsonl", [])
    metrics, _, root = run(source)
    assert root is not None and root.read_bytes() == b""
    report = metrics.to_json()
    assert report["total_trajectories"] == 0
    assert report["avg_compression_ratio"] == 1.0
    assert report["avg_tokens_saved_per_compressed"] == 0


BAD_ROWS: list[Any] = [
    long_entry(1),
    "{not json",
    "[1, 2]",
    {"id": 4, "conversations": "hello"},
    {"id": 5, "conversations": [{"from": "robot", "value": "x"}]},
    "",
    long_entry(7),
]


def test_bad_input_is_one_line_each_counted_and_copied_through_byte_for_byte(
    tmp_path: Path,
) -> None:
    source = write_jsonl(tmp_path / "bad.jsonl", BAD_ROWS)
    metrics, seen, root = run(source)
    assert root is not None
    lines = root.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 6  # the blank line is not a record
    assert lines[1] == "{not json" and lines[2] == "[1, 2]"
    assert json.loads(lines[3]) == BAD_ROWS[3] and json.loads(lines[4]) == BAD_ROWS[4]
    assert json.loads(lines[0])["compression_metrics"]["was_compressed"]
    assert metrics.bad_input == 4 and metrics.compressed == 2
    assert [line.split(": bad input: ")[0] for line in seen.lines] == [
        f"{source}:{n}" for n in (2, 3, 4, 5)
    ]
    assert "not valid JSON" in seen.lines[0]
    assert "not a JSON object" in seen.lines[1]
    assert "'conversations' is a str" in seen.lines[2]
    assert "unknown role 'robot'" in seen.lines[3]


def test_bad_input_skip_leaves_them_out_and_still_counts_them(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "bad.jsonl", BAD_ROWS)
    metrics, seen, root = run(source, on_bad_input="skip")
    assert root is not None
    assert [e["id"] for e in read_jsonl(root)] == [1, 7]
    assert metrics.bad_input == 4 and len(seen.lines) == 4


def test_other_keys_keep_their_json_value_type_and_order(tmp_path: Path) -> None:
    extra = {"score": 0.5, "n": 3, "big": 2**70, "flag": False, "none": None,
             "nested": {"a": [1, "2", 3.0, {"b": None}]}, "text": "é ✓ 中文"}  # fmt: skip
    source = write_jsonl(
        tmp_path / "keys.jsonl", [long_entry(1, **extra), {**extra, "conversations": []}]
    )
    _, _, root = run(source)
    assert root is not None
    first, second = read_jsonl(root)
    for key, value in extra.items():
        assert first[key] == value and type(first[key]) is type(value)
    assert list(first)[:2] == ["id", "conversations"]
    assert second == {**extra, "conversations": []}
    assert "中文" in root.read_text(encoding="utf-8")  # not \u-escaped


def test_stdout_streams_jsonl_in_order(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "s.jsonl", [long_entry(i) for i in range(5)])
    jobs, root = plan_jobs(str(source), "-", "_compressed")
    assert root is None
    sink = io.BytesIO()
    run_batch(jobs, root, fn=compress_words, options=BatchOptions(workers=1, chunk_size=2),
              settings={}, stdout=sink)  # fmt: skip
    out = [json.loads(line) for line in sink.getvalue().decode().splitlines()]
    assert [e["id"] for e in out] == list(range(5))
    assert not list(tmp_path.glob("*.partial"))


def test_a_directory_maps_to_a_compressed_directory_with_the_same_names(tmp_path: Path) -> None:
    src = tmp_path / "data"
    (src / "sub").mkdir(parents=True)
    write_jsonl(src / "a.jsonl", [long_entry(1)])
    write_jsonl(src / "sub" / "b.jsonl", [long_entry(2), long_entry(3)])
    (src / "notes.txt").write_text("ignored")
    metrics, seen, root = run(src, chunk_size=1)
    assert root == tmp_path / "data_compressed"
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()) == [
        "a.jsonl",
        "sub/b.jsonl",
    ]
    assert [e["id"] for e in read_jsonl(root / "sub" / "b.jsonl")] == [2, 3]
    assert metrics.total_trajectories == 3 and seen.total == 3 and seen.done == 3
    assert not (tmp_path / "data_compressed.partial").exists()


def test_output_names_follow_tj02(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    assert output_name(tmp_path / "x.jsonl", "_compressed") == tmp_path / "x_compressed.jsonl"
    assert output_name(tmp_path / "x.parquet", "_small") == tmp_path / "x_small.parquet"
    assert output_name(tmp_path / "d", "_compressed") == tmp_path / "d_compressed"


def test_an_existing_output_is_refused_unless_overwrite(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "x.jsonl", [long_entry(1)])
    (tmp_path / "x_compressed.jsonl").write_text("keep me\n")
    with pytest.raises(UserError, match="already exists; pass --overwrite"):
        run(source)
    assert (tmp_path / "x_compressed.jsonl").read_text() == "keep me\n"
    run(source, overwrite=True)
    assert read_jsonl(tmp_path / "x_compressed.jsonl")[0]["id"] == 1


def test_a_missing_input_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such file or directory"):
        plan_jobs(str(tmp_path / "nope.jsonl"), None, "_compressed")


def test_the_process_pool_gives_the_same_bytes_as_one_process(tmp_path: Path) -> None:
    rows = [long_entry(i) for i in range(40)] + ["oops"]
    source = write_jsonl(tmp_path / "p.jsonl", rows)
    run(source, output=str(tmp_path / "one.jsonl"), chunk_size=7)
    metrics, _, _ = run(source, output=str(tmp_path / "pool.jsonl"), chunk_size=7, workers=2)
    assert (tmp_path / "one.jsonl").read_bytes() == (tmp_path / "pool.jsonl").read_bytes()
    assert metrics.total_trajectories == 41 and metrics.bad_input == 1


def test_shout_keeps_order_across_many_chunks(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "o.jsonl", [{"id": i, "conversations": []} for i in range(100)])
    _, seen, root = run(source, fn=shout, chunk_size=3)
    assert root is not None
    assert [e["id"] for e in read_jsonl(root)] == list(range(100))
    assert seen.done == 100 and seen.total == 100


def test_the_pool_parses_and_writes_in_its_workers_with_the_same_result(tmp_path: Path) -> None:
    """Issue 27: JSONL lines go to pool workers as text and come back as lines."""
    rows = [long_entry(i) for i in range(12)] + [
        "oops",
        "[1, 2]",
        "",
        long_entry(99, **{"raise": "x"}),
    ]
    source = write_jsonl(tmp_path / "q.jsonl", rows)
    one, _, _ = run(source, output=str(tmp_path / "one.jsonl"), chunk_size=5)
    pool, _, _ = run(source, output=str(tmp_path / "pool.jsonl"), chunk_size=5, workers=2)
    assert (tmp_path / "one.jsonl").read_bytes() == (tmp_path / "pool.jsonl").read_bytes()
    drop = {"elapsed_seconds"}
    assert {k: v for k, v in one.to_json().items() if k not in drop} == {
        k: v for k, v in pool.to_json().items() if k not in drop
    }
    assert pool.bad_input == 2 and pool.failed == 1
