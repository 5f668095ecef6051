"""compress_entry: the per-entry contract batch runners rely on."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from palimpsest.trajectories import CompressionConfig, TrajectorySummaryRequest, check_entry
from palimpsest.trajectories.entry import METRICS_KEY, compress_entry, compress_entry_async


class Words:
    def count_text(self, text: str) -> int:
        return len(text.split())


class DidX:
    def summarize(self, request: TrajectorySummaryRequest) -> str:
        return "did X"


def turn(role: str, words: int) -> dict[str, Any]:
    return {"from": role, "value": " ".join(["w"] * words)}


def entry(**extra: Any) -> dict[str, Any]:
    sizes = [("system", 100), ("human", 100), ("gpt", 100), ("tool", 2000), ("gpt", 100),
             ("tool", 2000), ("gpt", 100), ("tool", 2000), ("gpt", 100), ("human", 100)]  # fmt: skip
    return {"id": 7, "conversations": [turn(r, n) for r, n in sizes], **extra}


CONFIG = CompressionConfig(
    target_max_tokens=5_000, summary_target_tokens=500, protect_last_n_turns=2
)


def go(e: Any, config: CompressionConfig = CONFIG) -> Any:
    return compress_entry(e, config, summarizer=DidX(), counter=Words())


def test_compressed_entry_keeps_other_keys() -> None:
    original = entry(meta={"tags": ["a", 1, None]}, score=0.5)
    kept = copy.deepcopy(original)
    result = go(original)
    assert result.status == "compressed" and result.error is None
    assert original == kept  # the input is untouched
    out = result.entry
    assert {k: out[k] for k in ("id", "meta", "score")} == {
        "id": 7,
        "meta": {"tags": ["a", 1, None]},
        "score": 0.5,
    }
    assert len(out["conversations"]) == 7
    assert out[METRICS_KEY] == result.metrics.to_json()


def test_metrics_key_only_when_asked() -> None:
    result = go(entry(), CONFIG.replace(metrics_per_trajectory=False))
    assert result.status == "compressed" and METRICS_KEY not in result.entry


def test_under_target_entry_is_unchanged() -> None:
    e = entry()
    result = go(e, CompressionConfig())
    assert result.status == "skipped_under_target"
    assert result.entry == e and METRICS_KEY not in result.entry


@pytest.mark.parametrize("save", [True, False])
def test_still_over_limit(save: bool) -> None:
    e = {"conversations": [turn("system", 9_000), turn("human", 9_000), turn("gpt", 9_000)]}
    result = go(e, CompressionConfig(save_over_limit=save))
    assert result.status == "still_over_limit"
    assert result.metrics.still_over_limit
    assert (result.entry == e) if save else (result.entry is None)


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        ({"id": 1}, "no 'conversations' key"),
        ({"conversations": "hi"}, "'conversations' is a str, not a list of turns"),
        ({"conversations": [["human", "hi"]]}, "turn 0 is a list, not an object"),
        ({"conversations": [{"from": "human"}]}, "turn 0 has no 'value' key"),
        ({"conversations": [{"value": "x"}]}, "turn 0 has no 'from' key"),
        (
            {
                "conversations": [
                    {"from": "human", "value": "x"},
                    {"from": "assistant", "value": ""},
                ]
            },
            "turn 1 has unknown role 'assistant' (expected one of: system, human, gpt, tool)",
        ),
        ({"conversations": [{"from": "gpt", "value": None}]}, "turn 0 (gpt) value is a NoneType"),
    ],
)
def test_bad_input_is_one_line_and_loses_nothing(bad: dict[str, Any], problem: str) -> None:
    result = go(bad)
    assert result.status == "bad_input" and result.metrics is None
    assert result.error is not None and problem in result.error and "\n" not in result.error
    assert result.entry == bad


def test_not_an_object() -> None:
    assert check_entry(["conversations"]) == "entry is a list, not a JSON object"
    assert go(["x"]).status == "bad_input"


def test_empty_conversation_is_valid() -> None:
    result = go({"conversations": []})
    assert result.status == "skipped_under_target"


def test_async_matches_sync() -> None:
    sync = go(entry())
    other = asyncio.run(compress_entry_async(entry(), CONFIG, summarizer=DidX(), counter=Words()))
    assert other == sync
    bad = asyncio.run(compress_entry_async({"x": 1}, CONFIG, counter=Words()))
    assert bad.status == "bad_input"


def test_default_summarizer_and_counter_are_built_from_config() -> None:
    e = {"conversations": [turn("system", 10)] + [turn(r, 400) for r in ["human", "gpt"] * 8]}
    result = compress_entry(
        e, CompressionConfig(target_max_tokens=2_000, summary_target_tokens=200)
    )
    assert result.metrics is not None and result.metrics.was_compressed
    assert result.metrics.summarization_api_calls == 0  # extractive: no model call
    summary = result.entry["conversations"][3]["value"]
    assert summary.startswith("[CONTEXT SUMMARY]: ")


def test_package_exports_are_listed() -> None:
    import types

    import palimpsest.trajectories as package

    public = {
        name
        for name, value in vars(package).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public == set(package.__all__)
    assert all(hasattr(package, name) for name in package.__all__)


def test_results_and_the_default_summarizer_cross_process_boundaries() -> None:
    import pickle

    from palimpsest.trajectories import ExtractiveTrajectorySummarizer

    result = go(entry(meta={"k": [1, 2]}))
    assert pickle.loads(pickle.dumps(result)) == result
    summarizer = pickle.loads(pickle.dumps(ExtractiveTrajectorySummarizer()))
    again = compress_entry(entry(), CONFIG, summarizer=summarizer, counter=Words())
    assert again.status == "compressed"
