"""Workspace tools on real files and real subprocesses."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from palimpsest.agent.registry import ToolRegistry
from palimpsest.agent.tools import ToolOutcome
from palimpsest.agent.workspace import MAX_LINE_CHARS, confine, workspace_tools


@pytest.fixture
def root(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


@pytest.fixture
def tools(root: Path) -> ToolRegistry:
    return ToolRegistry(workspace_tools(root, shell_timeout=10, output_cap=400))


def ok(outcome: ToolOutcome) -> str:
    assert not outcome.is_error, outcome.content
    return outcome.content


def err(outcome: ToolOutcome) -> str:
    assert outcome.is_error, outcome.content
    return outcome.content


class TestConfinement:
    def test_inside_paths_resolve(self, root: Path) -> None:
        base = root.resolve()
        assert confine(base, "a/b.txt") == base / "a" / "b.txt"
        assert confine(base, "a/../b.txt") == base / "b.txt"
        assert confine(base, str(base / "c.txt")) == base / "c.txt"

    @pytest.mark.parametrize("path", ["../x", "a/../../x", "/etc/passwd", "../ws-other/x"])
    def test_escapes_are_refused_by_every_file_tool(self, tools: ToolRegistry, path: str) -> None:
        for name, args in (
            ("read_file", {"path": path}),
            ("write_file", {"path": path, "content": "x"}),
            ("edit_file", {"path": path, "old_text": "a", "new_text": "b"}),
        ):
            message = err(tools.call(name, args))
            assert message.startswith("PermissionError: ")
            assert "outside the workspace" in message

    def test_symlink_pointing_out_is_refused(self, root: Path, tmp_path: Path) -> None:
        secret = tmp_path / "secret.txt"
        secret.write_text("outside")
        (root / "link.txt").symlink_to(secret)
        (root / "linkdir").symlink_to(tmp_path)
        tools = ToolRegistry(workspace_tools(root))
        message = err(tools.call("read_file", {"path": "link.txt"}))
        assert "symlink that points outside the workspace" in message
        err(tools.call("write_file", {"path": "linkdir/new.txt", "content": "x"}))
        assert not (tmp_path / "new.txt").exists()
        assert secret.read_text() == "outside"

    def test_symlink_inside_is_followed(self, root: Path) -> None:
        (root / "real.txt").write_text("hello\n")
        (root / "alias.txt").symlink_to(root / "real.txt")
        tools = ToolRegistry(workspace_tools(root))
        assert ok(tools.call("read_file", {"path": "alias.txt"})) == "     1\thello"

    def test_empty_path_and_bad_root(self, tools: ToolRegistry, tmp_path: Path) -> None:
        assert "path is empty" in err(tools.call("read_file", {"path": " "}))
        with pytest.raises(ValueError, match="not a directory"):
            workspace_tools(tmp_path / "missing")


class TestReadFile:
    def test_numbered_window_and_continuation_hint(self, tools: ToolRegistry, root: Path) -> None:
        (root / "f.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
        text = ok(tools.call("read_file", {"path": "f.txt", "offset": 3, "limit": 2}))
        assert text == "     3\tline 3\n     4\tline 4\n[lines 3-4 of 10; read on with offset=5]"
        assert ok(tools.call("read_file", {"path": "f.txt", "offset": 10})) == "    10\tline 10"

    def test_output_cap_limits_a_window(self, tools: ToolRegistry, root: Path) -> None:
        (root / "big.txt").write_text("x" * 50 + "\n" * 1 + ("y" * 50 + "\n") * 100)
        text = ok(tools.call("read_file", {"path": "big.txt"}))
        assert len(text) < 500
        assert "read on with offset=" in text

    def test_long_lines_are_cut(self, tools: ToolRegistry, root: Path) -> None:
        (root / "min.js").write_text("a" * (MAX_LINE_CHARS + 500))
        tools = ToolRegistry(workspace_tools(root))
        text = ok(tools.call("read_file", {"path": "min.js"}))
        assert text.endswith("… [line cut, 500 more chars]")

    def test_errors(self, tools: ToolRegistry, root: Path) -> None:
        (root / "d").mkdir()
        (root / "e.txt").write_text("")
        (root / "one.txt").write_text("1\n")
        assert "FileNotFoundError: no such file: nope.txt" in err(
            tools.call("read_file", {"path": "nope.txt"})
        )
        assert "IsADirectoryError" in err(tools.call("read_file", {"path": "d"}))
        assert ok(tools.call("read_file", {"path": "e.txt"})) == "e.txt is empty."
        assert "past the end" in err(tools.call("read_file", {"path": "one.txt", "offset": 5}))
        assert "at least 1" in err(tools.call("read_file", {"path": "one.txt", "limit": 0}))

    @pytest.mark.parametrize(
        ("data", "kind"),
        [
            (b"\x89PNG\r\n\x1a\n" + bytes(range(256)), "PNG image"),
            (b"abc\x00def", "binary data"),
            (b"caf\xe9 au lait " * 10, "non-UTF-8 data"),
        ],
    )
    def test_binary_files_are_described(
        self, tools: ToolRegistry, root: Path, data: bytes, kind: str
    ) -> None:
        (root / "blob").write_bytes(data)
        text = ok(tools.call("read_file", {"path": "blob"}))
        assert (
            text == f"blob is a binary file ({kind}, {len(data):,} bytes); it is not shown as text."
        )


class TestWriteAndEdit:
    def test_write_creates_parents_and_overwrites(self, tools: ToolRegistry, root: Path) -> None:
        assert ok(tools.call("write_file", {"path": "a/b/c.py", "content": "x = 1\n"})) == (
            "Created a/b/c.py (6 chars, 1 lines)."
        )
        assert (root / "a/b/c.py").read_text() == "x = 1\n"
        assert ok(tools.call("write_file", {"path": "a/b/c.py", "content": "y"})).startswith(
            "Overwrote"
        )
        assert (root / "a/b/c.py").read_text() == "y"
        assert [p.name for p in (root / "a/b").iterdir()] == ["c.py"]  # no temp file left

    def test_write_keeps_the_mode_and_refuses_directories(
        self, tools: ToolRegistry, root: Path
    ) -> None:
        script = root / "run.sh"
        script.write_text("#!/bin/sh\n")
        script.chmod(0o755)
        ok(tools.call("write_file", {"path": "run.sh", "content": "#!/bin/sh\necho hi\n"}))
        assert stat.S_IMODE(script.stat().st_mode) == 0o755
        (root / "d").mkdir()
        assert "IsADirectoryError" in err(tools.call("write_file", {"path": "d", "content": ""}))

    def test_write_refuses_a_fifo_and_writes_through_a_link_inside(
        self, tools: ToolRegistry, root: Path
    ) -> None:
        os.mkfifo(root / "pipe")  # opening it would block: the refusal must come first
        assert "named pipe (FIFO)" in err(
            tools.call("write_file", {"path": "pipe", "content": "x"})
        )
        assert stat.S_ISFIFO(os.lstat(root / "pipe").st_mode)
        (root / "real.txt").write_text("old")
        (root / "real.txt").chmod(0o640)
        (root / "link.txt").symlink_to("real.txt")
        ok(tools.call("write_file", {"path": "link.txt", "content": "new"}))
        assert (root / "link.txt").is_symlink() and (root / "real.txt").read_text() == "new"
        assert stat.S_IMODE((root / "real.txt").stat().st_mode) == 0o640

    def test_edit_exactly_one_match(self, tools: ToolRegistry, root: Path) -> None:
        target = root / "m.py"
        target.write_text("a = 1\nb = 2\nb = 2\n")
        none = err(tools.call("edit_file", {"path": "m.py", "old_text": "c", "new_text": "d"}))
        assert "(0 matches)" in none
        many = err(tools.call("edit_file", {"path": "m.py", "old_text": "b = 2", "new_text": "x"}))
        assert "occurs 2 times" in many
        assert target.read_text() == "a = 1\nb = 2\nb = 2\n"
        done = ok(
            tools.call("edit_file", {"path": "m.py", "old_text": "a = 1\n", "new_text": "a = 9\n"})
        )
        assert done == "Edited m.py: replaced 1 occurrence (now lines 1-2)."
        assert target.read_text() == "a = 9\nb = 2\nb = 2\n"

    def test_edit_refuses_binary_missing_and_empty_old_text(
        self, tools: ToolRegistry, root: Path
    ) -> None:
        (root / "b.bin").write_bytes(b"\x00\x01")
        assert "binary" in err(
            tools.call("edit_file", {"path": "b.bin", "old_text": "a", "new_text": "b"})
        )
        assert "FileNotFoundError" in err(
            tools.call("edit_file", {"path": "x.py", "old_text": "a", "new_text": "b"})
        )
        assert "old_text is empty" in err(
            tools.call("edit_file", {"path": "b.bin", "old_text": "", "new_text": "b"})
        )

    def test_edit_keeps_crlf_line_endings(self, tools: ToolRegistry, root: Path) -> None:
        (root / "w.txt").write_bytes(b"one\r\ntwo\r\n")
        ok(tools.call("edit_file", {"path": "w.txt", "old_text": "two", "new_text": "2"}))
        assert (root / "w.txt").read_bytes() == b"one\r\n2\r\n"


class TestRunShell:
    def test_merged_output_and_exit_code_line(self, tools: ToolRegistry, root: Path) -> None:
        (root / "f.txt").write_text("hi\n")
        text = ok(tools.call("run_shell", {"command": "cat f.txt; echo oops >&2; exit 3"}))
        assert text == "hi\noops\nexit code: 3"
        assert ok(tools.call("run_shell", {"command": "pwd"})) == f"{root.resolve()}\nexit code: 0"
        assert ok(tools.call("run_shell", {"command": "true"})) == "(no output)\nexit code: 0"

    def test_large_output_keeps_head_and_tail(self, tools: ToolRegistry) -> None:
        outcome = tools.call("run_shell", {"command": "echo START; seq 1 2000; echo END"})
        text = ok(outcome)
        assert text.startswith("START\n")
        assert text.endswith("END\nexit code: 0")
        assert "bytes omitted ...]" in text
        assert len(text) < 500
        # the whole output travels on in a file, for the output guard to save
        assert outcome.body is not None and outcome.body.path is not None
        whole = outcome.body.path.read_text()
        assert whole.splitlines()[1:2001] == [str(n) for n in range(1, 2001)]
        assert whole.endswith("END\nexit code: 0\n")
        outcome.body.discard()
        assert not outcome.body.path.exists()

    def test_secrets_in_output_are_redacted(self, tools: ToolRegistry) -> None:
        text = ok(
            tools.call(
                "run_shell", {"command": "echo OPENAI_API_KEY=sk-proj-abc123def456ghi789jkl0"}
            )
        )
        assert "abc123def456" not in text and "[REDACTED]" in text

    def test_timeout_kills_the_process_group(self, tools: ToolRegistry, root: Path) -> None:
        started = time.perf_counter()
        text = ok(
            tools.call(
                "run_shell",
                {"command": "(sleep 30; touch late.txt) & echo started; sleep 30", "timeout": 2},
            )
        )
        assert time.perf_counter() - started < 8
        assert text.startswith("started\n")
        assert "timed out after 2 s" in text
        assert text.endswith("exit code: -9")
        time.sleep(0.1)
        assert not (root / "late.txt").exists()

    def test_bad_arguments(self, tools: ToolRegistry) -> None:
        assert "command is empty" in err(tools.call("run_shell", {"command": "  "}))
        assert "timeout must be between" in err(
            tools.call("run_shell", {"command": "true", "timeout": -1})
        )

    def test_the_shell_inherits_the_environment(
        self, tools: ToolRegistry, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("PALIMPSEST_TEST_MARK", "marked")
        assert ok(tools.call("run_shell", {"command": "echo $PALIMPSEST_TEST_MARK"})).startswith(
            "marked"
        )
        assert os.environ["PALIMPSEST_TEST_MARK"] == "marked"


def test_schemas_have_the_documented_parameters(tools: ToolRegistry) -> None:
    params = {s["function"]["name"]: s["function"]["parameters"] for s in tools.schemas()}
    assert list(params) == ["read_file", "write_file", "edit_file", "run_shell"]
    assert params["read_file"]["required"] == ["path"]
    assert params["read_file"]["properties"]["offset"]["default"] == 1
    assert params["read_file"]["properties"]["limit"]["default"] == 2000
    assert params["edit_file"]["required"] == ["path", "old_text", "new_text"]
    assert params["run_shell"]["required"] == ["command"]
