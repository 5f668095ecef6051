"""``palimpsest eval continuity``: score compaction against two baselines on real transcripts.

A thin layer over :mod:`palimpsest.eval`: it loads the files (directories are walked for
transcripts), runs the eval at each depth, and prints one table row per
transcript × depth × system plus one aggregate line per system, or the same as JSON.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..eval import DEFAULT_DEPTHS, CaseResult, aggregate, evaluate_transcript
from ..messages import load_transcript
from .common import TranscriptFormat, fail, handle_errors
from .terminal_text import for_terminal

__all__ = ["eval_app", "format_ratio"]

eval_app = typer.Typer(help="Measure how well compaction keeps the thread.", no_args_is_help=True)
_SUFFIXES = (".traj", ".json", ".jsonl")


def format_ratio(pair: tuple[int, int] | None) -> str:
    """``kept/total`` as a percentage with its counts; ``n/a`` when nothing applied."""
    if pair is None:
        return "n/a"
    kept, total = pair
    return f"{kept / total * 100:.0f}% ({kept}/{total})"


def _flag(value: bool | None) -> str:
    return "n/a" if value is None else ("yes" if value else "NO")


def _parse_depths(text: str) -> list[float]:
    try:
        depths = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        fail(f"--depths {text!r}: give fractions separated by commas, e.g. 0.5,0.7,0.9")
    if not depths or any(not 0 < d <= 1 for d in depths):
        fail(f"--depths {text!r}: each depth must be in (0, 1], e.g. 0.5,0.7,0.9")
    return depths


def _files(paths: list[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(
                p for p in sorted(path.rglob("*")) if p.is_file() and p.name.endswith(_SUFFIXES)
            )
        elif path.exists():
            found.append(path)
        else:
            fail(f"{path}: no such file or directory")
    if not found:
        fail("no transcript files found (looked for .traj, .json, .jsonl)")
    return found


def _table(cases: list[CaseResult]) -> Table:
    table = Table(title="Continuity (palimpsest vs observation masking vs truncation)")
    for name in ("transcript", "depth", "system", "files named", "request kept"):
        table.add_column(name)
    for name in ("last fail kept", "unresolved fail kept", "identifiers", "tokens removed"):
        table.add_column(name)
    for case in cases:
        # Names and reasons come from the transcripts: shown as plain, escaped text.
        label = Text(for_terminal(case.transcript, keep_lines=False))
        if not case.compacted:
            reason = Text(f"not compacted: {for_terminal(case.reason, keep_lines=False)}")
            table.add_row(label, f"{case.depth:g}", "—", reason)
            table.add_section()
            continue
        facts = case.facts
        fixed = facts.last_failure.fixed if facts and facts.last_failure else None
        for system in case.systems:
            p = system.probes
            last = _flag(p.last_failure_kept)
            if fixed is not None:
                last += " (fixed later)" if fixed else " (unresolved)"
            table.add_row(
                label,
                f"{case.depth:g}",
                system.system,
                format_ratio(p.files_named),
                _flag(p.request_kept),
                last,
                _flag(p.unresolved_failure_kept),
                format_ratio(p.identifiers_kept),
                f"{system.removed_pct:.1f}%",
            )
        table.add_section()
    return table


def _aggregate_lines(summary: dict[str, dict[str, Any]], total: int) -> list[str]:
    lines = []
    for system, row in summary.items():
        removed = row["tokens_removed_pct"]
        lines.append(
            f"{system}: {row['cases']}/{total} cases compacted; "
            f"files named {format_ratio(row['files_named'])}, "
            f"request kept {format_ratio(row['request_kept'])}, "
            f"last failing command kept {format_ratio(row['last_failure_kept'])}, "
            f"unresolved failing command kept {format_ratio(row['unresolved_failure_kept'])}, "
            f"identifier recall {format_ratio(row['identifiers_kept'])}, "
            f"tokens removed {'n/a' if removed is None else f'{removed:.1f}%'}"
        )
    return lines


@eval_app.command("continuity")
def continuity_command(
    paths: Annotated[list[Path], typer.Argument(help="Transcript files or directories of them.")],
    depths: Annotated[
        str, typer.Option("--depths", help="Fractions of each transcript's tokens to compact.")
    ] = ",".join(f"{d:g}" for d in DEFAULT_DEPTHS),
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
    fmt: Annotated[
        TranscriptFormat, typer.Option("--format", help="Input format.")
    ] = TranscriptFormat.auto,
) -> None:
    """Compact each transcript at each depth and probe what the result still says."""
    chosen = _parse_depths(depths)
    cases: list[CaseResult] = []
    with handle_errors():
        for path in _files(paths):
            messages = load_transcript(path, format=fmt.value)
            name = f"{path.parent.name}/{path.name}"
            cases.extend(evaluate_transcript(name, messages, chosen))
    summary = aggregate(cases)
    if as_json:
        payload = {"cases": [c.to_dict() for c in cases], "aggregate": summary}
        typer.echo(json.dumps(payload, indent=2))
        return
    console = Console(width=200)
    console.print(_table(cases))
    for line in _aggregate_lines(summary, len(cases)):
        console.print(line, highlight=False)
