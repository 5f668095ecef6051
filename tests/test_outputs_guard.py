"""OutputGuard on a real store: saved, pointed at, deduplicated, streamed, binary, lost."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from palimpsest.outputs.body import LargeOutput
from palimpsest.outputs.budget import BudgetConfig
from palimpsest.outputs.guard import POINTER_OPEN, OutputGuard
from palimpsest.outputs.preview import PERSISTED_OPEN, extract_persisted_path
from palimpsest.outputs.rerun import Rerun, classify_command
from palimpsest.outputs.sandbox import LocalSandbox
from palimpsest.outputs.store import OutputStore
from readonly import read_only, read_only_disk

SMALL = BudgetConfig(
    default_result_size=1_000, turn_budget=3_000, preview_size=200, preview_mode="head_tail"
)


def lines(count: int, tag: str = "row") -> str:
    return "\n".join(f"{tag} {n} of the output" for n in range(count))


@pytest.fixture
def store(tmp_path: Path) -> OutputStore:
    return OutputStore(tmp_path / "outputs")


@pytest.fixture
def guard(store: OutputStore) -> OutputGuard:
    return OutputGuard(store, SMALL, session_id="s1")


def test_a_result_under_the_threshold_enters_unchanged(guard: OutputGuard) -> None:
    text = lines(10)
    assert guard.admit(text, tool_name="run_shell", call_id="c1") == text
    assert guard.stats.results == 1 and guard.stats.spilled == 0
    assert guard.stats.chars_kept_out_of_context == 0


def test_a_large_result_is_saved_and_reads_back(guard: OutputGuard, store: OutputStore) -> None:
    text = lines(400)
    block = guard.admit(text, tool_name="run_tests", call_id="c1")
    assert block.startswith(PERSISTED_OPEN) and len(block) < 1_000
    path = extract_persisted_path(block)
    assert path is not None
    saved = store.resolve(path)
    assert saved is not None and saved.path.read_text() == text
    assert [ref.session_id for ref in store.refs(saved.digest)] == ["s1"]
    assert "row 0 of the output" in block and "row 399 of the output" in block  # head and tail
    assert guard.stats.saved == 1 and guard.stats.bytes_written == len(text)
    assert guard.stats.chars_kept_out_of_context == len(text) - len(block)


def test_identical_outputs_are_stored_once(guard: OutputGuard, store: OutputStore) -> None:
    text = lines(400)
    first = guard.admit(text, tool_name="run_tests", call_id="c1")
    second = guard.admit(text, tool_name="run_tests", call_id="c2")
    assert extract_persisted_path(first) == extract_persisted_path(second)
    assert len(store.list()) == 1
    assert guard.stats.saved == 1 and guard.stats.deduplicated == 1
    assert guard.stats.bytes_not_written == len(text)


def test_a_repeatable_result_becomes_a_pointer_and_is_not_stored(
    guard: OutputGuard, store: OutputStore
) -> None:
    text = lines(400)
    pointer = guard.admit(
        text, tool_name="run_shell", call_id="c1", rerun=classify_command("grep -rn row logs/")
    )
    assert pointer.startswith(POINTER_OPEN) and PERSISTED_OPEN not in pointer
    assert 'run_shell(command="grep -rn row logs/")' in pointer
    assert "read-only command (grep)" in pointer
    assert extract_persisted_path(pointer) is None
    assert store.list() == []
    assert guard.stats.pointers == 1 and guard.stats.bytes_not_written == len(text)


def test_the_repeatability_check_runs_only_when_spilling(guard: OutputGuard) -> None:
    asked: list[int] = []

    def check() -> Rerun:
        asked.append(1)
        return Rerun(True, "cheap", "tool()")

    guard.admit("short", tool_name="t", call_id="c1", rerun=check)
    assert asked == []
    guard.admit(lines(400), tool_name="t", call_id="c2", rerun=check)
    assert asked == [1]


def test_a_failing_repeatability_check_keeps_the_output(guard: OutputGuard) -> None:
    def broken() -> Rerun:
        raise RuntimeError("boom")

    block = guard.admit(lines(400), tool_name="t", call_id="c1", rerun=broken)
    assert block.startswith(PERSISTED_OPEN)


def test_a_file_output_is_streamed_into_the_store(
    guard: OutputGuard, store: OutputStore, tmp_path: Path
) -> None:
    spool = tmp_path / "spool.out"
    spool.write_text(lines(5_000) + "\nexit code: 1\n")
    result = LargeOutput(shown="(cut)", path=spool)
    block = guard.admit(result, tool_name="run_shell", call_id="c1")
    assert not spool.exists()  # moved into the store
    saved = store.resolve(extract_persisted_path(block) or "")
    assert saved is not None and saved.size_bytes == len(lines(5_000)) + len("\nexit code: 1\n")
    assert "exit code: 1" in block  # the tail of the preview


def test_a_small_file_output_enters_whole(guard: OutputGuard, tmp_path: Path) -> None:
    spool = tmp_path / "spool.out"
    spool.write_text("api_key=sk-abcdefghijklmnopqrstuvwxyz123456\nok\nexit code: 0\n")
    text = guard.admit(LargeOutput(shown="cut", path=spool), tool_name="run_shell", call_id="c1")
    assert text.endswith("ok\nexit code: 0") and "sk-abcdefghijklmnop" not in text
    assert not spool.exists()


def test_binary_output_is_stored_as_bytes_with_its_kind(
    guard: OutputGuard, store: OutputStore
) -> None:
    data = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8
    block = guard.admit(
        LargeOutput(shown="<binary output>", data=data), tool_name="screenshot", call_id="c1"
    )
    saved = store.resolve(extract_persisted_path(block) or "")
    assert saved is not None and saved.path.read_bytes() == data
    assert "PNG image" in block and "stored as bytes" in block


def test_undecodable_text_is_kept_byte_for_byte(
    guard: OutputGuard, store: OutputStore, tmp_path: Path
) -> None:
    raw = ("latin-1 caf\xe9 line\n" * 200).encode("latin-1")
    spool = tmp_path / "spool.out"
    spool.write_bytes(raw)
    block = guard.admit(LargeOutput(shown="cut", path=spool), tool_name="run_shell", call_id="c1")
    saved = store.resolve(extract_persisted_path(block) or "")
    assert saved is not None and saved.path.read_bytes() == raw
    assert saved.kind == "text (not valid UTF-8)" and "not valid UTF-8" in block


def test_secrets_never_reach_the_preview(guard: OutputGuard, store: OutputStore) -> None:
    text = "export OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123\n" + lines(400)
    block = guard.admit(text, tool_name="env_dump", call_id="c1")
    assert "sk-proj-abcdefghij" not in block
    saved = store.resolve(extract_persisted_path(block) or "")
    assert saved is not None and "sk-proj-abcdefghij" not in saved.path.read_text()


def test_a_store_that_cannot_write_falls_back_with_a_note(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the store wants a directory")
    guard = OutputGuard(OutputStore(blocker / "outputs"), SMALL)
    text = lines(400)
    out = guard.admit(text, tool_name="run_tests", call_id="c1")
    assert PERSISTED_OPEN not in out
    assert f"[Truncated: tool response was {len(text):,} chars." in out
    assert out.startswith("row 0 of the output") and "[Why: " in out
    assert guard.stats.fallbacks == 1


def test_without_store_or_sandbox_the_loss_is_stated() -> None:
    out = OutputGuard(None, SMALL).admit(lines(400), tool_name="t", call_id="c1")
    assert "Full output could not be saved to sandbox." in out
    assert "no output store is configured" in out


def test_a_sandbox_alone_gets_the_spec_file(tmp_path: Path) -> None:
    guard = OutputGuard(None, SMALL, env=LocalSandbox(tmp_path))
    out = guard.admit(lines(400), tool_name="terminal", call_id="tc_1")
    assert extract_persisted_path(out) == f"{tmp_path}/tool-results/tc_1.txt"
    assert (tmp_path / "tool-results" / "tc_1.txt").read_text() == lines(400)


def test_pinned_tools_keep_their_own_cut(guard: OutputGuard, tmp_path: Path) -> None:
    text = lines(400)
    assert guard.admit(text, tool_name="read_file", call_id="c1") == text
    spool = tmp_path / "s.out"
    spool.write_text(text)
    assert (
        guard.admit(LargeOutput(shown="cut", path=spool), tool_name="read_output", call_id="c2")
        == "cut"
    )
    assert not spool.exists()


def test_the_turn_budget_spills_the_largest_first(guard: OutputGuard, store: OutputStore) -> None:
    messages: list[dict[str, Any]] = [
        {"role": "tool", "tool_call_id": "a", "name": "t", "content": "a" * 900},
        {"role": "tool", "tool_call_id": "b", "name": "t", "content": "b" * 950},
        {"role": "tool", "tool_call_id": "c", "name": "read_file", "content": "c" * 1_900},
    ]
    reruns = {"c": Rerun(True, "file unchanged", 'read_file(path="c.txt")')}
    same = guard.enforce_turn(messages, reruns)
    assert same is messages
    assert messages[2]["content"].startswith(POINTER_OPEN)  # the largest, re-runnable
    assert messages[0]["content"] == "a" * 900 and messages[1]["content"] == "b" * 950
    assert sum(len(m["content"]) for m in messages) <= SMALL.turn_budget
    assert store.list() == []


def test_stats_as_dict_reports_what_was_kept_out() -> None:
    guard = OutputGuard(None, SMALL)
    guard.admit(lines(400), tool_name="t", call_id="c1")
    data = guard.stats.as_dict()
    assert data["chars_kept_out_of_context"] == data["chars_produced"] - data["chars_to_context"]
    assert data["fallbacks"] == 1


def test_a_read_only_disk_keeps_the_preview_and_says_why(tmp_path: Path) -> None:
    with read_only_disk(tmp_path / "ro") as mount:
        guard = OutputGuard(OutputStore(mount / "outputs"), SMALL)
        text = lines(400)
        out = guard.admit(text, tool_name="run_tests", call_id="c1")
    assert out.startswith("row 0 of the output") and PERSISTED_OPEN not in out
    assert f"[Truncated: tool response was {len(text):,} chars." in out
    assert "Read-only file system" in out
    assert guard.stats.fallbacks == 1


def test_a_read_only_store_directory_keeps_the_preview(tmp_path: Path) -> None:
    store = OutputStore(tmp_path / "outputs")
    store.put_text("make the directories exist\n")
    guard = OutputGuard(store, SMALL)
    with read_only(store.root / "tmp", store.root / "objects"):
        out = guard.admit(lines(400), tool_name="run_tests", call_id="c1")
    assert "Full output could not be saved to sandbox." in out and "[Why: " in out


def test_the_turn_budget_leaves_pointers_alone(store: OutputStore) -> None:
    tight = BudgetConfig(
        default_result_size=1_000, turn_budget=700, preview_size=200, preview_mode="head_tail"
    )
    guard = OutputGuard(store, tight)
    verdict = classify_command("cat big.log")
    pointer = guard.admit(lines(400), tool_name="run_shell", call_id="p", rerun=verdict)
    messages: list[dict[str, Any]] = [
        {"role": "tool", "tool_call_id": "p", "name": "run_shell", "content": pointer},
        {"role": "tool", "tool_call_id": "b", "name": "t", "content": "b" * 900},
    ]
    guard.enforce_turn(messages, {"p": verdict})
    assert messages[0]["content"] == pointer  # a pointer is never spilled again
    assert extract_persisted_path(messages[1]["content"]) is not None
