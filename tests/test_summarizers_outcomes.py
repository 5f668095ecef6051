"""Outcomes read from tool results: exit codes, test counts, first error line."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.summarizers.actions import Action, classify_call
from palimpsest.summarizers.outcomes import apply_result


def _run(result: str, command: str = "pytest") -> Action:
    action = classify_call("bash", {"command": command}, "")
    apply_result(action, result)
    return action


@pytest.mark.parametrize(
    ("result", "outcome", "failed"),
    [
        ("===== 8 passed, 2 failed in 1.20s =====", "8 passed, 2 failed", True),
        ("collected 3 items\n\n===== 3 passed in 0.05s =====", "3 passed", False),
        ("..\n----\nRan 12 tests in 0.3s\n\nFAILED (failures=2, errors=1)", "9 passed, 3 failed", True),
        ("Ran 4 tests in 0.01s\n\nOK", "4 passed", False),
        ("Tests:       1 failed, 7 passed, 8 total", "7 passed, 1 failed", True),
        ('{"output": "done", "exit_code": 0}', "exit 0", False),
        ('{"output": "boom", "exit_code": 2}', "exit 2", True),
        ("Exit code 1\nerror: linker failed", "exit 1; error: error: linker failed", True),
        ("<returncode>1</returncode>\n<output>\nbash: foo: command not found\n</output>", "exit 1; error: bash: foo: command not found", True),
        ("<returncode>0</returncode>\n<output>\n8.2\n</output>", "exit 0", False),
        ("345\n(Open file: /t/x.py)\n(Current directory: /t)\nbash-$", "output: 345", False),
        ("", "no output", False),
        ("line\n" * 30, "30 lines of output", False),
        (
            'Traceback (most recent call last):\n  File "x.py", line 3\n    f()\nValueError: bad value',
            "error: ValueError: bad value",
            True,
        ),
        ("+ raise ValueError('a diff line mentions an Error')", "output: + raise ValueError('a diff line mentions an Error')", False),
        # errors printed by the agent's own script, not tracebacks: the last one is quoted
        ("Case 1 ok\nError: 'ascii' codec can't decode byte 0xc3 in position 4", "error: Error: 'ascii' codec can't decode byte 0xc3 in position 4", True),
        ("matrix 1\n" * 10 + "Bareiss failed with: TypeError Invalid NaN comparison", "error: Bareiss failed with: TypeError Invalid NaN comparison", True),
        ("Error: first\nstill going\nError: second", "error: Error: second", True),
        ("E   AssertionError: assert 1 == 2\nrest", "error: E AssertionError: assert 1 == 2", True),
        ("src/a.c:12:5: error: expected ';'\n1 error generated.", "error: src/a.c:12:5: error: expected ';'", True),
        ("Created reproduce_error.py\nchecking error_handler\ndone", "3 lines of output", False),
    ],
)  # fmt: skip
def test_run_outcomes(result: str, outcome: str, failed: bool) -> None:
    action = _run(result)
    assert action.outcome == outcome
    assert action.failed is failed


def test_swe_agent_trailer_gives_open_file_and_directory() -> None:
    action = classify_call("open", {"path": "src/f.py"}, "")
    hints = apply_result(
        action,
        "[File: src/f.py (1997 lines total)]\n1:x\n(Open file: /t/src/f.py)\n(Current directory: /t)\nbash-$",
    )
    assert hints == ("/t/src/f.py", "/t")
    assert action.outcome == "1,997 lines total"


@pytest.mark.parametrize(
    ("name", "args", "result", "outcome", "failed"),
    [
        ("read_file", {"path": "a.py"}, "x\ny\nz", "3 lines", False),
        ("read_file", {"path": "a.py"}, "Error: file not found: a.py", "error: Error: file not found: a.py", True),
        ("read_file", {"path": "a.py"}, "1\n2\nraise ValueError('listing, not failure')", "3 lines", False),
        ("write_file", {"path": "a.py", "content": "1\n2\n"}, "ok", "2 lines", False),
        ("Edit", {"file_path": "a.py"}, "File edited successfully", "ok", False),
        ("str_replace_editor", {"command": "create", "path": "/x/reproduce_error.py", "file_text": "x\n"}, "File created successfully at: /x/reproduce_error.py", "1 lines", False),
        ("edit", {"replacement_text": "x"}, "Your proposed edit has introduced new syntax error(s). Please read the error message carefully.\n\nERRORS:\n- E999 SyntaxError: unmatched ')'\n\nThis is how your edit would have looked if applied\n1: raise ValueError('x')", "error: - E999 SyntaxError: unmatched ')'", True),
        ("str_replace_editor", {"command": "view", "path": "y"}, "ERROR:\nInvalid `path` parameter: y is not an absolute path", "error: ERROR: Invalid `path` parameter: y is not an absolute path", True),
        ("create", {"filename": "reproduce_error.py"}, "[File: /x/reproduce_error.py (1 lines total)]", "ok", False),
        ("Edit", {"file_path": "a.py"}, "<tool_use_error>String to replace not found in file.</tool_use_error>", "error: <tool_use_error>String to replace not found in file.</tool_use_error>", True),
        ("str_replace_editor", {"command": "str_replace", "path": "a.py"}, "No replacement was performed, old_str `x` did not appear verbatim in a.py.", "error: No replacement was performed, old_str `x` did not appear verbatim in a.py.", True),
        ("edit", {"replacement_text": "x"}, "File updated.\n1466: raise ValueError(msg)", "ok", False),
        ("grep", {"pattern": "x"}, "a.py:1:x\nb.py:2:x\n", "2 matches", False),
        ("find_file", {"file_name": "f.py"}, 'Found 3 matches for "f.py" in /t:', "3 matches", False),
        ("grep", {"pattern": "x"}, "a.py:1:x", "1 match", False),
        ("grep", {"pattern": "x"}, "", "no matches", False),
    ],
)  # fmt: skip
def test_file_tool_outcomes(
    name: str, args: dict[str, str], result: str, outcome: str, failed: bool
) -> None:
    action = classify_call(name, args, "")
    apply_result(action, result)
    assert (action.outcome, action.failed) == (outcome, failed)


def test_huge_outputs_are_read_at_their_ends() -> None:
    """Only the ends of an output are read: a summary line buried in the middle of 2 MB
    is not what counts, the final one is."""
    big = (
        "noise line\n" * 100_000
        + "===== 50 failed in 9s =====\n"
        + "noise line\n" * 100_000
        + "===== 1 failed, 9 passed in 3s ====="
    )
    action = _run(big)
    assert action.outcome == "9 passed, 1 failed"


def test_pruned_results_keep_what_the_one_liner_says() -> None:
    failed = _run("[terminal] ran `npm test` -> exit 1, 47 lines output")
    assert (failed.outcome, failed.failed) == ("exit 1", True)
    read = classify_call("read_file", {"path": "a.py"}, "")
    apply_result(read, "[read_file] read a.py from line 1 (1,234 chars)")
    assert read.outcome == "output pruned"
    action = classify_call("read_file", {"path": "a.py"}, "")
    apply_result(action, "[Old tool output cleared to save context space]")
    assert (action.outcome, action.failed) == ("output pruned", False)


def test_json_tool_output_is_decoded() -> None:
    result = (
        '{"output": "collected 5 items\\n\\n==== 1 failed, 4 passed in 2s ====", "exit_code": 1}'
    )
    action = _run(result)
    assert action.outcome == "exit 1; 4 passed, 1 failed"
    quiet = _run('{"output": "", "exit_code": 0, "error": null}')
    assert quiet.outcome == "exit 0"
    broken = _run('{"output": "Error: disk full"')  # not valid JSON: read as text
    assert broken.outcome == 'output: {"output": "Error: disk full"'


@given(
    st.from_regex(r"[a-z]{1,8}_(?:error|errors|failed|exception)(?:_[a-z]{1,6})?", fullmatch=True),
    st.sampled_from(["File created successfully at: {p}", "The file {p} has been edited.", "ok"]),
)
def test_a_success_is_never_a_failure_whatever_the_file_is_called(stem: str, answer: str) -> None:
    path = f"/repo/{stem}.py"
    for tool, args in (
        ("str_replace_editor", {"command": "create", "path": path, "file_text": "x\n"}),
        ("write_file", {"path": path, "content": "x\n"}),
        ("Edit", {"file_path": path}),
    ):
        action = classify_call(tool, args, "")
        apply_result(action, answer.format(p=path))
        assert not action.failed, (tool, answer)
        assert "error" not in action.outcome
