"""What one compression did to one trajectory, and what a whole run did (spec TJ-20..TJ-22).

``TrajectoryMetrics`` travels with each result (and into the entry as
``compression_metrics`` when asked); ``AggregateMetrics`` folds them into the run's figures.
Both are plain data with ``to_json()`` so a batch runner can write them with ``json.dump``,
and ``AggregateMetrics.merge`` lets workers keep partial aggregates that are summed later.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

__all__ = ["AggregateMetrics", "TrajectoryMetrics"]


@dataclass
class TrajectoryMetrics:
    """Per-trajectory figures (TJ-20). Region indices are ``-1`` when nothing was compressed."""

    original_turns: int = 0
    original_tokens: int = 0
    compressed_turns: int = 0
    compressed_tokens: int = 0
    turns_removed: int = 0
    tokens_saved: int = 0
    compression_ratio: float = 1.0
    was_compressed: bool = False
    skipped_under_target: bool = False
    still_over_limit: bool = False
    turns_compressed_start_idx: int = -1
    turns_compressed_end_idx: int = -1
    turns_in_compressed_region: int = 0
    summarization_api_calls: int = 0
    summarization_errors: int = 0

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict, in field order."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TrajectoryMetrics:
        """The inverse of :meth:`to_json`; unknown keys are ignored."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass
class AggregateMetrics:
    """Run totals (TJ-22) plus the batch runner's ``failed``/``timed_out``/``bad_input``.

    ``compressed``, ``skipped_under_target`` and ``still_over_limit`` count trajectories;
    the token totals cover every trajectory that produced metrics, compressed or not.
    """

    total_trajectories: int = 0
    compressed: int = 0
    skipped_under_target: int = 0
    still_over_limit: int = 0
    unchanged: int = 0
    failed: int = 0
    timed_out: int = 0
    bad_input: int = 0
    dropped_over_limit: int = 0
    total_tokens_before: int = 0
    total_tokens_after: int = 0
    total_tokens_saved: int = 0
    summarization_api_calls: int = 0
    summarization_errors: int = 0
    elapsed_seconds: float = 0.0
    sum_compression_ratio: float = 0.0
    """Sum of the compressed trajectories' ratios (for :attr:`avg_compression_ratio`)."""
    sum_tokens_saved_compressed: int = 0

    def add(self, metrics: TrajectoryMetrics) -> None:
        """Count one trajectory that went through the algorithm."""
        self.total_trajectories += 1
        self.total_tokens_before += metrics.original_tokens
        self.total_tokens_after += metrics.compressed_tokens
        self.total_tokens_saved += metrics.tokens_saved
        self.summarization_api_calls += metrics.summarization_api_calls
        self.summarization_errors += metrics.summarization_errors
        if metrics.was_compressed:
            self.compressed += 1
            self.sum_compression_ratio += metrics.compression_ratio
            self.sum_tokens_saved_compressed += metrics.tokens_saved
        elif metrics.skipped_under_target:
            self.skipped_under_target += 1
        else:
            self.unchanged += 1
        if metrics.still_over_limit:
            self.still_over_limit += 1

    def add_failed(self) -> None:
        """An entry whose compression raised (its original trajectory is kept)."""
        self.total_trajectories += 1
        self.failed += 1

    def add_timed_out(self) -> None:
        """An entry that ran past ``per_trajectory_timeout`` (dropped from the output)."""
        self.total_trajectories += 1
        self.timed_out += 1

    def add_bad_input(self) -> None:
        """A malformed entry (copied through or skipped by the runner)."""
        self.total_trajectories += 1
        self.bad_input += 1

    def merge(self, other: AggregateMetrics) -> None:
        """Add another aggregate's counts (e.g. from a worker) into this one."""
        for f in fields(self):
            if f.name == "elapsed_seconds":
                continue
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    @property
    def avg_compression_ratio(self) -> float:
        """Mean ratio over compressed trajectories; 1.0 when none was compressed."""
        return self.sum_compression_ratio / self.compressed if self.compressed else 1.0

    @property
    def avg_tokens_saved_per_compressed(self) -> float:
        """Mean tokens saved per compressed trajectory; 0 when none was compressed."""
        return self.sum_tokens_saved_compressed / self.compressed if self.compressed else 0

    def to_json(self) -> dict[str, Any]:
        """The metrics file's content (TJ-22): counts, token totals and the two averages."""
        data = asdict(self)
        del data["sum_compression_ratio"], data["sum_tokens_saved_compressed"]
        data["avg_compression_ratio"] = self.avg_compression_ratio
        data["avg_tokens_saved_per_compressed"] = self.avg_tokens_saved_per_compressed
        data["elapsed_seconds"] = round(self.elapsed_seconds, 3)
        return data
