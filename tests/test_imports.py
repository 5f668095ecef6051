"""Every package imports on its own, in a fresh process, and importing writes nothing.

Guards the import cycle between compaction and summarizers (each imports the other's
helpers) and the rule that importing palimpsest does no work: no files, no network.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

MODULES = [
    "palimpsest",
    "palimpsest.summarizers",
    "palimpsest.summarizers.extractive",
    "palimpsest.safety.redact",
    "palimpsest.safety.threats",
    "palimpsest.compaction",
    "palimpsest.providers",
    "palimpsest.storage",
    "palimpsest.memory",
    "palimpsest.cli",
    "palimpsest.integrations",
    "palimpsest.integrations.mcp_server",
    "palimpsest.messages.history_files",
    "palimpsest.storage.history_import",
    "palimpsest.integrations.langchain",
    "palimpsest.integrations.pydantic_ai",
    "palimpsest.integrations.openai_agents",
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


SRC = Path(__file__).resolve().parents[1] / "src" / "palimpsest"


def _imports_of(path: Path) -> list[str]:
    """Absolute dotted names a module imports (relative imports resolved)."""
    # The package a module's relative imports start from: its folder, for __init__ too.
    package = ["palimpsest", *path.relative_to(SRC).parent.parts]
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - (node.level - 1)] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            names.append(module)
            names.extend(f"{module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
    return names


def test_safety_is_below_every_other_layer() -> None:
    """safety/ may import only itself and palimpsest.errors, so nothing can cycle through it."""
    for path in (SRC / "safety").rglob("*.py"):
        for name in _imports_of(path):
            if name.startswith("palimpsest."):
                assert name.startswith(("palimpsest.safety", "palimpsest.errors")), (
                    f"{path.relative_to(SRC)} imports {name}"
                )


def test_nothing_imports_redaction_or_the_scanner_from_their_old_places() -> None:
    old = ("palimpsest.compaction.redact", "palimpsest.memory.threats")
    assert not (SRC / "compaction" / "redact.py").exists()
    assert not (SRC / "memory" / "threats").exists()
    for path in SRC.rglob("*.py"):
        for name in _imports_of(path):
            assert not name.startswith(old), f"{path.relative_to(SRC)} imports {name}"
