"""One-line tool summaries (CC-34) and the already-pruned test (CC-33)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.compaction.oneliners import (
    DUPLICATE_PLACEHOLDER,
    PRUNED_PLACEHOLDER,
    SCREENSHOT_PLACEHOLDER,
    is_pruned_content,
    summarize_tool_result,
)

OUT_5000 = "a" * 5000  # N = 5,000, L = 1
OUT_3_LINES = "one\ntwo\nthree" + "." * 1000  # N = 1,013, L = 3

ROWS: list[tuple[str, str, dict[str, Any], str, str]] = [
    # (case id, tool name, arguments, content, expected one-liner)
    (
        "terminal",
        "terminal",
        {"command": "npm test"},
        '{"output": "ok\\n", "exit_code": 0}\n' + "line\n" * 45 + "line",
        "[terminal] ran `npm test` -> exit 0, 47 lines output",
    ),
    (
        "terminal-negative-exit",
        "terminal",
        {"command": "false"},
        '{"exit_code" :-1}' + "x" * 300,
        "[terminal] ran `false` -> exit -1, 1 lines output",
    ),
    (
        "terminal-no-exit-code",
        "terminal",
        {"command": "ls"},
        OUT_3_LINES,
        "[terminal] ran `ls` -> exit ?, 3 lines output",
    ),
    (
        "terminal-first-integer-exit-code",
        "terminal",
        {"command": "ls"},
        '"exit_code": null, then "exit_code": 2 and "exit_code": 3',
        "[terminal] ran `ls` -> exit 2, 1 lines output",
    ),
    (
        "terminal-long-command",
        "terminal",
        {"command": "c" * 81},
        OUT_5000,
        "[terminal] ran `" + "c" * 77 + "...` -> exit ?, 1 lines output",
    ),
    (
        "terminal-80-char-command-kept",
        "terminal",
        {"command": "c" * 80},
        OUT_5000,
        "[terminal] ran `" + "c" * 80 + "` -> exit ?, 1 lines output",
    ),
    (
        "terminal-blank-output",
        "terminal",
        {"command": "true"},
        " \n" * 150,
        "[terminal] ran `true` -> exit ?, 0 lines output",
    ),
    (
        "terminal-thousands-of-lines",
        "terminal",
        {"command": "seq 1234"},
        "n\n" * 1233 + "n",
        "[terminal] ran `seq 1234` -> exit ?, 1,234 lines output",
    ),
    (
        "read_file",
        "read_file",
        {"path": "config.py", "offset": 40},
        "b" * 3400,
        "[read_file] read config.py from line 40 (3,400 chars)",
    ),
    (
        "read_file-defaults",
        "read_file",
        {},
        OUT_5000,
        "[read_file] read ? from line 1 (5,000 chars)",
    ),
    (
        "write_file",
        "write_file",
        {"path": "a.py", "content": "x\ny\nz"},
        OUT_5000,
        "[write_file] wrote to a.py (3 lines)",
    ),
    (
        "write_file-no-content",
        "write_file",
        {"path": "a.py"},
        OUT_5000,
        "[write_file] wrote to a.py (? lines)",
    ),
    (
        "search_files",
        "search_files",
        {"pattern": "TODO", "path": "src", "target": "files"},
        '{"total_count": 1234, "matches": []}' + " " * 300,
        "[search_files] files search for 'TODO' in src -> 1,234 matches",
    ),
    (
        "search_files-defaults",
        "search_files",
        {},
        OUT_5000,
        "[search_files] content search for '?' in . -> ? matches",
    ),
    (
        "patch",
        "patch",
        {"path": "a.py", "mode": "patch"},
        OUT_5000,
        "[patch] patch in a.py (5,000 chars result)",
    ),
    (
        "patch-default-mode",
        "patch",
        {"path": "a.py"},
        OUT_5000,
        "[patch] replace in a.py (5,000 chars result)",
    ),
    (
        "browser_navigate-url",
        "browser_navigate",
        {"url": "https://example.com"},
        OUT_5000,
        "[browser_navigate] https://example.com (5,000 chars)",
    ),
    (
        "browser_click-ref",
        "browser_click",
        {"ref": "e12"},
        OUT_5000,
        "[browser_click] ref=e12 (5,000 chars)",
    ),
    ("browser_snapshot-bare", "browser_snapshot", {}, OUT_5000, "[browser_snapshot] (5,000 chars)"),
    (
        "browser_type",
        "browser_type",
        {"ref": "e3", "text": "hi"},
        OUT_5000,
        "[browser_type] ref=e3 (5,000 chars)",
    ),
    (
        "browser_scroll",
        "browser_scroll",
        {"direction": "down"},
        OUT_5000,
        "[browser_scroll] (5,000 chars)",
    ),
    (
        "browser_vision",
        "browser_vision",
        {"url": "https://a.b/c"},
        OUT_5000,
        "[browser_vision] https://a.b/c (5,000 chars)",
    ),
    (
        "web_search",
        "web_search",
        {"query": "python asyncio"},
        OUT_5000,
        "[web_search] query='python asyncio' (5,000 chars result)",
    ),
    (
        "web_extract-many",
        "web_extract",
        {"urls": ["https://a.example", "https://b.example", "https://c.example"]},
        OUT_5000,
        "[web_extract] https://a.example (+2 more) (5,000 chars)",
    ),
    (
        "web_extract-one",
        "web_extract",
        {"urls": ["https://a.example"]},
        OUT_5000,
        "[web_extract] https://a.example (5,000 chars)",
    ),
    (
        "web_extract-dict-items",
        "web_extract",
        {"urls": [{"href": "https://h.example"}, {"url": "https://u.example"}]},
        OUT_5000,
        "[web_extract] https://h.example (+1 more) (5,000 chars)",
    ),
    ("web_extract-none", "web_extract", {}, OUT_5000, "[web_extract] ? (5,000 chars)"),
    (
        "delegate_task",
        "delegate_task",
        {"goal": "fix the flaky test"},
        OUT_5000,
        "[delegate_task] 'fix the flaky test' (5,000 chars result)",
    ),
    (
        "delegate_task-long-goal",
        "delegate_task",
        {"goal": "g" * 61},
        OUT_5000,
        "[delegate_task] '" + "g" * 57 + "...' (5,000 chars result)",
    ),
    (
        "execute_code",
        "execute_code",
        {"code": "import os\nprint(os.getcwd())"},
        OUT_3_LINES,
        "[execute_code] `import os print(os.getcwd())` (3 lines output)",
    ),
    (
        "execute_code-long",
        "execute_code",
        {"code": "x = 1\n" * 20},
        OUT_3_LINES,
        "[execute_code] `" + ("x = 1 " * 10) + "...` (3 lines output)",
    ),
    ("skill_view", "skill_view", {"name": "pdf"}, OUT_5000, "[skill_view] name=pdf (5,000 chars)"),
    ("skills_list", "skills_list", {}, OUT_5000, "[skills_list] name=? (5,000 chars)"),
    (
        "skill_manage",
        "skill_manage",
        {"name": "git"},
        OUT_5000,
        "[skill_manage] name=git (5,000 chars)",
    ),
    (
        "vision_analyze",
        "vision_analyze",
        {"question": "q" * 70},
        OUT_5000,
        "[vision_analyze] '" + "q" * 50 + "' (5,000 chars)",
    ),
    (
        "memory",
        "memory",
        {"action": "add", "target": "user"},
        OUT_5000,
        "[memory] add on user",
    ),
    ("memory-defaults", "memory", {}, OUT_5000, "[memory] ? on ?"),
    ("todo", "todo", {"todos": [1, 2]}, OUT_5000, "[todo] updated task list"),
    ("clarify", "clarify", {"question": "which?"}, OUT_5000, "[clarify] asked user a question"),
    (
        "text_to_speech",
        "text_to_speech",
        {"text": "hello"},
        OUT_5000,
        "[text_to_speech] generated audio (5,000 chars)",
    ),
    ("cronjob", "cronjob", {"action": "create"}, OUT_5000, "[cronjob] create"),
    (
        "process",
        "process",
        {"action": "poll", "session_id": "s-1"},
        OUT_5000,
        "[process] poll session=s-1",
    ),
    (
        "other-two-args",
        "mcp_github_search",
        {"repo": "a/b", "query": "q" * 50, "page": 2},
        OUT_5000,
        "[mcp_github_search] repo=a/b query=" + "q" * 40 + " (5,000 chars result)",
    ),
    ("other-no-args", "custom", {}, OUT_5000, "[custom] (5,000 chars result)"),
    ("unknown", "unknown", {}, OUT_5000, "[unknown] (5,000 chars result)"),
    (
        "other-non-string-value",
        "custom",
        {"limits": {"a": 1}},
        "c" * 1_234_567,
        "[custom] limits={'a': 1} (1,234,567 chars result)",
    ),
]


@pytest.mark.parametrize(
    ("name", "arguments", "content", "expected"),
    [row[1:] for row in ROWS],
    ids=[row[0] for row in ROWS],
)
def test_one_liner_format(
    name: str, arguments: dict[str, Any], content: str, expected: str
) -> None:
    assert summarize_tool_result(name, arguments, content) == expected


class _Explodes(Mapping[str, Any]):
    """Arguments whose every read fails, to drive the summarizer's failure mode."""

    def __getitem__(self, key: str) -> Any:
        raise RuntimeError("boom")

    def __iter__(self) -> Any:
        raise RuntimeError("boom")

    def __len__(self) -> int:
        return 1

    def get(self, key: str, default: Any = None) -> Any:
        raise RuntimeError("boom")


@pytest.mark.parametrize("name", ["terminal", "read_file", "browser_click", "skill_view", "other"])
def test_internal_error_falls_back_to_size(name: str) -> None:
    assert summarize_tool_result(name, _Explodes(), "z" * 2500) == f"[{name}] (2,500 chars result)"


def test_non_mapping_arguments_count_as_empty() -> None:
    bad: Any = ["not", "a", "dict"]
    assert (
        summarize_tool_result("read_file", bad, "r" * 300)
        == "[read_file] read ? from line 1 (300 chars)"
    )


def test_empty_string_arguments_take_the_default() -> None:
    line = summarize_tool_result("search_files", {"path": "", "pattern": ""}, "s" * 300)
    assert line == "[search_files] content search for '?' in . -> ? matches"


@given(
    name=st.text(max_size=30),
    arguments=st.dictionaries(
        st.text(max_size=10),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=100),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(st.text(max_size=5), inner, max_size=3)
            ),
            max_leaves=8,
        ),
        max_size=4,
    ),
    content=st.text(max_size=500),
)
def test_never_raises_and_returns_a_bracketed_line(
    name: str, arguments: dict[str, Any], content: str
) -> None:
    for tool in (name, "terminal", "web_extract", "write_file", "execute_code", "process"):
        line = summarize_tool_result(tool, arguments, content)
        assert isinstance(line, str)
        assert line.startswith("[")


@pytest.mark.parametrize(
    "text",
    [
        PRUNED_PLACEHOLDER,
        DUPLICATE_PLACEHOLDER,
        "[Duplicate tool output, older wording]",
        SCREENSHOT_PLACEHOLDER,
        "[screenshot removed] a login form",
        "[read_file] read " + "p" * 300 + " from line 1 (3,400 chars)",
        "[unknown] " + "k" * 250 + " (5,000 chars result)",
    ],
)
def test_pruned_forms_are_recognised(text: str) -> None:
    assert is_pruned_content(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "plain tool output " * 20,
        "[INFO] build started (no size marker) " * 8,
        "[x] " + "p" * 400 + " (3,400 chars)",  # 400 characters or more is not a one-liner
        "read (3,400 chars)",  # must start with "["
    ],
)
def test_other_text_is_not_pruned(text: str) -> None:
    assert not is_pruned_content(text)


def test_every_summary_with_a_size_is_recognised_as_pruned() -> None:
    for _, name, arguments, content, _expected in ROWS:
        line = summarize_tool_result(name, arguments, content)
        if "chars" in line:
            assert is_pruned_content(line), line


def test_summarize_action_output() -> None:
    from palimpsest.compaction.oneliners import summarize_action_output

    line = summarize_action_output("bash", {}, "pytest -x\n  -q", "a\nb\nc", 1)
    assert line == "[bash] ran `pytest -x -q` -> exit 1, 3 lines output (5 chars)"
    assert is_pruned_content(line)
    unknown = summarize_action_output("edit", {}, "edit 1:1", "x" * 300, None)
    assert "-> exit ?" in unknown
    no_command = summarize_action_output("str_replace_editor", {"path": "/a"}, None, "ok", None)
    assert no_command.startswith("[str_replace_editor]")
    assert summarize_action_output(None, {}, "ls", "", 0).startswith("[unknown] ran `ls`")


def test_a_failed_output_keeps_its_last_error_line() -> None:
    from palimpsest.compaction.oneliners import summarize_action_output

    refused = (
        "Your proposed edit has introduced new syntax error(s). Please understand the fixes.\n\n"
        "ERRORS:\n- E999 SyntaxError: unmatched ')'\n\nThis is how your edit would have looked"
    )
    line = summarize_action_output("edit", {}, None, refused, None)
    assert line.endswith(" — error: - E999 SyntaxError: unmatched ')'")
    assert is_pruned_content(line)
    trace = 'Traceback (most recent call last):\n  File "x.py", line 2\nZeroDivisionError: division by zero'
    ran = summarize_action_output("bash", {}, "python x.py", trace, 1)
    assert ran.endswith(f"({len(trace)} chars) — error: ZeroDivisionError: division by zero")
    # a stated success is not searched; a success message naming "error" is no error
    assert "error:" not in summarize_action_output("bash", {}, "cat log", "Error: old", 0)
    created = "File created successfully at: /repo/reproduce_error.py"
    assert "error:" not in summarize_tool_result("str_replace_editor", {}, created)
    long_error = "ValueError: " + "x" * 1_000
    clipped = summarize_tool_result("execute_bash", {"command": "run"}, long_error)
    assert clipped.endswith("...") and len(clipped) < 400 and is_pruned_content(clipped)


def test_a_native_result_keeps_its_failed_test_line() -> None:
    out = "." * 40 + "\nFAILED tests/test_a.py::test_x - AssertionError: expected 5 but got None\n"
    line = summarize_tool_result("bash", {"command": "pytest"}, out)
    assert (
        "— error: FAILED tests/test_a.py::test_x - AssertionError: expected 5 but got None" in line
    )
