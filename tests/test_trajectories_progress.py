"""The progress observer and the end-of-run table, rendered to a real Rich console."""

from __future__ import annotations

import io
import threading

from rich.console import Console

from palimpsest.trajectories.metrics import AggregateMetrics, TrajectoryMetrics
from palimpsest.trajectories.progress import RichObserver, summary_table


def console() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, width=120, force_terminal=False), buffer


def test_problems_are_printed_up_to_the_cap_then_counted() -> None:
    out, buffer = console()
    metrics = AggregateMetrics()
    with RichObserver(out, max_problems=2) as observer:
        observer.start(5)
        for n in range(5):
            observer.problem(f"d.jsonl:{n + 1}: bad input: [x]")
            metrics.add_bad_input()
            observer.advance(1, metrics)
    text = buffer.getvalue()
    assert "d.jsonl:1: bad input: [x]" in text and "d.jsonl:2:" in text
    assert "d.jsonl:3:" not in text
    assert "… and 3 more problem lines" in text
    assert "5/5" in text


def test_the_summary_table_shows_counts_tokens_and_paths() -> None:
    metrics = AggregateMetrics()
    metrics.add(TrajectoryMetrics(original_tokens=1000, compressed_tokens=400, tokens_saved=600,
                                  compression_ratio=0.4, was_compressed=True))  # fmt: skip
    metrics.add_timed_out()
    metrics.elapsed_seconds = 2.0
    out, buffer = console()
    out.print(summary_table(metrics, outputs=["out.jsonl"], metrics_file="m.json"))
    text = buffer.getvalue()
    for expected in (
        "1,000 → 400",
        "0.400",
        "timed out (dropped)",
        "out.jsonl",
        "m.json",
        "1.0 traj/s",
    ):
        assert expected in text


def test_the_bar_runs_no_thread_so_the_pool_can_fork() -> None:
    """A refresh thread would make the pool spawn fresh interpreters (engine_local)."""
    buffer = io.StringIO()
    terminal = Console(file=buffer, width=120, force_terminal=True)
    before = threading.active_count()
    with RichObserver(terminal) as observer:
        observer.start(3)
        assert threading.active_count() == before
        observer.advance(3, AggregateMetrics())
    assert "3/3" in buffer.getvalue()  # drawn on progress and at the end
