"""Every Python block in README.md and docs/*.md runs as written (issue 14, item 7).

One test per page: the page's blocks run in order in one fresh interpreter (see
``docs_blocks``). A failure names the page and the Markdown line it happened on.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from docs_blocks import NEEDS_GGUF, ROOT, doc_pages, page_blocks, run_page
from llamacpp_server import gguf_path

PAGES = [page for page in doc_pages() if page_blocks(page)]


def test_the_readme_and_most_pages_have_python_examples() -> None:
    names = {page.name for page in PAGES}
    assert "README.md" in names and len(names) >= 10


def test_blocks_are_found_with_their_lines(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# t\n\n```python\nx = 1\n```\n\ntext\n\n```python needs-gguf\ny = x\n```\n"
        "\n```pycon\n>>> z\n```\n"
    )
    blocks = [(b.line, b.code, b.tags) for b in page_blocks(page, tmp_path)]
    assert blocks == [(4, "x = 1\n", ()), (10, "y = x\n", (NEEDS_GGUF,))]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_page_runs_as_written(page: Path, tmp_path: Path) -> None:
    done = run_page(page, tmp_path / "scratch")
    assert done.returncode == 0, done.stderr[-3000:]


def test_a_failing_block_is_reported_at_its_markdown_line(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    page = docs / "broken.md"
    page.write_text("intro\n\n```python\nvalue = 41\n```\n\n```python\nvalue + undefined\n```\n")
    done = run_page(page, tmp_path / "scratch", root=tmp_path)
    assert done.returncode != 0
    assert re.search(r'File "docs/broken.md", line 8', done.stderr)
    assert "NameError: name 'undefined' is not defined" in done.stderr


def test_top_level_await_runs(tmp_path: Path) -> None:
    page = tmp_path / "async.md"
    page.write_text("```python\nimport asyncio\n\nawait asyncio.sleep(0)\nprint('awaited')\n```\n")
    done = run_page(page, tmp_path / "scratch", root=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "awaited\n"


def test_only_local_model_blocks_are_held_back() -> None:
    """The one opt-in tag is for blocks that load a local GGUF; nothing else is exempt."""
    tagged = [(b.page, b.tags) for page in PAGES for b in page_blocks(page) if b.tags]
    assert tagged and all(tags == (NEEDS_GGUF,) for _, tags in tagged)
    assert {page for page, _ in tagged} == {"docs/providers-local.md"}


@pytest.mark.llamacpp
def test_local_model_blocks_run_with_a_gguf(tmp_path: Path) -> None:
    model = gguf_path()  # skips unless PALIMPSEST_TEST_GGUF names a file
    done = run_page(ROOT / "docs" / "providers-local.md", tmp_path / "scratch", gguf=model)
    assert done.returncode == 0, done.stderr[-3000:]
