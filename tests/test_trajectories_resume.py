"""The work directory: commits, fingerprints and refusals (the SIGKILL test is in test_cli_)."""

from __future__ import annotations

from pathlib import Path

import pytest

from palimpsest.trajectories.metrics import AggregateMetrics
from palimpsest.trajectories.resume import ChunkRecord, ResumeError, WorkDir, work_dir_for


def test_a_committed_chunk_is_found_by_a_reopened_work_dir(tmp_path: Path) -> None:
    path = work_dir_for(tmp_path / "out.jsonl")
    assert path == tmp_path / "out.jsonl.partial"
    work = WorkDir(path, {"target": 10})
    assert not work.resumed and work.record("a.jsonl", 0) is None
    part = AggregateMetrics(total_trajectories=2, compressed=1)
    work.commit("a.jsonl", ChunkRecord(0, 0, 4, "abc", 2, part.__dict__.copy()), b"x\ny\n")
    again = WorkDir(path, {"target": 10})
    assert again.resumed
    record = again.record("a.jsonl", 0)
    assert record is not None and record.digest == "abc"
    assert record.aggregate().compressed == 1
    assert again.read_part("a.jsonl", 0) == b"x\ny\n"
    assert again.record("b.jsonl", 0) is None
    again.remove()
    assert not path.exists()


def test_other_settings_are_refused_with_the_keys_and_the_directory(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl.partial"
    WorkDir(path, {"target": 10, "model": None})
    with pytest.raises(ResumeError, match=r"\(target changed\).*delete .*out.jsonl.partial"):
        WorkDir(path, {"target": 11, "model": None})


def test_an_orphan_part_without_its_record_is_not_done(tmp_path: Path) -> None:
    work = WorkDir(tmp_path / "o.partial", {})
    work.commit("a", ChunkRecord(0, 0, 1, "d", 1, {}), b"1\n")
    (work.part_path("a", 1)).write_bytes(b"half")  # killed between part and record
    assert work.record("a", 1) is None
