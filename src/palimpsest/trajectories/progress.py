"""How a long batch shows itself: a Rich progress bar while it runs, one screen at the end.

:class:`RichObserver` is the runner's :class:`~.runner.Observer` for the command line: a bar
with done/total, rate, ETA and the count of trajectories still over the limit, and each
problem (bad input, failure, timeout) printed above the bar as one line. After the first
``max_problems`` lines the rest are only counted (they are all in the metrics), so a file of
a million bad lines cannot flood the terminal. :func:`summary_table` renders the aggregate
metrics as one table.

The bar runs no thread of its own (``auto_refresh=False``): it redraws when the runner
reports progress, at most :data:`REDRAW_SECONDS` apart. Rich's refresh thread would make
the worker pool spawn fresh interpreters instead of forking this one
(:func:`~.engine_local.start_method` forks only a single-threaded process), which costs each
worker the package import and the tokenizer build again.
"""

from __future__ import annotations

import time
from types import TracebackType

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from .metrics import AggregateMetrics
from .runner import Observer

__all__ = ["DEFAULT_MAX_PROBLEMS", "RichObserver", "summary_table"]

DEFAULT_MAX_PROBLEMS = 50
REDRAW_SECONDS = 0.1
"""The bar redraws on progress at most this often (it has no timer thread)."""


class _RateColumn(ProgressColumn):
    """Trajectories per second, from Rich's own speed estimate."""

    def render(self, task: Task) -> Text:
        elapsed = task.elapsed or 0.0
        speed = task.completed / elapsed if elapsed > 0 and task.completed else None
        return Text("-- traj/s" if speed is None else f"{speed:,.1f} traj/s", style="cyan")


class RichObserver(Observer):
    """A progress bar on ``console`` (stderr); a no-op bar when ``quiet``."""

    def __init__(
        self, console: Console, *, quiet: bool = False, max_problems: int = DEFAULT_MAX_PROBLEMS
    ) -> None:
        self.console = console
        self.quiet = quiet
        self.max_problems = max_problems
        self.problems = 0
        self.progress = Progress(
            TextColumn("[bold]trajectories"),
            BarColumn(),
            MofNCompleteColumn(),
            _RateColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("over limit: {task.fields[over]}"),
            console=console,
            disable=quiet,
            transient=False,
            auto_refresh=False,
        )
        self._drawn = 0.0
        self.task = self.progress.add_task("compress", total=None, over=0)

    def __enter__(self) -> RichObserver:
        self.progress.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.progress.stop()
        hidden = self.problems - self.max_problems
        if hidden > 0:
            self.console.print(f"… and {hidden:,} more problem lines (counted in the metrics)")

    def start(self, total: int | None) -> None:
        self.progress.update(self.task, total=total)
        self._redraw(force=True)

    def advance(self, records: int, metrics: AggregateMetrics) -> None:
        self.progress.update(self.task, advance=records, over=metrics.still_over_limit)
        self._redraw()

    def _redraw(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._drawn >= REDRAW_SECONDS:
            self._drawn = now
            self.progress.refresh()

    def problem(self, line: str) -> None:
        self.problems += 1
        if self.problems <= self.max_problems:
            self.progress.console.print(escape(line), highlight=False, soft_wrap=True)


def summary_table(
    metrics: AggregateMetrics, *, outputs: list[str], metrics_file: str | None
) -> Table:
    """The end-of-run screen: counts, tokens, averages, time, and where things went."""
    data = metrics.to_json()
    table = Table(title="trajectories compress", show_header=False, title_justify="left")
    table.add_column("what", style="bold")
    table.add_column("value", justify="right", overflow="fold")
    rate = data["total_trajectories"] / data["elapsed_seconds"] if data["elapsed_seconds"] else 0.0
    rows = [
        ("trajectories", f"{data['total_trajectories']:,}"),
        ("compressed", f"{data['compressed']:,}"),
        ("skipped (under target)", f"{data['skipped_under_target']:,}"),
        ("unchanged", f"{data['unchanged']:,}"),
        ("still over limit", f"{data['still_over_limit']:,}"),
        ("dropped (over limit)", f"{data['dropped_over_limit']:,}"),
        ("failed (original kept)", f"{data['failed']:,}"),
        ("timed out (dropped)", f"{data['timed_out']:,}"),
        ("bad input", f"{data['bad_input']:,}"),
        (
            "tokens before → after",
            f"{data['total_tokens_before']:,} → {data['total_tokens_after']:,}",
        ),
        ("tokens saved", f"{data['total_tokens_saved']:,}"),
        ("avg compression ratio", f"{data['avg_compression_ratio']:.3f}"),
        ("avg tokens saved / compressed", f"{data['avg_tokens_saved_per_compressed']:,.0f}"),
        (
            "summary calls / errors",
            f"{data['summarization_api_calls']:,} / {data['summarization_errors']:,}",
        ),
        ("elapsed", f"{data['elapsed_seconds']:.1f} s ({rate:,.1f} traj/s)"),
    ]
    for name, value in rows:
        table.add_row(name, value)
    for path in outputs:
        table.add_row("output", escape(path))
    if metrics_file:
        table.add_row("metrics", escape(metrics_file))
    return table
