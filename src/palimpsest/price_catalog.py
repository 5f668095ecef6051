"""List prices from the maintained ``genai-prices`` catalogue, read offline.

Hand-kept price tables go stale within months (ours priced every newer Claude Opus minor
version at the old ``claude-opus-4`` rate). ``genai-prices`` is maintained upstream and
ships its data inside the wheel (``genai_prices/data.py``), so a lookup is a pure function
of the installed version: upgrading the package is how prices get refreshed.

The package can also fetch newer data from GitHub in a background thread
(``UpdatePrices``). Importing it only defines that class; this module never starts it, so
``calc_price`` reads the bundled snapshot and pricing touches no network (a test runs it
with sockets disabled). The import happens on first use, not when palimpsest loads.

A model the catalogue does not know is ``None`` here, never the price of a neighbouring
model: the catalogue matches names by its own rules (``claude-opus-4-7`` and
``claude-opus-4.7`` are one model; ``claude-opus-4-9`` is nothing).
"""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .usage import CanonicalUsage

__all__ = ["CATALOG_NAME", "PROVIDER_IDS", "CatalogPrice", "catalog_cost", "catalog_version"]

CATALOG_NAME = "genai-prices"
"""The distribution the prices come from (and the ``source`` of an estimate made with it)."""

PROVIDER_IDS: dict[str, str] = {
    "openai": "openai",
    "anthropic": "anthropic",
    "openrouter": "openrouter",
}
"""Our ``connect()`` prefixes -> the catalogue's provider ids. ``openai-compatible`` is
absent on purpose: it says nothing about who serves the model."""


@dataclass(frozen=True)
class CatalogPrice:
    """What a request cost per the catalogue, and which entry priced it."""

    amount_usd: float
    model_id: str
    provider_id: str
    missing: tuple[str, ...] = ()
    """Buckets the usage has tokens in but the entry has no rate for (``"cache read"``,
    ``"cache write"``). The catalogue then charges them at the input rate, a figure
    nobody quoted: the caller must treat the amount as unknown, not as an estimate."""


def catalog_version() -> str:
    """``genai-prices <version>``: recorded with every estimate made from the catalogue."""
    try:
        return f"{CATALOG_NAME} {importlib.metadata.version(CATALOG_NAME)}"
    except importlib.metadata.PackageNotFoundError:
        return f"{CATALOG_NAME} (not installed)"


def _routes(
    model: str, provider: str | None, base_url: str | None
) -> list[tuple[str, str | None, str | None]]:
    """Lookups to try in order: ``(model_ref, provider_id, provider_api_url)``.

    The route's own price list first (the base URL, then our provider prefix), then the
    model maker's list. ``vendor/model`` names (OpenRouter style) are also tried as
    ``model`` at ``vendor``.
    """
    routes: list[tuple[str, str | None, str | None]] = []
    if base_url:
        routes.append((model, None, base_url))
    provider_id = PROVIDER_IDS.get((provider or "").lower())
    if provider_id:
        routes.append((model, provider_id, None))
    routes.append((model, None, None))
    vendor, sep, name = model.partition("/")
    if sep and vendor and name:
        routes.append((name, vendor, None))
        routes.append((name, None, None))
    return routes


def catalog_cost(
    model: str,
    usage: CanonicalUsage,
    *,
    provider: str | None = None,
    base_url: str | None = None,
    at: datetime | None = None,
) -> CatalogPrice | None:
    """The cost of ``usage`` on ``model`` per the bundled catalogue; ``None`` if unknown.

    ``at`` is the request time (prices with a start date differ before and after it);
    ``None`` means now. The catalogue counts cache reads and writes inside its input
    total, so the canonical disjoint buckets are summed back into it here.
    """
    from genai_prices import Usage, calc_price  # deferred: the data module is large

    priced = Usage(
        input_tokens=usage.prompt_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
    )
    for ref, provider_id, api_url in _routes(model.strip(), provider, base_url):
        try:
            if api_url is not None:
                result = calc_price(
                    priced, ref, provider_api_url=api_url, genai_request_timestamp=at
                )
            else:
                result = calc_price(
                    priced, ref, provider_id=provider_id, genai_request_timestamp=at
                )
        except LookupError:
            continue
        rates = result.model_price
        missing = tuple(
            bucket
            for bucket, tokens, rate in (
                ("cache read", usage.cache_read_tokens, getattr(rates, "cache_read_mtok", None)),
                ("cache write", usage.cache_write_tokens, getattr(rates, "cache_write_mtok", None)),
            )
            if tokens and rate is None
        )
        return CatalogPrice(
            float(result.total_price), result.model.id, result.provider.id, missing=missing
        )
    return None
