"""The ContextEngine contract and entry-point discovery (spec CE-01..CE-08)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from palimpsest.compaction.compressor import ContextCompressor
from palimpsest.compaction.engine import ContextEngine, available_engines, load_engine
from palimpsest.errors import PluginNotFoundError


class MinimalEngine(ContextEngine):
    @property
    def name(self) -> str:
        return "minimal"

    def update_from_response(self, usage: dict[str, Any]) -> None:
        self.last_prompt_tokens = usage.get("prompt_tokens", 0)

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        return False

    def compress(self, messages, current_tokens=None, focus_topic=None):  # type: ignore[no-untyped-def]
        return list(messages)


def test_subclass_missing_abstract_methods_cannot_be_instantiated() -> None:
    class Incomplete(ContextEngine):
        @property
        def name(self) -> str:
            return "x"

    with pytest.raises(TypeError):
        Incomplete()  # type: ignore[abstract]


def test_base_defaults() -> None:
    engine = MinimalEngine()
    assert engine.threshold_percent == 0.75
    assert (engine.protect_first_n, engine.protect_last_n) == (3, 6)
    assert engine.should_compress_preflight([]) is False
    assert engine.has_content_to_compress([]) is True
    assert engine.get_tool_schemas() == []
    assert json.loads(engine.handle_tool_call("grep", {})) == {
        "error": "Unknown context engine tool: grep"
    }
    assert engine.should_compress_info() == (False, None)
    assert engine.get_status() == {
        "last_prompt_tokens": 0,
        "threshold_tokens": 0,
        "context_length": 0,
        "usage_percent": 0,
        "compression_count": 0,
    }


def test_update_model_and_status() -> None:
    engine = MinimalEngine()
    engine.update_model("m", 100_000)
    assert engine.threshold_tokens == 75_000
    engine.last_prompt_tokens = 250_000
    assert engine.get_status()["usage_percent"] == 100
    engine.last_prompt_tokens = -1
    assert engine.get_status()["last_prompt_tokens"] == 0  # CE-08 clamps the sentinel


def test_session_reset_zeroes_counters() -> None:
    engine = MinimalEngine()
    engine.last_prompt_tokens = engine.compression_count = 5
    engine.on_session_reset()
    assert engine.last_prompt_tokens == 0 and engine.compression_count == 0


def test_builtin_compressor_is_registered_through_entry_points() -> None:
    assert "compressor" in available_engines()
    engine = load_engine("compressor", context_length=200_000)
    assert isinstance(engine, ContextCompressor)
    assert engine.name == "compressor"
    assert engine.threshold_tokens == 100_000


def test_unknown_engine_lists_what_exists() -> None:
    with pytest.raises(PluginNotFoundError) as info:
        load_engine("lcm")
    assert "compressor" in str(info.value)
    assert info.value.available == available_engines()


def test_third_party_engine_found_through_its_entry_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real distribution on sys.path registering into palimpsest.context_engines."""
    (tmp_path / "toy_engine.py").write_text(
        "from palimpsest.compaction.engine import ContextEngine\n"
        "class ToyEngine(ContextEngine):\n"
        "    name = 'toy'\n"
        "    def __init__(self, size=1):\n"
        "        self.size = size\n"
        "    def update_from_response(self, usage): pass\n"
        "    def should_compress(self, prompt_tokens=None): return False\n"
        "    def compress(self, messages, current_tokens=None, focus_topic=None):\n"
        "        return list(messages)[-self.size:]\n"
    )
    dist = tmp_path / "toy_engine-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-engine\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[palimpsest.context_engines]\ntoy = toy_engine:ToyEngine\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert "toy" in available_engines()
        engine = load_engine("toy", size=2)
        assert engine.compress([{"role": "user", "content": str(i)} for i in range(5)]) == [
            {"role": "user", "content": "3"},
            {"role": "user", "content": "4"},
        ]
    finally:
        sys.modules.pop("toy_engine", None)
