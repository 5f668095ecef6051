"""examples/gateway.py runs as written: its demo serves chats over loopback HTTP and
compacts the overnight session once."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_demo_runs_and_compacts_once(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "examples/gateway.py", "--demo"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src"), "PALIMPSEST_HOME": str(tmp_path)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    compacted = re.findall(r"^\[(\w+)\] > .*\n  hygiene: compacted", out, re.MULTILINE)
    assert compacted == ["carol"]  # only the overnight session, on its first message
    assert "hygiene compactions: 1" in out
    assert "[bob] 5 messages at once: stored as sequence [2, 3, 4, 5, 6]" in out
    assert not list(tmp_path.iterdir())  # the demo kept its store in a temporary directory


def test_a_mode_is_required() -> None:
    done = subprocess.run(
        [sys.executable, "examples/gateway.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        check=False,
    )
    assert done.returncode == 2 and "--demo" in done.stderr
