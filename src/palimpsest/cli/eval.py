"""``palimpsest eval continuity``: score compaction against two baselines on real transcripts.

A thin layer over :mod:`palimpsest.eval`: it loads the files (directories are walked for
transcripts), runs the eval at each depth, and prints one table row per file (each probe
as palimpsest/masking percentages over the file's depths) plus one aggregate line per
system; ``--json`` has every case with every system's probes, and the files that failed.
A file that cannot be read or scored never stops the others, and never passes silently.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from ..compaction.repair import check_messages
from ..errors import PalimpsestError
from ..eval import DEFAULT_DEPTHS, CaseResult, aggregate, evaluate_transcript
from ..messages import load_transcript
from .common import USER_ERROR_EXIT, TranscriptFormat, err_console, fail, handle_errors
from .terminal_text import for_terminal

__all__ = ["eval_app", "format_ratio", "table_lines"]

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


def _pct(pair: tuple[int, int] | None) -> str:
    return "n/a" if pair is None else f"{pair[0] / pair[1] * 100:.0f}"


def _pair(row: dict[str, dict[str, Any]], key: str) -> str:
    """``palimpsest/masking`` percentages of one probe for one file."""
    mine, theirs = _pct(row["palimpsest"][key]), _pct(row["masking"][key])
    return "n/a" if mine == theirs == "n/a" else f"{mine}/{theirs}"


def _removed(row: dict[str, dict[str, Any]]) -> str:
    mine, theirs = row["palimpsest"]["tokens_removed_pct"], row["masking"]["tokens_removed_pct"]
    return f"{mine:.0f}/{theirs:.0f}" if mine is not None and theirs is not None else "n/a"


NAME_WIDTH = 30
_COLUMNS = ("files", "ask", "fail", "names", "cut")


def _cell_name(name: str) -> str:
    """The name cut in its middle: the start says which run, the end which variant."""
    if len(name) <= NAME_WIDTH:
        return name
    keep = NAME_WIDTH - 1
    return name[: keep // 2] + "…" + name[len(name) - (keep - keep // 2) :]


def table_lines(files: list[tuple[str, list[CaseResult]]]) -> list[str]:
    """One line per file with something to probe, under 80 columns: each probe as
    palimpsest/masking percentages over the file's compacted depths."""
    head = f"{'transcript':<{NAME_WIDTH}} {'depths':>6}" + "".join(f"{c:>8}" for c in _COLUMNS)
    lines = ["palimpsest/masking % per file (every figure: --json)", head, "-" * len(head)]
    for name, cases in files:
        done = [c for c in cases if c.compacted]
        if not done or all(c.facts is not None and c.facts.nothing_to_probe for c in done):
            continue
        row = aggregate(done)
        cells = [
            _pair(row, "files_named"),
            _pair(row, "request_kept"),
            _pair(row, "last_failure_kept"),
            _pair(row, "identifiers_kept"),
            _removed(row),
        ]
        depths = f"{len(done)}/{len(cases)}"
        lines.append(
            f"{_cell_name(name):<{NAME_WIDTH}} {depths:>6}" + "".join(f"{c:>8}" for c in cells)
        )
    return lines


def _unprobed_lines(files: list[tuple[str, list[CaseResult]]]) -> list[str]:
    """Files left out of the table: never compacted, or nothing to probe where they were."""
    lines = []
    for name, cases in files:
        done = [c for c in cases if c.compacted]
        if not done:
            reasons = "; ".join(sorted({c.reason or "no reason given" for c in cases}))
            lines.append(f"{name}: not compacted at any depth ({reasons})")
        elif all(c.facts is not None and c.facts.nothing_to_probe for c in done):
            lines.append(f"{name}: nothing to probe (no file change, request, failure or "
                         "identifier used later in the compacted spans)")  # fmt: skip
    return lines


def _aggregate_lines(summary: dict[str, dict[str, Any]], total: int) -> list[str]:
    lines = []
    for system, row in summary.items():
        removed = row["tokens_removed_pct"]
        names = row["identifier_names_kept"]
        line = (
            f"{system}: {row['cases']}/{total} cases compacted, "
            f"{row['cases'] - row['nothing_to_probe']} with something to probe; "
            f"files {format_ratio(row['files_named'])}, "
            f"ask {format_ratio(row['request_kept'])}, "
            f"fail {format_ratio(row['last_failure_kept'])}, "
            f"unresolved fail {format_ratio(row['unresolved_failure_kept'])}, "
            f"names {format_ratio(row['identifiers_kept'])} by uses"
            + (f" ({names[0]}/{names[1]} names)" if names else "")
            + f", cut {'n/a' if removed is None else f'{removed:.1f}%'}"
        )
        if system == "palimpsest":
            line += f", successes listed as failures: {row['successes_as_failures']}"
        lines.append(line)
    return lines


def _run_file(path: Path, fmt: str, depths: list[float]) -> tuple[list[CaseResult] | None, str]:
    """The cases of one file, or ``None`` and why it could not be read or scored."""
    try:
        messages = load_transcript(path, format=fmt)
        check_messages(messages)
    except (PalimpsestError, OSError, ValueError) as exc:
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return None, f"could not be read: {detail}"
    name = f"{path.parent.name}/{path.name}"
    try:
        return evaluate_transcript(name, messages, depths), ""
    except Exception as exc:  # any failure while scoring names the file; the rest go on
        return None, f"could not be scored: {type(exc).__name__}: {exc}"


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
    """Compact each transcript at each depth and probe what the result still says.

    Every file is tried; a file that cannot be read or scored is named on stderr at the
    end and the command exits non-zero (2 when a file could not be read, else 1).
    """
    chosen = _parse_depths(depths)
    with handle_errors():
        paths_found = _files(paths)
    files: list[tuple[str, list[CaseResult]]] = []
    errors: list[tuple[Path, str]] = []
    names = [p.name for p in paths_found]
    for path in paths_found:
        cases, problem = _run_file(path, fmt.value, chosen)
        if cases is None:
            errors.append((path, problem))
        else:
            # the table shows the file name, with its folder when two files share it
            shown = path.name if names.count(path.name) == 1 else f"{path.parent.name}/{path.name}"
            files.append((shown, cases))
    every = [c for _, rows in files for c in rows]
    summary = aggregate(every)
    if as_json:
        payload = {
            "cases": [c.to_dict() for c in every],
            "aggregate": summary,
            "errors": [{"file": str(p), "error": e} for p, e in errors],
        }
        typer.echo(json.dumps(payload, indent=2))
    else:
        console = Console()
        # File names and reasons come from the user's files: escaped, never markup.
        for line in [*table_lines(files), *_unprobed_lines(files)]:
            console.print(for_terminal(line, keep_lines=False), highlight=False, markup=False)
        console.print("files: modified files named; ask: newest request kept; fail: last "
                      "failing command and its error kept; names: identifiers used later "
                      "kept, weighted by uses; cut: tokens removed", highlight=False)  # fmt: skip
        for line in _aggregate_lines(summary, len(every)):
            console.print(line, highlight=False)
    for path, problem in errors:
        shown = escape(for_terminal(f"{path}: {problem}", keep_lines=False))
        err_console.print(f"[bold red]error:[/] {shown}", markup=True)
    if errors:
        unreadable = any("could not be read" in e for _, e in errors)
        raise typer.Exit(USER_ERROR_EXIT if unreadable else 1)
