"""CPU time of ``redact`` on real transcripts: the cost figure of docs/benchmarks.md's
redaction stages.

The text is the files of ``tests/data/transcripts`` (sorted by path, read as UTF-8,
concatenated) cut to ``--mb`` million characters; one warm-up call, then the best of
``--repeat`` calls by ``time.process_time``. Compare two versions of the code by running it
with each on ``PYTHONPATH``, alternated, in separate processes:

    PYTHONPATH=/work/main/src python benchmarks/redaction_speed.py --label main
    PYTHONPATH=src python benchmarks/redaction_speed.py --label branch
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from palimpsest.safety.redact import redact

ROOT = Path(__file__).resolve().parents[1]


def transcripts_text(chars: int) -> str:
    files = sorted(p for p in (ROOT / "tests" / "data" / "transcripts").rglob("*") if p.is_file())
    return "".join(p.read_text(encoding="utf-8", errors="replace") for p in files)[:chars]


def best_cpu(text: str, repeat: int) -> float:
    redact(text)
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        redact(text)
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=1.0, help="million characters of text")
    parser.add_argument("--repeat", type=int, default=5, help="timed calls; the best is kept")
    parser.add_argument("--label", default="", help="printed before the result")
    args = parser.parse_args()
    text = transcripts_text(int(args.mb * 1_000_000))
    seconds = best_cpu(text, args.repeat)
    print(
        f"{args.label} redact of {len(text):,} characters: {seconds:.4f} s CPU (best of {args.repeat})"
    )


if __name__ == "__main__":
    main()
