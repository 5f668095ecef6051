"""The acceptance examples 1-12 of spec tool-results.md, one named test each, on a real sandbox."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any, BinaryIO

from palimpsest.outputs.budget import budget_for_context_window
from palimpsest.outputs.preview import (
    PERSISTED_CLOSE,
    PERSISTED_OPEN,
    extract_persisted_path,
    generate_preview,
    persisted_block,
    safe_result_filename,
)
from palimpsest.outputs.sandbox import LocalSandbox, maybe_persist_tool_result
from palimpsest.outputs.turn_budget import enforce_turn_budget, message_size

TERMINAL_REGISTRY_MAX = 100_000  # what the registry declares for terminal (TR-04)


class RecordingSandbox(LocalSandbox):
    """A real local sandbox that also keeps every command it ran and the stdin it got."""

    def __init__(self, temp_dir: Path) -> None:
        super().__init__(temp_dir)
        self.calls: list[tuple[str, bytes | None, float]] = []

    def execute(
        self, command: str, *, stdin: bytes | BinaryIO | None = None, timeout: float = 30.0
    ) -> int:
        data = stdin if isinstance(stdin, bytes) or stdin is None else stdin.read()
        self.calls.append((command, data, timeout))
        return super().execute(command, stdin=data, timeout=timeout)


class ExitOneSandbox(LocalSandbox):
    """A real sandbox whose write command exits with code 1."""

    def execute(
        self, command: str, *, stdin: bytes | BinaryIO | None = None, timeout: float = 30.0
    ) -> int:
        return super().execute("exit 1", stdin=stdin, timeout=timeout)


def tool(content: str, call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def test_example_01_terminal_result_persisted_with_one_stdin_write(tmp_path: Path) -> None:
    env = RecordingSandbox(tmp_path)
    small = "s" * 50_000
    assert maybe_persist_tool_result(small, "terminal", "tc_0", env, registry_max=100_000) == small
    assert env.calls == []

    content = "".join(f"{i:07d}\n" for i in range(18_750))  # 150,000 characters
    assert len(content) == 150_000
    result = maybe_persist_tool_result(
        content, "terminal", "tc_1", env, registry_max=TERMINAL_REGISTRY_MAX
    )
    assert result.startswith(PERSISTED_OPEN) and result.endswith(PERSISTED_CLOSE)
    assert f"Full output saved to: {tmp_path}/tool-results/tc_1.txt" in result
    assert "150,000 characters" in result and "146.5 KB" in result
    assert len(env.calls) == 1
    command, stdin, timeout = env.calls[0]
    assert stdin == content.encode() and content[:20] not in command and timeout == 30.0
    assert (tmp_path / "tool-results" / "tc_1.txt").read_text() == content


def test_example_02_read_file_is_unchanged_but_the_turn_budget_may_spill_it(
    tmp_path: Path,
) -> None:
    env = LocalSandbox(tmp_path)
    content = "r" * 500_000
    assert maybe_persist_tool_result(content, "read_file", "rf_1", env) == content

    messages = [{"role": "tool", "tool_call_id": "rf_1", "name": "read_file", "content": content}]
    enforce_turn_budget(messages, env)
    assert messages[0]["content"].startswith(PERSISTED_OPEN)
    assert (tmp_path / "tool-results" / "rf_1.txt").read_text() == content


def test_example_03_mcp_tools_use_the_mcp_threshold(tmp_path: Path) -> None:
    env = LocalSandbox(tmp_path)
    over = maybe_persist_tool_result("m" * 60_000, "mcp_github_search", "m1", env)
    assert over.startswith(PERSISTED_OPEN)
    under = "m" * 45_000
    assert maybe_persist_tool_result(under, "mcp_github_search", "m2", env) == under


def test_example_04_generate_preview() -> None:
    preview, more = generate_preview("a" * 1000 + "\n" + "b" * 1000, 1500)
    assert (len(preview), more) == (1001, True) and preview.endswith("a\n")
    assert generate_preview("c" * 1500, 1500) == ("c" * 1500, False)
    assert generate_preview("") == ("", False)


def test_example_05_safe_result_filename() -> None:
    assert re.fullmatch(
        r"outside_whoami_x_[0-9a-f]{12}\.txt", safe_result_filename("../outside/$(whoami);x")
    )
    assert safe_result_filename("") == "tool_result.txt"


def test_example_06_failed_write_returns_preview_and_truncation_note(tmp_path: Path) -> None:
    content = "e" * 150_000
    result = maybe_persist_tool_result(content, "terminal", "tc_6", ExitOneSandbox(tmp_path))
    assert result.startswith("e" * 1500 + "\n\n")
    assert result.endswith(
        "[Truncated: tool response was 150,000 chars. Full output could not be saved to sandbox.]"
    )
    assert PERSISTED_OPEN not in result


def test_example_07_threshold_zero(tmp_path: Path) -> None:
    env = LocalSandbox(tmp_path)
    result = maybe_persist_tool_result("x", "terminal", "t", env, threshold=0)
    assert result.startswith(PERSISTED_OPEN)
    assert (tmp_path / "tool-results" / "t.txt").read_text() == "x"
    assert maybe_persist_tool_result("", "terminal", "t", env, threshold=0) == ""


def test_example_08_turn_budget_spills_only_the_largest(tmp_path: Path) -> None:
    messages = [tool("a" * 80_000, "c80"), tool("b" * 130_000, "c130")]
    result = enforce_turn_budget(messages, LocalSandbox(tmp_path))
    assert result is messages
    assert messages[0]["content"] == "a" * 80_000
    assert messages[1]["content"].startswith(PERSISTED_OPEN)


def test_example_09_persisted_block_is_skipped(tmp_path: Path) -> None:
    block = persisted_block(
        path="/tmp/tool-results/old.txt", total_chars=300_000, preview="p" * 1500, has_more=True
    )
    messages = [tool(block, "old"), tool("n" * 190_000, "c190"), tool("t" * 30_000, "c30")]
    enforce_turn_budget(messages, LocalSandbox(tmp_path))
    assert messages[0]["content"] == block
    assert messages[1]["content"].startswith(PERSISTED_OPEN)
    assert messages[2]["content"] == "t" * 30_000
    assert sum(message_size(m) for m in messages) <= 200_000


def test_example_10_content_on_stdin_and_hostile_paths_quoted(tmp_path: Path) -> None:
    hostile = tmp_path / "my temp $(whoami) ; rm -rf /; end"
    env = RecordingSandbox(hostile)
    content = "k" * 200_000
    result = maybe_persist_tool_result(content, "terminal", "tc_10", env)
    command, stdin, _ = env.calls[0]
    assert len(command) < 1000 and stdin == content.encode()
    directory = f"{hostile}/tool-results"
    path = f"{directory}/tc_10.txt"
    assert command == f"mkdir -p '{directory}' && cat > '{path}'"
    assert shlex.split(command) == ["mkdir", "-p", directory, "&&", "cat", ">", path]
    assert re.sub(r"'[^']*'", "", command) == "mkdir -p  && cat > "  # the rest is quoted
    assert Path(path).read_bytes() == content.encode()
    assert (tmp_path / "my temp $(whoami) ; rm -rf ").is_dir()  # taken literally
    assert extract_persisted_path(result) == path


def test_example_11_extract_persisted_path(tmp_path: Path) -> None:
    result = maybe_persist_tool_result("v" * 150_000, "terminal", "tc_11", LocalSandbox(tmp_path))
    assert extract_persisted_path(result) == f"{tmp_path}/tool-results/tc_11.txt"
    assert extract_persisted_path("just some tool output") is None


def test_example_12_window_scaled_budgets() -> None:
    scaled = budget_for_context_window(65_536)
    assert (scaled.default_result_size, scaled.turn_budget) == (39_321, 78_643)
    unknown = budget_for_context_window(None)
    assert (unknown.default_result_size, unknown.turn_budget) == (100_000, 200_000)
