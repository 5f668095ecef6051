"""Run the Python blocks of README.md and docs/*.md as written.

A page is read like a notebook: its ``python`` blocks run in order in one fresh
interpreter and share one namespace, so a later block may use what an earlier block on the
same page defined, and nothing else. Top-level ``await`` works as in ``python -m asyncio``.
The interpreter sees only the package (``PYTHONPATH=src``), no API keys, a
``PALIMPSEST_HOME`` and ``HOME`` of its own, and a scratch working directory in which
``examples/`` is the repository's (so ``examples/marshmallow-1867.traj`` opens as it does
for a reader at the repository root, and files a block writes land in the scratch
directory). A block that needs a model sets one up where the reader can see it,
usually a ``ScriptedChatModel``.

Why our own collector rather than ``pytest-markdown-docs``: that plugin executes blocks
inside the pytest process, beside the test suite's imports, fixtures and environment,
which is exactly what a reader's copy of a snippet does not have; and it needs
``--markdown-docs`` on every run. A fresh interpreter per page checks the promise the
docs make ("this runs as written") and needs no flag.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_FENCE = re.compile(r"^```python([^\n]*)\n(.*?)^```", re.DOTALL | re.MULTILINE)

NEEDS_GGUF = "needs-gguf"
"""Info-string word (```` ```python needs-gguf ````) of a block that loads a local GGUF
model through the llamacpp extra. Such blocks run only in the opt-in ``llamacpp`` test
(``PALIMPSEST_TEST_GGUF`` set); every other block runs in every test run."""


@dataclass(frozen=True)
class Block:
    """One ``python`` block: where it is and what it says."""

    page: str
    line: int
    code: str
    tags: tuple[str, ...] = ()


def doc_pages() -> list[Path]:
    """README.md and every page under docs/, in a stable order."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def page_blocks(path: Path, root: Path = ROOT) -> list[Block]:
    """The ``python`` blocks of one page, with the line each starts on (1-based)."""
    text = path.read_text(encoding="utf-8")
    name = path.relative_to(root).as_posix()
    return [
        Block(
            name,
            text.count("\n", 0, match.start(2)) + 1,
            match.group(2),
            tuple(match.group(1).split()),
        )
        for match in _FENCE.finditer(text)
    ]


def python_blocks(page: str) -> list[str]:
    """The ``python`` blocks of ``docs/<page>``, in order."""
    return [block.code for block in page_blocks(ROOT / "docs" / page)]


# Runs inside the fresh interpreter: each block compiled under its page and line, so a
# traceback points at the Markdown, then run in the page's one namespace.
_RUNNER = """
import ast, asyncio, inspect, json, sys
blocks = json.loads(sys.stdin.read())
namespace = {"__name__": "__main__"}
for block in blocks:
    source = "\\n" * (block["line"] - 1) + block["code"]
    code = compile(source, block["page"], "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    result = eval(code, namespace)
    if inspect.iscoroutine(result):
        asyncio.run(result)
"""


def _env(home: Path, user_home: Path) -> dict[str, str]:
    return {
        "PALIMPSEST_HOME": str(home),
        "HOME": str(user_home),
        "PYTHONPATH": str(ROOT / "src"),
        "PATH": "/usr/bin:/bin",
    }


def run_page(
    path: Path, scratch: Path, root: Path = ROOT, *, gguf: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Every block of ``path`` in order, in one fresh interpreter, working in ``scratch``.

    ``root`` is the directory page names are relative to (the repository; tests of this
    collector pass their own). Blocks tagged :data:`NEEDS_GGUF` run only when ``gguf``
    is given; it is then linked where the docs put it (``~/models/<its name>``)."""
    scratch.mkdir(parents=True, exist_ok=True)
    (scratch / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    if gguf is not None:
        models = scratch / "user-home" / "models"
        models.mkdir(parents=True)
        (models / "qwen2.5-0.5b-instruct-q4_k_m.gguf").symlink_to(gguf)
    blocks = [
        {"page": b.page, "line": b.line, "code": b.code}
        for b in page_blocks(path, root)
        if gguf is not None or NEEDS_GGUF not in b.tags
    ]
    return subprocess.run(
        [sys.executable, "-c", _RUNNER],
        input=json.dumps(blocks),
        cwd=scratch,
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(scratch / "home", scratch / "user-home"),
        check=False,
    )


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
