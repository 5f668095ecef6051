"""Time the reference's ``ContextCompressor.compress`` on a transcript file (issue 27).

Runs under the reference's own interpreter (hermes-agent 0.19.0 from PyPI, installed in
a separate venv: ``python -m venv /tmp/hermes-venv && /tmp/hermes-venv/bin/pip install
hermes-agent==0.19.0``); it imports nothing from palimpsest. ``compress_speed.py
--reference /tmp/hermes-venv/bin/python`` writes the transcript it measures to a file and
runs this script on it, so both sides see the same messages.

The reference's summary call (``call_llm``, the network request) is replaced by one that
returns a fixed summary at once; everything around it (pruning, boundaries, building the
summary prompt, assembling) runs as shipped. Like ``compress_speed.py`` it alternates a
JSON round trip of the same list with a compress on a fresh compressor and prints the
median CPU and wall time of both as JSON.

    /tmp/hermes-venv/bin/python benchmarks/reference_compress.py MESSAGES.json [--repeat 5]
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import statistics
import tempfile
import time
from types import SimpleNamespace
from typing import Any

SUMMARY = "## Goal\nContinue the task.\n\n## Progress\nWork happened; details omitted."


def _fake_call_llm(**_: Any) -> Any:
    """What the summary model would return, without the network."""
    message = SimpleNamespace(content=SUMMARY, tool_calls=None)
    return SimpleNamespace(choices=[SimpleNamespace(message=message, finish_reason="stop")])


def _timed(fn: Any) -> tuple[float, float]:
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("messages")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--context-length", type=int, default=200_000)
    opts = parser.parse_args()
    os.environ.setdefault("HERMES_HOME", tempfile.mkdtemp(prefix="hermes-home-"))
    logging.disable(logging.CRITICAL)

    import agent.context_compressor as reference  # the reference's own module

    reference.call_llm = _fake_call_llm  # type: ignore[attr-defined]
    with open(opts.messages, encoding="utf-8") as f:
        messages = json.load(f)

    runs: dict[str, list[float]] = {"json wall": [], "json cpu": [], "wall": [], "cpu": []}
    out_len = 0
    for _ in range(opts.repeat):
        wall, cpu = _timed(lambda: json.loads(json.dumps(messages)))
        runs["json wall"].append(wall)
        runs["json cpu"].append(cpu)
        compressor = reference.ContextCompressor(
            "gpt-4o", config_context_length=opts.context_length, quiet_mode=True
        )
        work = json.loads(json.dumps(messages))  # it may edit what it is given
        result: list[Any] = []
        wall, cpu = _timed(lambda c=compressor, w=work, r=result: r.append(c.compress(w)))
        out_len = len(result[0])
        runs["wall"].append(wall)
        runs["cpu"].append(cpu)
    medians = {key: statistics.median(values) for key, values in runs.items()}
    print(json.dumps({"messages_in": len(messages), "messages_out": out_len, **medians}))


if __name__ == "__main__":
    main()
