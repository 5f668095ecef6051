"""Cost estimates from canonical usage: table lookup, overrides, statuses and labels."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.config import load_settings
from palimpsest.pricing import (
    DEFAULT_PRICES,
    ModelPrice,
    estimate_usage_cost,
    format_cost,
    lookup_price,
    prices_from_settings,
)
from palimpsest.usage import CanonicalUsage, normalize_usage


class TestLookup:
    @pytest.mark.parametrize(
        ("model", "key"),
        [
            ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
            ("gpt-4o-2024-08-06", "gpt-4o"),
            ("openai/gpt-4.1-mini", "gpt-4-1-mini"),
            ("gpt-4.1", "gpt-4-1"),
            ("o4-mini", "o4-mini"),
            ("o3-2025-04-16", "o3"),
            ("claude-sonnet-4-5-20250929", "claude-sonnet-4"),
            ("anthropic/claude-sonnet-4.5", "claude-sonnet-4"),
            ("claude-opus-4-5", "claude-opus-4-5"),
            ("claude-opus-4-1-20250805", "claude-opus-4"),
            ("claude-3-5-haiku-latest", "claude-3-5-haiku"),
            ("CLAUDE-HAIKU-4-5", "claude-haiku-4-5"),
        ],
    )
    def test_longest_substring_wins(self, model: str, key: str) -> None:
        found = lookup_price(model)
        assert found is not None
        assert found == (DEFAULT_PRICES[key], "table")

    def test_unknown_model(self) -> None:
        assert lookup_price("qwen2.5-0.5b-instruct") is None

    def test_override_beats_table_on_tie_and_when_longer(self) -> None:
        cheap = ModelPrice(input=0.01, output=0.02)
        assert lookup_price("gpt-4o", {"gpt-4o": cheap}) == (cheap, "override")
        assert lookup_price("gpt-4o-mini", {"gpt-4o": cheap})[1] == "table"  # type: ignore[index]
        longer = {"gpt-4o-mini-2024": cheap}
        assert lookup_price("gpt-4o-mini-2024-07-18", longer) == (cheap, "override")


class TestEstimate:
    def test_gpt_4o_mini_with_cache(self) -> None:
        # OpenAI prompt-caching guide payload: 86 uncached + 1920 cached in, 300 out.
        usage = normalize_usage(
            {
                "prompt_tokens": 2006,
                "completion_tokens": 300,
                "prompt_tokens_details": {"cached_tokens": 1920},
            }
        )
        est = estimate_usage_cost("gpt-4o-mini", usage)
        expected = (86 * 0.15 + 300 * 0.60 + 1920 * 0.075) / 1e6
        assert est.status == "estimated" and est.source == "table"
        assert est.amount_usd == pytest.approx(expected)
        assert est.label == "~$0.0003"

    def test_anthropic_cache_buckets(self) -> None:
        usage = CanonicalUsage(
            input_tokens=21_000, output_tokens=3_000, cache_read_tokens=60_000, cache_write_tokens=0
        )
        est = estimate_usage_cost("claude-sonnet-4-20250514", usage)
        assert est.amount_usd == pytest.approx((21_000 * 3 + 3_000 * 15 + 60_000 * 0.3) / 1e6)
        assert est.label == "~$0.13"

    def test_long_context_tier_applies_to_whole_request(self) -> None:
        usage = CanonicalUsage(input_tokens=250_000, output_tokens=1_000)
        est = estimate_usage_cost("claude-sonnet-4-5", usage)
        assert est.amount_usd == pytest.approx((250_000 * 6 + 1_000 * 22.5) / 1e6)
        below = estimate_usage_cost("claude-sonnet-4-5", CanonicalUsage(input_tokens=200_000))
        assert below.amount_usd == pytest.approx(0.6)

    def test_unknown_model(self) -> None:
        est = estimate_usage_cost("mystery-model", CanonicalUsage(input_tokens=10))
        assert (est.amount_usd, est.status, est.label) == (None, "unknown", "n/a")

    def test_used_bucket_without_rate_is_unknown(self) -> None:
        # OpenAI publishes no per-model cache-write rate.
        est = estimate_usage_cost("gpt-4o", CanonicalUsage(input_tokens=10, cache_write_tokens=5))
        assert (est.status, est.label) == ("unknown", "n/a")

    def test_unused_bucket_without_rate_is_fine(self) -> None:
        est = estimate_usage_cost("gpt-4o", CanonicalUsage(input_tokens=1_000_000))
        assert (est.status, est.label) == ("estimated", "~$2.50")

    def test_zero_usage(self) -> None:
        est = estimate_usage_cost("gpt-4o", CanonicalUsage())
        assert (est.amount_usd, est.label) == (0.0, "$0.00")

    def test_override_mapping(self) -> None:
        est = estimate_usage_cost(
            "my-finetune",
            CanonicalUsage(input_tokens=1_000_000, output_tokens=1_000_000),
            prices={"my-finetune": {"input": 1.0, "output": 2.0}},
        )
        assert (est.amount_usd, est.source, est.label) == (3.0, "override", "~$3.00")

    def test_bad_override_is_rejected(self) -> None:
        with pytest.raises(ValueError, match="unknown price field"):
            estimate_usage_cost("x", CanonicalUsage(), prices={"x": {"inptu": 1.0}})
        with pytest.raises(ValueError, match="non-negative"):
            estimate_usage_cost("x", CanonicalUsage(), prices={"x": {"input": -1}})

    @pytest.mark.parametrize(
        ("provider", "base_url"),
        [
            ("llamacpp", None),
            ("openai", "http://127.0.0.1:8080/v1"),
            (None, "http://localhost:11434"),
        ],
    )
    def test_local_routes_are_included(self, provider: str | None, base_url: str | None) -> None:
        est = estimate_usage_cost(
            "gpt-4o", CanonicalUsage(input_tokens=5), provider=provider, base_url=base_url
        )
        assert (est.status, est.amount_usd, est.label) == ("included", 0.0, "included")

    def test_remote_base_url_is_not_local(self) -> None:
        est = estimate_usage_cost(
            "gpt-4o", CanonicalUsage(input_tokens=5), base_url="https://openrouter.ai/api/v1"
        )
        assert est.status == "estimated"

    def test_included_price(self) -> None:
        est = estimate_usage_cost(
            "gpt-4o", CanonicalUsage(input_tokens=5), prices={"gpt-4o": {"included": True}}
        )
        assert est.status == "included"

    def test_provider_reported_cost_is_actual(self) -> None:
        # OpenRouter adds the charged amount to the usage object.
        usage = normalize_usage({"prompt_tokens": 194, "completion_tokens": 2, "cost": 0.95})
        est = estimate_usage_cost("anything", usage)
        assert (est.amount_usd, est.status, est.source, est.label) == (
            0.95,
            "actual",
            "provider",
            "~$0.95",
        )


class TestFormat:
    @pytest.mark.parametrize(
        ("amount", "label"),
        [
            (0.0, "$0.00"),
            (0.0042, "~$0.0042"),
            (0.00004, "~$<0.0001"),
            (0.0099, "~$0.0099"),
            (0.01, "~$0.01"),
            (1.234, "~$1.23"),
            (None, "n/a"),
        ],
    )
    def test_labels(self, amount: float | None, label: str) -> None:
        assert format_cost(amount) == label


@given(st.integers(0, 10**7), st.integers(0, 10**7), st.integers(0, 10**7), st.integers(0, 10**7))
def test_cost_is_monotonic_in_every_bucket(i: int, o: int, r: int, w: int) -> None:
    base = CanonicalUsage(
        input_tokens=i, output_tokens=o, cache_read_tokens=r, cache_write_tokens=w
    )
    more = base + CanonicalUsage(input_tokens=1, output_tokens=1, cache_read_tokens=1)
    a = estimate_usage_cost("claude-haiku-4-5", base).amount_usd
    b = estimate_usage_cost("claude-haiku-4-5", more).amount_usd
    assert a is not None and b is not None and b > a >= 0


def test_prices_from_config(tmp_path: Path) -> None:
    cfg = tmp_path / "config.yaml"
    cfg.write_text("pricing:\n  models:\n    my-local-70b:\n      input: 0.5\n      output: 1.5\n")
    table = prices_from_settings(load_settings(cfg))
    assert table == {"my-local-70b": ModelPrice(input=0.5, output=1.5)}
    est = estimate_usage_cost(
        "my-local-70b-q4", CanonicalUsage(input_tokens=2_000_000), prices=table
    )
    assert est.amount_usd == pytest.approx(1.0)
