"""Continuity of compaction on every transcript we have, against two baselines.

Runs ``palimpsest eval continuity`` at depths 0.5, 0.7 and 0.9 over every transcript in
../shared/data/transcripts and tests/data/transcripts (the same relative path once), and
prints the table and one aggregate line per system (palimpsest, observation masking,
truncation).

The files are split by name before any tuning, so that figures on runs nobody tuned for
can be told apart from the rest: a file is HELD OUT when the first two hex digits of the
SHA-256 of its file name are below ``60`` (6 of the 18 files). Run:

    python benchmarks/continuity.py [--split all|held-out|in-sample] [--real-only]
                                    [--json | --by-depth]
    python benchmarks/continuity.py --long 1,3,5 [--messages 600]

``--real-only`` leaves out the six hand-written fixtures of tests/data/transcripts/fixtures
(runs of 6 to 13 messages whose compaction windows are a few hundred tokens).

``--long SEEDS`` measures long runs instead: one ``long_transcript.build(messages, seed)``
per seed (real turns chained into a ~600-message, ~135K-token session), the same
``--by-depth`` table (palimpsest, masking and truncation on the same prefixes). Seeds are
split before any tuning: EVEN seeds were used to tune the summarizer, ODD seeds are held
out; report the odd ones.
"""

from __future__ import annotations

import argparse
import hashlib
import platform
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from palimpsest.cli.app import app
from palimpsest.errors import PalimpsestError
from palimpsest.eval import DEFAULT_DEPTHS, CaseResult, aggregate, evaluate_transcript
from palimpsest.messages import load_transcript

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


def _pct(pair: tuple[int, int] | None) -> str:
    return "n/a" if pair is None else f"{pair[0] / pair[1] * 100:.0f}% ({pair[0]}/{pair[1]})"


def by_depth(files: list[Path]) -> None:
    """A markdown table per depth and overall: each system's probes, with their counts."""
    cases: list[CaseResult] = []
    for path in files:
        try:
            messages = load_transcript(path)
        except PalimpsestError as exc:
            print(f"- {path.name}: could not be read: {exc}")
            continue
        cases.extend(evaluate_transcript(path.name, messages, DEFAULT_DEPTHS))
    table(cases)


def long_runs(seeds: list[int], n: int) -> list[tuple[str, list[dict[str, Any]]]]:
    """One long transcript of ``n`` messages per seed (``long_transcript.build``)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from long_transcript import build  # a sibling benchmark module, not a package

    return [(f"long-{n}-seed{seed}", build(n, seed)) for seed in seeds]


def evaluate_long(runs: Sequence[tuple[str, Sequence[Mapping[str, Any]]]]) -> list[CaseResult]:
    """Every depth of every long run, printing one line per case as it finishes."""
    cases: list[CaseResult] = []
    for name, messages in runs:
        for case in evaluate_transcript(name, messages, DEFAULT_DEPTHS):
            cases.append(case)
            print(f"- {name} @ {case.depth}: {_case_line(case)}", flush=True)
    return cases


def _case_line(case: CaseResult) -> str:
    if not case.compacted:
        return f"not compacted ({case.reason})"
    parts = []
    for s in case.systems[:2]:
        p = s.probes
        parts.append(
            f"{s.system}: files {_pct(p.files_named)}, last fail {p.last_failure_kept}, "
            f"names {_pct(p.identifiers_kept)}, removed {s.removed_pct:.0f}%"
        )
    return f"{case.prefix_messages} msgs, {case.prefix_tokens:,} tok; " + "; ".join(parts)


def table(cases: list[CaseResult]) -> None:
    """The markdown table of :func:`by_depth` for ``cases``."""
    print("| depth | system | cases | files named | last fail kept | unresolved kept "
          "| names kept (by uses) | names kept (by name) | success as failure | removed |")  # fmt: skip
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for depth in (*DEFAULT_DEPTHS, None):
        chosen = [c for c in cases if depth is None or c.depth == depth]
        for system, row in aggregate(chosen).items():
            removed = row["tokens_removed_pct"]
            print(
                f"| {'all' if depth is None else depth} | {system} | {row['cases']} "
                f"| {_pct(row['files_named'])} | {_pct(row['last_failure_kept'])} "
                f"| {_pct(row['unresolved_failure_kept'])} | {_pct(row['identifiers_kept'])} "
                f"| {_pct(row['identifier_names_kept'])} "
                f"| {row['successes_as_failures'] if system == 'palimpsest' else '—'} "
                f"| {'n/a' if removed is None else f'{removed:.1f}%'} |"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("all", "held-out", "in-sample"), default="all")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--by-depth", action="store_true", help="a markdown table per depth")
    parser.add_argument(
        "--real-only", action="store_true", help="leave out the hand-written tests/.../fixtures"
    )
    parser.add_argument(
        "--long",
        metavar="SEEDS",
        help="comma-separated seeds of long_transcript.build (odd seeds are held out)",
    )
    parser.add_argument("--messages", type=int, default=600, help="messages per long run")
    args = parser.parse_args()
    if args.long:
        seeds = [int(x) for x in args.long.split(",") if x.strip()]
        held = ", ".join(str(x) for x in seeds if x % 2) or "none"
        print(
            f"# long runs: seeds {args.long} (held out: {held}), {args.messages} messages each;"
            f"  python {platform.python_version()}"
        )
        table(evaluate_long(long_runs(seeds, args.messages)))
        return
    files = [
        p
        for p in transcripts()
        if (args.split == "all" or held_out(p) == (args.split == "held-out"))
        and not (args.real_only and p.parent.name == "fixtures")
    ]
    if not args.json:
        names = ", ".join(p.name for p in files)
        print(f"# {args.split}: {len(files)} files ({names})  python {platform.python_version()}")
    if args.by_depth:
        by_depth(files)
        return
    app(["eval", "continuity", *map(str, files), *(["--json"] if args.json else [])])


if __name__ == "__main__":
    main()
