"""The backends' rankings side by side (benchmarks/search_recall_parity.py), on a real server.

Skipped without a server (tests/conftest.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import search_recall_parity as parity  # noqa: E402
from recall_corpus import Question  # noqa: E402
from search_recall import Ranking  # noqa: E402
from test_benchmarks_search_recall_pg import _corpus  # noqa: E402


def test_the_backends_rank_every_question_alike(pg_server: str, tmp_path: Path) -> None:
    report = parity.evaluate_parity(_corpus(), pg_server, tmp_path)
    assert report["differences"] == []
    held = report["halves"]["held_out"]
    assert held["n"] == 4 and report["halves"]["tuning"]["n"] == 0
    assert held["sqlite"] == held["pg"]
    assert held["pg"]["all"]["turn@5"] == 0.75  # "zebra quantum" is nowhere
    assert "0 questions ranked differently" in parity.render(report)


def test_differences_show_both_rankings_with_gold_marked() -> None:
    question = Question("which boat", ("all",), ("s2",), (("s2", 0),), 1, "t", "Omar")
    lite = Ranking(["s2", "s1"], [20, 10], 0.0, 0.0)
    pg = Ranking(["s1", "s2"], [10, 20], 0.0, 0.0)
    same = Ranking(["s2", "s1"], [20, 10], 0.0, 0.0)
    keys = {10: "s1#0", 20: "s2#0"}
    assert parity.differences([question], [lite], [same], keys, keys) == []
    (row,) = parity.differences([question], [lite], [pg], keys, keys)
    assert row["turns"] == {"sqlite": ["s2#0", "s1#0"], "pg": ["s1#0", "s2#0"]}
    assert row["half"] == "held_out" and row["gold_turns"] == ["s2#0"]
    text = parity.render({"halves": {}, "differences": [row]} | _empty_halves())
    assert "s2#0* s1#0" in text and "1 questions ranked differently" in text


def _empty_halves() -> dict[str, object]:
    blank = {
        tag: {"n": 0, "session@1": None, "session@5": None, "turn@5": None} for tag in parity.TAGS
    }
    half = {"n": 0, "sqlite": blank, "pg": blank}
    return {"halves": {"tuning": half, "held_out": half}}
