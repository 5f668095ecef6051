"""Continuity of compaction on every transcript we have, against two baselines.

Runs ``palimpsest eval continuity`` at depths 0.5, 0.7 and 0.9 over every transcript in
../shared/data/transcripts and tests/data/transcripts (the same relative path once), and
prints the table and one aggregate line per system (palimpsest, observation masking,
truncation).

The files are split by name before any tuning, so that figures on runs nobody tuned for
can be told apart from the rest: a file is HELD OUT when the first two hex digits of the
SHA-256 of its file name are below ``60`` (6 of the 18 files). Run:

    python benchmarks/continuity.py [--split all|held-out|in-sample] [--json]
"""

from __future__ import annotations

import argparse
import hashlib
import platform
from pathlib import Path

from palimpsest.cli.app import app

ROOT = Path(__file__).resolve().parents[1]
SOURCES = (ROOT.parent / "shared" / "data" / "transcripts", ROOT / "tests" / "data" / "transcripts")
SUFFIXES = (".traj", ".json", ".jsonl")
HELD_OUT_BELOW = 0x60


def held_out(path: Path) -> bool:
    """The split rule: fixed by the file name alone, decided before tuning."""
    return int(hashlib.sha256(path.name.encode()).hexdigest()[:2], 16) < HELD_OUT_BELOW


def transcripts() -> list[Path]:
    """Every transcript file of both sources, each relative path once (shared first)."""
    seen: dict[Path, Path] = {}
    for source in SOURCES:
        if not source.is_dir():
            continue
        for path in sorted(source.rglob("*")):
            if path.is_file() and path.name.endswith(SUFFIXES):
                seen.setdefault(path.relative_to(source), path)
    return list(seen.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("all", "held-out", "in-sample"), default="all")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    files = [
        p for p in transcripts() if args.split == "all" or held_out(p) == (args.split == "held-out")
    ]
    if not args.json:
        print(f"# {args.split}: {len(files)} files  python {platform.python_version()}")
    app(["eval", "continuity", *map(str, files), *(["--json"] if args.json else [])])


if __name__ == "__main__":
    main()
