"""Tool calls of every agent shape map to one action vocabulary (RUN, READ, WRITE, EDIT, ...)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from palimpsest.messages.reading import Action as ReadAction
from palimpsest.summarizers.actions import classify_call, classify_command, classify_reading, clip

PATCH = (
    "*** Begin Patch\n*** Update File: src/app.py\n@@\n-a\n+b\n*** Add File: docs/new.md\n+hi\n"
    "*** Delete File: old.txt\n*** End Patch"
)

CASES: list[tuple[str, dict[str, Any], str, str, list[tuple[str, str]]]] = [
    # (tool name, arguments, verb, target, writes)
    ("bash", {"command": "pytest tests/"}, "RUN", "`pytest tests/`", []),
    ("Bash", {"command": "ls", "description": "list"}, "RUN", "`ls`", []),
    ("terminal", {"command": "make build"}, "RUN", "`make build`", []),
    ("execute_command", {"command": "npm test"}, "RUN", "`npm test`", []),
    ("shell", {"command": ["bash", "-lc", "git status"], "workdir": "/r"}, "RUN", "`git status`", []),
    ("read_file", {"path": "src/app.py"}, "READ", "src/app.py", []),
    ("Read", {"file_path": "/p/a.py"}, "READ", "/p/a.py", []),
    ("view", {"path": "README.md"}, "READ", "README.md", []),
    ("write_file", {"path": "main.py", "content": "a\nb\n"}, "WRITE", "main.py", [("main.py", "created")]),
    ("Write", {"file_path": "/p/h.py", "content": "x"}, "WRITE", "/p/h.py", [("/p/h.py", "created")]),
    ("create", {"filename": "repro.py"}, "WRITE", "repro.py", [("repro.py", "created")]),
    ("Edit", {"file_path": "/p/a.py", "old_string": "a", "new_string": "b"}, "EDIT", "/p/a.py", [("/p/a.py", "modified")]),
    ("MultiEdit", {"file_path": "m.py", "edits": []}, "EDIT", "m.py", [("m.py", "modified")]),
    ("patch", {"path": "x.py", "old_string": "a"}, "EDIT", "x.py", [("x.py", "modified")]),
    ("str_replace_editor", {"command": "view", "path": "/r/a.py"}, "READ", "/r/a.py", []),
    ("str_replace_editor", {"command": "create", "path": "/r/n.py", "file_text": "x"}, "WRITE", "/r/n.py", [("/r/n.py", "created")]),
    ("str_replace_editor", {"command": "str_replace", "path": "/r/a.py"}, "EDIT", "/r/a.py", [("/r/a.py", "modified")]),
    ("str_replace_editor", {"command": "insert", "path": "/r/a.py"}, "EDIT", "/r/a.py", [("/r/a.py", "modified")]),
    ("str_replace_editor", {"command": "undo_edit", "path": "/r/a.py"}, "EDIT", "/r/a.py", [("/r/a.py", "modified")]),
    ("apply_patch", {"input": PATCH}, "EDIT", "src/app.py, docs/new.md, old.txt", [("src/app.py", "modified"), ("docs/new.md", "created"), ("old.txt", "deleted")]),
    ("Grep", {"pattern": "def main", "path": "src"}, "SEARCH", "'def main' in src", []),
    ("Glob", {"pattern": "**/*.py"}, "SEARCH", "'**/*.py'", []),
    ("search_files", {"pattern": "TODO", "path": "."}, "SEARCH", "'TODO' in .", []),
    ("find_file", {"file_name": "fields.py", "dir": "src"}, "SEARCH", "'fields.py' in src", []),
    ("list_dir", {"path": "src"}, "LIST", "src", []),
    ("TodoWrite", {"todos": []}, "CALL", "TodoWrite(todos=[])", []),
    ("bash", {"command": "cat > out.txt <<'EOF'\nhello > world\nEOF"}, "WRITE", "out.txt", [("out.txt", "created")]),
    ("bash", {"command": "sed -i 's/a/b/' src/x.py"}, "EDIT", "src/x.py", [("src/x.py", "modified")]),
]  # fmt: skip


@pytest.mark.parametrize(("name", "args", "verb", "target", "writes"), CASES)
def test_classify_call(
    name: str, args: dict[str, Any], verb: str, target: str, writes: list[tuple[str, str]]
) -> None:
    action = classify_call(name, args, json.dumps(args))
    assert (action.verb, action.target, action.writes) == (verb, target, writes)
    assert action.tool == name


def test_codex_shell_apply_patch_and_raw_patch_arguments() -> None:
    shell = classify_call("shell", {"command": ["apply_patch", PATCH]}, "")
    assert shell.verb == "EDIT" and ("docs/new.md", "created") in shell.writes
    raw = classify_call("apply_patch", {}, PATCH)  # custom tool: the patch is the raw input
    assert [p for p, _ in raw.writes] == ["src/app.py", "docs/new.md", "old.txt"]


def test_edit_without_path_uses_the_open_file() -> None:
    action = classify_call("edit", {"replacement_text": "x", "start_line": 1}, "", "/t/f.py")
    assert action.target == "/t/f.py" and action.writes == [("/t/f.py", "modified")]
    unknown = classify_call("edit", {"replacement_text": "x"}, "")
    assert unknown.target == "(open file)" and unknown.writes == []


def test_run_keeps_workdir_and_cd() -> None:
    assert classify_call("shell", {"command": ["ls"], "workdir": "/w"}, "").cwd == "/w"
    assert classify_call("bash", {"command": "cd /srv/app && make"}, "").cwd == "/srv/app"


@pytest.mark.parametrize(
    ("command", "verb", "target", "tool"),
    [
        ("ls -la tests/", "RUN", "`ls -la tests/`", "bash"),
        ("python3 x.py", "RUN", "`python3 x.py`", "bash"),
        ("create reproduce_bug.py", "WRITE", "reproduce_bug.py", "create"),
        ("open src/a.py 40", "READ", "src/a.py", "open"),
        ("edit 1:1\nx = 1\nend_of_edit", "EDIT", "/t/open.py", "edit"),
        ('find_file "fields.py" src', "SEARCH", "'fields.py' in src", "find_file"),
        ("submit", "CALL", "submit", "submit"),
        (
            "str_replace_editor create /r/new.py --file_text 'x'",
            "WRITE",
            "/r/new.py",
            "str_replace_editor",
        ),
        ("str_replace_editor view /r/a.py", "READ", "/r/a.py", "str_replace_editor"),
    ],
)
def test_text_commands(command: str, verb: str, target: str, tool: str) -> None:
    action = classify_command(command, "bash", "/t/open.py")
    assert (action.verb, action.target, action.tool) == (verb, target, tool)


def _read(tool: str, style: str, line: str | None, **arguments: object) -> ReadAction:
    return ReadAction(tool, arguments, line, None, style)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("action", "verb", "target"),
    [
        # a fenced block (mini-swe-agent, SWE-agent) and a <command> tag carry a command line
        (_read("bash", "fenced", "cat a.py", command="cat a.py"), "RUN", "`cat a.py`"),
        (_read("edit", "command_tag", "edit 3:4\ny\nend_of_edit"), "EDIT", "/t/open.py"),
        (_read("open", "fenced", "open src/m.py"), "READ", "src/m.py"),
        # SWE-agent function calling: the whole command line under "command"
        (_read("create", "tool_call", "create new.py", command="create new.py"), "WRITE", "new.py"),
        # native and XML function calls carry parsed arguments
        (_read("bash", "xml_function", "pytest -q", command="pytest -q"), "RUN", "`pytest -q`"),
        (
            _read(
                "str_replace_editor", "xml_function", None, command="str_replace", path="/r/f.py"
            ),
            "EDIT",
            "/r/f.py",
        ),
        (_read("open", "tool_call", None, path="src/x.py", line_number=3), "READ", "src/x.py"),
        (_read("create", "tool_call", None, filename="r.py"), "WRITE", "r.py"),
    ],
)
def test_reading_actions_map_to_the_vocabulary(action: ReadAction, verb: str, target: str) -> None:
    classified = classify_reading(action, "/t/open.py")
    assert (classified.verb, classified.target) == (verb, target)


def test_action_line_format() -> None:
    action = classify_call("read_file", {"path": "src/app.py"}, "")
    action.outcome = "120 lines"
    assert action.line(3) == "3. READ src/app.py — 120 lines [tool: read_file]"


def test_clip_cuts_on_word_boundaries() -> None:
    assert clip("short  text\nhere", 50) == "short text here"
    assert clip("alpha beta gamma", 12) == "alpha beta…"
    # a token longer than the limit is dropped whole, never shown half (secrets stay whole)
    assert clip("key sk-abcdefghijklmnopqrstuvwxyz0123", 20) == "key…"
    assert clip("x" * 100, 10) == "…"


@pytest.mark.parametrize(
    ("args", "secret"),
    [
        ({"user": "admin", "password": "Zq8vLm2pRt"}, "Zq8vLm2pRt"),
        ({"url": "https://api.example.com", "api_key": 4417290031}, "4417290031"),
        ({"auth": {"client_secret": "k9Xw2bNq7TzR"}, "retries": 2}, "k9Xw2bNq7TzR"),
        ({"headers": "Authorization: Bearer 7fQk2mZx9LpW4vRt"}, "7fQk2mZx9LpW4vRt"),
    ],
)
def test_a_generic_call_renders_its_arguments_redacted(args: dict[str, Any], secret: str) -> None:
    """``password=X,`` reads as a keyword argument to the text rules: redacted by key first."""
    action = classify_call("http_request", args, json.dumps(args))
    assert action.verb == "CALL"
    assert secret not in action.target and secret not in action.key
    assert "[REDACTED]" in action.target
    assert action.target.startswith("http_request(")


def test_a_generic_call_keeps_harmless_arguments() -> None:
    action = classify_call("http_request", {"user": "admin", "method": "GET"}, "{}")
    assert action.target == "http_request(user=admin, method=GET)"
