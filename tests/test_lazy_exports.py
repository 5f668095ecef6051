"""Public names imported on first use: looked up once, unknown names refused."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from palimpsest.lazy_exports import lazy_exports


def test_a_name_is_imported_on_first_use_and_kept() -> None:
    namespace: dict[str, Any] = {}
    getattr_, dir_ = lazy_exports("palimpsest", {"redact": ".safety.redact"}, ["redact"], namespace)
    from palimpsest.safety.redact import redact

    assert getattr_("redact") is redact
    assert namespace["redact"] is redact  # later lookups never reach __getattr__
    assert dir_() == ["redact"]


def test_an_unknown_name_is_an_attribute_error() -> None:
    getattr_, _ = lazy_exports("palimpsest.storage", {}, [], {})
    with pytest.raises(AttributeError, match=r"'palimpsest\.storage' has no attribute 'nope'"):
        getattr_("nope")


def test_importing_a_storage_module_loads_no_other_storage_module() -> None:
    code = (
        "import sys\n"
        "import palimpsest.storage.titles\n"
        "print(sorted(m for m in sys.modules if m.startswith('palimpsest.storage.')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['palimpsest.storage.titles']"
