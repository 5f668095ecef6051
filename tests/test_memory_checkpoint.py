"""The memory checkpoint contract: versions declared, failures collected, refusals read."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agent_helpers import RecordingProvider
from palimpsest.memory.checkpoint import (
    CHECKPOINT_API_VERSION,
    checkpoint_version,
    refused_write,
    take_checkpoint,
)
from palimpsest.memory.facts import FactStoreProvider
from palimpsest.memory.manager import MemoryManager
from palimpsest.memory.providers import BuiltinMemoryProvider
from palimpsest.memory.store import MemoryStore


class Versioned(RecordingProvider):
    name = "versioned"
    checkpoint_api_version = CHECKPOINT_API_VERSION

    def __init__(self, text: str = "", error: Exception | None = None) -> None:
        super().__init__()
        self.text = text
        self.error = error

    def on_pre_compress(self, messages: Sequence[Mapping[str, Any]]) -> str:
        if self.error is not None:
            raise self.error
        return self.text


def manager(tmp_path: Path) -> MemoryManager:
    return MemoryManager(MemoryStore(tmp_path / "memories"), home=tmp_path)


def test_the_shipped_providers_declare_version_one_and_others_zero():
    assert checkpoint_version(BuiltinMemoryProvider) == CHECKPOINT_API_VERSION == 1
    assert checkpoint_version(FactStoreProvider) == 1
    assert checkpoint_version(RecordingProvider()) == 0
    assert checkpoint_version(object()) == 0


def test_the_manager_reports_the_lowest_version_of_its_providers(tmp_path: Path):
    memory = manager(tmp_path)
    assert memory.checkpoint_api_version == 1
    assert memory.checkpoint([]).ok
    memory.add_provider(RecordingProvider())
    assert memory.checkpoint_api_version == 0
    checkpoint = memory.checkpoint([])
    assert not checkpoint.ok and checkpoint.unversioned == ("recording",)
    assert "declares no checkpoint API version" in checkpoint.failures[0]


def test_a_raising_provider_is_a_failure_and_the_others_still_run(tmp_path: Path):
    token = "sk-" + "a1B2" * 10
    failing = Versioned(error=RuntimeError(f"disk full, key {token}"))
    good = Versioned(text="remember the parser")
    checkpoint = take_checkpoint([failing, good], [{"role": "user", "content": "x"}])
    assert checkpoint.text == "remember the parser"
    assert len(checkpoint.failures) == 1
    assert "'versioned' failed its checkpoint: RuntimeError: disk full" in checkpoint.failures[0]
    assert token not in checkpoint.failures[0]  # redacted


def test_the_manager_text_matches_on_pre_compress(tmp_path: Path):
    memory = manager(tmp_path)
    memory.add_provider(Versioned(text="facts to keep"))
    assert memory.checkpoint([]).text == memory.on_pre_compress([]) == "facts to keep"


def test_a_refused_write_is_read_from_the_tool_answer(tmp_path: Path):
    memory = manager(tmp_path)
    done = memory.handle_tool_call("memory", {"action": "add", "target": "memory", "content": "ok"})
    assert refused_write(done) is None
    refused = memory.handle_tool_call("memory", {"action": "explode", "target": "memory"})
    assert json.loads(refused)["success"] is False
    assert refused_write(refused)
    assert refused_write("plain text from some provider") is None
    assert refused_write(json.dumps({"success": False})) == "the write was refused"
