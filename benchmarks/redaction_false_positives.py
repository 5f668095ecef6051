"""False positives of the rules that recognise a secret with no name beside it, on text
nobody wrote for them.

The rules that redact a value because of its *shape* (a prefixed random token, a bare
random run next to a word like "token", a vendor's fixed prefix) are the ones that can fire
on hashes, ids and base64 in ordinary code. This scan runs exactly those passes of
``palimpsest.safety.redact`` over a large corpus written by others: the Python standard
library, the installed packages' sources and docs (this venv's site-packages), and the
agent transcripts in ``../shared/data`` and ``tests/data``, and prints every string each
pass would remove. Name-based rules (``password=``) are not scanned: code is full of them
by design, and their false positives are measured on the benign corpus of
``benchmarks/redaction.py``.

Run: ``python benchmarks/redaction_false_positives.py [--rules generic,bare,...]``
"""

from __future__ import annotations

import argparse
import sys
import sysconfig
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import palimpsest.safety.redact as redaction

ROOT = Path(__file__).resolve().parents[1]
SUFFIXES = {".py", ".pyi", ".md", ".rst", ".txt", ".json", ".jsonl", ".toml", ".cfg", ".yaml",
            ".yml", ".ini", ".html"}  # fmt: skip
MAX_FILE = 4_000_000


def corpus_roots() -> list[Path]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    purelib = Path(sysconfig.get_paths()["purelib"])
    shared = ROOT.parent.parent / "shared" / "data"
    if not shared.exists():
        shared = Path("/work/shared/data")
    roots = [stdlib, purelib, shared, ROOT / "tests" / "data" / "transcripts",
             ROOT / "tests" / "data" / "agent-histories", ROOT / "tests" / "data" / "trajectories"]  # fmt: skip
    return [root for root in roots if root.exists()]


def files(roots: list[Path]) -> Iterator[Path]:
    seen: set[Path] = set()
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.suffix not in SUFFIXES or not path.is_file():
                continue
            if root == stdlib and "site-packages" in path.parts:
                continue  # the interpreter's own site-packages, not this venv's
            if path.stat().st_size > MAX_FILE:
                continue
            resolved = path.resolve()
            if resolved in seen or ROOT / "tests" / "data" / "secrets" in resolved.parents:
                continue
            seen.add(resolved)
            yield path


def shape_passes() -> tuple[tuple[str, redaction._Pass], ...]:
    """``SHAPE_PASSES``, or for an older checkout (``PYTHONPATH=<old src>``, to measure a
    "before") the catalogue's passes and the generic one, which follow the private-key pass."""
    if hasattr(redaction, "SHAPE_PASSES"):
        return tuple(redaction.SHAPE_PASSES)
    from palimpsest.safety.redact_patterns import TOKEN_PATTERNS

    steps = redaction._PASSES[1 : len(TOKEN_PATTERNS) + 2]
    return (*zip([t.name for t in TOKEN_PATTERNS] + ["generic"], steps, strict=True),)


def passes_named(names: set[str]) -> dict[str, redaction._Pass]:
    """The shape-based passes, by name (see ``SHAPE_PASSES`` in palimpsest.safety.redact)."""
    available = dict(shape_passes())
    missing = names - available.keys()
    if missing:
        sys.exit(f"unknown rules: {', '.join(sorted(missing))}; known: {', '.join(available)}")
    return {name: available[name] for name in names}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="", help="comma-separated; default: all shape rules")
    args = parser.parse_args()
    names = set(filter(None, args.rules.split(","))) or {n for n, _ in shape_passes()}
    passes = passes_named(names)
    flagged: dict[str, Counter[tuple[str, str]]] = {name: Counter() for name in passes}
    size = count = 0
    start = time.perf_counter()
    for path in files(corpus_roots()):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        size += len(text.encode("utf-8", errors="replace"))
        count += 1
        lowered = text.lower()
        for name, step in passes.items():
            found: list[str] = []
            step.apply(text, lowered, found)
            for value in found:
                flagged[name][(value[:120], str(path))] += 1
    seconds = time.perf_counter() - start
    print(
        f"{count} files, {size / 1e6:.1f} MB, {seconds:.0f} s; rules: {', '.join(sorted(passes))}"
    )
    for name in sorted(flagged):
        hits = flagged[name]
        print(f"\n{name}: {len(hits)} distinct strings flagged")
        for (value, path), n in sorted(hits.items()):
            print(f"  {value!r} x{n}  in {path}")


if __name__ == "__main__":
    main()
