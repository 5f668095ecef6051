"""docs/trajectories.md: its Python example runs as written and prints what the page says."""

from __future__ import annotations

import re
from pathlib import Path

from docs_blocks import ROOT, python_blocks, run_block


def test_the_python_example_prints_what_the_page_shows(tmp_path: Path) -> None:
    blocks = python_blocks("trajectories.md")
    assert len(blocks) == 1
    done = run_block(blocks[0], tmp_path / "home")
    assert done.returncode == 0, done.stderr
    page = (ROOT / "docs" / "trajectories.md").read_text(encoding="utf-8")
    shown = re.search(r"prints\n\n```\n(.*?)```", page, re.DOTALL)
    assert shown is not None
    assert done.stdout == shown.group(1)
