"""How long ``ContextCompressor.compress`` takes, against a JSON round trip of the same list.

The transcript is built by ``long_transcript.build`` from the real runs in
tests/data/transcripts (SWE-agent text actions with ``<command>`` tags and fenced blocks,
mini-swe-agent ``<returncode>`` observations, SWE-agent function calling and a Claude Code
session), real turns repeated in random windows with every copy varied; see that module's
docstring. The compressor is the default one: ``ContextCompressor(200_000)`` with its
default ``ExtractiveSummarizer``, full ``compress``. The baseline, timed in the same run
on the same list, is ``json.loads(json.dumps(messages))``: what merely copying the
transcript through the standard library costs. Run:

    python benchmarks/compress_speed.py [--sizes 10000 20000] [--repeat 7] [--profile]
        [--reference /tmp/hermes-venv/bin/python]

For each size it alternates baseline and compress ``--repeat`` times (a fresh compressor
each time, garbage collected before each timing) and prints the median wall and CPU time of
both, the ratio compress / round trip (CPU medians; aim <= 1.0) and the growth from the
first to the second size (CPU medians; aim <= 2.1 for 10k -> 20k). ``--profile`` adds a
cProfile of one compress on the first size, by phase and by module. ``--floor`` times, in
the same run and against the same round trip, the passes over the whole input that any
``compress`` following the seed design makes: the seed's rough count of every message
(TK-02: the length of each message's JSON form), the input check and repair, and the one
reading of every message (issue 8 item 1) -- what the whole pipeline must beat to reach
the aim.

``--reference PYTHON`` (issue 27) also times the reference (hermes-agent 0.19.0's
``ContextCompressor.compress``, its summary call stubbed) on the same messages, with
``reference_compress.py`` run by ``PYTHON``, the reference's own interpreter, right after
ours, and prints compress / reference (CPU medians; aim <= 0.6). Each side also times its
own JSON round trip, so the ratio of the two "x round trip" figures shows the comparison
with the load drift between the two timings taken out.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import platform
import pstats
import statistics
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from long_transcript import build, describe
from palimpsest.compaction.compressor import ContextCompressor
from palimpsest.compaction.repair import check_messages, normalize_messages
from palimpsest.messages.reading import read_transcript
from palimpsest.tokens import estimate_messages_tokens_rough

Message = dict[str, Any]

# Entry points of the pipeline's phases, by function name (cumulative time under each).
PHASES = {
    "prune (prune_tool_results)": "prune_tool_results",
    "boundaries (align_forward, find_tail_cut)": ("align_forward", "find_tail_cut"),
    "earlier summaries (split_earlier_summaries)": "split_earlier_summaries",
    "summarizer (summarize)": "summarize",
    "redaction (redact)": "redact",
    "assemble + sanitize (assemble, _no_op)": "assemble",
    "token sizing (MessageSizer.tokens, count_messages)": ("tokens", "count_messages"),
}


def _timed(fn: Any) -> tuple[float, float]:
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def reference(python: str, messages: list[Message], repeat: int) -> dict[str, float]:
    """The reference's medians on ``messages`` (``reference_compress.py`` under ``python``)."""
    script = Path(__file__).with_name("reference_compress.py")
    with tempfile.NamedTemporaryFile("w", suffix=".json", encoding="utf-8") as f:
        json.dump(messages, f)
        f.flush()
        done = subprocess.run(
            [python, str(script), f.name, "--repeat", str(repeat)],
            capture_output=True,
            text=True,
            check=True,
        )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def measure(messages: list[Message], repeat: int) -> dict[str, list[float]]:
    runs: dict[str, list[float]] = {"json wall": [], "json cpu": [], "wall": [], "cpu": []}
    for _ in range(repeat):
        wall, cpu = _timed(lambda: json.loads(json.dumps(messages)))
        runs["json wall"].append(wall)
        runs["json cpu"].append(cpu)
        compressor = ContextCompressor(200_000, quiet_mode=True)
        wall, cpu = _timed(lambda compressor=compressor: compressor.compress(messages))
        if not compressor.last_stats.compressed:
            raise SystemExit(f"no compression happened: {compressor.last_stats.reason}")
        runs["wall"].append(wall)
        runs["cpu"].append(cpu)
    return runs


FLOOR = {
    "seed rough count of every message (TK-02)": estimate_messages_tokens_rough,
    "input check + repair (check_messages, normalize_messages)": lambda m: (
        check_messages(m),
        normalize_messages(m),
    ),
    "one reading of every message (read_transcript)": read_transcript,
}


def floor(messages: list[Message], repeat: int) -> None:
    """Print each whole-input pass's CPU median as a ratio to the JSON round trip."""
    baseline: list[float] = []
    parts: dict[str, list[float]] = {label: [] for label in FLOOR}
    for _ in range(repeat):
        baseline.append(_timed(lambda: json.loads(json.dumps(messages)))[1])
        for label, fn in FLOOR.items():
            parts[label].append(_timed(lambda fn=fn: fn(messages))[1])
    base = statistics.median(baseline)
    print(f"\nwhole-input passes, CPU medians against the round trip ({base * 1000:.0f} ms):")
    total = 0.0
    for label, values in parts.items():
        cpu = statistics.median(values)
        total += cpu
        print(f"  {label:<58} {cpu * 1000:7.1f} ms {cpu / base:5.2f}x")
    print(
        f"  {'sum (before any pruning or summarizing)':<58} {total * 1000:7.1f} ms {total / base:5.2f}x"
    )


def _module(filename: str) -> str:
    if "/palimpsest/" in filename:
        return filename.split("/palimpsest/", 1)[1]
    return ""


def profile(messages: list[Message]) -> None:
    """Print one compress's time by phase (cumulative) and by palimpsest module (own time).

    Time spent in built-ins and the standard library (regex, json, str methods) is charged
    to the palimpsest module that called it.
    """
    compressor = ContextCompressor(200_000, quiet_mode=True)
    profiler = cProfile.Profile()
    gc.collect()
    profiler.enable()
    compressor.compress(messages)
    profiler.disable()
    stats = pstats.Stats(profiler)
    table: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    total = max(ct for (_, _, name), (_, _, _, ct, _) in table.items() if name == "compress")
    print(f"\nprofile of one compress ({total * 1000:.0f} ms under cProfile), by phase:")
    for label, names in PHASES.items():
        wanted = {names} if isinstance(names, str) else set(names)
        cumulative = sum(
            ct
            for (filename, _, name), (_, _, _, ct, _) in table.items()
            if name in wanted and _module(filename)
        )
        print(f"  {label:<52} {cumulative * 1000:8.1f} ms {cumulative / total:6.1%}")
    by_module: Counter[str] = Counter()
    for (filename, _, _), (_, _, own, _, callers) in table.items():
        module = _module(filename)
        if module:
            by_module[module] += own
            continue
        caller_own = {c: v[2] for c, v in callers.items()}
        spread = sum(caller_own.values()) or 1.0
        for (caller_file, _, _), share in caller_own.items():
            by_module[_module(caller_file) or "(stdlib called by stdlib)"] += own * share / spread
    print("by module (own time, built-ins charged to their caller):")
    for module, own in by_module.most_common(14):
        print(f"  {module:<52} {own * 1000:8.1f} ms {own / total:6.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 20_000])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--floor", action="store_true")
    parser.add_argument("--reference", metavar="PYTHON", help="the reference's interpreter")
    args = parser.parse_args()
    print(f"python {platform.python_version()} on {platform.machine()}, {platform.system()}")
    medians: dict[int, float] = {}
    transcripts: dict[int, list[Message]] = {}
    for n in args.sizes:
        messages = transcripts[n] = build(n)
        print(describe(messages))
        runs = measure(messages, args.repeat)
        med = {key: statistics.median(values) * 1000 for key, values in runs.items()}
        medians[n] = med["cpu"]
        print(
            f"  json round trip: median {med['json wall']:.0f} ms wall, {med['json cpu']:.0f} ms"
            f" CPU | compress: median {med['wall']:.0f} ms wall, {med['cpu']:.0f} ms CPU"
            f" (CPU min {min(runs['cpu']) * 1000:.0f}, max {max(runs['cpu']) * 1000:.0f})"
            f" | ratio {med['cpu'] / med['json cpu']:.2f}x (aim <= 2.5 at 10k)"
        )
        if args.reference:
            ref = reference(args.reference, messages, args.repeat)
            print(
                f"  reference: json {ref['json cpu'] * 1000:.0f} ms CPU | compress median"
                f" {ref['wall'] * 1000:.0f} ms wall, {ref['cpu'] * 1000:.0f} ms CPU"
                f" ({ref['messages_out']} messages out) | ratio to its round trip"
                f" {ref['cpu'] / ref['json cpu']:.2f}x"
            )
            print(
                f"  ours / reference: {med['cpu'] / 1000 / ref['cpu']:.2f}x CPU (aim <= 0.6);"
                f" by round-trip ratios {med['cpu'] / med['json cpu'] / (ref['cpu'] / ref['json cpu']):.2f}x"
            )
    if len(args.sizes) >= 2:
        small, large = args.sizes[0], args.sizes[1]
        print(
            f"growth {small:,} -> {large:,} messages: {medians[large] / medians[small]:.2f}x"
            f" (CPU medians; {large / small:.1f} = linear; aim <= 2.1 for 10k -> 20k)"
        )
    if args.profile:
        profile(transcripts[args.sizes[0]])
    if args.floor:
        floor(transcripts[args.sizes[0]], args.repeat)


if __name__ == "__main__":
    main()
