"""One dataset entry in, one result out: the function batch runners call per line or row.

A dataset entry is a JSON object whose ``conversations`` key holds the trajectory (TJ-01);
every other key is copied through untouched. :func:`compress_entry` checks the entry, runs
:func:`~palimpsest.trajectories.compress.compress_trajectory` and says what happened in an
:class:`EntryResult`. It never raises for a malformed entry (status ``"bad_input"`` with a
one-line reason, the entry returned unchanged, so the runner decides whether to copy it
through or skip it); an exception from the summarizer's machinery or the tokenizer
propagates so the runner can count the entry as failed. ``KeyboardInterrupt`` is never
swallowed. Timeouts are the runner's job.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .algorithm import ROLES
from .compress import compress_trajectory, compress_trajectory_async
from .config import CompressionConfig
from .counting import TextCounter
from .metrics import TrajectoryMetrics
from .summary import TrajectorySummarizer

__all__ = [
    "CONVERSATIONS_KEY",
    "METRICS_KEY",
    "EntryResult",
    "EntryStatus",
    "check_entry",
    "compress_entry",
    "compress_entry_async",
]

CONVERSATIONS_KEY = "conversations"
METRICS_KEY = "compression_metrics"
"""Added to a compressed entry when ``metrics_per_trajectory`` is on (TJ-24)."""

EntryStatus = Literal[
    "compressed", "skipped_under_target", "unchanged", "still_over_limit", "failed", "bad_input"
]


@dataclass(frozen=True)
class EntryResult:
    """What became of one entry.

    ``entry`` is the output entry (``None``: leave it out, as for a trajectory still over
    the limit with ``save_over_limit`` off). ``status`` is ``"compressed"`` (a summary was
    inserted and the result fits), ``"still_over_limit"`` (compressed or not, it is still
    over budget), ``"skipped_under_target"``, ``"unchanged"`` (within budget only because
    ``skip_under_target`` is off, or nothing was worth compressing), or ``"bad_input"``.
    ``"failed"`` is never produced here; runners use it for entries that raised.
    ``error`` is a one-line reason for ``bad_input``.
    """

    entry: dict[str, Any] | None
    metrics: TrajectoryMetrics | None
    status: EntryStatus
    error: str | None = None


def check_entry(entry: Any) -> str | None:
    """Why ``entry`` is not a valid trajectory entry, in one line; ``None`` when it is."""
    if not isinstance(entry, Mapping):
        return f"entry is a {type(entry).__name__}, not a JSON object"
    if CONVERSATIONS_KEY not in entry:
        return f"no {CONVERSATIONS_KEY!r} key"
    turns = entry[CONVERSATIONS_KEY]
    if not isinstance(turns, list):
        return f"{CONVERSATIONS_KEY!r} is a {type(turns).__name__}, not a list of turns"
    for i, turn in enumerate(turns):
        if not isinstance(turn, Mapping):
            return f"turn {i} is a {type(turn).__name__}, not an object"
        for key in ("from", "value"):
            if key not in turn:
                return f"turn {i} has no {key!r} key"
        role = turn["from"]
        if role not in ROLES:
            return f"turn {i} has unknown role {role!r} (expected one of: {', '.join(ROLES)})"
        if not isinstance(turn["value"], str):
            return f"turn {i} ({role}) value is a {type(turn['value']).__name__}, not a string"
    return None


def _status(metrics: TrajectoryMetrics) -> EntryStatus:
    if metrics.still_over_limit:
        return "still_over_limit"
    if metrics.was_compressed:
        return "compressed"
    if metrics.skipped_under_target:
        return "skipped_under_target"
    return "unchanged"


def _result(
    entry: Mapping[str, Any],
    turns: list[dict[str, Any]],
    metrics: TrajectoryMetrics,
    config: CompressionConfig,
) -> EntryResult:
    status = _status(metrics)
    if metrics.still_over_limit and not config.save_over_limit:
        return EntryResult(None, metrics, status)
    out = dict(entry)
    if metrics.was_compressed:
        out[CONVERSATIONS_KEY] = turns
        if config.metrics_per_trajectory:
            out[METRICS_KEY] = metrics.to_json()
    return EntryResult(out, metrics, status)


def compress_entry(
    entry: Mapping[str, Any],
    config: CompressionConfig,
    *,
    summarizer: TrajectorySummarizer | None = None,
    counter: TextCounter | None = None,
) -> EntryResult:
    """Compress one entry's ``conversations``; every other key is kept as it was."""
    problem = check_entry(entry)
    if problem is not None:
        return EntryResult(dict(entry) if isinstance(entry, Mapping) else entry, None,
                           "bad_input", problem)  # fmt: skip
    turns, metrics = compress_trajectory(
        entry[CONVERSATIONS_KEY], config, summarizer=summarizer, counter=counter
    )
    return _result(entry, turns, metrics, config)


async def compress_entry_async(
    entry: Mapping[str, Any],
    config: CompressionConfig,
    *,
    summarizer: TrajectorySummarizer | None = None,
    counter: TextCounter | None = None,
) -> EntryResult:
    """:func:`compress_entry` with the async summarizer path (TJ-23)."""
    problem = check_entry(entry)
    if problem is not None:
        return EntryResult(dict(entry) if isinstance(entry, Mapping) else entry, None,
                           "bad_input", problem)  # fmt: skip
    turns, metrics = await compress_trajectory_async(
        entry[CONVERSATIONS_KEY], config, summarizer=summarizer, counter=counter
    )
    return _result(entry, turns, metrics, config)
