"""Parquet and JSONL rendering: every other column keeps its value and Arrow type; atomic writes."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from palimpsest.trajectories.outcome import Outcome
from palimpsest.trajectories.runner import BatchOptions, plan_jobs, run_batch
from palimpsest.trajectories.sinks import (
    AtomicJsonlWriter,
    AtomicParquetWriter,
    jsonl_bytes,
    metrics_arrow_type,
    output_schema,
    records_to_write,
)
from trajectories_batch_helpers import compress_words, long_entry

TURN = pa.struct([("from", pa.string()), ("value", pa.string())])
SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("conversations", pa.list_(TURN)),
        ("score", pa.float32()),
        ("when", pa.timestamp("ms", tz="UTC")),
        ("price", pa.decimal128(10, 2)),
        ("tags", pa.list_(pa.string())),
        ("attrs", pa.map_(pa.string(), pa.int32())),
        ("info", pa.struct([("lang", pa.string()), ("nums", pa.list_(pa.int16()))])),
        ("blob", pa.binary()),
        ("flag", pa.bool_()),
    ],
    metadata={b"origin": b"test"},
)


def rows(n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        entry = long_entry(i)
        entry.update(
            score=0.5 + i, when=dt.datetime(2024, 1, 1 + i % 28, tzinfo=dt.UTC),
            price=decimal.Decimal(f"{i}.25"), tags=["a", str(i)], attrs=[("k", i)],
            info={"lang": "en", "nums": [i, -i]}, blob=bytes([i % 256]), flag=i % 2 == 0,
        )  # fmt: skip
        out.append(entry)
    out[3]["conversations"] = None  # bad input: a row without a trajectory
    return out


def test_parquet_round_trip_keeps_every_other_column_and_its_type(tmp_path: Path) -> None:
    source = tmp_path / "data.parquet"
    pq.write_table(pa.Table.from_pylist(rows(20), schema=SCHEMA), source, row_group_size=6)
    jobs, root = plan_jobs(str(source), None, "_compressed")
    metrics = run_batch(jobs, root, fn=compress_words, settings={},
                        options=BatchOptions(workers=1, chunk_size=4))  # fmt: skip
    assert root == tmp_path / "data_compressed.parquet"
    result = pq.read_table(root)
    assert result.schema.equals(output_schema(pq.read_schema(source)), check_metadata=True)
    assert result.schema.metadata[b"origin"] == b"test"
    before = pq.read_table(source).to_pylist()
    after = result.to_pylist()
    assert len(after) == 20 and metrics.bad_input == 1 and metrics.compressed == 19
    for old, new in zip(before, after, strict=True):
        for key in SCHEMA.names:
            if key != "conversations" or old["id"] == 3:
                assert new[key] == old[key], key
    assert after[3]["compression_metrics"] is None
    assert after[0]["compression_metrics"]["was_compressed"] is True
    assert after[0]["conversations"] != before[0]["conversations"]
    # Row groups: one per chunk of input (each input row group cut into chunks of 4).
    assert [pq.ParquetFile(root).metadata.row_group(i).num_rows for i in range(6)] == [
        4,
        2,
        4,
        2,
        4,
        2,
    ]


def test_metrics_struct_matches_the_trajectory_metrics_fields() -> None:
    kind = metrics_arrow_type()
    assert kind.field("compression_ratio").type == pa.float64()
    assert kind.field("was_compressed").type == pa.bool_()
    assert kind.field("original_tokens").type == pa.int64()


def test_records_to_write_drops_dropped_and_skipped_bad_input() -> None:
    outcomes = [
        Outcome("compressed", {"a": 1}),
        Outcome("timed_out", None),
        Outcome("bad_input", None, raw="{oops"),
        Outcome("bad_input", {"conversations": 1}),
        Outcome("still_over_limit", None),
    ]
    kept = records_to_write(outcomes, copy_bad_input=True)
    assert jsonl_bytes(kept) == b'{"a": 1}\n{oops\n{"conversations": 1}\n'
    assert jsonl_bytes(records_to_write(outcomes, copy_bad_input=False)) == b'{"a": 1}\n'


def test_an_aborted_writer_leaves_the_target_and_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    target.write_text("old\n")
    with pytest.raises(RuntimeError), AtomicJsonlWriter(target) as writer:
        writer.write(b"new\n")
        raise RuntimeError("crash mid-write")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]
    table = pa.Table.from_pylist([{"x": 1}])
    with (
        pytest.raises(RuntimeError),
        AtomicParquetWriter(tmp_path / "t.parquet", table.schema) as pw,
    ):
        pw.write(table)
        raise RuntimeError("crash")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]


def test_the_writers_check_their_target_and_keep_its_mode(tmp_path: Path) -> None:
    """Issue 20: the sinks go through palimpsest.files: a FIFO or directory is refused when
    the writer is made (before a row is written), an existing file keeps its mode, and a
    symlink is written through."""
    import os
    import stat

    from palimpsest.errors import OutputTargetError

    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(OutputTargetError, match="FIFO"):
        AtomicJsonlWriter(tmp_path / "pipe")
    with pytest.raises(OutputTargetError, match="directory"):
        AtomicParquetWriter(tmp_path, SCHEMA)
    real = tmp_path / "out.jsonl"
    real.write_text("old\n")
    real.chmod(0o754)
    (tmp_path / "link.jsonl").symlink_to(real)
    with AtomicJsonlWriter(tmp_path / "link.jsonl") as writer:
        writer.write(b'{"a": 1}\n')
        writer.commit()
    assert real.read_text() == '{"a": 1}\n' and stat.S_IMODE(real.stat().st_mode) == 0o754
    assert (tmp_path / "link.jsonl").is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.jsonl", "out.jsonl", "pipe"]


def test_a_failed_write_names_the_output_not_the_temporary_file(tmp_path: Path) -> None:
    """A real EFBIG (the file-size limit, in a child process) while writing a chunk."""
    import subprocess
    import sys
    import textwrap

    target = tmp_path / "out.jsonl"
    script = textwrap.dedent(
        f"""
        import resource, signal
        from pathlib import Path
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        from palimpsest.trajectories.sinks import AtomicJsonlWriter
        try:
            with AtomicJsonlWriter(Path({str(target)!r})) as out:
                for _ in range(100):
                    out.write(b"x" * 1000 + b"\\n")
                out.commit()
        except OSError as exc:
            print(exc.filename)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.stdout.strip() == str(target), proc.stderr
    assert list(tmp_path.iterdir()) == []  # no output, no temporary file left
