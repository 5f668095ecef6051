"""Per-trajectory and aggregate metrics (TJ-20..TJ-22, the metrics half of example 12)."""

from __future__ import annotations

import json

import pytest

from palimpsest.trajectories import AggregateMetrics, TrajectoryMetrics


def compressed(before: int, after: int) -> TrajectoryMetrics:
    return TrajectoryMetrics(
        original_turns=10,
        original_tokens=before,
        compressed_turns=7,
        compressed_tokens=after,
        turns_removed=3,
        tokens_saved=before - after,
        compression_ratio=after / before,
        was_compressed=True,
        summarization_api_calls=2,
        summarization_errors=1,
    )


def test_example_12_empty_aggregate() -> None:
    data = AggregateMetrics().to_json()
    assert data["total_trajectories"] == 0
    assert data["avg_compression_ratio"] == 1.0
    assert data["avg_tokens_saved_per_compressed"] == 0


def test_example_12_counts() -> None:
    agg = AggregateMetrics()
    agg.add_timed_out()
    agg.add_failed()
    agg.add(compressed(1_000, 400))
    data = agg.to_json()
    assert (data["timed_out"], data["failed"], data["compressed"]) == (1, 1, 1)
    assert data["total_trajectories"] == 3


def test_adding_a_compressed_trajectory_updates_every_total() -> None:
    agg = AggregateMetrics()
    agg.add(compressed(1_000, 400))
    agg.add(compressed(2_000, 500))
    agg.add(
        TrajectoryMetrics(original_tokens=300, compressed_tokens=300, skipped_under_target=True)
    )
    over = TrajectoryMetrics(original_tokens=900, compressed_tokens=900, still_over_limit=True)
    agg.add(over)
    data = agg.to_json()
    assert data["total_trajectories"] == 4
    assert (data["compressed"], data["skipped_under_target"], data["still_over_limit"]) == (2, 1, 1)
    assert data["unchanged"] == 1
    assert data["total_tokens_before"] == 4_200
    assert data["total_tokens_after"] == 2_100
    assert data["total_tokens_saved"] == 2_100
    assert data["avg_compression_ratio"] == pytest.approx((0.4 + 0.25) / 2)
    assert data["avg_tokens_saved_per_compressed"] == pytest.approx(1_050)
    assert (data["summarization_api_calls"], data["summarization_errors"]) == (4, 2)
    assert "sum_compression_ratio" not in data
    json.dumps(data)


def test_merge_sums_workers() -> None:
    a, b = AggregateMetrics(), AggregateMetrics()
    a.add(compressed(1_000, 400))
    b.add(compressed(2_000, 500))
    b.add_bad_input()
    a.merge(b)
    assert (a.total_trajectories, a.compressed, a.bad_input) == (3, 2, 1)
    assert a.avg_tokens_saved_per_compressed == pytest.approx(1_050)


def test_trajectory_metrics_round_trip() -> None:
    m = compressed(1_000, 400)
    assert TrajectoryMetrics.from_json(json.loads(json.dumps(m.to_json()))) == m
    assert m.to_json()["turns_compressed_start_idx"] == -1
