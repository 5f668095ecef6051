"""File rehydration (agent/rehydrate.py): which files come back after a compaction, and how."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from agent_helpers import call, calls, compressor, history, make_agent, stored
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


# --- through the agent loop ---------------------------------------------------------


def rehydrated(messages: list[dict[str, Any]]) -> list[str]:
    return [
        str(m["content"]) for m in messages if str(m.get("content")).startswith(REHYDRATION_HEADER)
    ]


def test_after_a_compaction_the_agent_gets_its_recent_files_back(tmp_path: Path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.md").write_text("read only\n")
    big = "line of generated data\n" * 200  # ~1,150 tokens: over the per-file limit
    replies = [
        calls(call("write_file", {"path": "src/a.py", "content": "A = 1\n"}, "w1")),
        "wrote a",
        calls(call("read_file", {"path": "notes.md"}, "r1")),
        "read notes",
        calls(call("write_file", {"path": "data.txt", "content": big}, "w2")),
        "wrote data",
        calls(call("write_file", {"path": "src/gone.py", "content": "G = 1\n"}, "w3")),
        "wrote gone",
        calls(
            call("edit_file", {"path": "src/a.py", "old_text": "A = 1", "new_text": "A = 2"}, "e1")
        ),
        "edited a",
    ]
    config = Settings.model_validate(
        {"compression": {"rehydrate_files": 3, "rehydrate_file_tokens": 500}}
    )
    agent = make_agent(
        tmp_path,
        replies,
        messages=history(12, chars=900),
        compressor=compressor(),
        workdir=work,
        settings=config,
    )
    for ask in ("write a", "read notes", "write data", "write gone", "edit a"):
        agent.ask(ask)
    (work / "src" / "gone.py").unlink()  # deleted after the agent wrote it
    assert agent.compress().compacted
    found = rehydrated(agent.messages)
    assert len(found) == 1
    text = found[0]
    # newest first: a.py (edited last) with its current content, then data.txt by path only
    assert "### src/a.py (2 edits" in text and "A = 2\n" in text
    assert "- data.txt (1 edit, last turn" in text and "path only" in text
    assert big not in text
    assert "gone.py" not in text  # deleted: not attached
    assert "notes.md" not in text  # only read
    assert next(m for m in agent.messages if m.get(REHYDRATION_MARKER))
    # it sits beside the ledger, and the next compaction replaces it
    for m in history(6, chars=900, start=40):
        agent.append(m)
    assert agent.compress().compacted
    assert len(rehydrated(agent.messages)) == 1
    assert stored(agent) == agent.messages


def test_rehydration_can_be_turned_off(tmp_path: Path):
    work = tmp_path / "work"
    work.mkdir()
    write = calls(call("write_file", {"path": "a.py", "content": "A = 1\n"}, "w"))
    agent = make_agent(
        tmp_path,
        [write, "ok"],
        messages=history(12, chars=900),
        compressor=compressor(),
        workdir=work,
        settings=Settings.model_validate({"compression": {"rehydrate_files": 0}}),
    )
    agent.ask("write a.py")
    assert agent.compress().compacted
    assert rehydrated(agent.messages) == []
