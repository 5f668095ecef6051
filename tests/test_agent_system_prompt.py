"""The L0 system prompt: order, frozen snapshot, persona, project context, compaction note."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from agent_helpers import memory_manager
from palimpsest.agent.system_prompt import (
    DEFAULT_IDENTITY,
    PLATFORM_HINTS,
    SystemPromptBuilder,
    assemble_system_prompt,
)
from palimpsest.compaction.markers import COMPACTION_NOTE

NOW = datetime(2026, 11, 24, 9, 30)


def test_parts_in_mem01_order_blank_ones_skipped():
    prompt = assemble_system_prompt(
        identity="ID",
        system_message="HOST",
        memory_block="MEM",
        project_context="",
        date_line="DATE",
        platform_hint="HINT",
    )
    assert prompt == "ID\n\nHOST\n\nMEM\n\nDATE\n\nHINT"


def test_compaction_note_is_added_once():
    once = assemble_system_prompt(identity="ID", compaction_note=True)
    assert once.endswith(COMPACTION_NOTE) and once.count(COMPACTION_NOTE) == 1
    again = assemble_system_prompt(identity=once, compaction_note=True)
    assert again.count(COMPACTION_NOTE) == 1


def test_builder_with_memory_persona_and_project_context(tmp_path: Path):
    home = tmp_path / "home"
    memory = memory_manager(home)
    memory.store.load_from_disk()
    memory.store.add("memory", "the repo uses uv")
    memory.store.load_from_disk()
    workdir = tmp_path / "work"
    workdir.mkdir()
    (workdir / "AGENTS.md").write_text("Run the tests with pytest -q.")
    builder = SystemPromptBuilder(
        system_message="Be brief.", memory=memory, workdir=workdir, home=home, now=lambda: NOW
    )
    prompt = builder.build()
    assert prompt.startswith(DEFAULT_IDENTITY)
    order = [
        prompt.index("Be brief."),
        prompt.index("the repo uses uv"),
        prompt.index("Run the tests with pytest -q."),
        prompt.index("2026-11-24"),
        prompt.index(PLATFORM_HINTS["cli"]),
    ]
    assert order == sorted(order)
    (home / "PERSONA.md").write_text("You are Pal.")
    assert builder.build().startswith("You are Pal.")


def test_snapshot_is_frozen_until_a_reload(tmp_path: Path):
    home = tmp_path / "home"
    memory = memory_manager(home)
    memory.store.load_from_disk()
    builder = SystemPromptBuilder(memory=memory, home=home, now=lambda: NOW)
    first = builder.build()
    memory.store.add("user", "prefers tabs")
    assert builder.build() == first  # same bytes: the prefix cache holds
    rebuilt = builder.build(compression_count=1, reload_memory=True)
    assert "prefers tabs" in rebuilt and COMPACTION_NOTE in rebuilt


def test_no_memory_no_block_and_unknown_source_no_hint(tmp_path: Path):
    builder = SystemPromptBuilder(source="gateway", home=tmp_path, now=lambda: NOW)
    assert builder.build() == f"{DEFAULT_IDENTITY}\n\nToday's date is Tuesday, 2026-11-24."
