"""Per-model calibration of rough estimates: convergence, bounds, persistence."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.calibration import EstimateCalibrator
from palimpsest.usage import CanonicalUsage


def test_unknown_model_returns_rough_estimate() -> None:
    cal = EstimateCalibrator()
    assert cal.calibrated("gpt-4o", 12_345) == 12_345
    assert cal.factor("gpt-4o") == 1.0


def test_first_observation_sets_the_ratio() -> None:
    cal = EstimateCalibrator()
    assert cal.observe("m", 10_000, 13_000) == pytest.approx(1.3)
    assert cal.calibrated("m", 20_000) == 26_000


def test_converges_toward_true_ratio() -> None:
    cal = EstimateCalibrator(alpha=0.3)
    cal.observe("m", 10_000, 10_000)  # a misleading start at 1.0
    errors = []
    for i in range(15):
        rough = 5_000 + 1_000 * i
        cal.observe("m", rough, int(rough * 1.4))
        errors.append(abs(cal.factor("m") - 1.4))
    assert errors == sorted(errors, reverse=True)  # monotone approach
    assert errors[-1] < 0.01
    assert cal.calibrated("m", 10_000) == pytest.approx(14_000, rel=0.01)


def test_models_are_independent() -> None:
    cal = EstimateCalibrator()
    cal.observe("a", 1_000, 2_000)
    cal.observe("b", 1_000, 800)
    assert (cal.factor("a"), cal.factor("b")) == (2.0, 0.8)
    assert cal.models() == ["a", "b"]


def test_tiny_requests_are_ignored() -> None:
    cal = EstimateCalibrator(min_tokens=256)
    assert cal.observe("m", 100, 900) is None
    assert cal.observe("m", 5_000, 10) is None
    assert cal.state("m") is None


@pytest.mark.parametrize("bad", [0, -5, float("nan"), float("inf"), True, "100"])
def test_unusable_numbers_are_ignored(bad: object) -> None:
    cal = EstimateCalibrator()
    assert cal.observe("m", bad, 1_000) is None  # type: ignore[arg-type]
    assert cal.observe("m", 1_000, bad) is None  # type: ignore[arg-type]
    assert cal.state("m") is None


def test_outliers_are_bounded() -> None:
    cal = EstimateCalibrator(min_factor=0.5, max_factor=3.0)
    assert cal.observe("m", 1_000, 1_000_000) == 3.0
    cal.reset()
    assert cal.observe("m", 1_000_000, 1_000) == 0.5
    cal.observe("m", 1_000, 1_000)
    # One absurd response after a steady state moves the factor by alpha * bounded gap only.
    steady = EstimateCalibrator(alpha=0.3)
    for _ in range(10):
        steady.observe("m", 10_000, 12_000)
    steady.observe("m", 10_000, 10_000_000)
    assert steady.factor("m") == pytest.approx(0.7 * 1.2 + 0.3 * 3.0, rel=1e-3)


def test_observe_usage_uses_prompt_tokens_only() -> None:
    cal = EstimateCalibrator()
    usage = CanonicalUsage(input_tokens=2_000, cache_read_tokens=8_000, output_tokens=90_000)
    assert cal.observe_usage("m", 8_000, usage) == pytest.approx(1.25)


def test_round_trip_through_json() -> None:
    cal = EstimateCalibrator(alpha=0.25, min_tokens=100)
    cal.observe("claude-sonnet-4", 50_000, 61_000)
    cal.observe("gpt-4o", 30_000, 27_000)
    cal.observe("gpt-4o", 30_000, 28_000)
    restored = EstimateCalibrator.from_dict(json.loads(json.dumps(cal.to_dict())))
    assert restored == cal
    assert restored.calibrated("gpt-4o", 10_000) == cal.calibrated("gpt-4o", 10_000)
    assert restored.state("gpt-4o").samples == 2  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "data",
    [
        {"version": 2},
        {"models": []},
        {"models": {"m": {"factor": "x", "samples": 1}}},
        {"models": {"m": {"factor": 1.0, "samples": 0}}},
        {"models": {"m": {"samples": 1}}},
    ],
)
def test_from_dict_rejects_bad_state(data: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        EstimateCalibrator.from_dict(data)


@pytest.mark.parametrize(
    "kwargs",
    [{"alpha": 0}, {"alpha": 1.5}, {"min_factor": 1.2}, {"max_factor": 0.9}, {"min_tokens": -1}],
)
def test_constructor_rejects_bad_bounds(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        EstimateCalibrator(**kwargs)  # type: ignore[arg-type]


@given(st.lists(st.tuples(st.integers(0, 10**7), st.integers(0, 10**7)), min_size=1, max_size=40))
def test_factor_always_within_bounds_and_deterministic(pairs: list[tuple[int, int]]) -> None:
    a, b = EstimateCalibrator(), EstimateCalibrator()
    for rough, real in pairs:
        a.observe("m", rough, real)
        b.observe("m", rough, real)
    assert 0.5 <= a.factor("m") <= 3.0
    assert a == b
