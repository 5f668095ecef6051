"""docs/tool-output.md: its Python example runs as written and does what the page says."""

from __future__ import annotations

from pathlib import Path

from docs_blocks import python_blocks, run_block

BLOCKS = python_blocks("tool-output.md")


def test_the_own_loop_example_saves_one_and_points_at_the_other(tmp_path: Path) -> None:
    assert len(BLOCKS) == 1
    done = run_block(BLOCKS[0], tmp_path / "home")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:3] == ["<persisted-output>", "<rerunnable-output>", "1 output saved"]
    assert lines[3].endswith("characters kept out of the context")
    assert lines[4].endswith("bytes kept off the disk")
