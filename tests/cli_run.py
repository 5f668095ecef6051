"""Run the real ``palimpsest`` command in a subprocess, as a user's shell would."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def cli_env(**extra: str) -> dict[str, str]:
    """This process's environment (PALIMPSEST_HOME from the autouse fixture), the source
    tree importable, 80 columns, no colour unless a test asks for it."""
    env = dict(os.environ)
    env.pop("FORCE_COLOR", None)
    env.update(
        PYTHONPATH=str(SRC) + os.pathsep + env.get("PYTHONPATH", ""),
        COLUMNS="80",
        NO_COLOR="1",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def run_cli(
    *args: str,
    stdin: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """``palimpsest ARGS...`` as a subprocess; stdout, stderr and the exit status."""
    return subprocess.run(
        [sys.executable, "-m", "palimpsest.cli", *args],
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        env=dict(env) if env is not None else cli_env(),
        cwd=cwd,
        timeout=120,
    )
