"""The one reading of a transcript: every kind, per agent format, on fixtures and real files.

Fixtures under tests/data/transcripts/fixtures were written from each agent's own source
(see the README there); the real files one directory up are the shared samples.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from palimpsest.messages import load_transcript
from palimpsest.messages.content import for_provider
from palimpsest.messages.markers import SUMMARY_FLAG, SUMMARY_PREFIX
from palimpsest.messages.reading import MessageReading, read_transcript, read_user_turn

DATA = Path(__file__).parent / "data" / "transcripts"
FIXTURES = DATA / "fixtures"


def kinds(readings: list[MessageReading]) -> list[str]:
    return [r.kind for r in readings]


def read_file(path: Path) -> tuple[list[dict[str, Any]], list[MessageReading]]:
    messages = load_transcript(path)
    return messages, read_transcript(messages)


# -- SWE-agent ------------------------------------------------------------------------------


def test_swe_agent_1x_xml_function_calls_and_observation_messages() -> None:
    messages, readings = read_file(FIXTURES / "swe-agent-1x-xml-function-calling.traj")
    assert kinds(readings) == [
        "system",
        "noise",  # the demonstration
        "request",  # the task, although SWE-agent types it "observation"
        *(["assistant", "observation"] * 5),
    ]
    assert readings[1].extra["noise"] == "demonstration"
    assert readings[2].text.startswith("<uploaded_files>")
    grep = readings[3].actions[0]
    assert (grep.tool, grep.style, grep.call_id) == ("bash", "xml_function", None)
    assert grep.command == 'grep -rn "class TimeDelta" /testbed/src'
    assert readings[3].text == "Let me find the field implementation first."
    edit = readings[7].actions[0]
    assert edit.tool == "str_replace_editor" and edit.command is None
    assert edit.arguments["command"] == "str_replace"
    assert edit.arguments["path"] == "/testbed/src/marshmallow/fields.py"
    obs = readings[4].observation
    assert obs is not None and obs.action_index == 3 and obs.tool == "bash"
    assert obs.output == "/testbed/src/marshmallow/fields.py:1434:class TimeDelta(Field):\n"
    assert obs.exit_code is None  # SWE-agent does not state exit codes
    assert readings[10].observation is not None and readings[10].observation.output == ""
    assert readings[11].actions[0].tool == "submit"
    # message_type travels as an internal key and never reaches a provider
    assert messages[4]["_message_type"] == "observation"
    assert all(not k.startswith("_") for m in for_provider(messages) for k in m)


def test_swe_agent_0x_fenced_actions_and_state_trailers() -> None:
    _, readings = read_file(DATA / "swe-agent/pydicom-1458__gpt4_default.traj")
    assert readings[1].kind == "noise"  # the demonstration, marked is_demo
    assert readings[2].kind == "request"
    assert readings[2].text.startswith("We're currently solving the following issue")
    assert not readings[2].text.rstrip().endswith("bash-$")
    assert [r.kind for r in readings[3:]] == ["assistant", "observation"] * 11 + ["assistant"]
    edit = readings[5].actions[0]
    assert edit.tool == "edit" and edit.style == "fenced"
    assert edit.command is not None and edit.command.startswith("edit 1:1")
    run = readings[8]
    assert run.observation is not None and run.observation.action_index == 7
    assert run.text.startswith("Traceback (most recent call last):")
    assert "(Current directory:" not in run.text
    assert run.extra["cwd"] == "/pydicom__pydicom"


def test_swe_agent_ctf_curl_progress_is_an_observation_not_a_request() -> None:
    _, readings = read_file(DATA / "swe-agent/ctf_web_i_got_id_demo.traj")
    assert readings[1].kind == "request"
    assert readings[3].kind == "observation"
    assert readings[3].text.lstrip().startswith("% Total")
    assert [r.index for r in readings if r.kind == "request"] == [1]


def test_swe_agent_command_tags() -> None:
    _, readings = read_file(DATA / "swe-agent/marshmallow-1867__xml_command_tags.traj")
    create = readings[2].actions[0]
    assert (create.tool, create.style, create.command) == (
        "create",
        "command_tag",
        "create reproduce.py",
    )
    assert readings[2].text.endswith("paste the example code into it.")
    assert readings[3].kind == "observation"
    assert [r.index for r in readings if r.kind == "request"] == [1]


def test_swe_agent_function_calling_results_are_matched_to_their_calls() -> None:
    _, readings = read_file(DATA / "swe-agent/marshmallow-1867__function_calling.traj")
    assert readings[1].kind == "request"
    for reading in readings:
        if reading.role == "tool":
            assert reading.kind == "observation"
            obs = reading.observation
            assert obs is not None and obs.action_index == reading.index - 1
            assert obs.call_id == readings[reading.index - 1].actions[0].call_id
    run = readings[6].actions[0]
    assert run.tool == "bash" and run.command == "python reproduce.py"


@pytest.mark.parametrize("path", sorted((DATA / "swe-agent").glob("*.traj")), ids=lambda p: p.name)
def test_every_swe_agent_sample_has_one_request_and_no_user_output_taken_for_one(
    path: Path,
) -> None:
    _, readings = read_file(path)
    requests = [r.index for r in readings if r.kind == "request"]
    assert len(requests) == 1
    first_assistant = next(r.index for r in readings if r.kind == "assistant")
    assert requests[0] < first_assistant
    for reading in readings[first_assistant:]:
        if reading.role == "user":
            assert reading.kind == "observation", reading.index


# -- mini-swe-agent -------------------------------------------------------------------------


def test_mini_swe_agent_returncode_observations() -> None:
    _, readings = read_file(DATA / "mini-swe-agent/github_issue.traj.json")
    assert kinds(readings) == ["system", "request", *(["assistant", "observation"] * 10)]
    exits = [r.observation.exit_code for r in readings if r.observation is not None]
    assert exits == [1, 0, 0, 0, 0, 0, 0, 1, 0, None]  # the final diff carries no envelope
    assert readings[3].text.startswith("cat: /Users/")
    assert "<returncode>" not in readings[3].text and "</output>" not in readings[3].text
    assert readings[2].actions[0].command is not None
    assert readings[2].actions[0].command.startswith("cat /Users/fuchur/")


def test_mini_swe_agent_templates() -> None:
    _, readings = read_file(FIXTURES / "mini-swe-agent-templates.traj.json")
    assert kinds(readings) == [
        "system",
        "request",
        "assistant",
        "observation",  # long output: head, elision note, tail
        "assistant",
        "noise",  # format error after two actions
        "assistant",
        "observation",
        "assistant",
        "observation",  # timeout template
        "assistant",
        "observation",
    ]
    long = readings[3]
    assert long.observation is not None and long.observation.exit_code == 0
    assert long.text == "line\nline\nline\n[... 12345 characters elided ...]\nlast line"
    assert long.extra["truncated"] is True
    assert [a.command for a in readings[4].actions] == ["ls", "pwd"]
    failing = readings[7].observation
    assert failing is not None and failing.exit_code == 1
    assert failing.output.startswith("FAILED tests/test_dates.py::test_iso_week")


# -- OpenHands ------------------------------------------------------------------------------


def test_openhands_non_native_function_calls() -> None:
    _, readings = read_file(FIXTURES / "openhands-codeact-non-native.json")
    assert kinds(readings) == [
        "system",
        "request",
        "assistant",
        "observation",
        "assistant",
        "observation",
        "assistant",
        "request",  # after `finish` the next user message is the person again
    ]
    assert readings[1].text == "Fix the failing test in tests/test_api.py::test_login."
    run = readings[2].actions[0]
    assert run.tool == "execute_bash"
    assert run.command == "cd /workspace && python -m pytest tests/test_api.py::test_login -x"
    result = readings[3].observation
    assert result is not None and result.exit_code == 1 and result.tool == "execute_bash"
    assert result.output == "E   KeyError: 'token'\n1 failed in 0.20s"
    # a call cut off by the `</function` stop word still reads, up to the end of the text
    edit = readings[4].actions[0]
    assert edit.arguments["new_str"] == "data['access_token']"


# -- Claude Code ----------------------------------------------------------------------------


def test_claude_code_noise_summary_and_bash_exit_code() -> None:
    _, readings = read_file(FIXTURES / "claude-code-host-noise.jsonl")
    assert kinds(readings) == [
        "noise",
        "noise",
        "noise",
        "summary",
        "request",
        "assistant",
        "observation",
        "noise",
        "request",
        "assistant",
    ]
    assert readings[3].extra["summary_source"] == "claude-code"
    assert readings[4].text == "Run the test suite and fix what fails."  # reminder removed
    result = readings[6]
    assert result.observation is not None and result.observation.exit_code == 1
    assert result.text.startswith("FAILED tests/test_fetch.py")
    assert result.extra["is_error"] is True


def test_claude_code_sample_session() -> None:
    _, readings = read_file(DATA / "format-samples/claude-code_sample_session.json")
    requests = [r.index for r in readings if r.kind == "request"]
    # 28 is Claude Code's compaction summary (isCompactSummary), not a request
    assert requests == [0, 11, 18, 22, 29]
    assert readings[28].kind == "summary" and readings[28].extra["summary_source"] == "claude-code"
    assert readings[20].observation is not None and readings[20].observation.exit_code == 1
    # a ```python block in a tool-using transcript is code shown, not an action
    assert readings[21].actions == () and readings[22].kind == "request"


# -- Codex ----------------------------------------------------------------------------------


def test_codex_rollout() -> None:
    _, readings = read_file(FIXTURES / "codex-rollout-shell.jsonl")
    assert kinds(readings) == [
        "noise",
        "noise",
        "request",
        "assistant",
        "observation",
        "assistant",
        "observation",
        "assistant",
        "observation",
        "assistant",
        "summary",
    ]
    assert readings[3].actions[0].command == "pytest -q tests/test_text.py"
    first = readings[4].observation
    assert first is not None and first.exit_code == 1
    assert first.output.startswith("F.\nFAILED tests/test_text.py::test_accents")
    patch = readings[5].actions[0]
    assert patch.tool == "apply_patch" and patch.command is None
    assert str(patch.arguments["input"]).startswith("*** Begin Patch")
    text_form = readings[8].observation
    assert text_form is not None and text_form.exit_code == 0
    assert text_form.output == "2 passed in 0.12s\n"
    assert readings[10].extra["summary_source"] == "codex"


# -- OpenAI shapes, Anthropic blocks, palimpsest summaries ----------------------------------


def test_openai_shapes() -> None:
    _, readings = read_file(FIXTURES / "openai-chat-shapes.json")
    assert kinds(readings) == [
        "system",
        "summary",
        "request",
        "assistant",  # tool_calls: null
        "assistant",  # legacy function_call
        "observation",  # role function
        "assistant",  # Anthropic tool_use block
        "observation",  # Anthropic tool_result block
        "assistant",
        "observation",
        "assistant",
    ]
    assert readings[1].text.startswith("## Goal")
    assert readings[1].extra["summary_source"] == "palimpsest"
    assert readings[3].actions == ()
    legacy = readings[4].actions[0]
    assert (legacy.tool, legacy.style, legacy.call_id) == ("read_file", "function_call", None)
    assert readings[5].observation is not None and readings[5].observation.action_index == 4
    use = readings[6].actions[0]
    assert (use.tool, use.command, use.call_id) == ("bash", "ruff check .", "toolu_x")
    block = readings[7].observation
    assert block is not None and block.action_index == 6 and block.output == "All checks passed!"
    terminal = readings[9].observation
    assert terminal is not None and terminal.exit_code == 0 and terminal.action_index == 8


def test_legacy_function_results_match_by_name_then_by_order() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "function_call": {"name": "a", "arguments": "{}"}},
        {"role": "assistant", "content": None, "function_call": {"name": "b", "arguments": "{}"}},
        {"role": "function", "name": "b", "content": "from b"},
        {"role": "function", "content": "unnamed"},
    ]
    readings = read_transcript(messages)
    assert readings[3].observation is not None and readings[3].observation.action_index == 2
    assert readings[4].observation is not None and readings[4].observation.action_index == 1


def test_merged_summary_keeps_the_original_content() -> None:
    from palimpsest.messages.markers import END_MARKER

    message = {"role": "user", "content": f"{SUMMARY_PREFIX}\nS\n{END_MARKER}\nFix it"}
    reading = read_transcript([message])[0]
    assert reading.kind == "summary" and reading.text == "S"
    assert reading.extra["original_content"] == "Fix it"
    flagged = read_transcript([{"role": "assistant", "content": "x", SUMMARY_FLAG: True}])[0]
    assert flagged.kind == "summary"


def test_fenced_code_in_a_chat_is_not_an_action_unless_it_is_shell() -> None:
    chat = [
        {"role": "user", "content": "How do I sort a list?"},
        {"role": "assistant", "content": "Like this:\n```python\nsorted(xs)\n```"},
        {"role": "user", "content": "And in reverse?"},
    ]
    readings = read_transcript(chat)
    assert readings[1].actions == () and readings[2].kind == "request"


# -- judged alone ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ({"role": "user", "content": "Please add a flag."}, "request"),
        ({"role": "user", "content": "OBSERVATION:\nok"}, "observation"),
        (
            {"role": "user", "content": "<returncode>0</returncode>\n<output>\n</output>"},
            "observation",
        ),
        ({"role": "user", "content": "x", "_message_type": "observation"}, "observation"),
        ({"role": "user", "content": "<environment_context>x</environment_context>"}, "noise"),
        (
            {"role": "user", "content": "[bash] ran `ls` -> exit 0, 3 lines output (20 chars)"},
            "observation",
        ),
        ({"role": "user", "content": SUMMARY_PREFIX + "\nbody"}, "summary"),
        ({"role": "user", "content": "   "}, "noise"),
    ],
)
def test_read_user_turn(message: dict[str, Any], kind: str) -> None:
    assert read_user_turn(message).kind == kind


# -- malformed input ------------------------------------------------------------------------


def test_malformed_messages_are_read_without_raising() -> None:
    messages: list[Any] = [
        "not a message",
        None,
        {"content": "no role"},
        {"role": 7, "content": "odd role"},
        {"role": "user", "content": 12345},
        {"role": "assistant", "content": None, "tool_calls": [None, "x", {"function": None}]},
        {"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "bash"}}]},
        {"role": "tool", "content": "no id"},
        {
            "role": "tool",
            "tool_call_id": "missing",
            "content": ["a", {"type": "text", "text": "b"}],
        },
        {"role": "assistant", "function_call": "not a dict", "content": None},
        {"role": "user", "content": [{"type": "tool_result"}, {"type": "image_url"}]},
        {"role": "assistant", "content": "<function=>\n</function><command></command>```"},
    ]
    before = copy.deepcopy(messages)
    readings = read_transcript(messages)
    assert len(readings) == len(messages)
    assert messages == before
    assert readings[0].kind == "noise" and readings[0].extra["malformed"] is True
    assert readings[4].kind == "request" and readings[4].text == "12345"
    assert readings[6].actions[0].call_id is None and readings[6].actions[0].arguments == {}
    assert readings[7].kind == "observation" and readings[7].observation is not None
    assert readings[8].text == "a\nb"
    assert readings[11].actions == ()


json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
roles = st.sampled_from(["system", "user", "assistant", "tool", "function", "developer", "x"])
texts = st.sampled_from(
    [
        "OBSERVATION:\nok",
        "<returncode>1</returncode>\n<output>\nboom\n</output>",
        "Let me look.\n```bash\nls\n```",
        "<function=bash>\n<parameter=command>ls",
        "<command>open x.py</command>",
        "EXECUTION RESULT of [execute_bash]:\nok\n[The command completed with exit code 2.]",
        '{"output": "x", "metadata": {"exit_code": 3}}',
        "Exit code: 4\nWall time: 1s\nOutput:\nx",
        "<system-reminder>r</system-reminder>",
        SUMMARY_PREFIX,
        "plain words",
    ]
) | st.text(max_size=40)
messages_strategy = st.lists(
    st.one_of(
        json_values,
        st.fixed_dictionaries(
            {"role": roles, "content": st.one_of(texts, json_values)},
            optional={
                "tool_calls": st.one_of(st.none(), json_values),
                "tool_call_id": json_values,
                "function_call": json_values,
                "name": json_values,
                "_message_type": st.sampled_from(["observation", "action", "demonstration"]),
                "is_demo": st.booleans(),
            },
        ),
    ),
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(messages_strategy)
def test_any_list_gets_one_reading_per_message_and_stays_unchanged(messages: list[Any]) -> None:
    before = copy.deepcopy(messages)
    readings = read_transcript(messages)
    assert len(readings) == len(messages)
    assert [r.index for r in readings] == list(range(len(messages)))
    assert messages == before
    for reading in readings:
        assert reading.kind in ("system", "request", "assistant", "observation", "summary", "noise")
        assert isinstance(reading.text, str)
        if reading.kind == "observation":
            assert reading.observation is not None


def test_after_a_summary_an_observation_typed_message_is_not_the_task() -> None:
    """A compacted SWE-agent transcript: system, summary, then a tail that may start with a
    user observation; without the summary counting as work, it read as the task."""
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": SUMMARY_PREFIX + "\nbody"},
        {"role": "user", "content": "[File: a.py]", "_message_type": "observation"},
        {"role": "assistant", "content": "next\n```\nls\n```"},
        {"role": "user", "content": "a.py", "_message_type": "observation"},
    ]
    assert kinds(read_transcript(messages)) == [
        "system",
        "summary",
        "observation",
        "assistant",
        "observation",
    ]


def test_a_slice_that_starts_with_an_observation_header() -> None:
    readings = read_transcript(
        [{"role": "user", "content": "<returncode>0</returncode>\n<output>\nx\n</output>"}]
    )
    assert readings[0].kind == "observation" and readings[0].observation is not None
    assert readings[0].observation.exit_code == 0


ALL_FILES = sorted(
    p for p in DATA.rglob("*") if p.is_file() and p.suffix in (".traj", ".json", ".jsonl")
)


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: p.name)
def test_read_from_gives_the_same_kinds_as_the_whole_reading(path: Path) -> None:
    from palimpsest.messages.reading import read_from

    messages = load_transcript(path)
    whole = read_transcript(messages)
    for start in range(len(messages) + 1):
        window = read_from(messages, start)
        assert [r.index for r in window] == list(range(start, len(messages)))
        assert kinds(window) == kinds(whole[start:]), start


# -- what a format's reader already said ------------------------------------------------------


def test_reader_marks_decide_the_kind() -> None:
    messages = [
        {"role": "user", "content": "aider chat started at 2025-01-01", "_host_output": "aider"},
        {"role": "user", "content": "Fix the bug."},
        {"role": "assistant", "content": "Here:\n```bash\nmake test\n```"},
        {"role": "user", "content": "Tokens: 1k sent", "_host_output": "aider"},
        {"role": "user", "content": "Caveat: written by the host", "_noise": "claude-code meta"},
        {"role": "user", "content": "Earlier we did X.", "_summary_source": "openhands"},
        {"role": "user", "content": "Now do Y."},
    ]
    readings = read_transcript(messages)
    assert [r.kind for r in readings] == [
        "observation",
        "request",
        "assistant",
        "observation",
        "noise",
        "summary",
        "request",
    ]
    # the host's output answers the reply before it, and is not mistaken for the task
    assert readings[3].observation is not None and readings[3].observation.action_index == 2
    assert readings[3].extra["host_output"] == "aider"
    assert readings[4].extra["noise"] == "claude-code meta"
    assert readings[5].extra["summary_source"] == "openhands"
