"""``palimpsest compress``: compact a transcript file the way an agent would mid-session.

Reads any transcript format ``load_transcript`` knows, runs the configured compressor with
the offline extractive summarizer (or, with ``--model`` or a configured summary model, an
LLM summarizer whose summary is verified before it is used), writes OpenAI-format JSON (stdout by default), and
reports on stderr what happened, so the command composes in a pipeline.

Exit status: 0 when the result fits the window minus the output reserve, 3
(:data:`NOT_FIT_EXIT`) when it was written but does not fit (a warning says why), 2 for a
user mistake (bad input, too large, not a regular file), 1 for a failed run.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from ..compaction.compressor import CompressionStats, ContextCompressor
from ..compaction.decided import UNDER_THRESHOLD, DecidedCompaction, compact_decided
from ..compaction.feedback import summarize_manual_compression
from ..config import load_settings
from ..files import output_target, replace_file
from ..messages import dump_transcript, read_transcript_file, validate_transcript
from ..messages.formats import DEFAULT_MAX_INPUT_BYTES
from ..summarizers.configured import summarizer_from_settings
from ..tokens import ExactCounter, RoughCounter, TokenCounter
from .common import (
    CONTEXT_LENGTH_HELP,
    DEFAULT_CONTEXT_LENGTH,
    TranscriptFormat,
    context_length_of,
    err_console,
    fail,
    handle_errors,
    is_stdout,
)
from .terminal_text import for_terminal

__all__ = ["DEFAULT_CONTEXT_LENGTH", "NOT_FIT_EXIT", "compress_command"]

NOT_FIT_EXIT = 3
"""Exit status when the result was written but does not fit the window minus the reserve."""


FORMATS = tuple(f.value for f in TranscriptFormat)


def _read_messages(source: str, fmt: str, max_bytes: int) -> list[dict[str, Any]]:
    shown = source if source != "-" else "<stdin>"
    if source == "-":
        loaded = read_transcript_file(sys.stdin, fmt, path_hint=shown, max_bytes=max_bytes)
    else:
        loaded = read_transcript_file(Path(source), fmt, max_bytes=max_bytes)
    for note in loaded.notes:  # what the reader passed over: never silently
        err_console.print(f"note: {shown}: {note}", markup=False, highlight=False)
    validate_transcript(loaded.messages, path=shown)
    return loaded.messages


def _report_dict(
    stats: CompressionStats, compressor: ContextCompressor, elapsed: float, run: DecidedCompaction
) -> dict[str, Any]:
    return {
        "compressed": stats.compressed,
        "reason": stats.reason,
        "token_count": run.after.method,
        "token_counter": run.after.encoding if run.after.method == "exact" else "utf8-bound",
        "context_length": compressor.context_length,
        "threshold_tokens": compressor.threshold_tokens,
        "tail_token_budget": compressor.tail_token_budget,
        "messages_before": stats.before_messages,
        "messages_after": stats.after_messages,
        "tokens_before": run.before.tokens,
        "tokens_after": run.after.tokens,
        "savings_pct": round(stats.savings_pct, 2),
        "tool_results_pruned": stats.pruned_count,
        "tool_calls_shrunk": stats.shrunk_calls,
        "head_messages": stats.head_messages,
        "middle_messages": stats.middle_messages,
        "tail_messages": stats.tail_messages,
        "summary_tokens": stats.summary_tokens,
        "summary_budget": stats.summary_budget,
        "summary_role": stats.summary_role,
        "summary_merged": stats.summary_merged,
        "fallback_used": stats.fallback_used,
        "summary_model": _summary_model(compressor),
        "summary_check": stats.summary_check,
        "summary_rejections": stats.summary_rejections,
        "summary_error": compressor.last_summary_error,
        "orphan_results_removed": stats.removed_orphan_results,
        "stub_results_added": stats.stubbed_calls,
        "repaired_messages": stats.repaired_messages,
        "fits": stats.fits,
        "fit_target_tokens": stats.fit_target_tokens,
        "not_fit_reason": stats.not_fit_reason,
        "fit_dropped_messages": stats.fit_dropped_messages,
        "fit_clipped_messages": stats.fit_clipped_messages,
        "seconds": round(elapsed, 4),
    }


def _summary_model(compressor: ContextCompressor) -> str | None:
    model = getattr(compressor.summarizer, "model", None)
    return str(getattr(model, "model", "")) or None if model is not None else None


_CHECK_TEXT = {
    "accepted": "model summary accepted",
    "retried": "model summary rejected once, accepted on the retry",
    "rejected": "model summary rejected → deterministic fallback",
}


def _summary_line(report: dict[str, Any]) -> str | None:
    """How the model summary went, when a model was asked."""
    if report["summary_model"] is None or not report["compressed"]:
        return None
    check = report["summary_check"]
    if check is None:
        why = report["summary_error"] or "no summary"
        return f"summary model {report['summary_model']}: failed ({why}) → deterministic fallback"
    line = f"summary model {report['summary_model']}: {_CHECK_TEXT[check]}"
    if report["summary_rejections"]:
        line += " (" + " | ".join(report["summary_rejections"]) + ")"
    return line


def _print_report(
    report: dict[str, Any], headline: str, note: str | None, run: DecidedCompaction
) -> None:
    err_console.print(headline, highlight=False)
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    table.add_column("")
    table.add_column("before", justify="right")
    table.add_column("after", justify="right")
    table.add_row("messages", f"{report['messages_before']:,}", f"{report['messages_after']:,}")
    table.add_row(f"tokens ({run.after.label})", run.before.shown(), run.after.shown())
    err_console.print(table)
    if report["compressed"]:
        err_console.print(
            f"head {report['head_messages']} · middle {report['middle_messages']} (summarized)"
            f" · tail {report['tail_messages']} messages; "
            f"tool results pruned: {report['tool_results_pruned']}; "
            f"summary: {report['summary_tokens']:,} tokens (budget {report['summary_budget']:,}), "
            f"role {report['summary_role']}{' (merged)' if report['summary_merged'] else ''}"
            f"{'; FALLBACK summary used' if report['fallback_used'] else ''}",
            highlight=False,
        )
    summary_line = _summary_line(report)
    if summary_line:
        # The rejection reasons can quote the model's summary: shown as text, escaped.
        err_console.print(for_terminal(summary_line), markup=False, highlight=False)
    if note:
        err_console.print(for_terminal(note), markup=False, highlight=False)
    err_console.print(f"time: {report['seconds'] * 1000:.1f} ms", highlight=False)


def compress_command(
    input: Annotated[str, typer.Argument(help="Transcript file, or - for standard input.")],
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write the result here (- or none: stdout)."),
    ] = None,
    context_length: Annotated[
        int | None, typer.Option("--context-length", min=1, help=CONTEXT_LENGTH_HELP)
    ] = None,
    threshold: Annotated[
        float | None,
        typer.Option(
            "--threshold", min=0.01, max=1.0, help="Compress at this fraction of the window."
        ),
    ] = None,
    focus: Annotated[
        str | None, typer.Option("--focus", help="Topic the summary should keep in detail.")
    ] = None,
    fmt: Annotated[
        TranscriptFormat, typer.Option("--format", help="Input format.")
    ] = TranscriptFormat.auto,
    exact_tokens: Annotated[
        bool,
        typer.Option(
            "--exact-tokens",
            help="Report exact o200k_base counts even where a bound settles the verdict "
            "(every compress-or-not and fits-or-not decision already uses the exact count "
            "unless the UTF-8 upper bound proves it).",
        ),
    ] = False,
    report_path: Annotated[
        Path | None, typer.Option("--report", help="Also write the report as JSON here.")
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", "-f", help="Compress even when under the threshold.")
    ] = False,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="Config file (default: $PALIMPSEST_CONFIG, else config.yaml in $PALIMPSEST_HOME).",
        ),
    ] = None,
    max_input_mb: Annotated[
        float | None,
        typer.Option(
            "--max-input-mb",
            min=0.001,
            help="Refuse inputs larger than this many MiB (default: 256, or the "
            "max_input_mb setting of the compression section).",
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="Summary model spec (openai:..., anthropic:..., openai-compatible:NAME, "
            "llamacpp:/path.gguf); its summary is verified, else the deterministic one is used.",
        ),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option("--base-url", help="Server of an openai-compatible --model (ending in /v1)."),
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json", help="Print the report as JSON on stdout (the transcript then needs -o FILE)."
        ),
    ] = False,
) -> None:
    """Compress a transcript: prune old tool output, summarize the middle, keep head and tail.

    Exits 3 when the result does not fit the window minus the output reserve.
    """
    if as_json and is_stdout(output):
        fail("--json prints the report on stdout: write the transcript elsewhere with -o FILE")
    try:
        fits = _compress(
            input,
            output,
            context_length,
            threshold,
            focus,
            fmt.value,
            exact_tokens,
            report_path,
            force,
            config,
            max_input_mb,
            model,
            base_url,
            as_json,
        )
    except RecursionError:
        fail("the input is nested too deeply to be a transcript")
    if not fits:
        raise typer.Exit(NOT_FIT_EXIT)


def _compress(
    input: str,
    output: Path | None,
    context_length: int | None,
    threshold: float | None,
    focus: str | None,
    fmt: str,
    exact_tokens: bool,
    report_path: Path | None,
    force: bool,
    config: Path | None,
    max_input_mb: float | None,
    model: str | None,
    base_url: str | None,
    as_json: bool = False,
) -> bool:
    with handle_errors():
        # Refuse a directory, device, FIFO or unwritable output before reading anything.
        for target in (output, report_path):
            if target is not None:
                output_target(target)
        settings = load_settings(config)
        limit_mb = max_input_mb or settings.compression.max_input_mb
        max_bytes = int(limit_mb * 1_048_576) if limit_mb else DEFAULT_MAX_INPUT_BYTES
        messages = _read_messages(input, fmt, max_bytes)
        counter: TokenCounter = ExactCounter("o200k_base") if exact_tokens else RoughCounter()
        window = context_length_of(context_length, settings.model.context_length)
        overrides: dict[str, Any] = {"quiet_mode": True}
        if threshold is not None:
            overrides["threshold_percent"] = threshold
        summarizer = summarizer_from_settings(settings, model=model, base_url=base_url)
        compressor = ContextCompressor.from_settings(
            settings,
            context_length=window,
            summarizer=summarizer,
            token_counter=counter,
            **overrides,
        )
        started = time.perf_counter()
        run = compact_decided(compressor, messages, force=force, focus=focus)
        result, stats = run.result, run.stats
        elapsed = time.perf_counter() - started

        text = dump_transcript(result)
        if output is None or is_stdout(output):
            sys.stdout.write(text + ("" if text.endswith("\n") else "\n"))
        else:
            replace_file(output, text + "\n", temp_prefix=f".{output.name}.")

        report = _report_dict(stats, compressor, elapsed, run)
        if stats.reason == UNDER_THRESHOLD:
            headline = (
                f"No compression needed: {run.before.shown()} tokens ({run.before.label}) is "
                f"under the compaction threshold of {compressor.threshold_tokens:,} "
                f"(context length {window:,}). Use --force to compress anyway."
            )
            note = None
        elif not stats.compressed:
            headline = f"Nothing to compress ({stats.reason}); transcript written unchanged."
            note = None
        else:
            feedback = summarize_manual_compression(
                messages,
                result,
                stats.before_tokens,
                stats.after_tokens,
                fallback_used=stats.fallback_used,
                dropped_count=compressor.last_summary_dropped_count or None,
                failure_reason=compressor.last_summary_error,
            )
            headline, note = feedback["headline"], feedback["note"]
        if as_json:
            sys.stdout.write(json.dumps(report, indent=2) + "\n")
        else:
            _print_report(report, headline, note, run)
        if not stats.fits:
            err_console.print(
                f"[bold yellow]warning:[/] the result does not fit {window:,} tokens minus the "
                f"output reserve ({stats.fit_target_tokens:,} tokens): {stats.not_fit_reason} "
                f"(exit status {NOT_FIT_EXIT})",
                markup=True,
                highlight=False,
            )
        if report_path is not None:
            replace_file(
                report_path,
                json.dumps(report, indent=2) + "\n",
                temp_prefix=f".{report_path.name}.",
            )
        return stats.fits
