"""Every package imports on its own, in a fresh process, and importing writes nothing.

Guards the import cycle between compaction and summarizers (each imports the other's
helpers) and the rule that importing palimpsest does no work: no files, no network.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

MODULES = [
    "palimpsest",
    "palimpsest.summarizers",
    "palimpsest.summarizers.extractive",
    "palimpsest.compaction.redact",
    "palimpsest.compaction",
    "palimpsest.providers",
    "palimpsest.storage",
    "palimpsest.memory",
    "palimpsest.cli",
]


@pytest.mark.parametrize("module", MODULES)
def test_module_imports_alone_and_writes_nothing(module: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {"PALIMPSEST_HOME": str(home), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(
        [sys.executable, "-W", "error", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert not home.exists()
