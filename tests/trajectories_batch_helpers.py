"""Small real per-entry functions for the batch tests (picklable: module level).

``shout`` stands in for the compressor where a test is about the machinery, not the
algorithm: it upper-cases every turn value, counts words as tokens and records metrics.
Entries carry their own instructions for the failure tests: ``"sleep": seconds`` sleeps
first, ``"raise": message`` raises.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from palimpsest.trajectories.metrics import TrajectoryMetrics


@dataclass(frozen=True)
class Result:
    entry: Mapping[str, Any] | None
    metrics: TrajectoryMetrics | None
    status: str
    error: str | None = None


def _words(turns: list[dict[str, Any]]) -> int:
    return sum(len(str(t.get("value", "")).split()) for t in turns)


def shout(entry: dict[str, Any]) -> Result:
    if "sleep" in entry:
        time.sleep(float(entry["sleep"]))
    if "raise" in entry:
        raise RuntimeError(str(entry["raise"]))
    turns = entry.get("conversations")
    if not isinstance(turns, list):
        return Result(entry, None, "bad_input", "no 'conversations' list")
    loud = [{**t, "value": str(t.get("value", "")).upper()} for t in turns]
    before = _words(turns)
    metrics = TrajectoryMetrics(
        original_turns=len(turns),
        original_tokens=before,
        compressed_turns=len(loud),
        compressed_tokens=before,
        compression_ratio=1.0,
        was_compressed=True,
        still_over_limit=before > 50,
    )
    out = {**entry, "conversations": loud, "compression_metrics": metrics.to_json()}
    return Result(out, metrics, "compressed")


async def shout_async(entry: dict[str, Any]) -> Result:
    import asyncio

    if "sleep" in entry:
        await asyncio.sleep(float(entry["sleep"]))
        entry = {k: v for k, v in entry.items() if k != "sleep"}
    return shout(entry)


class WordCounter:
    """The spec's stub tokenizer: whitespace-separated words."""

    def count_text(self, text: str) -> int:
        return len(text.split())


class DidX:
    """The spec's stub summarizer: always ``did X``; a region mentioning ``SLOW`` sleeps."""

    is_model = False

    def summarize(self, request: Any) -> str:
        if any("SLOW" in str(t.get("value", "")) for t in request.region):
            time.sleep(30)
        return "did X"


def spec_config(**changes: Any) -> Any:
    from palimpsest.trajectories.config import CompressionConfig

    base = {"target_max_tokens": 90, "summary_target_tokens": 5, "protect_last_n_turns": 2}
    return CompressionConfig(**{**base, **changes})


def compress_words(entry: dict[str, Any]) -> Any:
    """The real ``compress_entry`` with the spec's stubs; ``"raise"`` in an entry raises."""
    from palimpsest.trajectories.entry import compress_entry

    if "raise" in entry:
        raise RuntimeError(str(entry["raise"]))
    return compress_entry(entry, spec_config(), summarizer=DidX(), counter=WordCounter())


def long_entry(ident: int, *, marker: str = "", **extra: Any) -> dict[str, Any]:
    """A trajectory of ~116 words over a 90-word budget: system, human, gpt/tool pairs."""
    turns = [
        {"from": "system", "value": "You are a careful agent."},
        {"from": "human", "value": f"Fix bug number {ident} please."},
    ]
    for step in range(4):
        turns.append({"from": "gpt", "value": f"<tool_call>run step {step} {marker}</tool_call>"})
        turns.append({"from": "tool", "value": " ".join(["output"] * 20) + f" {step}"})
    turns.append({"from": "gpt", "value": "Done, the bug is fixed."})
    turns.append({"from": "human", "value": "Thanks."})
    return {"id": ident, "conversations": turns, **extra}


PARENT_MARK: str | None = None
"""Set by a test in the parent process; a forked pool worker sees it, a spawned one not."""


def report_mark(entry: dict[str, Any]) -> Result:
    """The entry with the process's ``PARENT_MARK`` and pid added (start-method tests)."""
    import os

    out = {**entry, "mark": PARENT_MARK, "pid": os.getpid()}
    return Result(out, None, "unchanged")
