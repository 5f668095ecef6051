"""ExtractiveSummarizer: deterministic handoff summaries from real and synthetic transcripts."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from palimpsest.compaction.summary import CLASSIC_SECTIONS, HANDOFF_SECTIONS
from palimpsest.messages import load_transcript
from palimpsest.messages.reading import read_transcript
from palimpsest.summarizers import ExtractiveSummarizer, Summarizer, SummaryRequest
from palimpsest.summarizers.extractive import CLASSIC_HEADINGS, HANDOFF_HEADINGS, UNCHANGED_TASK
from palimpsest.summarizers.facts import extract_facts
from palimpsest.tokens import estimate_tokens_rough

DATA = Path(__file__).parent / "data" / "transcripts"
TRANSCRIPTS = sorted(
    p for p in DATA.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl", ".traj")
)
BUDGET = 2_000  # the compressor's minimum summary budget (CC-63)

_WRITE_TOOLS = {"write", "write_file", "create", "create_file", "edit", "multiedit", "insert"}
_EDITORS = {"str_replace_editor", "text_editor", "str_replace_based_edit_tool"}
_PATH_KEYS = ("path", "file_path", "filename", "target_file")


def _request(turns: list[dict[str, Any]], **kw: Any) -> SummaryRequest:
    values: dict[str, Any] = {
        "previous_summary": None,
        "focus_topic": None,
        "budget_tokens": BUDGET,
        "prompt": "",
    }
    values.update(kw)
    return SummaryRequest(turns=turns, **values)


def _summarize(turns: list[dict[str, Any]], **kw: Any) -> str:
    return ExtractiveSummarizer().summarize(_request(turns, **kw))


def _headings(body: str) -> list[str]:
    return [line for line in body.splitlines() if line.startswith("#")]


def _section(body: str, heading: str) -> str:
    start = body.index(heading + "\n") + len(heading) + 1
    end = body.find("\n## ", start)
    return body[start : end if end != -1 else len(body)]


def _numbers(body: str, heading: str = "## Completed Actions") -> list[int]:
    return [int(m) for m in re.findall(r"^(\d+)\. ", _section(body, heading), re.M)]


def _written_paths(turns: list[dict[str, Any]]) -> set[str]:
    """Paths the span's tool calls wrote or edited, computed from the arguments alone."""
    paths: set[str] = set()
    for message in turns:
        for call in message.get("tool_calls") or []:
            fn = call["function"]
            name = fn["name"].lower()
            raw = fn.get("arguments") or ""
            args = json.loads(raw) if raw.strip().startswith("{") else {}
            if "*** Begin Patch" in raw:
                paths.update(re.findall(r"\*\*\* (?:Add|Update|Delete) File: ([^\s\\]+)", raw))
            elif name in _WRITE_TOOLS or (
                name in _EDITORS and args.get("command") not in ("view", None)
            ):
                paths.update(args[k] for k in _PATH_KEYS if isinstance(args.get(k), str))
    return paths


def _latest_user_text(turns: list[dict[str, Any]]) -> str | None:
    """The newest real user request, as the one reading of the transcript says."""
    requests = [r.text for r in read_transcript(turns) if r.kind == "request"]
    return requests[-1] if requests else None


def _middle(path: Path) -> list[dict[str, Any]]:
    messages = [dict(m) for m in load_transcript(path)]
    start = 1 if messages[0].get("role") == "system" else 0
    end = max(start + 1, len(messages) - 1)
    return messages[start:end]


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=[p.name for p in TRANSCRIPTS])
def test_real_transcripts(path: Path) -> None:
    turns = _middle(path)
    body = _summarize(turns)
    assert _headings(body) == list(HANDOFF_HEADINGS)
    assert estimate_tokens_rough(body) <= BUDGET
    files = _section(body, "## Relevant Files")
    modified = extract_facts(turns).modified_files()
    for written in _written_paths(turns):
        # shown once, relative to the run's root when it lies under it
        assert any(written.endswith(m) for m in modified), written
    for path in modified:
        assert f"- {path} — " in files or path in files.split("changed: ")[-1], path
    latest = _latest_user_text(turns)
    task = _section(body, "## Active Task")
    if latest is None:
        assert task.strip() in ("None.", UNCHANGED_TASK)
    else:
        assert task.startswith("User asked: '")
        assert " ".join(latest.split())[:300] in " ".join(task.split())
    numbers = _numbers(body)
    assert numbers == list(range(1, len(numbers) + 1))
    assert _summarize(turns) == body  # deterministic


def test_real_transcripts_cover_every_agent_shape() -> None:
    """Guards the fixture set: each shape of tool use the mapping handles is exercised."""
    names = {p.name for p in TRANSCRIPTS}
    assert {"claude-code_sample_session.json", "github_issue.traj.json"} <= names
    assert any("function_calling" in n for n in names)
    assert any(n.endswith("gpt4_default.traj") for n in names)


def test_claude_code_actions_and_state() -> None:
    turns = _middle(DATA / "format-samples" / "claude-code_sample_session.json")
    body = _summarize(turns)
    actions = _section(body, "## Completed Actions")
    assert "WRITE /project/math_utils.py — 3 lines [tool: Write]" in actions
    assert "RUN `python -m pytest tests/` — 2 passed [tool: Bash]" in actions
    assert "EDIT /project/tests/test_math.py — ok [tool: Edit]" in actions
    assert "exit 1; error: test_subtract - AssertionError: expected 5 but got None" in actions
    assert "SEARCH 'def subtract' in /project" in actions
    files = _section(body, "## Relevant Files")
    assert "/project/math_utils.py — created" in files
    assert "/project/tests/test_math.py — modified" in files
    assert "AssertionError: expected 5 but got None" in _section(body, "## Blocked")


def test_text_action_agents_produce_actions() -> None:
    turns = _middle(DATA / "mini-swe-agent" / "github_issue.traj.json")
    body = _summarize(turns)
    actions = _section(body, "## Completed Actions")
    assert "RUN `ls -la tests/` — exit 0 [tool: bash]" in actions
    assert "ZeroDivisionError: division by zero" in actions
    assert "tests/missing_colon.py — modified" in _section(body, "## Relevant Files")
    # observations are not requests: the task is the issue, not "<returncode>0</returncode>"
    assert "<returncode>" not in _section(body, "## Active Task")

    swe = _summarize(_middle(DATA / "swe-agent" / "pydicom-1458__gpt4_default.traj"))
    assert "WRITE reproduce_bug.py — ok [tool: create]" in swe
    assert "numpy_handler.py — modified" in _section(swe, "## Relevant Files")
    assert "Working directory: /pydicom__pydicom" in _section(swe, "## Active State")


def test_swe_agent_edit_targets_the_open_file() -> None:
    turns = _middle(DATA / "swe-agent" / "marshmallow-1867__function_calling.traj")
    body = _summarize(turns)
    # paths are shown relative to the run's root (/testbed), each file once
    assert "EDIT src/marshmallow/fields.py — ok [tool: edit]" in body
    files = _section(body, "## Relevant Files")
    assert "- src/marshmallow/fields.py — modified" in files
    assert files.count("fields.py") == 1


def test_iterative_update_continues_numbering_and_keeps_files() -> None:
    turns = _middle(DATA / "format-samples" / "claude-code_sample_session.json")
    half = 12
    first = _summarize(turns[:half])
    n_first = len(_numbers(first))
    assert n_first > 0
    second = _summarize(turns[half:], previous_summary=first)
    numbers = _numbers(second)
    assert numbers == list(range(1, len(numbers) + 1))
    assert len(numbers) > n_first
    first_lines = _section(first, "## Completed Actions").splitlines()
    second_lines = _section(second, "## Completed Actions").splitlines()
    assert second_lines[:n_first] == first_lines[:n_first]
    for path in _written_paths(turns[:half]) | _written_paths(turns[half:]):
        assert path in _section(second, "## Relevant Files")
    assert "Add a multiply function too" in _section(second, "## Active Task")
    assert _headings(second) == list(HANDOFF_HEADINGS)


def test_update_keeps_sections_the_new_span_does_not_touch() -> None:
    previous = _summarize(
        [
            {"role": "user", "content": "Deploy the API. Always use port 8080. Why is CI red?"},
            {"role": "assistant", "content": "CI is red because the lint step fails."},
        ]
    )
    body = _summarize(
        [{"role": "assistant", "content": "Continuing with the deployment now."}],
        previous_summary=previous,
    )
    assert "Deploy the API" in _section(body, "## Active Task")
    assert "Always use port 8080" in _section(body, "## Constraints & Preferences")
    assert "Why is CI red?" in _section(body, "## Resolved Questions")


def test_previous_in_progress_moves_to_completed() -> None:
    previous = "## In Progress\nRefactoring the auth module\n\n## Completed Actions\n1. READ a.py — 3 lines"
    turns = [
        {"role": "assistant", "content": None, "tool_calls": [_call("c1", "bash", command="true")]},
        {"role": "tool", "tool_call_id": "c1", "content": "exit code 0"},
        {"role": "assistant", "content": "All done."},
    ]
    body = _summarize(turns, previous_summary=previous)
    actions = _section(body, "## Completed Actions")
    assert actions.startswith("1. READ a.py — 3 lines\n2. FINISH Refactoring the auth module")
    assert _section(body, "## In Progress").strip() == "None."


def _call(call_id: str, name: str, **args: Any) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


def test_summary_messages_in_the_span_are_the_previous_summary() -> None:
    turns = [
        {
            "role": "user",
            "content": "[CONTEXT COMPACTION — REFERENCE ONLY] old\n## Goal\nShip v2\n"
            "## Relevant Files\n- src/old.py — modified",
        },
        {"role": "user", "content": "   "},
        {"role": "assistant", "content": "ok"},
    ]
    body = _summarize(turns)
    # no request in the span: the task is the goal, not "None." (changed in issue 8)
    assert _section(body, "## Active Task").strip() == UNCHANGED_TASK
    assert "Ship v2" in _section(body, "## Goal")
    assert "src/old.py — modified" in _section(body, "## Relevant Files")


def test_questions_resolved_and_pending() -> None:
    turns = [
        {"role": "user", "content": "Which Python version do we target?"},
        {"role": "assistant", "content": "We target Python 3.11. It is set in pyproject."},
        {"role": "user", "content": "Can you also check the lockfile?"},
    ]
    body = _summarize(turns)
    assert "Which Python version do we target?" in _section(body, "## Resolved Questions")
    assert "We target Python 3.11." in _section(body, "## Resolved Questions")
    assert "Can you also check the lockfile?" in _section(body, "## Pending User Asks")
    assert "lockfile" in _section(body, "## Remaining Work")


def test_tool_calls_as_objects_and_codex_shapes() -> None:
    patch = "*** Begin Patch\n*** Update File: src/a.py\n@@\n-x\n+y\n*** Add File: src/b.py\n+z\n*** End Patch"
    obj_call = SimpleNamespace(
        id="o1", function=SimpleNamespace(name="write_file", arguments='{"path": "obj.txt"}')
    )
    turns = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [obj_call]},
        {"role": "tool", "tool_call_id": "o1", "content": "ok"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                _call("s1", "shell", command=["bash", "-lc", "cd /repo && pytest -q"], workdir="/w")
            ],
        },
        {"role": "tool", "tool_call_id": "s1", "content": "1 failed, 4 passed in 0.3s"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [_call("p1", "apply_patch", input=patch)],
        },
        {"role": "tool", "tool_call_id": "p1", "content": "Done!"},
    ]
    body = _summarize(turns)
    files = _section(body, "## Relevant Files")
    assert "obj.txt — created" in files
    assert "src/a.py — modified" in files and "src/b.py — created" in files
    assert "RUN `cd /repo && pytest -q` — 4 passed, 1 failed [tool: shell]" in body
    assert "Working directory: /repo" in body
    assert "Tests: 4/5 passing" in body


def _many_actions(n: int, output_size: int = 200) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = [{"role": "user", "content": "Refactor everything, please."}]
    for i in range(n):
        if i % 10 == 0:
            call = _call(f"c{i}", "write_file", path=f"src/gen/module_{i}.py", content="x\n")
            out = "ok"
        else:
            call = _call(f"c{i}", "terminal", command=f"cat notes_{i}.txt")
            out = ("line of output with some words\n" * (output_size // 32)) + '{"exit_code": 0}'
        turns.append({"role": "assistant", "content": None, "tool_calls": [call]})
        turns.append({"role": "tool", "tool_call_id": f"c{i}", "content": out})
    return turns


def test_tight_budget_collapses_actions_but_keeps_written_files() -> None:
    turns = _many_actions(500)
    body = _summarize(turns)
    assert estimate_tokens_rough(body) <= BUDGET
    assert re.search(
        r"^… and \d+ more reads/commands", _section(body, "## Completed Actions"), re.M
    )
    for i in range(0, 500, 10):
        assert f"src/gen/module_{i}.py" in _section(body, "## Relevant Files")
    numbers = _numbers(body)
    assert numbers == list(range(1, len(numbers) + 1))
    # the most informative actions (the writes) are the ones kept
    assert "WRITE src/gen/module_490.py" in body


def test_generous_budget_lists_every_action() -> None:
    turns = _many_actions(60)
    body = _summarize(turns, budget_tokens=12_000)
    assert _numbers(body) == list(range(1, 61))
    assert "… and" not in _section(body, "## Completed Actions")


def test_long_request_is_cut_with_a_visible_marker() -> None:
    ask = "word " * 2_000
    body = _summarize([{"role": "user", "content": ask}])
    task = _section(body, "## Active Task")
    assert "...[truncated]'" in task
    assert len(task) < 1_500


def test_classic_template_layout() -> None:
    turns = _middle(DATA / "format-samples" / "claude-code_sample_session.json")
    body = _summarize(turns, template="classic")
    assert _headings(body) == list(CLASSIC_HEADINGS)
    numbers = _numbers(body, "### Done")
    assert numbers == list(range(1, len(numbers) + 1)) and numbers
    assert "/project/math_utils.py" in _section(body, "## Relevant Files")


def test_headings_match_the_prompt_template() -> None:
    assert [h for h, _ in HANDOFF_SECTIONS] == list(HANDOFF_HEADINGS)
    flat = [line for h, _ in CLASSIC_SECTIONS for line in h.split("\n")]
    assert flat == list(CLASSIC_HEADINGS)


def test_is_a_summarizer() -> None:
    assert isinstance(ExtractiveSummarizer(), Summarizer)


SECRETS = {
    "openai": "sk-proj-FAKEabc123DEF456ghi789JKL012",
    "github": "ghp_FAKE1234567890abcdefghijABCDEFGHIJ",
    "password": "hunter2hunter2",
    "aws": "AKIAFAKE0EXAMPLE1234",
    "url": "s3cr3tUrlPass",
}


def test_planted_secrets_never_reach_the_summary() -> None:
    turns = [
        {
            "role": "user",
            "content": f"Use key {SECRETS['openai']} and deploy. What is the DB password?",
        },
        {
            "role": "assistant",
            "content": f"The password is set: DB_PASSWORD={SECRETS['password']}",
            "tool_calls": [
                _call(
                    "c1",
                    "bash",
                    command=f"GITHUB_TOKEN={SECRETS['github']} git push "
                    f"https://bot:{SECRETS['url']}@github.com/o/r.git",
                )
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": f"error: auth failed for {SECRETS['aws']}\nfatal: could not push",
        },
        {"role": "user", "content": f"Try again with password={SECRETS['password']} please"},
    ]
    body = _summarize(turns)
    for value in SECRETS.values():
        assert value not in body
    assert "[REDACTED]" in body


def test_large_transcripts_stay_within_budget() -> None:
    """Scale check for correctness; speed is in benchmarks/extractive_summary.py."""
    turns = _many_actions(2_000, output_size=4_000)  # 4,001 messages, ~8 MB of output
    body = _summarize(turns, budget_tokens=12_000)
    assert estimate_tokens_rough(body) <= 12_000


# --- random transcripts ------------------------------------------------------------------------

_TOOL_NAMES = st.sampled_from(
    ["bash", "Bash", "read_file", "write_file", "Edit", "str_replace_editor", "grep", "weird", ""]
)
_TEXT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=120
) | st.sampled_from(
    [
        "```bash\nls -la\n```",
        "Exit code 1\nError: x",
        "What now?",
        "",
        "   ",
        "## Goal\n# fake heading",
        "[CONTEXT COMPACTION — REFERENCE ONLY] x\n## Relevant Files\n- a.py — modified",
        "token=abc123 and ghp_FAKE1234567890abcdefghijABCDEFGHIJ",
    ]
)
_ARGS = st.dictionaries(
    st.sampled_from(["path", "command", "file_path", "content", "pattern", "x"]),
    st.text(max_size=30) | st.integers() | st.none(),
    max_size=3,
)


@st.composite
def _transcripts(draw: st.DrawFn) -> list[Any]:
    turns: list[Any] = []
    for i in range(draw(st.integers(0, 25))):
        kind = draw(st.sampled_from(["user", "assistant", "call", "tool", "junk"]))
        if kind == "call":
            args = draw(_ARGS)
            raw = draw(st.sampled_from([json.dumps(args), "{not json", ""]))
            call = _call(f"id{i % 4}", draw(_TOOL_NAMES))
            call["function"]["arguments"] = raw
            turns.append({"role": "assistant", "content": draw(_TEXT), "tool_calls": [call]})
        elif kind == "tool":
            turns.append({"role": "tool", "tool_call_id": f"id{i % 4}", "content": draw(_TEXT)})
        elif kind == "junk":
            turns.append(
                draw(st.sampled_from([{"role": "user", "content": None}, {}, "text", {"role": 3}]))
            )
        else:
            content = draw(_TEXT | st.just([{"type": "text", "text": "part"}, {"type": "image"}]))
            turns.append({"role": kind, "content": content})
    return turns


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_transcripts(), st.sampled_from(["handoff", "classic"]), st.integers(2_000, 4_000))
def test_random_transcripts(turns: list[Any], template: str, budget: int) -> None:
    body = ExtractiveSummarizer().summarize(
        _request(turns, budget_tokens=budget, template=template)
    )
    expected = CLASSIC_HEADINGS if template == "classic" else HANDOFF_HEADINGS
    assert _headings(body) == list(expected)
    assert estimate_tokens_rough(body) <= budget
    assert "abc123" not in body and "ghp_FAKE" not in body
    again = ExtractiveSummarizer().summarize(
        _request(turns, budget_tokens=budget, template=template, previous_summary=body)
    )
    assert _headings(again) == list(expected)
    assert estimate_tokens_rough(again) <= budget


def test_written_files_survive_even_beyond_the_budget_and_across_updates() -> None:
    turns: list[dict[str, Any]] = [{"role": "user", "content": "Generate the client."}]
    paths = [f"src/generated/api/v2/resources/resource_{i:04d}_handlers.py" for i in range(300)]
    for i, path in enumerate(paths):
        turns.append({"role": "assistant", "content": None, "tool_calls": [_call(f"w{i}", "Write", file_path=path, content="x")]})  # fmt: skip
        turns.append({"role": "tool", "tool_call_id": f"w{i}", "content": "File written successfully"})  # fmt: skip
    first = _summarize(turns)
    assert "- changed: " in first  # the tightest level: one line of paths
    assert all(p in first for p in paths)
    second = _summarize([{"role": "user", "content": "Now run the tests."}], previous_summary=first)
    assert all(p in _section(second, "## Relevant Files") for p in paths)
    assert _headings(second) == list(HANDOFF_HEADINGS)


def _failing_edit_run() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "Fix the nested model bug."},
        {
            "role": "assistant",
            "content": "The bug is in `_cstack`: it fills the wrong corner of the matrix.",
            "tool_calls": [
                _call(
                    "e1",
                    "Edit",
                    file_path="/repo/pkg/modeling/separable.py",
                    old_string="= 1",
                    new_string="= right",
                )
            ],
        },
        {"role": "tool", "tool_call_id": "e1", "content": "The file was edited."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                _call(
                    "b1",
                    "Bash",
                    command="python -m pytest pkg/modeling/tests/test_separable.py -x -q",
                )
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "b1",
            "content": "E       AssertionError: separability_matrix(m) is wrong for nested models\n1 failed in 0.4s",
        },
    ]


def test_a_budget_too_small_for_every_heading_keeps_only_what_says_something() -> None:
    roomy = _summarize(_failing_edit_run(), budget_tokens=2_000)
    assert _headings(roomy) == list(HANDOFF_HEADINGS)
    tight = _summarize(_failing_edit_run(), budget_tokens=90)
    assert estimate_tokens_rough(tight) <= 90 < estimate_tokens_rough(roomy)
    assert "/repo/pkg/modeling/separable.py" in _section(tight, "## Relevant Files")
    assert "separability_matrix(m) is wrong for nested models" in tight
    assert "None." not in tight and "… and" not in tight
    assert not any(line.rstrip().endswith("…") for line in tight.splitlines())
    # each heading it keeps is in the template's order
    kept = _headings(tight)
    assert kept == [h for h in HANDOFF_HEADINGS if h in kept] and len(kept) < len(HANDOFF_HEADINGS)


def test_unstructured_previous_summary_is_kept_as_context() -> None:
    previous = "No summary could be produced this time. 12 message(s) were removed."
    body = _summarize([{"role": "user", "content": "Continue."}], previous_summary=previous)
    assert "12 message(s) were removed" in _section(body, "## Critical Context")


def test_summary_merged_into_an_assistant_message_keeps_its_tool_calls() -> None:
    from palimpsest.compaction.markers import END_MARKER, SUMMARY_PREFIX

    merged = f"{SUMMARY_PREFIX}\n## Goal\nShip it\n{END_MARKER}\nRunning the tests now."
    turns = [
        {"role": "assistant", "content": merged, "tool_calls": [_call("t1", "bash", command="pytest")]},
        {"role": "tool", "tool_call_id": "t1", "content": "3 passed in 0.1s"},
    ]  # fmt: skip
    body = _summarize(turns)
    assert "Ship it" in _section(body, "## Goal")
    assert "1. RUN `pytest` — 3 passed [tool: bash]" in body


# --- issue 8: the summary says what happened (bugs seen on real runs) ------------------------


def _compacted(name: str, context_length: int = 4_000, focus: str | None = None) -> str:
    """The summary ``palimpsest compress NAME --context-length N`` writes, via the library."""
    from palimpsest.compaction.compressor import ContextCompressor
    from palimpsest.config import Settings
    from palimpsest.messages import content_text

    compressor = ContextCompressor.from_settings(
        Settings(), context_length=context_length, quiet_mode=True
    )
    out = compressor.compress(load_transcript(DATA / name), force=True, focus_topic=focus)
    assert compressor.last_stats.compressed
    text = content_text(next(m for m in out if m.get("_compressed_summary"))["content"])
    return text[text.index("## Active Task\n") :]


def test_a_curl_progress_meter_is_not_the_active_task() -> None:
    small = _section(_compacted("swe-agent/ctf_web_i_got_id_demo.traj"), "## Active Task")
    assert "% Total" not in small and "Xferd" not in small
    # At 4K the summary is rewritten to a small budget that trims the Goal; at 8K it is whole.
    body = _compacted("swe-agent/ctf_web_i_got_id_demo.traj", context_length=8_000)
    task = _section(body, "## Active Task")
    assert "% Total" not in task and "Xferd" not in task
    # the span holds no new request: the task is the goal, which names the challenge
    assert task.strip() == UNCHANGED_TASK
    assert '"I Got Id"' in _section(body, "## Goal")


@pytest.mark.parametrize(
    "name",
    [
        "swe-agent/marshmallow-1867__xml_command_tags.traj",
        "swe-agent/marshmallow-1867__function_calling.traj",
        "swe-agent/pydicom-1458__gpt4_default.traj",
    ],
)
def test_swe_agent_runs_get_a_goal_and_an_active_task(name: str) -> None:
    # 8K: at 4K pydicom's head (system prompt and demonstration) leaves the fit step no choice
    # but to clip the summary itself, which can cut its later sections.
    body = _compacted(name, context_length=8_000)
    assert "We're currently solving the following issue" in _section(body, "## Goal")
    assert _section(body, "## Active Task").strip() not in ("None.", "")
    assert _section(body, "## Completed Actions").strip() != "None."
    assert _section(body, "## Relevant Files").strip() != "None."


def test_names_an_ls_printed_are_not_relevant_files() -> None:
    body = _compacted("swe-agent/marshmallow-1867__function_calling_replace_from_source.traj")
    assert "RUN `ls -F`" in _section(body, "## Completed Actions")
    files = _section(body, "## Relevant Files")
    for printed in ("AUTHORS.rst", "CHANGELOG.rst", "RELEASING.md", "pyproject.toml"):
        assert printed not in files


def test_fields_py_is_listed_once() -> None:
    for name in (
        "swe-agent/marshmallow-1867__xml_command_tags.traj",
        "swe-agent/marshmallow-1867__function_calling.traj",
    ):
        files = _section(_compacted(name), "## Relevant Files")
        assert files.count("fields.py") == 1, files
        assert "- src/marshmallow/fields.py — modified" in files


def test_the_last_failure_and_its_fix_are_kept() -> None:
    body = _compacted("swe-agent/marshmallow-1867__xml_command_tags.traj")
    state = _section(body, "## Active State")
    # the error the linter named, not its generic "Your proposed edit has introduced ..."
    assert (
        "Last failure: EDIT src/marshmallow/fields.py — - E999 IndentationError: unexpected indent"
        in state
    )
    assert "fixed later by EDIT src/marshmallow/fields.py (ok)" in state
    decisions = _section(body, "## Key Decisions")
    assert "Tried and abandoned: edit of src/marshmallow/fields.py rejected" in decisions


def test_identifiers_from_the_span_are_kept() -> None:
    body = _compacted("swe-agent/pydicom-1458__gpt4_default.traj")
    names = _section(body, "## Critical Context")
    for name in ("PixelRepresentation", "required_elements", "FloatPixelData"):
        assert f"`{name}`" in names


def test_focus_changes_the_order() -> None:
    name = "swe-agent/marshmallow-1867__function_calling_replace_from_source.traj"
    plain, focused = _compacted(name), _compacted(name, focus="fields")
    assert plain != focused
    files = _section(focused, "## Relevant Files").splitlines()
    assert files[0].startswith("- src/marshmallow/fields.py")
    assert _section(plain, "## Relevant Files").splitlines()[0].startswith("- reproduce.py")
    names = _section(focused, "## Critical Context").split("`")[1]
    assert "fields" in names


def test_the_summarizer_reads_the_unpruned_middle() -> None:
    """An old failing run's output is pruned to a one-liner; the summary still quotes it."""
    from palimpsest.compaction.compressor import ContextCompressor

    error = "ImportError: cannot import name 'Widget' from 'shop.models'"
    turns: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Make the shop tests pass."},
    ]
    for i in range(12):
        command = "pytest tests/test_shop.py" if i == 2 else f"cat notes_{i}.txt"
        output = ("collected 0 items\n" + "x" * 400 + f"\n{error}\n") if i == 2 else "y" * 400
        turns += [
            {"role": "assistant", "content": None, "tool_calls": [_call(f"c{i}", "bash", command=command)]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": output},
        ]  # fmt: skip
    turns += [
        {"role": "user", "content": "Any news?"},
        {"role": "assistant", "content": "Working."},
    ]
    compressor = ContextCompressor(200_000, quiet_mode=True, protect_last_n=4)
    compressor.tail_token_budget = 50
    out = compressor.compress(turns, force=True)
    assert compressor.last_stats.pruned_count > 0
    summary = next(m for m in out if m.get("_compressed_summary"))["content"]
    assert f"RUN `pytest tests/test_shop.py` — error: {error}" in summary
    assert f"Last failure: RUN `pytest tests/test_shop.py` — {error}; not fixed yet" in summary


def test_a_short_request_is_quoted_word_for_word() -> None:
    ask = "Please do two things:\n1. rename `load_cfg` to `load_config`\n2. run the tests\n## not a heading"
    body = _summarize(
        [{"role": "user", "content": ask}, {"role": "assistant", "content": "On it."}]
    )
    task = _section(body, "## Active Task")
    assert task.startswith("User asked: 'Please do two things:\n1. rename `load_cfg`")
    assert "\n2. run the tests\n\\## not a heading'" in task  # a quoted "#" line is escaped
    assert _headings(body) == list(HANDOFF_HEADINGS)
    long_ask = "word " * 2_000
    long_task = _section(_summarize([{"role": "user", "content": long_ask}]), "## Active Task")
    assert long_task.strip().endswith("...[truncated]'")


def test_identifiers_fill_what_the_budget_leaves() -> None:
    names = [f"helper_fn_{i:03d}x" for i in range(150)]
    turns = [{"role": "user", "content": "Refactor the helpers."}] + [
        {"role": "assistant", "content": f"Now `{n}` calls load_config."} for n in names
    ]
    body = _summarize(turns)
    assert estimate_tokens_rough(body) <= BUDGET
    listed = _section(body, "## Critical Context").split("\n")[0]
    assert listed.startswith("- Identifiers worked with: `load_config`")
    assert sum(n in listed for n in names) > 80  # beyond the level's 80: the budget had room
    tight = _summarize(turns, budget_tokens=400)
    assert estimate_tokens_rough(tight) <= 400


def test_an_update_keeps_earlier_identifiers_once() -> None:
    first = _summarize([{"role": "user", "content": "Fix `parse_header` and `HeaderError`."}])
    second = _summarize(
        [{"role": "user", "content": "Now `parse_header` again, and `strict_mode`."}],
        previous_summary=first,
    )
    critical = _section(second, "## Critical Context")
    assert critical.count("Identifiers worked with:") == 1
    line = critical.split("\n")[0]
    assert line.index("`parse_header`") < line.index("`strict_mode`") < line.index("`HeaderError`")


def test_a_request_that_cutting_would_not_shorten_is_quoted_whole() -> None:
    """An 83-character request at a level whose cap is 80 came back as its first 70
    characters and " ...[truncated]": longer than the whole, and the request was lost."""
    ask = "The checkout page shows the wrong total when a coupon is applied. Find and fix it."
    for budget in (2_000, 60):
        assert f"User asked: '{ask}'" in _summarize([{"role": "user", "content": ask}, {"role": "assistant", "content": "On it."}], budget_tokens=budget)  # fmt: skip


def test_the_command_whose_output_opens_the_tail_is_named_even_at_the_terse_level() -> None:
    """mini-swe-agent at 90% depth: the span ends with the test run, whose failing output is
    the first message kept after the summary. The terse summary said only "Run the tests.",
    so the output was left without its command."""
    turns: list[dict[str, Any]] = [
        {"role": "user", "content": "Fix parse_date."},
        {"role": "assistant", "content": None, "tool_calls": [_call("c1", "bash", command="ls")]},
        {"role": "tool", "tool_call_id": "c1", "content": "dates.py\ntests"},
        {
            "role": "assistant",
            "content": "Run the tests.",
            "tool_calls": [_call("c2", "bash", command="python -m pytest tests/test_dates.py -q")],
        },
    ]
    expected = "- Last command: RUN `python -m pytest tests/test_dates.py -q` (output after"
    assert expected in _section(_summarize(turns), "## Active State")
    assert expected in _summarize(turns, budget_tokens=60)  # the terse level keeps it
    answered = [*turns, {"role": "tool", "tool_call_id": "c2", "content": "1 failed"}]
    assert "Last command:" not in _summarize(answered)
    edit = _call("c3", "write_file", path="dates.py", content="x = 1\n")
    unanswered_edit = [*answered, {"role": "assistant", "content": None, "tool_calls": [edit]}]
    assert "Last command:" not in _summarize(unanswered_edit)  # an edit, not a command


def test_names_left_out_at_a_full_level_come_back_with_the_next_levels_detail() -> None:
    """A long held-out run at 90% depth: the first level's detail filled the budget, so its
    identifier line stopped at 80 of 105 names and a name the run used later was lost,
    while the next level (fewer files read, shorter texts) had room for all."""
    names = [f"handler_{i:03d}" for i in range(120)]
    turns: list[dict[str, Any]] = [{"role": "user", "content": "Port the handlers."}]
    for i in range(40):
        said = ", ".join(f"`{n}`" for n in names[i * 3 : i * 3 + 3])
        turns += [
            {
                "role": "assistant",
                "content": f"Next I check {said}.",
                "tool_calls": [_call(f"c{i}", "bash", command=f"cat part_{i}.log")],
            },
            {"role": "tool", "tool_call_id": f"c{i}", "content": f"line {i} " * 150},
        ]
    roomy = _summarize(turns, budget_tokens=50_000)
    assert all(f"`{n}`" in roomy for n in names)
    budget = estimate_tokens_rough(roomy) - 40  # the first level no longer has room for all
    body = _summarize(turns, budget_tokens=budget)
    assert estimate_tokens_rough(body) <= budget
    assert all(f"`{n}`" in body for n in names) and "more)" not in body
