"""sandbox.py: the local environment, writes through stdin and per-result persistence."""

from __future__ import annotations

import io
import json
import math
import os
import tempfile
import time
from pathlib import Path
from typing import BinaryIO

import pytest

from palimpsest.outputs.budget import BudgetConfig
from palimpsest.outputs.preview import (
    PERSISTED_OPEN,
    RECOVERY_LINE,
    extract_persisted_path,
    generate_preview,
    head_tail_preview,
)
from palimpsest.outputs.sandbox import (
    TIMEOUT_EXIT_CODE,
    LocalSandbox,
    SandboxEnvironment,
    maybe_persist_tool_result,
    results_dir,
    write_through_stdin,
)
from readonly import read_only


class TempDirOnly:
    """An environment object that names its temp dir but has no runner (for results_dir)."""

    def __init__(self, temp_dir: str) -> None:
        self.temp_dir = temp_dir

    def get_temp_dir(self) -> str:
        return self.temp_dir


class NoTempDir:
    """An environment without ``get_temp_dir``: TR-12 falls back to /tmp."""

    def execute(
        self, command: str, *, stdin: bytes | BinaryIO | None = None, timeout: float = 30.0
    ) -> int:
        return 0


class TestLocalSandbox:
    def test_is_an_environment(self, tmp_path: Path) -> None:
        assert isinstance(LocalSandbox(tmp_path), SandboxEnvironment)
        assert LocalSandbox(tmp_path).get_temp_dir() == str(tmp_path)
        assert LocalSandbox().get_temp_dir() == tempfile.gettempdir()

    def test_exit_codes(self, tmp_path: Path) -> None:
        env = LocalSandbox(tmp_path)
        assert env.execute("true") == 0
        assert env.execute("exit 7") == 7

    def test_stdin_bytes(self, tmp_path: Path) -> None:
        out = tmp_path / "out"
        data = os.urandom(300_000)  # larger than a pipe buffer
        assert LocalSandbox().execute(f"cat > '{out}'", stdin=data) == 0
        assert out.read_bytes() == data

    def test_stdin_stream_without_descriptor(self, tmp_path: Path) -> None:
        out = tmp_path / "out"
        data = os.urandom(200_000)
        stream = io.BytesIO(data)
        assert LocalSandbox().execute(f"cat > '{out}'", stdin=stream) == 0
        assert out.read_bytes() == data

    def test_stdin_real_file_from_its_current_position(self, tmp_path: Path) -> None:
        source, out = tmp_path / "source", tmp_path / "out"
        source.write_bytes(b"skip:" + b"payload" * 50_000)
        with open(source, "rb") as handle:
            assert handle.read(5) == b"skip:"  # the buffered reader has read far ahead
            assert LocalSandbox().execute(f"cat > '{out}'", stdin=handle) == 0
        assert out.read_bytes() == b"payload" * 50_000

    def test_no_stdin_reads_nothing(self, tmp_path: Path) -> None:
        out = tmp_path / "out"
        assert LocalSandbox().execute(f"cat > '{out}'") == 0
        assert out.read_bytes() == b""

    def test_child_that_does_not_read_stdin(self) -> None:
        assert LocalSandbox().execute("exit 3", stdin=b"x" * 1_000_000) == 3

    def test_timeout_kills_the_command_and_its_children(self, tmp_path: Path) -> None:
        marker = tmp_path / "late"
        started = time.monotonic()
        # The subshell outlives a killed bash unless its whole process group is killed.
        command = f"(sleep 1; touch '{marker}') & wait"
        code = LocalSandbox().execute(command, timeout=0.3)
        assert code == TIMEOUT_EXIT_CODE
        assert time.monotonic() - started < 1
        time.sleep(1.5)
        assert not marker.exists()

    def test_missing_shell_raises(self) -> None:
        with pytest.raises(FileNotFoundError):
            LocalSandbox(shell="/nonexistent/bash").execute("true")


@pytest.mark.parametrize(
    ("temp_dir", "expected"),
    [
        ("/tmp", "/tmp/tool-results"),
        ("/tmp/", "/tmp/tool-results"),
        ("/var/sandbox//", "/var/sandbox/tool-results"),
        ("/", "/tool-results"),
        ("", "/tool-results"),
    ],
)
def test_results_dir(temp_dir: str, expected: str) -> None:
    assert results_dir(TempDirOnly(temp_dir)) == expected  # type: ignore[arg-type]


def test_results_dir_without_get_temp_dir() -> None:
    assert results_dir(NoTempDir()) == "/tmp/tool-results"  # type: ignore[arg-type]


class TestWriteThroughStdin:
    def test_writes_bytes_and_creates_directories(self, tmp_path: Path) -> None:
        path = tmp_path / "a" / "b" / "out.txt"
        data = "héllo\n".encode() * 40_000
        assert write_through_stdin(LocalSandbox(tmp_path), str(path), data)
        assert path.read_bytes() == data

    def test_streams_a_file_object(self, tmp_path: Path) -> None:
        source = tmp_path / "big"
        source.write_bytes(os.urandom(5_000_000))
        target = tmp_path / "copy" / "big"
        with open(source, "rb") as handle:
            assert write_through_stdin(LocalSandbox(), str(target), handle)
        assert target.read_bytes() == source.read_bytes()

    def test_false_when_the_directory_cannot_be_made(self, tmp_path: Path) -> None:
        blocker = tmp_path / "file"
        blocker.write_text("not a directory")
        assert not write_through_stdin(LocalSandbox(), str(blocker / "sub" / "x.txt"), b"data")

    def test_false_when_the_environment_raises(self, tmp_path: Path) -> None:
        env = LocalSandbox(tmp_path, shell="/nonexistent/bash")
        assert not write_through_stdin(env, str(tmp_path / "x.txt"), b"data")
        assert not (tmp_path / "x.txt").exists()


def text_of(path: str | None) -> str:
    assert path is not None
    return Path(path).read_bytes().decode("utf-8")


class TestMaybePersist:
    def test_within_threshold_is_unchanged(self, tmp_path: Path) -> None:
        env = LocalSandbox(tmp_path)
        content = "x" * 100_000
        assert maybe_persist_tool_result(content, "terminal", "t1", env) == content
        assert not (tmp_path / "tool-results").exists()

    def test_pinned_tool_is_never_persisted(self, tmp_path: Path) -> None:
        content = "y" * 1_000_000
        env = LocalSandbox(tmp_path)
        assert maybe_persist_tool_result(content, "read_output", "t1", env) == content

    def test_registry_limit_applies(self, tmp_path: Path) -> None:
        env = LocalSandbox(tmp_path)
        content = "z" * 20_001
        result = maybe_persist_tool_result(content, "grep", "t1", env, registry_max=20_000)
        assert text_of(extract_persisted_path(result)) == content
        infinite = maybe_persist_tool_result(content, "grep", "t2", env, registry_max=math.inf)
        assert infinite == content

    def test_explicit_threshold_wins(self, tmp_path: Path) -> None:
        env = LocalSandbox(tmp_path)
        result = maybe_persist_tool_result("abc", "read_file", "t1", env, threshold=2)
        assert result.startswith(PERSISTED_OPEN)

    @pytest.mark.parametrize("bad", [-1.0, math.nan])
    def test_bad_threshold(self, bad: float) -> None:
        with pytest.raises(ValueError, match="threshold"):
            maybe_persist_tool_result("abc", "terminal", "t", None, threshold=bad)

    def test_json_is_saved_verbatim(self, tmp_path: Path) -> None:
        payload = json.dumps({"rows": [{"id": i, "name": f"n\u00e9{i}"} for i in range(9000)]})
        result = maybe_persist_tool_result(payload, "api", "call-1", LocalSandbox(tmp_path))
        saved = text_of(extract_persisted_path(result))
        assert saved == payload and json.loads(saved)["rows"][5]["id"] == 5

    def test_head_tail_and_recovery_from_config(self, tmp_path: Path) -> None:
        config = BudgetConfig(preview_mode="head_tail", recovery_line=True, preview_size=500)
        content = "".join(f"line {i}\n" for i in range(30_000)) + "ERROR at the end\n"
        result = maybe_persist_tool_result(content, "terminal", "t", LocalSandbox(tmp_path), config)
        preview, _ = head_tail_preview(content, 500)
        assert preview in result and "ERROR at the end" in result
        assert RECOVERY_LINE in result

    def test_undecodable_output_keeps_its_bytes(self, tmp_path: Path) -> None:
        raw = b"ok \xff\xfe bytes\n" * 20_000
        content = raw.decode("utf-8", "surrogateescape")
        result = maybe_persist_tool_result(content, "terminal", "t", LocalSandbox(tmp_path))
        path = extract_persisted_path(result)
        assert path is not None and Path(path).read_bytes() == raw

    def test_lone_surrogates_do_not_fail_the_call(self, tmp_path: Path) -> None:
        content = "\ud800 odd\n" * 30_000
        result = maybe_persist_tool_result(content, "terminal", "t", LocalSandbox(tmp_path))
        assert Path(str(extract_persisted_path(result))).read_text() == "? odd\n" * 30_000

    def test_no_environment_falls_back(self) -> None:
        content = "q" * 150_000
        result = maybe_persist_tool_result(content, "terminal", "t")
        assert result.startswith(generate_preview(content)[0])
        assert result.endswith(
            "[Truncated: tool response was 150,000 chars. "
            "Full output could not be saved to sandbox.]"
        )

    def test_read_only_temp_dir_falls_back(self, tmp_path: Path) -> None:
        locked = tmp_path / "locked"
        locked.mkdir()
        with read_only(locked):
            result = maybe_persist_tool_result("w" * 150_000, "terminal", "t", LocalSandbox(locked))
        assert "[Truncated: tool response was 150,000 chars." in result
        assert PERSISTED_OPEN not in result
        assert not (locked / "tool-results").exists()

    def test_temp_dir_under_a_file_falls_back(self, tmp_path: Path) -> None:
        # Fails for every user, root included: mkdir -p cannot pass through a regular file.
        blocker = tmp_path / "file"
        blocker.write_text("")
        result = maybe_persist_tool_result("w" * 150_000, "terminal", "t", LocalSandbox(blocker))
        assert result.endswith("Full output could not be saved to sandbox.]")
        assert PERSISTED_OPEN not in result

    def test_temp_dir_with_a_newline_is_not_used(self, tmp_path: Path) -> None:
        odd = tmp_path / "two\nlines"
        result = maybe_persist_tool_result("w" * 150_000, "terminal", "t", LocalSandbox(odd))
        assert PERSISTED_OPEN not in result and not odd.exists()
