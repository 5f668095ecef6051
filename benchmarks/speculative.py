"""The stall at the compaction threshold, with and without speculative compaction.

A conversation made of real turns (``long_transcript.build``: SWE-agent, mini-swe-agent
and Claude Code runs, every copy varied) grows one round at a time against a
``ContextCompressor`` whose summarizer takes ``--summary-seconds`` per summary (the
deterministic extractive summary, written after a sleep: a stand-in for a summary model
that answers in N seconds). After every round the loop does what an agent loop does: the
request is estimated, reported as the round's usage, and the after-round check
(``should_compress``) decides. The **stall** is the time from that check saying compress
to the next request's messages being ready:

- (a) synchronous: ``compress(messages)``;
- (b) speculative: ``SpeculativeCompactor.observe`` after every round (the preparation
  starts at ``--mark`` of the threshold, on a background thread), then ``take(messages)``
  at the threshold (waiting up to ``--wait`` seconds for a candidate still being written,
  0 by default), and ``compress`` only when ``take`` returned nothing.

In (b) every round first waits ``--round-seconds``, the main model's answer: the time the
conversation goes on while the summary is written. (a) does not wait (its stall does not
depend on it). Then, the caller-thread costs on a 5,000-message conversation (5 MB):
``observe`` (which copies the span) and ``take`` (which compares it and swaps). Run:

    python benchmarks/speculative.py [--summary-seconds 2] [--round-seconds 0.25]
        [--crossings 3] [--context-length 64000] [--threshold 0.5] [--mark 0.7] [--wait 0]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from long_transcript import build, describe
from palimpsest.agent.speculative import SPECULATIVE_MARK, SpeculativeCompactor
from palimpsest.compaction.compressor import ContextCompressor
from palimpsest.summarizers import ExtractiveSummarizer, SummaryRequest

Message = dict[str, Any]
BUDGET_MS = 50.0


class SlowSummarizer(ExtractiveSummarizer):
    """The extractive summary, returned after ``seconds``: a summary model's latency."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def summarize(self, request: SummaryRequest) -> str:
        time.sleep(self.seconds)
        return super().summarize(request)


@dataclass
class Crossing:
    stall: float
    path: str  # "swap" (a ready candidate) or "sync"
    state: str  # the candidate's state when the check fired ("-" without one)
    messages: int
    tokens: int
    after_tokens: int


def rounds(messages: list[Message]) -> Iterator[list[Message]]:
    """The body of ``messages`` as rounds: a message and the tool results answering it."""
    group: list[Message] = []
    for message in messages[2:]:
        if group and message.get("role") != "tool":
            yield group
            group = []
        group.append(message)
    if group:
        yield group


def run(args: argparse.Namespace, source: list[Message], speculative: bool) -> list[Crossing]:
    live = ContextCompressor(
        args.context_length,
        SlowSummarizer(args.summary_seconds),
        threshold_percent=args.threshold,
        quiet_mode=True,
    )
    spec = SpeculativeCompactor(live, mark=args.mark) if speculative else None
    messages = [dict(m) for m in source[:2]]  # system prompt + task
    crossings: list[Crossing] = []
    for group in rounds(source):
        if spec is not None:
            time.sleep(args.round_seconds)  # the main model answers this round
        messages.extend(group)
        tokens = live.estimate_request_tokens(messages)
        live.update_from_response({"prompt_tokens": tokens})
        if spec is not None:
            spec.observe(messages, tokens)
        if not live.should_compress(tokens):
            continue
        state = spec.state if spec is not None else "-"
        if spec is not None and spec.error is not None:
            state = f"failed ({spec.error})"
        started = time.perf_counter()
        out = spec.take(messages, wait=args.wait) if spec is not None else None
        path = "swap" if out is not None else "sync"
        if out is None:
            out = live.compress(messages, tokens)
        stall = time.perf_counter() - started
        after = live.last_stats.after_tokens
        crossings.append(Crossing(stall, path, state, len(messages), tokens, after))
        print(
            f"  {'speculative' if spec else 'synchronous'} crossing {len(crossings)}: "
            f"{len(messages)} messages, ~{tokens:,} tokens -> {len(out)} messages, "
            f"~{after:,} tokens; "
            f"candidate {state}, {path}, stall {stall * 1000:.1f} ms",
            flush=True,
        )
        messages = out
        if len(crossings) == args.crossings:
            break
    if spec is not None:
        spec.close()
    if len(crossings) < args.crossings:
        raise SystemExit(f"the transcript ran out after {len(crossings)} crossings")
    return crossings


def caller_costs(n: int) -> tuple[float, float, int]:
    """``observe`` and ``take`` on an ``n``-message conversation, in ms, and its size."""
    messages = build(n)
    tokens = ContextCompressor(10_000_000).estimate_request_tokens(messages)
    # An explicit 50% threshold with the conversation at 80% of it: between mark and threshold.
    live = ContextCompressor(int(tokens / 0.4), threshold_percent=0.5, quiet_mode=True)
    spec = SpeculativeCompactor(live)
    started = time.perf_counter()
    if not spec.observe(messages, tokens):
        raise SystemExit("observe did not start a preparation")
    observe_ms = (time.perf_counter() - started) * 1000
    deadline = time.monotonic() + 120
    while spec.state == "running" and time.monotonic() < deadline:
        time.sleep(0.01)
    if spec.state != "ready":
        raise SystemExit(f"the 5,000-message candidate is {spec.state}: {spec.error}")
    messages.append({"role": "user", "content": "Go on."})  # the conversation went on
    started = time.perf_counter()
    if spec.take(messages) is None:
        raise SystemExit("take returned nothing on an unchanged conversation")
    take_ms = (time.perf_counter() - started) * 1000
    return observe_ms, take_ms, len(messages)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--summary-seconds", type=float, default=2.0)
    parser.add_argument("--round-seconds", type=float, default=0.25)
    parser.add_argument("--crossings", type=int, default=3)
    parser.add_argument("--context-length", type=int, default=64_000)
    parser.add_argument("--threshold", type=float, default=0.5)
    parser.add_argument("--mark", type=float, default=SPECULATIVE_MARK)
    parser.add_argument("--messages", type=int, default=3_000)
    parser.add_argument(
        "--wait", type=float, default=0.0, help="seconds take() may wait for a running candidate"
    )
    args = parser.parse_args()
    print(
        f"python {platform.python_version()} on {platform.machine()} {platform.system()}, "
        f"nproc {os.cpu_count()}"
    )
    source = build(args.messages)
    print(f"source: {describe(source)}")
    # Load what a first compaction loads (the o200k vocabulary of the growth check) first.
    ContextCompressor(args.context_length, quiet_mode=True).compress(source[:200])
    print(
        f"window {args.context_length:,}, threshold {args.threshold:.0%}, mark "
        f"{args.mark:.0%} of the threshold; summary {args.summary_seconds:g} s, "
        f"round {args.round_seconds:g} s"
    )
    results = {
        "synchronous": run(args, source, speculative=False),
        "speculative": run(args, source, speculative=True),
    }
    print(
        "\n| mode | crossings | swapped in | stall median | stall max | tokens after (median) |"
        "\n|---|---:|---:|---:|---:|---:|"
    )
    for mode, crossings in results.items():
        stalls = [c.stall * 1000 for c in crossings]
        swapped = sum(c.path == "swap" for c in crossings)
        print(
            f"| {mode} | {len(crossings)} | {swapped if mode == 'speculative' else '-'} | "
            f"{statistics.median(stalls):,.1f} ms | {max(stalls):,.1f} ms | "
            f"{statistics.median(c.after_tokens for c in crossings):,.0f} |"
        )
    # Only a candidate that was ready when the check fired counts: one waited for is not.
    swaps = [
        c.stall * 1000 for c in results["speculative"] if c.path == "swap" and c.state == "ready"
    ]
    if swaps:
        verdict = "yes" if max(swaps) <= BUDGET_MS else "NO"
        print(
            f"\nwith a ready candidate the next request's messages were ready within "
            f"{max(swaps):.1f} ms of the check (max of {len(swaps)}); <= {BUDGET_MS:.0f} ms: "
            f"{verdict}"
        )
    else:
        print("\nno candidate was ready at any check: raise --round-seconds or lower --mark")
    observe_ms, take_ms, n = caller_costs(5_000)
    print(
        f"caller-thread costs at {n:,} messages: observe (copies the span, starts the "
        f"thread) {observe_ms:.1f} ms once per preparation; take (compares, swaps) "
        f"{take_ms:.1f} ms"
    )


if __name__ == "__main__":
    main()
