"""The Ray engine gives the local engine's bytes, on JSONL and Parquet, in one small run."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'palimpsest[ray]')")

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from palimpsest.trajectories.runner import BatchOptions, Observer, plan_jobs, run_batch  # noqa: E402
from trajectories_batch_helpers import compress_words, long_entry  # noqa: E402

TESTS = Path(__file__).resolve().parent

# Ray Data warns about its own deprecated settings when a pipeline starts; not ours to fix.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    # Workers import the test helpers and the package from these paths.
    path = os.pathsep.join([str(TESTS), str(TESTS.parent / "src")])
    # One CPU: the run is five batches, and a second Ray worker process only competed with
    # the other pytest worker on a 2-core machine (14 s against 10 s for this test).
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": path}})  # fmt: skip
    yield
    ray.shutdown()


class Problems(Observer):
    def __init__(self) -> None:
        self.lines: list[str] = []

    def problem(self, line: str) -> None:
        self.lines.append(line)


def run(source: Path, output: Path, engine: str) -> tuple[Any, list[str]]:
    seen = Problems()
    jobs, root = plan_jobs(str(source), str(output), "_compressed")
    options = BatchOptions(engine=engine, workers=1, chunk_size=5)  # type: ignore[arg-type]
    metrics = run_batch(jobs, root, fn=compress_words, options=options, settings={}, observer=seen)
    return metrics.to_json(), seen.lines


def test_local_and_ray_give_identical_output_metrics_and_problem_lines(
    tmp_path: Path, local_ray: None
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    lines = [json.dumps(long_entry(i, note="é")) for i in range(23)]
    lines[4] = "{broken"
    lines[9] = ""
    lines[12] = json.dumps(long_entry(12, **{"raise": "boom"}))
    (data / "a.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    table = pa.Table.from_pylist([{**long_entry(i), "tags": {"k": [i]}} for i in range(17)])
    pq.write_table(table, data / "b.parquet", row_group_size=7)

    local, local_lines = run(data, tmp_path / "local", "local")
    remote, remote_lines = run(data, tmp_path / "ray", "ray")
    for name in ("a.jsonl", "b.parquet"):
        assert (tmp_path / "local" / name).read_bytes() == (tmp_path / "ray" / name).read_bytes()
    local.pop("elapsed_seconds"), remote.pop("elapsed_seconds")
    assert local == remote
    assert local["total_trajectories"] == 39 and local["bad_input"] == 1 and local["failed"] == 1
    assert remote_lines == local_lines
    assert any(
        line.endswith(
            "a.jsonl:5: bad input: not valid JSON (Expecting property name enclosed in double quotes at column 2)"
        )
        for line in remote_lines
    )
