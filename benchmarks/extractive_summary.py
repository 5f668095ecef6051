"""How long ``ExtractiveSummarizer.summarize`` takes on long spans of turns.

Spans of 1k, 10k and 20k messages are built from the real samples in
tests/data/transcripts (SWE-agent function-calling runs, Claude Code sessions, a
mini-swe-agent text-action run): their turns are repeated with fresh tool-call ids, and
every tool output is padded to a size drawn uniformly from 2-20 KB by repeating its own
text. Run:

    python benchmarks/extractive_summary.py [--sizes 1000 10000 20000] [--repeat 3]

Prints wall-clock and CPU time (median of the repeats), the time per 1k messages, and the
ratio between the two largest sizes over their size ratio (1.0 means exactly linear).
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import time
from pathlib import Path
from typing import Any

from palimpsest.messages import load_transcript
from palimpsest.summarizers import ExtractiveSummarizer, SummaryRequest
from palimpsest.tokens import estimate_tokens_rough

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "transcripts"
SOURCES = [
    "swe-agent/marshmallow-1867__function_calling.traj",
    "swe-agent/marshmallow-1867__function_calling_replace_from_source.traj",
    "format-samples/claude-code_sample_session.json",
]


def _blocks() -> list[list[dict[str, Any]]]:
    blocks = []
    for name in SOURCES:
        messages = [dict(m) for m in load_transcript(DATA / name)]
        blocks.append([m for m in messages if m.get("role") != "system"])
    return blocks


def _pad(text: str, rng: random.Random) -> str:
    size = rng.randint(2_000, 20_000)
    seed = text or "output line\n"
    return (seed * (size // len(seed) + 1))[:size]


def build_span(size: int, seed: int = 7) -> list[dict[str, Any]]:
    """``size`` messages made of the real samples, tool ids renamed, outputs padded."""
    rng = random.Random(seed)
    blocks = _blocks()
    span: list[dict[str, Any]] = []
    copy = 0
    while len(span) < size:
        for block in blocks:
            copy += 1
            for message in block:
                item = dict(message)
                if item.get("tool_calls"):
                    item["tool_calls"] = [
                        {**call, "id": f"{call['id']}-{copy}"} for call in item["tool_calls"]
                    ]
                if item.get("role") == "tool":
                    item["tool_call_id"] = f"{item['tool_call_id']}-{copy}"
                    content = item.get("content")
                    item["content"] = _pad(content if isinstance(content, str) else "", rng)
                span.append(item)
    return span[:size]


def measure(span: list[dict[str, Any]], repeat: int, budget: int) -> tuple[float, float, int]:
    summarizer = ExtractiveSummarizer()
    request = SummaryRequest(
        turns=span, previous_summary=None, focus_topic=None, budget_tokens=budget, prompt=""
    )
    walls, cpus = [], []
    body = ""
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        body = summarizer.summarize(request)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus), estimate_tokens_rough(body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 20_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--budget", type=int, default=12_000)
    args = parser.parse_args()
    print(f"python {platform.python_version()} on {platform.machine()}, budget {args.budget}")
    print(f"{'messages':>9} {'MB':>6} {'wall ms':>8} {'cpu ms':>7} {'cpu ms/1k':>9} {'tokens':>7}")
    results = []
    for size in args.sizes:
        span = build_span(size)
        megabytes = sum(len(str(m.get("content") or "")) for m in span) / 1e6
        wall, cpu, tokens = measure(span, args.repeat, args.budget)
        results.append((size, cpu))
        print(
            f"{size:>9,} {megabytes:>6.1f} {wall * 1000:>8.0f} {cpu * 1000:>7.0f} "
            f"{cpu * 1000 / (size / 1000):>9.1f} {tokens:>7,}"
        )
    if len(results) >= 2:
        (small, small_cpu), (big, big_cpu) = results[-2], results[-1]
        ratio = (big_cpu / small_cpu) / (big / small)
        print(f"growth {small:,} -> {big:,}: {ratio:.2f} (1.00 = linear)")


if __name__ == "__main__":
    main()
