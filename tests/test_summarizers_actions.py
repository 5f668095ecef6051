"""Tool calls of every agent shape map to one action vocabulary (RUN, READ, WRITE, EDIT, ...)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from palimpsest.summarizers.actions import classify_call, classify_text_action, clip

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
    ("text", "verb", "target", "tool"),
    [
        (
            "Let me look.\n\n```mswea_bash_command\nls -la tests/\n```",
            "RUN",
            "`ls -la tests/`",
            "bash",
        ),
        ("THOUGHT\n```bash\npython3 x.py\n```", "RUN", "`python3 x.py`", "bash"),
        ("Create it.\n```\ncreate reproduce_bug.py\n```", "WRITE", "reproduce_bug.py", "create"),
        ("Open.\n```\nopen src/a.py 40\n```", "READ", "src/a.py", "open"),
        ("Fix.\n```\nedit 1:1\nx = 1\nend_of_edit\n```", "EDIT", "/t/open.py", "edit"),
        ('Find.\n```\nfind_file "fields.py" src\n```', "SEARCH", "'fields.py' in src", "find_file"),
        ("Done.\n```\nsubmit\n```", "CALL", "submit", "submit"),
    ],
)
def test_text_actions(text: str, verb: str, target: str, tool: str) -> None:
    action = classify_text_action(text, "/t/open.py")
    assert action is not None
    assert (action.verb, action.target, action.tool) == (verb, target, tool)


def test_prose_and_code_examples_are_not_text_actions() -> None:
    assert classify_text_action("No commands here.") is None
    assert classify_text_action("Example:\n```python\nprint(1)\n```") is None


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
