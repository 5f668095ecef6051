"""The continuity runner on real transcripts and on a hand-written one."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import palimpsest.eval
from conftest import DATA
from palimpsest.compaction import ContextCompressor
from palimpsest.eval.continuity import aggregate, depth_prefix, evaluate_transcript
from palimpsest.messages import load_transcript
from palimpsest.tokens import RoughCounter

PYDICOM = DATA / "transcripts" / "swe-agent" / "pydicom-1458__gpt4_default.traj"


def test_depth_prefix_holds_the_depth_and_ends_after_an_observation() -> None:
    messages = load_transcript(PYDICOM)
    counter = RoughCounter()
    total = counter.count_messages(messages)
    prefix = depth_prefix(messages, 0.7, counter)
    assert counter.count_messages(prefix) >= 0.7 * total
    assert prefix[-1]["role"] == "user"  # the last action's output is included
    assert prefix == messages[: len(prefix)]


def test_real_transcript_scores_three_systems_on_one_span() -> None:
    messages = load_transcript(PYDICOM)
    before = json.dumps(messages)
    cases = evaluate_transcript("pydicom", messages, [0.5, 0.9], counter=RoughCounter())
    assert json.dumps(messages) == before
    shallow, deep = cases
    assert not shallow.compacted and shallow.reason  # 3 messages: nothing to summarize
    assert not shallow.systems
    assert deep.compacted and deep.span is not None and deep.facts is not None
    assert [s.system for s in deep.systems] == ["palimpsest", "masking", "truncation"]
    assert deep.facts.files_modified == ("/pydicom__pydicom/reproduce_bug.py",)
    masking = deep.systems[1].probes
    assert masking.identifiers_kept is not None
    assert masking.identifiers_kept[0] == masking.identifiers_kept[1]  # keeps assistant text
    palimpsest, truncation = deep.systems[0], deep.systems[2]
    assert truncation.tokens_after <= palimpsest.tokens_after
    row = deep.to_dict()
    assert row["systems"][0]["system"] == "palimpsest"
    assert "tokens_removed_pct" in row["systems"][0]
    summary = aggregate(cases)
    assert summary["palimpsest"]["cases"] == 1


def _long_run() -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Make the parser strict."},
    ]
    for i in range(30):
        cid = f"call_{i}"
        args = {"command": f"python -m pytest tests/test_parse_{i}.py"}
        messages.append(
            {
                "role": "assistant",
                "content": f"Checking parse_step_{i} next.",
                "tool_calls": [
                    {
                        "id": cid,
                        "type": "function",
                        "function": {"name": "bash", "arguments": json.dumps(args)},
                    }
                ],
            }
        )
        messages.append(
            {"role": "tool", "tool_call_id": cid, "content": f"{i} passed\n" + "log line\n" * 60}
        )
    return messages


def test_a_span_without_failures_or_requests_reports_not_applicable() -> None:
    cases = evaluate_transcript("synthetic", _long_run(), [0.9], counter=RoughCounter())
    (case,) = cases
    assert case.compacted
    for system in case.systems:
        assert system.probes.files_named is None
        assert system.probes.unresolved_failure_kept is None
    # every parse_step_N is named once and never again: nothing the run used later
    assert case.facts is not None and case.facts.nothing_to_probe
    summary = aggregate(cases)
    assert summary["masking"]["files_named"] is None
    assert summary["masking"]["identifiers_kept"] is None
    assert summary["masking"]["nothing_to_probe"] == 1


class _Forgetful:
    """A summarizer that keeps nothing: every probe that applies must fail for it."""

    needs_prompt = False
    # Declared deterministic so the compressor's verification (which would reject it and use
    # the extractive fallback) stays out of the way: this test is about the probes.
    deterministic = True

    def summarize(self, request: Any) -> str:
        return "Work happened."


def test_a_summary_that_keeps_nothing_scores_zero_while_masking_keeps_all() -> None:
    messages = load_transcript(PYDICOM)
    (case,) = evaluate_transcript(
        "pydicom",
        messages,
        [0.9],
        counter=RoughCounter(),
        make_compressor=lambda window: ContextCompressor(window, _Forgetful(), quiet_mode=True),
    )
    palimpsest, masking = case.systems[0].probes, case.systems[1].probes
    assert palimpsest.files_named == (0, 1)
    assert palimpsest.unresolved_failure_kept is False
    # the tail still repeats most names, but the ones only the span held are gone
    assert palimpsest.identifiers_kept is not None and masking.identifiers_kept is not None
    assert palimpsest.identifiers_kept[0] < masking.identifiers_kept[0]
    assert "reproduce_bug" in palimpsest.identifiers_missing
    assert masking.files_named == (1, 1) and masking.unresolved_failure_kept is True


def test_the_eval_does_not_read_transcripts_through_the_code_it_measures() -> None:
    """Its probes must not share a parser with the summarizer: a shared bug would hide."""
    package = Path(palimpsest.eval.__file__).parent
    for module in package.glob("*.py"):
        tree = ast.parse(module.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                name = "." * node.level + (node.module or "")
                assert "summarizers" not in name, module.name
                assert not name.endswith("messages.reading"), module.name
                assert not (
                    name.endswith("messages") and any(a.name == "reading" for a in node.names)
                )


def _imports(module: Path) -> list[str]:
    """Absolute names of what ``module`` (in ``palimpsest/<package>/``) imports."""
    package = module.parent.name
    found: list[str] = []
    for node in ast.walk(ast.parse(module.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = node.module or ""
            else:
                parts = ["palimpsest", package][: 2 - (node.level - 1)]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            found.extend(f"{base}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.extend(a.name for a in node.names)
    return found


def test_eval_and_summarizers_share_no_parsing_module() -> None:
    """The eval's reading of a span (everything but the runner, which drives the compressor
    it measures) uses only the message accessors and tokens; the summarizers never import
    the eval. A parser shared by both would hide the same bug twice."""
    root = Path(palimpsest.eval.__file__).parent.parent
    allowed = ("palimpsest.eval.", "palimpsest.messages.content.", "palimpsest.tokens.")
    # the resolver itself sees a real import, so the checks below can fail
    assert "palimpsest.messages.reading.read_transcript" in _imports(
        root / "summarizers" / "facts.py"
    )
    for module in sorted((root / "eval").glob("*.py")):
        if module.name in ("continuity.py", "__init__.py"):
            continue
        for name in _imports(module):
            if name.startswith("palimpsest"):
                assert name.startswith(allowed), (module.name, name)
    for module in sorted((root / "summarizers").glob("*.py")):
        for name in _imports(module):
            assert not name.startswith("palimpsest.eval"), (module.name, name)
