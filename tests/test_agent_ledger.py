"""StateLedger: files, failures, pending asks and background work, from real tool calls."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from palimpsest.agent.ledger import LEDGER_HEADER, StateLedger
from palimpsest.agent.registry import ToolRegistry
from palimpsest.agent.todo import TodoStore
from palimpsest.agent.tools import ToolOutcome
from palimpsest.agent.workspace import workspace_tools


@pytest.fixture
def root(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


class Session:
    """Real workspace tools whose every call is recorded in a ledger."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.tools = ToolRegistry(workspace_tools(root, shell_timeout=10))
        self.ledger = StateLedger(root)

    def call(self, name: str, args: dict[str, Any], turn: int) -> ToolOutcome:
        outcome = self.tools.call(name, args)
        self.ledger.record_call(name, args, outcome, turn)
        return outcome


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class TestFiles:
    def test_workspace_tools_record_modified_and_read_files(self, root: Path) -> None:
        s = Session(root)
        s.call("write_file", {"path": "src/app.py", "content": "x = 1\n"}, turn=1)
        s.call("edit_file", {"path": "src/app.py", "old_text": "1", "new_text": "2"}, turn=2)
        (root / "README.md").write_text("hello\n")
        s.call("read_file", {"path": "README.md"}, turn=2)
        s.call("read_file", {"path": "missing.md"}, turn=2)
        assert s.ledger.files_modified() == ["src/app.py"]
        assert s.ledger.files_read() == ["README.md"]
        (record,) = s.ledger.modified_records()
        assert record.edits == 2
        assert record.turn == 2
        assert record.sha256 == sha(root / "src/app.py")

    def test_shell_writes_are_found_by_the_shared_scanner(self, root: Path) -> None:
        s = Session(root)
        s.call("run_shell", {"command": "echo hi > out.txt && sed -i s/hi/ho/ out.txt"}, turn=3)
        s.call("run_shell", {"command": "cat out.txt"}, turn=3)
        s.call("run_shell", {"command": "touch gone.txt && rm gone.txt"}, turn=4)
        assert s.ledger.files_modified() == ["out.txt", "gone.txt"]
        records = {r.path: r for r in s.ledger.modified_records()}
        assert records["out.txt"].sha256 == sha(root / "out.txt")
        assert records["gone.txt"].sha256 is None
        assert s.ledger.files_read() == ["out.txt"]

    @pytest.mark.parametrize(
        ("name", "args"),
        [
            ("str_replace_editor", {"command": "create", "path": "{root}/a.py", "file_text": ""}),
            ("str_replace_based_edit_tool", {"command": "str_replace", "path": "a.py"}),
            ("Write", {"file_path": "{root}/a.py", "content": "x"}),
            ("Edit", {"file_path": "a.py", "old_string": "x", "new_string": "y"}),
            ("MultiEdit", {"file_path": "a.py", "edits": []}),
            ("apply_patch", {"input": "*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n"}),
            ("bash", {"command": "cd sub && printf x > ../a.py"}),
            ("shell", {"command": ["bash", "-lc", "echo x >> a.py"]}),
        ],
    )
    def test_other_agents_tool_names(self, root: Path, name: str, args: dict[str, Any]) -> None:
        (root / "a.py").write_text("x")
        ledger = StateLedger(root)
        args = json.loads(json.dumps(args).replace("{root}", str(root)))
        ledger.record_call(name, args, ToolOutcome("ok\nexit code: 0"), turn=1)
        assert ledger.files_modified() == ["a.py"]
        assert ledger.modified_records()[0].sha256 == sha(root / "a.py")

    @pytest.mark.parametrize(
        ("name", "args"),
        [
            ("Read", {"file_path": "notes.md"}),
            ("str_replace_editor", {"command": "view", "path": "notes.md"}),
        ],
    )
    def test_reads_from_other_agents(self, root: Path, name: str, args: dict[str, Any]) -> None:
        ledger = StateLedger(root)
        ledger.record_call(name, args, ToolOutcome("text"), turn=1)
        assert ledger.files_read() == ["notes.md"]
        assert ledger.files_modified() == []

    def test_paths_outside_the_workdir_stay_absolute_and_no_workdir_means_no_hash(
        self, root: Path, tmp_path: Path
    ) -> None:
        ledger = StateLedger(root)
        ledger.record_call("write_file", {"path": str(tmp_path / "x.txt")}, ToolOutcome("ok"), 1)
        assert ledger.files_modified() == [str(tmp_path / "x.txt")]
        bare = StateLedger()
        bare.record_call("write_file", {"path": "rel.txt"}, ToolOutcome("ok"), 1)
        assert bare.modified_records()[0].sha256 is None

    def test_failed_write_records_no_file(self, root: Path) -> None:
        s = Session(root)
        s.call("edit_file", {"path": "nope.py", "old_text": "a", "new_text": "b"}, turn=1)
        assert s.ledger.files_modified() == []


class TestFailures:
    def test_non_zero_exit_is_a_failure_with_its_error_line(self, root: Path) -> None:
        s = Session(root)
        script = "import sys\nprint('working')\nraise KeyError('missing thing')\n"
        (root / "t.py").write_text(script)
        outcome = s.call("run_shell", {"command": "python3 t.py"}, turn=5)
        assert not outcome.is_error  # the model sees it as content
        failure = s.ledger.last_failure()
        assert failure is not None
        assert failure.error == "KeyError: 'missing thing'"
        assert failure.turn == 5 and not failure.fixed
        assert "python3 t.py" in failure.command

    def test_a_later_successful_run_of_the_same_command_fixes_it(self, root: Path) -> None:
        s = Session(root)
        s.call("run_shell", {"command": "test -f flag || { echo 'FAILED: no flag'; exit 1; }"}, 1)
        failure = s.ledger.last_failure()
        assert failure is not None and failure.error == "FAILED: no flag"
        (root / "flag").write_text("")
        s.call("run_shell", {"command": "test -f flag || { echo 'FAILED: no flag'; exit 1; }"}, 2)
        fixed = s.ledger.last_failure()
        assert fixed is not None and fixed.fixed

    def test_a_successful_edit_fixes_a_failed_edit_of_the_same_file(self, root: Path) -> None:
        s = Session(root)
        (root / "a.py").write_text("x = 1\n")
        s.call("edit_file", {"path": "a.py", "old_text": "y", "new_text": "z"}, turn=1)
        failure = s.ledger.last_failure()
        assert failure is not None and "0 matches" in failure.error and not failure.fixed
        s.call("edit_file", {"path": "a.py", "old_text": "x", "new_text": "z"}, turn=2)
        fixed = s.ledger.last_failure()
        assert fixed is not None and fixed.fixed

    def test_a_failing_shell_write_names_its_command_and_still_records_the_file(
        self, root: Path
    ) -> None:
        s = Session(root)
        s.call("run_shell", {"command": "echo x > out.txt && false"}, turn=1)
        failure = s.ledger.last_failure()
        assert failure is not None
        assert failure.command == "`echo x > out.txt && false`"
        assert s.ledger.files_modified() == ["out.txt"]  # the redirection happened

    def test_unfixed_failures_come_first(self, root: Path) -> None:
        ledger = StateLedger(root)
        ledger.record_call("web", {"q": 1}, ToolOutcome("Timeout: slow", is_error=True), 1)
        ledger.record_call("grep", {"q": 2}, ToolOutcome("error: bad regex", is_error=True), 2)
        ledger.record_call("grep", {"q": 2}, ToolOutcome("3 matches"), 3)
        failure = ledger.last_failure()
        assert failure is not None and failure.command.startswith("web") and not failure.fixed
        text = ledger.render() or ""
        assert text.index("web") < text.index("grep")
        assert "NOT fixed" in text and "fixed since" in text

    def test_error_line_prefers_error_lines_over_the_first(self) -> None:
        ledger = StateLedger()
        content = "collecting...\ntests/test_x.py::test_a FAILED\n1 failed\nexit code: 1"
        ledger.record_call("run_shell", {"command": "pytest -q"}, ToolOutcome(content), 1)
        failure = ledger.last_failure()
        assert failure is not None and failure.error == "tests/test_x.py::test_a FAILED"

    def test_the_last_printed_error_is_quoted_and_names_are_not_errors(self) -> None:
        ledger = StateLedger()
        content = "case 1 ok\nError: 'ascii' codec can't decode\nBareiss failed with: TypeError x"
        ledger.record_call("fetch", {"q": 1}, ToolOutcome(content, is_error=True), 1)
        failure = ledger.last_failure()
        assert failure is not None and failure.error == "Bareiss failed with: TypeError x"
        created = ToolOutcome("File created successfully at: /x/reproduce_error.py")
        ledger.record_call("write_file", {"path": "/x/reproduce_error.py"}, created, 2)
        latest = ledger.last_failure()
        assert latest is not None and latest.command.startswith("fetch")  # not the write


class TestAsksAndBackground:
    def test_pending_asks_are_the_newest_unanswered(self) -> None:
        ledger = StateLedger()
        for turn in range(1, 9):
            ledger.record_user(f"request {turn}", turn)
        ledger.record_answer(8)
        ledger.record_answer(2)
        ledger.record_user("  ", 9)
        assert ledger.pending_asks() == [f"request {t}" for t in (3, 4, 5, 6, 7)]

    def test_background_work(self) -> None:
        ledger = StateLedger()
        ledger.start_background("build", "make all (pid 42)")
        ledger.start_background("srv", "dev server on :8000")
        ledger.finish_background("build")
        ledger.finish_background("unknown")
        text = ledger.render() or ""
        assert "Background work in flight:\n- srv: dev server on :8000" in text
        assert "make all" not in text


class TestRender:
    def test_empty_ledger_renders_nothing(self) -> None:
        assert StateLedger().render() is None
        assert StateLedger().render(TodoStore()) is None

    def test_full_render(self, root: Path) -> None:
        s = Session(root)
        s.ledger.record_user("add a --verbose flag; token sk-proj-abc123def456ghi789jkl0", 1)
        s.call("write_file", {"path": "cli.py", "content": "flag = 1\n"}, turn=1)
        (root / "docs.md").write_text("docs\n")
        s.call("read_file", {"path": "docs.md"}, turn=1)
        s.call("read_file", {"path": "cli.py"}, turn=1)
        s.call("run_shell", {"command": "echo 'Error: boom'; exit 2"}, turn=1)
        todos = TodoStore()
        todos.write([{"id": 1, "content": "wire flag", "status": "in_progress"}])
        text = s.ledger.render(todos)
        assert text is not None
        lines = text.split("\n")
        assert lines[0] == LEDGER_HEADER
        assert f"- cli.py (1 edit, last turn 1, sha256 {sha(root / 'cli.py')[:12]})" in lines
        assert "Files read (1):\n- docs.md" in text  # cli.py is listed once, as modified
        assert (
            "Last failure:\n- `echo 'Error: boom'; exit 2` (turn 1, NOT fixed): Error: boom" in text
        )
        assert "Pending user requests:\n- add a --verbose flag; token [REDACTED]" in text
        assert "abc123def456" not in text
        assert "Active tasks:\n- [>] 1. wire flag (in_progress)" in text

    def test_reads_are_capped(self, root: Path) -> None:
        ledger = StateLedger(root)
        for i in range(20):
            ledger.record_call("read_file", {"path": f"f{i}.txt"}, ToolOutcome("x"), 1)
        text = ledger.render() or ""
        assert "Files read (20, newest 15 shown):" in text
        assert "- f4.txt" not in text and "- f19.txt" in text

    def test_summarizer_note_is_one_line(self) -> None:
        note = StateLedger().summarizer_note()
        assert "\n" not in note and "ledger" in note


class TestPersistence:
    def test_round_trip(self, root: Path) -> None:
        s = Session(root)
        s.ledger.record_user("do it", 1)
        s.call("write_file", {"path": "a.txt", "content": "a"}, turn=1)
        s.call("run_shell", {"command": "exit 4"}, turn=1)
        s.ledger.start_background("k", "job")
        data = json.loads(json.dumps(s.ledger.to_dict()))
        restored = StateLedger.from_dict(data, workdir=root)
        assert restored.render() == s.ledger.render()
        assert restored.to_dict() == s.ledger.to_dict()

    @pytest.mark.parametrize(
        "bad", [{"version": 2}, {"modified": [{"nope": 1}]}, {"read": [1]}, {"asks": [["x"]]}]
    )
    def test_malformed_data_is_a_value_error(self, bad: dict[str, Any]) -> None:
        with pytest.raises(ValueError):
            StateLedger.from_dict(bad)
