"""The package's public names are exactly those listed in ``__all__`` (httpx's habit)."""

from __future__ import annotations

import subprocess
import sys
import types

import pytest

import palimpsest


def test_every_public_name_is_listed() -> None:
    public = {
        name
        for name in dir(palimpsest)
        if not name.startswith("_")
        and not isinstance(getattr(palimpsest, name), types.ModuleType)
        and name not in {"annotations", "importlib", "TYPE_CHECKING", "Any"}
    }
    assert public == set(palimpsest.__all__) - {"__version__"}


def test_importing_the_package_loads_only_the_exception_tree() -> None:
    """Public names load on first use (issue 27: `import palimpsest` took 615 ms)."""
    code = (
        "import sys, palimpsest\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('palimpsest'))\n"
        # the exceptions, and the standard-library helper that defers everything else
        "assert loaded == ['palimpsest', 'palimpsest.errors', 'palimpsest.lazy_exports'], loaded\n"
        "assert 'pydantic' not in sys.modules\n"
        "assert palimpsest.ContextCompressor.__module__ == 'palimpsest.compaction.compressor'\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        palimpsest.Nope  # noqa: B018


def test_every_listed_name_exists() -> None:
    for name in palimpsest.__all__:
        assert hasattr(palimpsest, name), name


def test_every_exception_is_exported() -> None:
    from palimpsest import errors

    for name in errors.__all__:
        assert name in palimpsest.__all__


def test_per_turn_accounting_is_public() -> None:
    """Agent loops size every request; the incremental way is on the top-level API."""
    messages = [{"role": "user", "content": "hello"}]
    accountant = palimpsest.ConversationTokens()
    assert accountant.request_tokens(messages, "system") == (
        palimpsest.estimate_request_tokens_rough(messages, "system")
    )
