"""Approximate cost of a request from its canonical usage and a small price table.

The built-in table lists public list prices (USD per million tokens) for a handful of
current models, as published by OpenAI and Anthropic in 2025. It is **approximate and
dated**: providers change prices, discounts and batch/priority tiers are ignored, and every
figure derived from it is labelled with ``~``. Callers override or extend it with their
own table (``prices=``) or the ``pricing.models`` config section.

A model name is matched by the longest table key that is a substring of it, after
lower-casing and turning ``.`` into ``-`` on both sides (``anthropic/claude-sonnet-4.5`` and
``claude-sonnet-4-5-20250929`` both hit ``claude-sonnet-4-5``). Spec TK-20.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from .usage import CanonicalUsage

__all__ = [
    "DEFAULT_PRICES",
    "PRICES_AS_OF",
    "CostEstimate",
    "CostStatus",
    "ModelPrice",
    "estimate_usage_cost",
    "format_cost",
    "lookup_price",
    "prices_from_settings",
]

CostStatus = Literal["actual", "estimated", "included", "unknown"]

PRICES_AS_OF = "2025-11"
"""When the built-in list prices were last checked against the providers' pricing pages."""


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens for each canonical bucket; ``None`` means "rate not known".

    Above ``tier_threshold`` prompt tokens the whole request is billed at ``tier``
    (Anthropic's long-context rates, for example). ``included`` marks a route whose use is
    covered by a subscription or runs locally: its cost is reported as ``included``.
    """

    input: float | None
    output: float | None
    cache_read: float | None = None
    cache_write: float | None = None
    tier_threshold: int | None = None
    tier: ModelPrice | None = None
    included: bool = False

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> ModelPrice:
        """Build from ``{"input": .., "output": .., "cache_read": .., "cache_write": ..}``."""
        unknown = set(data) - {"input", "output", "cache_read", "cache_write", "included"}
        if unknown:
            raise ValueError(f"unknown price field(s): {', '.join(sorted(unknown))}")
        rates = {k: data.get(k) for k in ("input", "output", "cache_read", "cache_write")}
        for key, value in rates.items():
            if value is not None and (not isinstance(value, int | float) or value < 0):
                raise ValueError(f"price {key!r} must be a non-negative number, got {value!r}")
        return cls(
            input=_opt_float(rates["input"]),
            output=_opt_float(rates["output"]),
            cache_read=_opt_float(rates["cache_read"]),
            cache_write=_opt_float(rates["cache_write"]),
            included=bool(data.get("included", False)),
        )


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)


def _openai(inp: float, out: float, cached: float) -> ModelPrice:
    # OpenAI bills cache writes at the normal input rate on the automatic cache and did not
    # report them at all until recently; an explicit write rate is not published per model.
    return ModelPrice(input=inp, output=out, cache_read=cached, cache_write=None)


def _anthropic(inp: float, out: float, *, long_context: bool = False) -> ModelPrice:
    # Anthropic: cache reads at 0.1x input, 5-minute cache writes at 1.25x input.
    tier = None
    if long_context:
        # Sonnet 4 / 4.5 above 200K prompt tokens: 2x input and cache, 1.5x output.
        tier = ModelPrice(
            input=inp * 2, output=out * 1.5, cache_read=inp * 0.2, cache_write=inp * 2.5
        )
    return ModelPrice(
        input=inp,
        output=out,
        cache_read=round(inp * 0.1, 6),
        cache_write=round(inp * 1.25, 6),
        tier_threshold=200_000 if long_context else None,
        tier=tier,
    )


DEFAULT_PRICES: dict[str, ModelPrice] = {
    "gpt-4o": _openai(2.50, 10.00, 1.25),
    "gpt-4o-mini": _openai(0.15, 0.60, 0.075),
    "gpt-4-1": _openai(2.00, 8.00, 0.50),
    "gpt-4-1-mini": _openai(0.40, 1.60, 0.10),
    "gpt-4-1-nano": _openai(0.10, 0.40, 0.025),
    "o3": _openai(2.00, 8.00, 0.50),
    "o3-mini": _openai(1.10, 4.40, 0.55),
    "o4-mini": _openai(1.10, 4.40, 0.275),
    "claude-opus-4": _anthropic(15.00, 75.00),
    "claude-opus-4-5": _anthropic(5.00, 25.00),
    "claude-3-opus": _anthropic(15.00, 75.00),
    "claude-sonnet-4": _anthropic(3.00, 15.00, long_context=True),
    "claude-3-7-sonnet": _anthropic(3.00, 15.00),
    "claude-3-5-sonnet": _anthropic(3.00, 15.00),
    "claude-haiku-4-5": _anthropic(1.00, 5.00),
    "claude-3-5-haiku": _anthropic(0.80, 4.00),
    "claude-3-haiku": _anthropic(0.25, 1.25),
}
"""Built-in list prices (USD / 1M tokens), checked :data:`PRICES_AS_OF`. Approximate."""


@dataclass(frozen=True)
class CostEstimate:
    """A cost figure with its provenance.

    ``status``: ``actual`` (the provider reported the charge), ``estimated`` (from the
    price table), ``included`` (subscription or local route) or ``unknown`` (no rate for a
    bucket that was used). ``source`` says where the rates came from: ``provider``,
    ``table``, ``override``, ``route`` or ``none``. ``label`` is the human form.
    """

    amount_usd: float | None
    status: CostStatus
    source: str
    label: str


def format_cost(amount: float | None) -> str:
    """``$0.00`` for zero, ``~$0.0042`` / ``~$<0.0001`` below a cent, else ``~$1.23``."""
    if amount is None or math.isnan(amount):
        return "n/a"
    if amount == 0:
        return "$0.00"
    if amount < 0.0001:
        return "~$<0.0001"
    if amount < 0.01:
        return f"~${amount:.4f}"
    return f"~${amount:.2f}"


def _norm(name: str) -> str:
    return name.strip().lower().replace(".", "-").replace("_", "-")


def lookup_price(
    model: str, prices: Mapping[str, ModelPrice] | None = None
) -> tuple[ModelPrice, str] | None:
    """The price for ``model`` and its source (``override`` or ``table``), or ``None``.

    Override keys and built-in keys compete on length; on a tie the override wins.
    """
    name = _norm(model)
    best: tuple[int, int, ModelPrice, str] | None = None
    tables: list[tuple[Mapping[str, ModelPrice], str, int]] = [(DEFAULT_PRICES, "table", 0)]
    if prices:
        tables.append((prices, "override", 1))
    for table, source, rank in tables:
        for key, price in table.items():
            k = _norm(key)
            if k and k in name:
                cand = (len(k), rank, price, source)
                if best is None or cand[:2] > best[:2]:
                    best = cand
    return None if best is None else (best[2], best[3])


def _provider_cost(usage: CanonicalUsage) -> float | None:
    """A charge the provider reported itself (OpenRouter's ``usage.cost``), if any."""
    raw = usage.raw_usage
    value = raw.get("cost") if isinstance(raw, Mapping) else getattr(raw, "cost", None)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def _is_local(base_url: str | None) -> bool:
    if not base_url:
        return False
    host = base_url.split("://", 1)[-1].split("/", 1)[0].rsplit("@", 1)[-1]
    host = host.rsplit(":", 1)[0] if not host.startswith("[") else host.split("]")[0] + "]"
    return host in {"localhost", "127.0.0.1", "[::1]", "0.0.0.0"} or host.startswith("127.")


LOCAL_PROVIDERS = frozenset({"llamacpp", "local", "ollama"})
"""Providers whose calls run on the user's machine and cost nothing per token."""


def estimate_usage_cost(
    model: str,
    usage: CanonicalUsage,
    *,
    provider: str | None = None,
    base_url: str | None = None,
    prices: Mapping[str, ModelPrice | Mapping[str, Any]] | None = None,
) -> CostEstimate:
    """Estimate what ``usage`` cost on ``model`` (spec TK-20).

    A provider-reported charge wins (``actual``). Local routes (``provider`` in
    :data:`LOCAL_PROVIDERS` or a loopback ``base_url``) and prices marked ``included``
    give ``included``. Otherwise the rates come from ``prices`` merged over
    :data:`DEFAULT_PRICES`; a used bucket without a rate, or an unknown model, gives
    ``unknown`` with label ``n/a``. Reasoning tokens are not billed separately: providers
    already count them inside the output tokens.
    """
    reported = _provider_cost(usage)
    if reported is not None:
        return CostEstimate(reported, "actual", "provider", format_cost(reported))
    if (provider or "").lower() in LOCAL_PROVIDERS or _is_local(base_url):
        return CostEstimate(0.0, "included", "route", "included")

    table = {
        key: value if isinstance(value, ModelPrice) else ModelPrice.from_mapping(value)
        for key, value in (prices or {}).items()
    }
    found = lookup_price(model, table)
    if found is None:
        return CostEstimate(None, "unknown", "none", "n/a")
    price, source = found
    if price.included:
        return CostEstimate(0.0, "included", source, "included")
    if (
        price.tier is not None
        and price.tier_threshold is not None
        and usage.prompt_tokens > price.tier_threshold
    ):
        price = replace(price.tier, tier=None)

    amount = 0.0
    for tokens, rate in (
        (usage.input_tokens, price.input),
        (usage.output_tokens, price.output),
        (usage.cache_read_tokens, price.cache_read),
        (usage.cache_write_tokens, price.cache_write),
    ):
        if not tokens:
            continue
        if rate is None:
            return CostEstimate(None, "unknown", source, "n/a")
        amount += tokens * rate / 1_000_000
    return CostEstimate(amount, "estimated", source, format_cost(amount))


def prices_from_settings(settings: Any) -> dict[str, ModelPrice]:
    """The ``pricing.models`` section of :class:`palimpsest.config.Settings` as a table."""
    section = getattr(getattr(settings, "pricing", None), "models", None) or {}
    out: dict[str, ModelPrice] = {}
    for key, entry in section.items():
        data = entry.model_dump() if hasattr(entry, "model_dump") else dict(entry)
        out[key] = ModelPrice.from_mapping(data)
    return out
