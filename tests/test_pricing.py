"""Cost estimates: overrides first, the genai-prices catalogue next, unknown never guessed."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.config import load_settings
from palimpsest.price_catalog import catalog_version
from palimpsest.pricing import (
    ModelPrice,
    estimate_usage_cost,
    format_cost,
    lookup_override,
    prices_from_settings,
)
from palimpsest.usage import CanonicalUsage, normalize_usage

MILLION_EACH = CanonicalUsage(input_tokens=1_000_000, output_tokens=1_000_000)


class TestCatalogue:
    """The old hand-written table priced claude-opus-4-7 as claude-opus-4 ($15/M in)."""

    @pytest.mark.parametrize("model", ["claude-opus-4-7", "claude-opus-4.7", "CLAUDE-OPUS-4-7"])
    def test_newer_opus_minor_version_is_on_its_own_tier(self, model: str) -> None:
        # genai-prices 0.2.3: Claude Opus 4.7 is $5/M input, $25/M output.
        est = estimate_usage_cost(model, MILLION_EACH)
        assert (est.amount_usd, est.status, est.source, est.label) == (
            pytest.approx(30.0),
            "estimated",
            "genai-prices",
            "~$30.00",
        )
        assert est.version == catalog_version() and est.version.startswith("genai-prices ")

    def test_cache_read_and_write_rates_are_used(self) -> None:
        # Opus 4.7: cache reads $0.50/M, 5-minute cache writes $6.25/M.
        usage = normalize_usage(
            {
                "input_tokens": 500_000,
                "cache_read_input_tokens": 400_000,
                "cache_creation_input_tokens": 100_000,
            },
            "anthropic",
        )
        est = estimate_usage_cost("claude-opus-4-7", usage)
        assert est.amount_usd == pytest.approx(
            500_000 * 5e-6 + 400_000 * 0.5e-6 + 100_000 * 6.25e-6
        )

    def test_openai_cached_input_from_chat_usage(self) -> None:
        # OpenAI prompt-caching guide payload on gpt-4o-mini ($0.15 in, $0.075 cached, $0.60 out).
        usage = normalize_usage(
            {
                "prompt_tokens": 2006,
                "completion_tokens": 300,
                "prompt_tokens_details": {"cached_tokens": 1920},
            }
        )
        est = estimate_usage_cost("gpt-4o-mini-2024-07-18", usage)
        assert est.amount_usd == pytest.approx((86 * 0.15 + 300 * 0.60 + 1920 * 0.075) / 1e6)
        assert est.label == "~$0.0003"

    def test_long_context_tier(self) -> None:
        # Claude Sonnet 4.5 above 200K prompt tokens: $6/M input, $22.50/M output.
        usage = CanonicalUsage(input_tokens=250_000, output_tokens=1_000)
        est = estimate_usage_cost("claude-sonnet-4-5-20250929", usage)
        assert est.amount_usd == pytest.approx(250_000 * 6e-6 + 1_000 * 22.5e-6)
        below = estimate_usage_cost("claude-sonnet-4-5", CanonicalUsage(input_tokens=200_000))
        assert below.amount_usd == pytest.approx(0.6)

    def test_prices_that_change_by_date_and_hour(self) -> None:
        # DeepSeek V4 Pro: $0.66 / $1.98 off-peak after 2026-08-17; $0.435 / $0.87 before.
        off_peak = datetime(2026, 9, 1, 12, 0, tzinfo=UTC)
        early = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
        assert estimate_usage_cost("deepseek-v4-pro", MILLION_EACH, at=off_peak).amount_usd == (
            pytest.approx(2.64)
        )
        assert estimate_usage_cost("deepseek-v4-pro", MILLION_EACH, at=early).amount_usd == (
            pytest.approx(1.305)
        )

    def test_vendor_prefixed_names(self) -> None:
        for model, kwargs in [
            ("anthropic/claude-sonnet-4.5", {}),
            ("anthropic/claude-sonnet-4.5", {"base_url": "https://openrouter.ai/api/v1"}),
            ("claude-sonnet-4.5", {"provider": "anthropic"}),
        ]:
            est = estimate_usage_cost(model, CanonicalUsage(input_tokens=100_000), **kwargs)
            assert est.amount_usd == pytest.approx(0.3), (model, kwargs)  # $3/M below 200K

    @pytest.mark.parametrize(
        "model", ["claude-opus-4-9", "gpt-4o-nonesuch", "qwen2.5-0.5b-instruct", "scripted"]
    )
    def test_unknown_model_is_unknown_not_a_relative(self, model: str) -> None:
        est = estimate_usage_cost(model, CanonicalUsage(input_tokens=10))
        assert (est.amount_usd, est.status, est.source, est.label) == (
            None,
            "unknown",
            "none",
            "n/a",
        )

    def test_a_cache_bucket_the_list_does_not_price_is_unknown_not_borrowed(self) -> None:
        """claude-2 has no cache-read rate in the catalogue, which then charges cache reads
        at the input rate; we used to report that borrowed figure as "estimated"."""
        usage = CanonicalUsage(input_tokens=500, cache_read_tokens=500, output_tokens=100)
        est = estimate_usage_cost("claude-2", usage, provider="anthropic")
        assert (est.amount_usd, est.status, est.label) == (None, "unknown", "n/a")
        assert est.reason is not None and "cache read" in est.reason
        # Without cache reads the same model is priced as before.
        plain = estimate_usage_cost(
            "claude-2", CanonicalUsage(input_tokens=1000), provider="anthropic"
        )
        assert plain.status == "estimated" and plain.amount_usd == pytest.approx(0.008)

    def test_unreported_usage_is_unknown(self) -> None:
        est = estimate_usage_cost("claude-opus-4-7", None)
        assert (est.amount_usd, est.status, est.label) == (None, "unknown", "n/a")

    def test_zero_usage_costs_zero(self) -> None:
        est = estimate_usage_cost("gpt-4o", CanonicalUsage())
        assert (est.amount_usd, est.label) == (0.0, "$0.00")


class TestOverrides:
    def test_override_wins_over_the_catalogue(self) -> None:
        est = estimate_usage_cost(
            "claude-opus-4-7-20260101",
            MILLION_EACH,
            prices={"claude-opus-4-7": {"input": 1.0, "output": 2.0}},
        )
        assert (est.amount_usd, est.source, est.label, est.version) == (
            3.0,
            "override",
            "~$3.00",
            None,
        )

    def test_a_shorter_override_still_wins(self) -> None:
        # Any matching override beats the catalogue: "claude" prices every Claude model.
        est = estimate_usage_cost(
            "claude-opus-4-7", MILLION_EACH, prices={"claude": {"input": 0, "output": 0}}
        )
        assert (est.amount_usd, est.source) == (0.0, "override")

    def test_longest_override_key_wins(self) -> None:
        cheap, dear = ModelPrice(input=0.01, output=0.02), ModelPrice(input=9.0, output=9.0)
        table = {"gpt-4o": dear, "gpt-4o-mini": cheap}
        assert lookup_override("openai/gpt-4o-mini-2024-07-18", table) == ("gpt-4o-mini", cheap)
        assert lookup_override("GPT_4o", table) == ("gpt-4o", dear)
        assert lookup_override("o3", table) is None
        assert lookup_override("gpt.4o", {"gpt-4o": dear}) == ("gpt-4o", dear)

    def test_override_for_a_model_the_catalogue_lacks(self) -> None:
        est = estimate_usage_cost(
            "my-finetune", MILLION_EACH, prices={"my-finetune": {"input": 1.0, "output": 2.0}}
        )
        assert (est.amount_usd, est.status, est.source) == (3.0, "estimated", "override")

    def test_used_bucket_without_an_override_rate_is_unknown(self) -> None:
        est = estimate_usage_cost(
            "mine",
            CanonicalUsage(input_tokens=10, cache_write_tokens=5),
            prices={"mine": {"input": 1.0, "output": 1.0}},
        )
        assert (est.status, est.source, est.label) == ("unknown", "override", "n/a")

    def test_included_override(self) -> None:
        est = estimate_usage_cost(
            "gpt-4o", CanonicalUsage(input_tokens=5), prices={"gpt-4o": {"included": True}}
        )
        assert (est.status, est.amount_usd, est.source) == ("included", 0.0, "override")

    def test_bad_override_is_rejected(self) -> None:
        with pytest.raises(ValueError, match="unknown price field"):
            estimate_usage_cost("x", CanonicalUsage(), prices={"x": {"inptu": 1.0}})
        with pytest.raises(ValueError, match="non-negative"):
            estimate_usage_cost("x", CanonicalUsage(), prices={"x": {"input": -1}})
        with pytest.raises(ValueError, match="non-negative"):
            estimate_usage_cost("x", CanonicalUsage(), prices={"x": {"input": True}})


class TestRoutes:
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

    def test_unknown_remote_base_url_falls_back_to_the_model_makers_list(self) -> None:
        est = estimate_usage_cost(
            "gpt-4o", CanonicalUsage(input_tokens=1_000_000), base_url="https://proxy.example/v1"
        )
        assert (est.status, est.amount_usd) == ("estimated", pytest.approx(2.5))

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


@given(st.integers(0, 10**6), st.integers(0, 10**6), st.integers(0, 10**6), st.integers(0, 10**6))
def test_cost_is_monotonic_in_every_bucket(i: int, o: int, r: int, w: int) -> None:
    base = CanonicalUsage(
        input_tokens=i, output_tokens=o, cache_read_tokens=r, cache_write_tokens=w
    )
    more = base + CanonicalUsage(input_tokens=1, output_tokens=1, cache_read_tokens=1)
    a = estimate_usage_cost("claude-haiku-4-5", base).amount_usd
    b = estimate_usage_cost("claude-haiku-4-5", more).amount_usd
    assert a is not None and b is not None and b > a >= 0


def test_prices_from_config_win_over_the_catalogue(tmp_path: Path) -> None:
    cfg = tmp_path / "config.yaml"
    cfg.write_text(
        "pricing:\n  models:\n    my-local-70b:\n      input: 0.5\n      output: 1.5\n"
        "    claude-opus-4-7:\n      input: 4.0\n      output: 20.0\n"
    )
    table = prices_from_settings(load_settings(cfg))
    assert table["my-local-70b"] == ModelPrice(input=0.5, output=1.5)
    est = estimate_usage_cost(
        "my-local-70b-q4", CanonicalUsage(input_tokens=2_000_000), prices=table
    )
    assert est.amount_usd == pytest.approx(1.0)
    opus = estimate_usage_cost("claude-opus-4-7", MILLION_EACH, prices=table)
    assert (opus.amount_usd, opus.source) == (pytest.approx(24.0), "override")
