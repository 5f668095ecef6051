"""The walk over a span's readings: one small transcript per action style, section facts.

Each transcript is written in the shape its agent writes (OpenAI tool calls, mini-swe-agent
fenced blocks with ``<returncode>``, SWE-agent ``<command>`` tags and ``OBSERVATION:`` user
messages with ``message_type``, ``<function=bash><parameter=command>`` XML calls). Some tests
hand the walk readings built by hand, so the summarizer's side of the contract with
:mod:`palimpsest.messages.reading` is pinned independently of how the reading is done.
"""

from __future__ import annotations

import json
from typing import Any

from palimpsest.messages.reading import Action, MessageReading, Observation
from palimpsest.summarizers.facts import SpanFacts, extract_facts


def _call(call_id: str, name: str, **args: Any) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}  # fmt: skip


def _verbs(facts: SpanFacts) -> list[tuple[str, str, str]]:
    return [(a.verb, a.target, a.outcome) for a in facts.actions]


def test_native_tool_calls() -> None:
    turns = [
        {"role": "user", "content": "Fix `parse_header` in src/http.py; run the tests."},
        {"role": "assistant", "content": "Editing `parse_header`.", "tool_calls": [
            _call("a", "str_replace_editor", command="str_replace", path="/repo/src/http.py",
                  old_str="def parse_header(raw):", new_str="def parse_header(raw, strict=False):"),
        ]},
        {"role": "tool", "tool_call_id": "a", "content": "The file /repo/src/http.py has been edited."},
        {"role": "assistant", "content": None, "tool_calls": [_call("b", "bash", command="cd /repo && pytest -q")]},
        {"role": "tool", "tool_call_id": "b", "content": "F.\nFAILED tests/test_http.py::test_strict - KeyError: 'x'\n1 failed, 1 passed in 0.2s"},
        {"role": "assistant", "content": None, "tool_calls": [_call("c", "bash", command="pytest -q")]},
        {"role": "tool", "tool_call_id": "c", "content": "..\n2 passed in 0.2s"},
    ]  # fmt: skip
    facts = extract_facts(turns)
    assert facts.newest_request == turns[0]["content"]
    assert _verbs(facts)[0] == ("EDIT", "src/http.py", "ok")
    assert _verbs(facts)[1][2] == "1 passed, 1 failed"
    assert _verbs(facts)[2][2] == "2 passed"
    assert facts.modified_files() == ["src/http.py"]  # relative to the root (/repo)
    failure = facts.last_failure()
    assert failure is not None and "KeyError" in failure.error
    assert failure.fixed_by is not None and "2 passed" in failure.fixed_by
    assert facts.unresolved_error() is None
    assert facts.tests == "2/2 passing (last run: `pytest -q`)"
    assert "parse_header" in facts.identifiers.ranked()


def test_mini_swe_agent_fenced_blocks_and_returncode() -> None:
    turns = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Please solve this issue: `divide` crashes on zero."},
        {"role": "assistant", "content": "THOUGHT: run it.\n\n```bash\npython calc.py\n```"},
        {"role": "user", "content": "<returncode>1</returncode>\n<output>\nTraceback (most recent call last):\n  File \"calc.py\", line 3\nZeroDivisionError: division by zero\n</output>"},
        {"role": "assistant", "content": "THOUGHT: guard it.\n\n```bash\nsed -i 's/a \\/ b/a \\/ b if b else 0/' calc.py\n```"},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\n</output>"},
    ]  # fmt: skip
    facts = extract_facts(turns)
    assert facts.newest_request == "Please solve this issue: `divide` crashes on zero."
    run, edit = facts.actions
    assert (run.verb, run.exit_code, run.error) == (
        "RUN",
        1,
        "ZeroDivisionError: division by zero",
    )
    assert edit.verb == "EDIT" and edit.exit_code == 0
    assert facts.modified_files() == ["calc.py"]
    unresolved = facts.unresolved_error()
    assert unresolved is not None
    assert unresolved.command == "RUN `python calc.py`"
    assert unresolved.error == "ZeroDivisionError: division by zero"
    assert facts.approaches == ["RUN `python calc.py` failed: ZeroDivisionError: division by zero"]


def test_swe_agent_command_tags_and_observation_messages() -> None:
    trailer = "\n(Open file: /repo/src/m/fields.py)\n(Current directory: /repo)\nbash-$"
    turns = [
        {"role": "user", "content": "We're currently solving the following issue: TimeDelta rounds down.", "message_type": "observation"},
        {"role": "assistant", "content": "Open it.\n<command>\nopen src/m/fields.py 1474\n</command>", "message_type": "action"},
        {"role": "user", "content": "OBSERVATION:\n[File: /repo/src/m/fields.py (1997 lines total)]" + trailer, "message_type": "observation"},
        {"role": "assistant", "content": "Round instead.\n<command>\nedit 1474:1474\n        return int(round(x))\nend_of_edit\n</command>", "message_type": "action"},
        {"role": "user", "content": "OBSERVATION:\nYour proposed edit has introduced new syntax error(s).\nE999 IndentationError" + trailer, "message_type": "observation"},
        {"role": "assistant", "content": "Fix indentation.\n<command>\nedit 1474:1474\n    return int(round(x))\nend_of_edit\n</command>", "message_type": "action"},
        {"role": "user", "content": "OBSERVATION:\n[File: /repo/src/m/fields.py (1997 lines total)]\n1474:    return int(round(x))" + trailer, "message_type": "observation"},
    ]  # fmt: skip
    facts = extract_facts(turns)
    assert facts.newest_request is not None and "TimeDelta" in facts.newest_request
    assert [a.verb for a in facts.actions] == ["READ", "EDIT", "EDIT"]
    assert facts.actions[1].failed and not facts.actions[2].failed
    # the rejected edit changed nothing; the second one modified the open file, once
    assert facts.modified_files() == ["src/m/fields.py"]
    assert facts.files["src/m/fields.py"].edits == 1
    assert facts.approaches[0].startswith("edit of src/m/fields.py rejected: Your proposed edit")
    assert facts.unresolved_error() is None  # the second edit of the same file fixed it


def test_xml_function_calls_and_the_output_template() -> None:
    turns = [
        {"role": "user", "content": "Add a `--verbose` flag to cli.py.", "message_type": "observation"},
        {"role": "assistant", "content": "Create the test.\n\n<function=str_replace_editor>\n<parameter=command>create</parameter>\n<parameter=path>/testbed/tests/test_cli.py</parameter>\n<parameter=file_text>def test_verbose_flag():\n    assert True\n</parameter>\n</function>", "tool_calls": None, "message_type": "action"},
        {"role": "user", "content": "OBSERVATION:\nFile created successfully at: /testbed/tests/test_cli.py", "message_type": "observation"},
        {"role": "assistant", "content": "Run it.\n\n<function=bash>\n<parameter=command>cd /testbed && python -m pytest tests/test_cli.py</parameter>\n</function>", "tool_calls": None, "message_type": "action"},
        {"role": "user", "content": "OBSERVATION:\nE   ModuleNotFoundError: No module named 'click'\n1 error in 0.1s", "message_type": "observation"},
    ]  # fmt: skip
    facts = extract_facts(turns)
    assert [a.verb for a in facts.actions] == ["WRITE", "RUN"]
    assert facts.modified_files() == ["tests/test_cli.py"]
    unresolved = facts.unresolved_error()
    assert unresolved is not None
    assert "ModuleNotFoundError: No module named 'click'" in unresolved.error
    assert "test_verbose_flag" in facts.identifiers.ranked()
    assert facts.newest_request == "Add a `--verbose` flag to cli.py."


def _reading(index: int, kind: Any, text: str = "", **kw: Any) -> MessageReading:
    role = {"request": "user", "assistant": "assistant", "observation": "tool"}[kind]
    return MessageReading(index=index, role=role, kind=kind, text=text, **kw)


def test_walk_follows_the_reading_not_the_roles() -> None:
    """Only ``request`` readings are the user's words; observations answer actions by index."""
    turns: list[dict[str, Any]] = [{"role": "user", "content": ""} for _ in range(5)]
    run = Action("bash", {"command": "make"}, "make", None, "fenced")
    readings = [
        _reading(0, "request", "Build the project."),
        _reading(1, "assistant", "Building.", actions=(run,)),
        # an observation in a user message (the reading knows; the role does not)
        _reading(2, "observation", observation=Observation("make: *** [all] Error 2", 2, action_index=1)),
        # an observation of an action before the span answers nothing here
        _reading(3, "observation", observation=Observation("ok", 0, action_index=-7)),
        _reading(4, "assistant", "It fails in the linker."),
    ]  # fmt: skip
    facts = extract_facts(turns, readings)
    assert facts.user_asks == 1 and facts.newest_request == "Build the project."
    (action,) = facts.actions
    assert action.exit_code == 2 and action.failed
    unresolved = facts.unresolved_error()
    assert unresolved is not None and unresolved.command == "RUN `make`"


def test_names_printed_by_ls_or_find_are_not_files() -> None:
    turns = [
        {"role": "user", "content": "Look around."},
        {"role": "assistant", "content": None, "tool_calls": [_call("a", "bash", command="ls -R")]},
        {"role": "tool", "tool_call_id": "a", "content": "setup.py\nsrc/app/main.py\nsrc/app/util.py\nREADME.md"},
        {"role": "assistant", "content": None, "tool_calls": [_call("b", "bash", command="find . -name '*.cfg'")]},
        {"role": "tool", "tool_call_id": "b", "content": "./setup.cfg\n./tox.cfg"},
    ]  # fmt: skip
    assert extract_facts(turns).files == {}


def test_one_entry_per_file_whatever_name_the_agent_used() -> None:
    trailer = "\n(Open file: /w/src/pkg/fields.py)\n(Current directory: /w)\nbash-$"
    turns = [
        {"role": "user", "content": "Fix fields.py."},
        {"role": "assistant", "content": "Find it.\n```\nfind_file fields.py\n```"},
        {"role": "user", "content": "Found 1 matches for \"fields.py\" in /w:\n/w/src/pkg/fields.py" + trailer},
        {"role": "assistant", "content": "Open.\n```\nopen src/pkg/fields.py\n```"},
        {"role": "user", "content": "[File: /w/src/pkg/fields.py (10 lines total)]" + trailer},
        {"role": "assistant", "content": "Edit.\n```\nedit 2:2\nx = 2\nend_of_edit\n```"},
        {"role": "user", "content": "[File: /w/src/pkg/fields.py (10 lines total)]\n2:x = 2" + trailer},
        {"role": "assistant", "content": "Also ./src/pkg/fields.py needs a docstring; fields.py is done."},
    ]  # fmt: skip
    facts = extract_facts(turns)
    assert list(facts.files) == ["src/pkg/fields.py"]
    assert facts.files["src/pkg/fields.py"].note == "modified"


def test_old_commands_of_a_huge_span_keep_their_stated_exit_status() -> None:
    """Past NAMED_TURNS, a command's output is not read; its stated status still counts."""
    from palimpsest.summarizers.walk import NAMED_TURNS

    turns: list[dict[str, Any]] = [{"role": "user", "content": "Go."}]
    turns += [
        {"role": "assistant", "content": "```bash\nmake\n```"},
        {"role": "user", "content": "<returncode>2</returncode>\n<output>\nError 2\n</output>"},
        {"role": "assistant", "content": "```bash\necho hi > old.txt\n```"},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\n</output>"},
    ]
    for i in range(NAMED_TURNS // 2):
        turns += [
            {"role": "assistant", "content": f"```bash\ncat notes_{i}.txt\n```"},
            {"role": "user", "content": "<returncode>0</returncode>\n<output>\nfine\n</output>"},
        ]
    facts = extract_facts(turns)
    make = facts.actions[0]
    assert (make.outcome, make.failed) == ("exit 2", True)
    assert facts.modified_files() == ["old.txt"]  # writes are always read
    assert facts.actions[-1].outcome == "exit 0" and facts.actions[-1].exit_code == 0


def test_a_file_named_for_errors_never_displaces_the_real_failure() -> None:
    """Held-out SWE-agent runs: `create reproduce_error.py` was listed as a failure and
    became "Last failure"; the agent's own script printing an error was "11 lines of output"."""
    trailer = "\n(Open file: /repo/reproduce_error.py)\n(Current directory: /repo)\nbash-$"
    turns = [
        {"role": "assistant", "content": "Script first.\n```\ncreate reproduce_error.py\n```"},
        {"role": "user", "content": "[File: /repo/reproduce_error.py (1 lines total)]\n1:" + trailer},
        {"role": "assistant", "content": "Run it.\n```\npython reproduce_error.py\n```"},
        {"role": "user", "content": "".join(f"matrix {i}\n" for i in range(10)) + "Bareiss failed with: TypeError Invalid NaN comparison" + trailer},
        {"role": "assistant", "content": "```\nstr_replace_editor create /repo/check_error.py --file_text x\n```"},
        {"role": "user", "content": "File created successfully at: /repo/check_error.py" + trailer},
    ]  # fmt: skip
    facts = extract_facts(turns)
    failure = facts.last_failure()
    assert failure is not None and failure.command == "RUN `python reproduce_error.py`"
    assert failure.error == "Bareiss failed with: TypeError Invalid NaN comparison"
    assert [f.command for f in facts.failures] == [failure.command]


def test_results_marked_as_errors_fail_and_every_result_of_a_message_counts() -> None:
    """A result the format marks ``is_error`` failed whatever its words say (a refused
    write created nothing), and a message of several tool_result blocks answers them all."""
    turns = [
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "a", "name": "Bash", "input": {"command": "ls"}},
            {"type": "tool_use", "id": "b", "name": "Bash", "input": {"command": "python x.py"}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "a", "content": "x.py"},
            {"type": "tool_result", "tool_use_id": "b", "content": "boom happened", "is_error": True},
        ]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "d", "name": "Write", "input": {"file_path": "/a/n.py", "content": "x"}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "d", "content": "<tool_use_error>denied by hook</tool_use_error>", "is_error": True},
        ]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "e", "type": "function", "function": {"name": "fetch", "arguments": "{}"}},
        ]},
        {"role": "tool", "tool_call_id": "e", "content": "upstream said no", "is_error": True},
    ]  # fmt: skip
    facts = extract_facts(turns)
    ls, run, write, fetch = facts.actions
    assert (ls.failed, ls.outcome) == (False, "output: x.py")
    assert (run.failed, run.error) == (True, "boom happened")
    assert write.failed and facts.modified_files() == []  # the refused write wrote nothing
    assert fetch.failed and fetch.error == "upstream said no"


def test_claude_code_edit_texts_are_read_for_names() -> None:
    turns = [
        {"role": "user", "content": "Add a multiply function too"},
        {"role": "assistant", "content": None, "tool_calls": [
            _call("e", "Edit", file_path="/project/math_utils.py", old_string="    return a - b\n",
                  new_string="    return a - b\n\n\ndef multiply_ints(a: int, b: int) -> int:\n    return a * b\n"),
        ]},
        {"role": "tool", "tool_call_id": "e", "content": "The file /project/math_utils.py has been updated."},
        {"role": "assistant", "content": None, "tool_calls": [
            _call("m", "MultiEdit", file_path="/project/ops.py",
                  edits=[{"old_string": "x = 1", "new_string": "RATE_LIMIT = 1"}]),
        ]},
        {"role": "tool", "tool_call_id": "m", "content": "Applied 1 edit to /project/ops.py"},
    ]  # fmt: skip
    ranked = extract_facts(turns).identifiers.ranked()
    assert "multiply_ints" in ranked and "RATE_LIMIT" in ranked


def test_an_edit_belongs_to_the_file_its_answer_says_is_open() -> None:
    # The span starts after an `open` of another file: the walk assumes the old one is
    # open until the edit's own answer names the file it changed.
    def trailer(path: str) -> str:
        return f"\n(Open file: {path})\n(Current directory: /repo)\nbash-$"

    turns = [
        {"role": "user", "content": "Recover the seed.", "message_type": "observation"},
        {"role": "assistant", "content": "Look.\n<command>\nopen handler.py\n</command>", "message_type": "action"},
        {"role": "user", "content": "OBSERVATION:\n[File: /repo/handler.py (372 lines total)]" + trailer("/repo/handler.py"), "message_type": "observation"},
        {"role": "assistant", "content": "Fill it.\n<command>\nedit 1:1\nfrom z3 import Solver\nend_of_edit\n</command>", "message_type": "action"},
        {"role": "user", "content": "OBSERVATION:\n[File: /repo/get_seed.py (10 lines total)]\n1:from z3 import Solver\nFile updated." + trailer("/repo/get_seed.py"), "message_type": "observation"},
        {"role": "assistant", "content": "Again.\n<command>\nedit 2:2\nx = (\nend_of_edit\n</command>", "message_type": "action"},
        {"role": "user", "content": "OBSERVATION:\nYour proposed edit has introduced new syntax error(s).\nERRORS:\n- E999 SyntaxError: '(' was never closed" + trailer("/repo/get_seed.py"), "message_type": "observation"},
    ]  # fmt: skip
    facts = extract_facts(turns)
    assert [(a.verb, a.target) for a in facts.actions] == [
        ("READ", "handler.py"), ("EDIT", "get_seed.py"), ("EDIT", "get_seed.py"),
    ]  # fmt: skip
    assert facts.modified_files() == ["get_seed.py"]  # relative to the working directory
    failure = facts.unresolved_error()
    assert failure is not None and failure.command == "EDIT get_seed.py"
