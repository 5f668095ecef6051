"""The continuity benchmark's long runs (benchmarks/continuity.py --long): one command that
builds chained real runs per seed, scores every system at every depth, prints the table."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import continuity  # noqa: E402
import long_transcript  # noqa: E402


def test_long_runs_are_one_per_seed_and_deterministic() -> None:
    runs = continuity.long_runs([1, 2], 80)
    assert [name for name, _ in runs] == ["long-80-seed1", "long-80-seed2"]
    assert runs[0][1] == continuity.long_runs([1], 80)[0][1]
    assert runs[0][1] != runs[1][1]
    assert all(m.get("role") for _, messages in runs for m in messages)


def test_fence_lines_are_never_varied() -> None:
    text = "Run it.\n```\npython get_seed.py\n```"
    varied = long_transcript._vary_text(text, 7)
    assert varied.split("\n")[1] == "```" and varied.split("\n")[3] == "```"
    assert "python get_seed.py  # 7" in varied
    assert long_transcript._vary_text("a\n```\n```", 3) == "a\n```\n```"


def test_the_long_command_scores_every_depth(capsys: pytest.CaptureFixture[str]) -> None:
    cases = continuity.evaluate_long(continuity.long_runs([3], 120))
    assert [c.depth for c in cases] == [0.5, 0.7, 0.9]
    continuity.table(cases)
    out = capsys.readouterr().out
    assert out.count("- long-120-seed3 @ ") == 3
    for system in ("palimpsest", "masking", "truncation"):
        assert f"| all | {system} |" in out
