"""Run the Python blocks of a docs page as written, from the repository root."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def python_blocks(page: str) -> list[str]:
    """The ```python blocks of ``docs/<page>``, in order."""
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, re.DOTALL)


def run_block(code: str, home: Path) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter with only the package on the path."""
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={
            "PALIMPSEST_HOME": str(home),
            "PYTHONPATH": str(ROOT / "src"),
            "PATH": "/usr/bin:/bin",
        },
        check=False,
    )
