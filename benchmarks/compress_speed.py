"""How long ``ContextCompressor.compress`` takes on long transcripts.

Transcripts of 1k, 10k and 50k messages are built from the real samples in
tests/data/transcripts (SWE-agent function-calling runs and Claude Code sessions): their
turns are repeated with fresh tool-call ids, and every tool output is padded to a size
drawn uniformly from 2-20 KB by repeating its own real text. The extractive summarizer
(offline, deterministic) writes the summary. Run:

    python benchmarks/compress_speed.py [--sizes 1000 10000 50000] [--repeat 5]

Prints the first-call and median time per call, the median per 1k messages, and the
50k/10k ratio (5.0 means exactly linear growth).
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import time
from pathlib import Path
from typing import Any

from palimpsest.compaction.compressor import ContextCompressor
from palimpsest.messages import load_transcript

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "transcripts"
SOURCES = [
    "swe-agent/marshmallow-1867__function_calling.traj",
    "swe-agent/marshmallow-1867__function_calling_replace_from_source.traj",
    "format-samples/claude-code_sample_session.json",
]


def _turns() -> list[list[dict[str, Any]]]:
    """Each source's messages after its head, as one reusable block."""
    blocks = []
    for name in SOURCES:
        messages = load_transcript(DATA / name)
        body = [m for m in messages if m.get("role") != "system"][1:]
        blocks.append(body)
    return blocks


def build(n: int, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    blocks = _turns()
    head = load_transcript(DATA / SOURCES[0])[:2]
    out: list[dict[str, Any]] = [dict(m) for m in head]
    rep = 0
    while len(out) < n:
        rep += 1
        for message in rng.choice(blocks):
            msg = json.loads(json.dumps(message))
            for call in msg.get("tool_calls") or []:
                call["id"] = f"{call['id']}-{rep}"
            if msg.get("role") == "tool":
                msg["tool_call_id"] = f"{msg['tool_call_id']}-{rep}"
                text = (
                    msg["content"]
                    if isinstance(msg["content"], str)
                    else json.dumps(msg["content"])
                )
                size = rng.randint(2_000, 20_000)
                msg["content"] = (text + "\n") * (size // max(1, len(text) + 1) + 1)
                msg["content"] = msg["content"][:size]
            out.append(msg)
    # End on a complete group and a user request, as a live session would.
    while out[-1].get("role") == "tool" or out[-1].get("tool_calls"):
        out.pop()
    out.append({"role": "user", "content": "Please continue with the fix."})
    return out


def time_compress(
    messages: list[dict[str, Any]], repeat: int
) -> tuple[float, list[float], list[float]]:
    """``(first wall s, wall s per run, CPU s per run)``; CPU time is steadier on a shared machine."""
    wall, cpu = [], []
    for _ in range(repeat):
        compressor = ContextCompressor(200_000, quiet_mode=True)
        start, start_cpu = time.perf_counter(), time.process_time()
        result = compressor.compress(messages)
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        if not compressor.last_stats.compressed:
            raise SystemExit(f"no compression happened: {compressor.last_stats.reason}")
    if len(result) >= len(messages):
        raise SystemExit("compress() did not shorten the transcript")
    return wall[0], wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 50_000])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"python {platform.python_version()} on {platform.machine()}, {platform.system()}")
    print(
        f"{'messages':>9} {'MB':>7} {'first ms':>9} {'median ms':>10} {'median CPU ms':>14}"
        f" {'CPU ms/1k msgs':>15}"
    )
    medians: dict[int, float] = {}
    for n in args.sizes:
        messages = build(n)
        size_mb = sum(len(json.dumps(m)) for m in messages) / 1e6
        first, wall, cpu = time_compress(messages, args.repeat)
        median, median_cpu = statistics.median(wall) * 1000, statistics.median(cpu) * 1000
        medians[n] = median_cpu
        print(
            f"{len(messages):>9,} {size_mb:>7.1f} {first * 1000:>9.1f} {median:>10.1f}"
            f" {median_cpu:>14.1f} {median_cpu / (n / 1000):>15.2f}"
        )
    if 10_000 in medians and 50_000 in medians:
        ratio = medians[50_000] / medians[10_000]
        print(f"50k/10k median CPU ratio: {ratio:.2f} (5.00 = linear)")


if __name__ == "__main__":
    main()
