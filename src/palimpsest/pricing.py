"""What a request cost, from its canonical usage: user prices first, then genai-prices.

Rates come from two places, in this order:

1. **Overrides**: the caller's ``prices=`` table or the ``pricing.models`` config section
   (USD per million tokens). A key matches every model name that contains it, ignoring
   case and treating ``.`` and ``_`` like ``-``; the longest matching key wins. An override
   always beats the catalogue, so a negotiated rate or a private deployment is priced the
   way its user says.
2. **The catalogue**: the maintained ``genai-prices`` package, whose data is bundled and
   read offline (:mod:`palimpsest.price_catalog`). Upgrading the package refreshes prices.

A model neither knows is ``unknown`` (``amount_usd is None``), never priced like a
relative: a cost that is wrong by 3x is worse than a cost that says it is missing. Usage
the provider did not report (``usage is None``) is unknown for the same reason. Spec TK-20.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from .price_catalog import CATALOG_NAME, catalog_cost, catalog_version
from .usage import CanonicalUsage

__all__ = [
    "LOCAL_PROVIDERS",
    "CostEstimate",
    "CostStatus",
    "ModelPrice",
    "estimate_usage_cost",
    "format_cost",
    "lookup_override",
    "prices_from_settings",
]

CostStatus = Literal["actual", "estimated", "included", "unknown"]


@dataclass(frozen=True)
class ModelPrice:
    """One override: USD per million tokens for each canonical bucket.

    ``None`` means "rate not known": a request that used that bucket gets an ``unknown``
    cost rather than a guess. ``included`` marks a route whose use is covered by a
    subscription or runs locally; its cost is reported as ``included``.
    """

    input: float | None
    output: float | None
    cache_read: float | None = None
    cache_write: float | None = None
    included: bool = False

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> ModelPrice:
        """Build from ``{"input": .., "output": .., "cache_read": .., "cache_write": ..}``."""
        unknown = set(data) - {"input", "output", "cache_read", "cache_write", "included"}
        if unknown:
            raise ValueError(f"unknown price field(s): {', '.join(sorted(unknown))}")
        rates = {k: data.get(k) for k in ("input", "output", "cache_read", "cache_write")}
        for key, value in rates.items():
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int | float) or value < 0
            ):
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


@dataclass(frozen=True)
class CostEstimate:
    """A cost figure with its provenance.

    ``status``: ``actual`` (the provider reported the charge), ``estimated`` (from an
    override or the catalogue), ``included`` (subscription or local route) or ``unknown``
    (usage not reported, model not priced, or no rate for a bucket that was used).
    ``source`` says where the rates came from: ``provider``, ``override``,
    ``genai-prices``, ``route`` or ``none``. ``label`` is the human form. ``version``
    names the catalogue release for catalogue prices (``genai-prices 0.2.3``).
    """

    amount_usd: float | None
    status: CostStatus
    source: str
    label: str
    version: str | None = None
    reason: str | None = None
    """Why the figure is unknown when the model is priced (a bucket without a rate)."""


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


def lookup_override(
    model: str, prices: Mapping[str, ModelPrice] | None
) -> tuple[str, ModelPrice] | None:
    """The override for ``model``: the longest key contained in its name, or ``None``."""
    name = _norm(model)
    best: tuple[str, ModelPrice] | None = None
    for key, price in (prices or {}).items():
        k = _norm(key)
        if k and k in name and (best is None or len(k) > len(_norm(best[0]))):
            best = (key, price)
    return best


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


def _override_cost(usage: CanonicalUsage, price: ModelPrice) -> float | None:
    """The cost at an override's rates; ``None`` when a used bucket has no rate."""
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
            return None
        amount += tokens * rate / 1_000_000
    return amount


def estimate_usage_cost(
    model: str,
    usage: CanonicalUsage | None,
    *,
    provider: str | None = None,
    base_url: str | None = None,
    prices: Mapping[str, ModelPrice | Mapping[str, Any]] | None = None,
    at: datetime | None = None,
) -> CostEstimate:
    """Estimate what ``usage`` cost on ``model`` (spec TK-20).

    In order: a provider-reported charge is ``actual``; local routes (``provider`` in
    :data:`LOCAL_PROVIDERS` or a loopback ``base_url``) and overrides marked ``included``
    are ``included`` (whatever the usage); unreported usage (``None``) is ``unknown``; an
    override's rates (source ``override``); the genai-prices catalogue (source ``genai-prices``,
    ``provider`` and ``base_url`` pick the route's own price list when it has one). A
    model found in neither is ``unknown`` with label ``n/a``, and so is a priced model whose
    usage has cache reads or writes its entry has no rate for (``reason`` says which):
    charging them at the input rate would be a borrowed figure, not an estimate. ``at`` is the request time
    for prices that changed on a date (default: now). Reasoning tokens are not billed
    separately: providers already count them inside the output tokens.
    """
    if usage is not None:
        reported = _provider_cost(usage)
        if reported is not None:
            return CostEstimate(reported, "actual", "provider", format_cost(reported))
    if (provider or "").lower() in LOCAL_PROVIDERS or _is_local(base_url):
        return CostEstimate(0.0, "included", "route", "included")

    table = {
        key: value if isinstance(value, ModelPrice) else ModelPrice.from_mapping(value)
        for key, value in (prices or {}).items()
    }
    found = lookup_override(model, table)
    if found is not None and found[1].included:
        return CostEstimate(0.0, "included", "override", "included")
    if usage is None:
        return CostEstimate(None, "unknown", "none", "n/a")
    if found is not None:
        price = found[1]
        amount = _override_cost(usage, price)
        if amount is None:
            return CostEstimate(None, "unknown", "override", "n/a")
        return CostEstimate(amount, "estimated", "override", format_cost(amount))

    listed = catalog_cost(model, usage, provider=provider, base_url=base_url, at=at)
    if listed is None:
        return CostEstimate(None, "unknown", "none", "n/a")
    if listed.missing:  # never borrow the input rate for a bucket the list does not price
        return CostEstimate(
            None,
            "unknown",
            CATALOG_NAME,
            "n/a",
            version=catalog_version(),
            reason=f"no {' or '.join(listed.missing)} price for {listed.model_id}",
        )
    return CostEstimate(
        listed.amount_usd,
        "estimated",
        CATALOG_NAME,
        format_cost(listed.amount_usd),
        version=catalog_version(),
    )


def prices_from_settings(settings: Any) -> dict[str, ModelPrice]:
    """The ``pricing.models`` section of :class:`palimpsest.config.Settings` as a table."""
    section = getattr(getattr(settings, "pricing", None), "models", None) or {}
    out: dict[str, ModelPrice] = {}
    for key, entry in section.items():
        data = entry.model_dump() if hasattr(entry, "model_dump") else dict(entry)
        out[key] = ModelPrice.from_mapping(data)
    return out
