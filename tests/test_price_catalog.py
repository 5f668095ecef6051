"""The genai-prices catalogue: bundled data, read offline, never a neighbour's price."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from palimpsest.price_catalog import CATALOG_NAME, catalog_cost, catalog_version
from palimpsest.usage import CanonicalUsage

ROOT = Path(__file__).resolve().parents[1]


def test_the_entry_that_priced_it_is_named() -> None:
    found = catalog_cost("claude-opus-4.7", CanonicalUsage(input_tokens=1_000_000))
    assert found is not None
    assert (found.amount_usd, found.model_id, found.provider_id) == (
        5.0,
        "claude-opus-4-7",
        "anthropic",
    )


def test_the_routes_own_list_comes_first() -> None:
    found = catalog_cost(
        "anthropic/claude-sonnet-4.5",
        CanonicalUsage(input_tokens=1_000),
        base_url="https://openrouter.ai/api/v1",
    )
    assert found is not None and found.provider_id == "openrouter"
    direct = catalog_cost("anthropic/claude-sonnet-4.5", CanonicalUsage(input_tokens=1_000))
    assert direct is not None and direct.provider_id == "anthropic"


def test_unknown_is_none() -> None:
    assert catalog_cost("claude-opus-4-99", CanonicalUsage(input_tokens=1)) is None
    assert catalog_cost("nosuch/model", CanonicalUsage(input_tokens=1)) is None


def test_version_names_the_installed_release() -> None:
    from importlib.metadata import version

    assert catalog_version() == f"{CATALOG_NAME} {version('genai-prices')}"


def test_pricing_touches_no_network_and_starts_no_updater() -> None:
    """genai-prices can fetch newer prices from GitHub; we must never let it."""
    code = textwrap.dedent(
        """
        import socket, threading

        def refuse(*args, **kwargs):
            raise AssertionError("network touched")

        socket.socket.connect = refuse
        socket.create_connection = refuse
        socket.getaddrinfo = refuse

        from palimpsest.pricing import estimate_usage_cost
        from palimpsest.usage import CanonicalUsage
        from genai_prices import update_prices

        before = set(threading.enumerate())
        for model in ("claude-opus-4-7", "gpt-4o-mini", "deepseek-v4-flash", "nosuch"):
            estimate_usage_cost(model, CanonicalUsage(input_tokens=10), base_url="https://openrouter.ai/api/v1")
        assert set(threading.enumerate()) == before, "a thread was started"
        assert update_prices._shared_updater.ref_count == 0
        print("ok")
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_buckets_without_a_rate_are_named() -> None:
    usage = CanonicalUsage(input_tokens=10, cache_read_tokens=5, cache_write_tokens=5)
    listed = catalog_cost("claude-2", usage, provider="anthropic")
    assert listed is not None and listed.missing == ("cache read", "cache write")
    priced = catalog_cost("claude-haiku-4-5", usage, provider="anthropic")
    assert priced is not None and priced.missing == ()
