"""Trajectory compression in one process: ours against the reference, CPU per entry (issue 27).

The reference is hermes-agent 0.19.0's ``TrajectoryCompressor`` from PyPI, installed in its
own venv (``python -m venv /tmp/hermes-venv && /tmp/hermes-venv/bin/pip install
hermes-agent==0.19.0``) and run there by this same script (``--side reference``). Both sides
get the same trajectories (``trajectories.build``: real SWE-agent and mini-swe-agent turns),
the same budget (2,000 tokens, summary 200), the same tokenizer (bpe-openai ``o200k_base``
counting without special tokens: the reference's Hugging Face tokenizer is swapped for it,
so the comparison is not one of tokenizers) and a summarizer that returns a fixed text at
once. Timed: the CPU of compressing every entry, parsed beforehand, one after another
(``compress_entry`` here, ``process_entry`` there); reading and writing files is not.

    python benchmarks/trajectories_reference.py [--count 2000] [--repeat 3]
        [--reference-python /tmp/hermes-venv/bin/python]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

SUMMARY = "The agent ran the tests, read the failing module and edited two functions."


def _ours(entries: list[dict[str, Any]]) -> tuple[float, int]:
    from palimpsest.trajectories.config import CompressionConfig
    from palimpsest.trajectories.counting import make_counter
    from palimpsest.trajectories.entry import compress_entry

    class Fixed:
        is_model = False

        def summarize(self, request: Any) -> str:
            return SUMMARY

    config = CompressionConfig(
        target_max_tokens=2000, summary_target_tokens=200, tokenizer_name="o200k_base"
    )
    counter, summarizer = make_counter(config), Fixed()
    start = time.process_time()
    done = [compress_entry(e, config, summarizer=summarizer, counter=counter) for e in entries]
    cpu = time.process_time() - start
    return cpu, sum(1 for r in done if r.metrics is not None and r.metrics.was_compressed)


def _reference(entries: list[dict[str, Any]]) -> tuple[float, int]:
    import trajectory_compressor as ref  # the reference's module (its venv)
    from bpe_openai import get_encoding  # from our venv, appended to sys.path

    class Tokenizer:
        def __init__(self) -> None:
            self.encode = get_encoding("o200k_base").encode_ordinary

    ref.TrajectoryCompressor._init_tokenizer = lambda self: setattr(  # type: ignore[attr-defined]
        self, "tokenizer", Tokenizer()
    )
    ref.TrajectoryCompressor._init_summarizer = lambda self: None  # type: ignore[attr-defined]
    ref.TrajectoryCompressor._generate_summary = (  # type: ignore[attr-defined]
        lambda self, content, metrics: "[CONTEXT SUMMARY]: " + SUMMARY
    )
    config = ref.CompressionConfig()
    config.target_max_tokens, config.summary_target_tokens = 2000, 200
    compressor = ref.TrajectoryCompressor(config)
    start = time.process_time()
    done = [compressor.process_entry(e) for e in entries]
    cpu = time.process_time() - start
    return cpu, sum(1 for _, m in done if m.was_compressed)


def _side(name: str, path: str, repeat: int) -> dict[str, Any]:
    with open(path, encoding="utf-8") as f:
        entries = [json.loads(line) for line in f]
    run = _ours if name == "ours" else _reference
    results = [run(entries) for _ in range(repeat)]
    return {"cpu": statistics.median(r[0] for r in results), "compressed": results[0][1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--reference-python", default="/tmp/hermes-venv/bin/python")
    parser.add_argument("--side", choices=["ours", "reference"], help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.side:  # one side, in whichever interpreter runs it
        if opts.side == "reference":
            sys.path.append(os.environ["PALIMPSEST_SITE_PACKAGES"])
            logging_off()
        print(json.dumps(_side(opts.side, opts.data, opts.repeat)))
        return
    sys.path.insert(0, str(Path(__file__).parent))
    from trajectories import build

    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "trajectories.jsonl"
        build(opts.count, data)
        env = dict(os.environ, PALIMPSEST_SITE_PACKAGES=sysconfig.get_paths()["purelib"])
        env["HERMES_HOME"] = tmp
        rows = {}
        for _ in range(opts.repeat):  # alternate the two sides, one process each
            for side, python in (("ours", sys.executable), ("reference", opts.reference_python)):
                args = [python, __file__, "--side", side, "--data", str(data), "--repeat", "1"]
                done = subprocess.run(args, capture_output=True, text=True, env=env, check=True)
                row = json.loads(done.stdout.strip().splitlines()[-1])
                rows.setdefault(side, []).append(row)
    ours = statistics.median(r["cpu"] for r in rows["ours"])
    ref = statistics.median(r["cpu"] for r in rows["reference"])
    print(f"{opts.count:,} trajectories, budget 2,000 tokens, summaries stubbed, o200k on both")
    print(f"  ours:      {ours:.2f} s CPU ({rows['ours'][0]['compressed']:,} compressed)")
    print(f"  reference: {ref:.2f} s CPU ({rows['reference'][0]['compressed']:,} compressed)")
    print(f"  ours / reference: {ours / ref:.2f}x (CPU medians of {opts.repeat}; aim <= 1.0)")


def logging_off() -> None:
    import logging

    logging.disable(logging.CRITICAL)


if __name__ == "__main__":
    main()
