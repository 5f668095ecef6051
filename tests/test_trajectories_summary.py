"""Summarizers: the extractive one on real trajectories, the prompt, temperature rules."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from palimpsest.errors import ConfigError
from palimpsest.trajectories import (
    CompressionConfig,
    ExtractiveTrajectorySummarizer,
    ModelSummarizer,
    compress_entry,
    summarizer_from_config,
)
from palimpsest.trajectories.summary import build_prompt, model_fixes_temperature

REAL = Path(__file__).parent / "data" / "trajectories" / "real_sharegpt.jsonl"


def real_entries() -> list[dict[str, Any]]:
    return [json.loads(line) for line in REAL.read_text(encoding="utf-8").splitlines()]


def summary_turn(entry: dict[str, Any]) -> str:
    values = [t["value"] for t in entry["conversations"] if t["from"] == "human"]
    found = [v for v in values if v.startswith("[CONTEXT SUMMARY]:")]
    assert len(found) == 1
    return found[0]


@pytest.mark.parametrize("index", [0, 1, 2])
def test_extractive_summary_of_real_turns_names_real_actions(index: int) -> None:
    entry = real_entries()[index]
    config = CompressionConfig(target_max_tokens=5_000)
    result = compress_entry(entry, config)
    assert result.metrics is not None and result.metrics.was_compressed
    assert result.metrics.summarization_api_calls == 0
    summary = summary_turn(result.entry)
    numbered = re.findall(r"^\d+\. (\w+) (\S+)", summary, flags=re.MULTILINE)
    assert numbered, summary
    verbs = {verb for verb, _ in numbered}
    assert verbs & {"READ", "RUN", "EDIT", "WRITE", "SEARCH"}, summary
    # The targets are files and commands from the compressed turns, not placeholders.
    start = result.metrics.turns_compressed_start_idx
    end = result.metrics.turns_compressed_end_idx
    region = "\n".join(t["value"] for t in entry["conversations"][start:end])
    assert any(target.strip("`") in region for _, target in numbered), summary
    completed = summary.split("## Completed Actions\n", 1)[1].split("\n## ", 1)[0]
    assert completed.strip() != "None."


def test_extractive_summary_is_deterministic() -> None:
    entry = real_entries()[1]
    config = CompressionConfig(target_max_tokens=5_000)
    assert compress_entry(entry, config) == compress_entry(entry, config)


def test_extractive_is_not_a_model() -> None:
    assert ExtractiveTrajectorySummarizer.is_model is False
    assert ModelSummarizer.is_model is True
    assert isinstance(summarizer_from_config(CompressionConfig()), ExtractiveTrajectorySummarizer)


def test_model_spec_is_checked() -> None:
    with pytest.raises(ConfigError, match="<provider>:<model>"):
        summarizer_from_config(CompressionConfig(summarization_model="gemini-flash"))


def test_prompt_wording() -> None:
    prompt = build_prompt("[Turn 4 - GPT]:\nhello", 321)
    assert "Target approximately 321 tokens" in prompt
    assert "TURNS TO SUMMARIZE:\n---\n[Turn 4 - GPT]:\nhello\n---" in prompt
    assert "CRITICAL" in prompt and "same language" in prompt
    assert "neutral, factual" in prompt
    assert "[CONTEXT SUMMARY]:" in prompt


@pytest.mark.parametrize(
    ("model", "fixed"),
    [
        ("o3-mini", True),
        ("openai:o1", True),
        ("gpt-5", True),
        ("gpt-5-mini", True),
        ("kimi-for-coding", True),
        ("moonshotai/kimi-k2-thinking", True),
        ("gpt-4o-mini", False),
        ("google/gemini-2.5-flash", False),
        ("claude-3-5-haiku", False),
        ("kimi-k2-instruct", False),
    ],
)
def test_fixed_temperature_models(model: str, fixed: bool) -> None:
    assert model_fixes_temperature(model) is fixed
