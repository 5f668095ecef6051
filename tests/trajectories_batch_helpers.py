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
