"""File rehydration (agent/rehydrate.py): which files come back after a compaction, and how."""

from __future__ import annotations

import hashlib
from pathlib import Path

from palimpsest.agent.ledger import StateLedger
from palimpsest.agent.rehydrate import (
    REHYDRATION_HEADER,
    REHYDRATION_MARKER,
    RehydrationBudget,
    choose_files,
    rehydration_message,
)
from palimpsest.agent.tools import ToolOutcome
from palimpsest.config import Settings

SECRET = "sk-" + "Zx9q" * 10


def wrote(ledger: StateLedger, root: Path, path: str, text: str, turn: int) -> None:
    """The agent writes ``path`` through the workspace tool, as the loop records it."""
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    ledger.record_call("write_file", {"path": path, "content": text}, ToolOutcome("ok"), turn)


def test_the_newest_written_files_come_back_current_and_redacted(tmp_path: Path):
    ledger = StateLedger(tmp_path)
    for i in range(7):
        wrote(ledger, tmp_path, f"src/m{i}.py", f"VALUE_{i} = {i}\n", turn=i)
    (tmp_path / "src" / "m6.py").write_text(f"API_KEY = '{SECRET}'\n")  # changed outside
    ledger.record_call("read_file", {"path": "README.md"}, ToolOutcome("# readme"), 8)
    (tmp_path / "README.md").write_text("# readme\n")
    chosen = choose_files(ledger, RehydrationBudget(files=5))
    assert [f.path for f in chosen] == [f"src/m{i}.py" for i in (6, 5, 4, 3, 2)]
    newest = chosen[0]
    assert newest.changed_outside and newest.content is not None
    assert SECRET not in newest.content and "API_KEY" in newest.content
    assert not chosen[1].changed_outside and chosen[1].content == "VALUE_5 = 5\n"
    message = rehydration_message(ledger, RehydrationBudget(files=5))
    assert message is not None and message[REHYDRATION_MARKER] is True
    text = message["content"]
    assert text.startswith(REHYDRATION_HEADER)
    assert "README.md" not in text  # read, never written
    assert "changed outside the agent since its last write" in text
    assert SECRET not in text


def test_deleted_and_outside_files_are_skipped_and_the_next_newest_taken(tmp_path: Path):
    root = tmp_path / "work"
    root.mkdir()
    ledger = StateLedger(root)
    wrote(ledger, root, "keep.txt", "kept\n", 1)
    wrote(ledger, root, "gone.txt", "gone\n", 2)
    (root / "gone.txt").unlink()
    outside = tmp_path / "outside.txt"
    outside.write_text("outside\n")
    (root / "link.txt").symlink_to(outside)
    ledger.record_call("write_file", {"path": "link.txt"}, ToolOutcome("ok"), 3)
    chosen = choose_files(ledger, RehydrationBudget(files=1))
    assert [(f.path, f.content) for f in chosen] == [("keep.txt", "kept\n")]


def test_a_large_file_is_named_by_path_only_and_the_total_is_kept(tmp_path: Path):
    ledger = StateLedger(tmp_path)
    wrote(ledger, tmp_path, "small_a.txt", "a" * 400, 1)  # ~100 tokens
    wrote(ledger, tmp_path, "small_b.txt", "b" * 400, 2)
    wrote(ledger, tmp_path, "big.txt", "word " * 2_000, 3)  # ~2,500 tokens
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01" * 10)
    ledger.record_call("write_file", {"path": "blob.bin"}, ToolOutcome("ok"), 4)
    chosen = choose_files(ledger, RehydrationBudget(files=5, file_tokens=1_000, total_tokens=150))
    by_path = {f.path: f for f in chosen}
    assert by_path["blob.bin"].content is None
    assert by_path["blob.bin"].why_path_only == "not a text file"
    assert by_path["big.txt"].content is None
    assert "over the 1,000-token limit per file" in str(by_path["big.txt"].why_path_only)
    assert by_path["small_b.txt"].content == "b" * 400  # newest first takes the budget
    assert by_path["small_a.txt"].content is None
    assert "total budget" in str(by_path["small_a.txt"].why_path_only)
    message = rehydration_message(ledger, RehydrationBudget(5, 1_000, 150))
    assert message is not None
    assert "- big.txt (1 edit, last turn 3): path only" in message["content"]


def test_nothing_to_attach_gives_no_message(tmp_path: Path):
    assert rehydration_message(StateLedger(None), RehydrationBudget()) is None
    ledger = StateLedger(tmp_path)
    wrote(ledger, tmp_path, "a.txt", "text\n", 1)
    assert rehydration_message(ledger, RehydrationBudget(files=0)) is None
    assert rehydration_message(ledger, RehydrationBudget(), room=0) is None


def test_the_budget_follows_the_config_and_the_window():
    settings = Settings.model_validate(
        {"compression": {"rehydrate_files": 3, "rehydrate_file_tokens": 800}}
    )
    budget = RehydrationBudget.from_settings(settings.compression, window=200_000)
    assert budget == RehydrationBudget(3, 800, 20_000)
    small = RehydrationBudget.from_settings(settings.compression, window=16_000)
    assert small.total_tokens == 1_600
    assert RehydrationBudget.from_settings(Settings().compression) == RehydrationBudget()


def test_a_fence_in_the_file_does_not_close_the_block(tmp_path: Path):
    ledger = StateLedger(tmp_path)
    wrote(ledger, tmp_path, "doc.md", "```python\nx = 1\n```\n", 1)
    message = rehydration_message(ledger, RehydrationBudget())
    assert message is not None and "````\n```python" in message["content"]


def test_the_hash_recorded_is_the_one_compared(tmp_path: Path):
    ledger = StateLedger(tmp_path)
    wrote(ledger, tmp_path, "a.txt", "one\n", 1)
    record = ledger.modified_records()[0]
    assert record.sha256 == hashlib.sha256(b"one\n").hexdigest()
    assert not choose_files(ledger, RehydrationBudget())[0].changed_outside
