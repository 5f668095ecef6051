"""docs/agent.md: its Python examples run as written (from the repository root)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "agent.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)


def test_the_page_has_examples() -> None:
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("code", BLOCKS, ids=lambda code: code.splitlines()[0][:40])
def test_example_runs(code: str, tmp_path: Path) -> None:
    env_home = tmp_path / "home"
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={
            "PALIMPSEST_HOME": str(env_home),
            "PYTHONPATH": str(ROOT / "src"),
            "PATH": "/usr/bin:/bin",
        },
        check=False,
    )
    assert done.returncode == 0, done.stderr


def _tokens_free(lines: list[str]) -> list[str]:
    # the estimate moves whenever the system prompt does; the shape of the line must not
    return [re.sub(r"^\d+ tokens of", "N tokens of", line.rstrip()) for line in lines]


def test_the_first_example_prints_what_the_page_says(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", BLOCKS[0]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(ROOT / "src"), "PALIMPSEST_HOME": str(tmp_path / "home")},
        check=False,
    )
    shown = re.search(r"prints\n\n```text\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
    assert shown is not None
    assert _tokens_free(done.stdout.splitlines()) == _tokens_free(shown.group(1).splitlines())
