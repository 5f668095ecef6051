"""docs/agent.md: its Python examples run as written (from the repository root)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from docs_blocks import ROOT, python_blocks, run_block

DOC = ROOT / "docs" / "agent.md"
BLOCKS = python_blocks("agent.md")


def test_the_page_has_examples() -> None:
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("code", BLOCKS, ids=lambda code: code.splitlines()[0][:40])
def test_example_runs(code: str, tmp_path: Path) -> None:
    done = run_block(code, tmp_path / "home")
    assert done.returncode == 0, done.stderr


def _tokens_free(lines: list[str]) -> list[str]:
    # the estimate moves whenever the system prompt does; the shape of the line must not
    return [re.sub(r"^\d+ tokens of", "N tokens of", line.rstrip()) for line in lines]


def test_the_first_example_prints_what_the_page_says(tmp_path: Path) -> None:
    done = run_block(BLOCKS[0], tmp_path / "home")
    shown = re.search(r"prints\n\n```text\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
    assert shown is not None
    assert _tokens_free(done.stdout.splitlines()) == _tokens_free(shown.group(1).splitlines())
