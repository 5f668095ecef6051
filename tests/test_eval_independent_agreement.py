"""The eval's figures agree with a second, independent reading of the same results.

``tests/independent_scorer.py`` reads every transcript of tests/data/transcripts with its
own rules; on every compacted case of every depth, its totals for modified files named,
last failing command kept and identifiers used later kept must be within
:data:`TOLERANCE` percentage points of the eval's, for each system.
"""

from __future__ import annotations

import builtins
import keyword
from functools import cache
from typing import Any

import pytest

from conftest import DATA
from independent_scorer import Tally, score_case
from palimpsest.eval import DEFAULT_DEPTHS, CaseResult, aggregate, evaluate_transcript
from palimpsest.messages import load_transcript

TOLERANCE = 5.0
TRANSCRIPTS = sorted(
    p
    for p in (DATA / "transcripts").rglob("*")
    if p.is_file() and p.name.endswith((".traj", ".json", ".jsonl"))
)
_OTHER_LANGUAGES = ["while", "for", "if", "switch", "return", "sizeof", "catch", "function",
                    "typeof", "elif", "else", "do", "case", "new", "delete", "printf", "echo",
                    "exit"]  # fmt: skip
LANGUAGE = frozenset(
    [*dir(builtins), *keyword.kwlist, *dir(str), *dir(list), *dir(dict), *dir(set), *dir(bytes),
     *_OTHER_LANGUAGES]
)  # fmt: skip


@cache
def _runs() -> tuple[list[CaseResult], dict[str, Tally]]:
    cases: list[CaseResult] = []
    totals = {s: Tally.empty() for s in ("palimpsest", "masking", "truncation")}
    for path in TRANSCRIPTS:
        messages = load_transcript(path)
        for case in evaluate_transcript(path.name, messages, DEFAULT_DEPTHS, keep_messages=True):
            cases.append(case)
            if not case.compacted or case.span is None:
                continue
            start, end = case.span
            prefix = messages[: case.prefix_messages]
            results = {s.system: s.messages for s in case.systems}
            assert all(results.values()), "the eval kept no result to read again"
            for system, tally in score_case(
                messages, prefix, start, start, end, results, LANGUAGE
            ).items():
                mine = totals[system]
                for attr in ("files", "fail", "names"):
                    got, want = getattr(tally, attr), getattr(mine, attr)
                    want[0] += got[0]
                    want[1] += got[1]
    return cases, totals


def _pct(pair: Any) -> float | None:
    if pair is None or not pair[1]:
        return None
    return pair[0] / pair[1] * 100


@pytest.mark.parametrize("system", ["palimpsest", "masking", "truncation"])
@pytest.mark.parametrize(
    ("probe", "attr"),
    [("files_named", "files"), ("last_failure_kept", "fail"), ("identifiers_kept", "names")],
)
def test_the_eval_agrees_with_an_independent_scorer(system: str, probe: str, attr: str) -> None:
    cases, totals = _runs()
    ours = _pct(aggregate(cases)[system][probe])
    theirs = _pct(getattr(totals[system], attr))
    assert (ours is None) == (theirs is None), (probe, ours, theirs)
    if ours is not None and theirs is not None:
        assert abs(ours - theirs) <= TOLERANCE, (probe, system, ours, theirs)


def test_the_independent_scorer_sees_something_to_score() -> None:
    _, totals = _runs()
    mine = totals["palimpsest"]
    assert mine.files[1] >= 10 and mine.names[1] >= 10 and mine.fail[1] >= 2
