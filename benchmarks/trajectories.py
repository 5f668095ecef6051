"""Throughput and peak memory of ``palimpsest trajectories compress`` per engine.

Data: N ShareGPT trajectories built from real turns. The four real trajectories of
tests/data/trajectories/real_sharegpt.jsonl (SWE-agent and mini-swe-agent runs from the
shared transcripts, see build_fixtures.py there) are cut into windows: trajectory *i* keeps
its source's system turn, task and first reply, then a random window of 6-24 of its
gpt/tool turns (starting on a gpt turn, so tool pairs stay whole), then its last two turns;
the task text carries the copy number so no two entries are equal. Seeded, so every run
builds the same file. Summaries come from the offline extractive summarizer; tokens are
o200k_base (bpe-openai). Budget: 2,000 tokens, summary 200 (so most entries compress).

Each engine runs as the real command in a fresh process (``--quiet``), timed from the
metrics file's ``elapsed_seconds`` (the batch itself) and from outside (with start-up);
peak memory is the ``ru_maxrss`` that ``wait4`` reports for the command, i.e. the largest
resident set of the process and the children it waited for (pool workers). Ray's workers
belong to the Ray instance, not the command, so for Ray the figure is the driver's only.
CPU is the command's and its reaped workers' (``wait4``), split into the parent's own and
the workers' by the command's ``getrusage(RUSAGE_SELF)`` at exit, and given per
trajectory: on a shared machine, where the rates move with other load, the CPU says more.

    python benchmarks/trajectories.py [--sizes 10000 100000] [--engines one pool ray]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "tests" / "data" / "trajectories" / "real_sharegpt.jsonl"
CONFIG = "compression:\n  target_max_tokens: 2000\n  summary_target_tokens: 200\n"
# Runs the CLI as ``python -m palimpsest.cli`` would, then writes the process's own CPU.
_RECORD_OWN_CPU = """
import atexit, json, resource, runpy, sys
path = sys.argv.pop(1)
def record():
    me = resource.getrusage(resource.RUSAGE_SELF)
    with open(path, "w") as f:
        json.dump({"cpu": me.ru_utime + me.ru_stime}, f)
atexit.register(record)
sys.argv[0] = "palimpsest"
runpy.run_module("palimpsest.cli", run_name="__main__", alter_sys=True)
"""
ENGINES = {
    "one": ["--engine", "local", "--workers", "1"],
    "pool": ["--engine", "local", "--workers", "2"],
    "ray": ["--engine", "ray"],
}


def build(n: int, path: Path, seed: int = 13) -> None:
    """Write ``n`` trajectories cut from the real ones to ``path``."""
    rng = random.Random(seed)
    sources = [json.loads(line) for line in REAL.read_text(encoding="utf-8").splitlines()]
    with path.open("w", encoding="utf-8") as out:
        for i in range(n):
            src = sources[i % len(sources)]
            turns = src["conversations"]
            head, body, tail = turns[:3], turns[3:-2], turns[-2:]
            starts = [k for k, t in enumerate(body) if t["from"] == "gpt"]
            start = rng.choice(starts)
            stop = min(len(body), start + rng.randint(6, 24))
            while stop < len(body) and body[stop]["from"] == "tool":
                stop += 1
            task = dict(head[1], value=f"{head[1]['value']}\n(copy {i})")
            entry = {
                "id": f"{src['id']}-{i}",
                "source": src["source"],
                "conversations": [head[0], task, head[2], *body[start:stop], *tail],
                "meta": src["meta"],
            }
            out.write(json.dumps(entry, ensure_ascii=False) + "\n")


def run_engine(data: Path, engine: str, work: Path) -> dict[str, Any]:
    """One run of the command; wall time, batch time, peak RSS and the metrics."""
    out = work / f"out-{engine}.jsonl"
    metrics = work / f"metrics-{engine}.json"
    config = work / "config.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    own = work / f"own-{engine}.json"
    command = [sys.executable, "-c", _RECORD_OWN_CPU, str(own), "trajectories", "compress", str(data),
               "-o", str(out), "--trajectory-config", str(config), "--metrics", str(metrics),
               "--overwrite", "--quiet", *ENGINES[engine]]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    started = time.monotonic()
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{engine} failed: {proc.stderr.read().decode() if proc.stderr else ''}")
    report = json.loads(metrics.read_text(encoding="utf-8"))
    parent_cpu = json.loads(own.read_text(encoding="utf-8"))["cpu"]
    out.unlink()
    batch = report["elapsed_seconds"]
    return {
        "engine": engine,
        "trajectories": report["total_trajectories"],
        "compressed": report["compressed"],
        "tokens_before": report["total_tokens_before"],
        "batch_seconds": batch,
        "wall_seconds": round(wall, 2),
        "traj_per_s": round(report["total_trajectories"] / batch, 1),
        "tokens_per_s": round(report["total_tokens_before"] / batch),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        # CPU of the command and the pool workers it reaped: how much work the engine
        # adds beyond one process's (on a loaded machine the rates above say little).
        "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2),
        "parent_cpu_seconds": round(parent_cpu, 2),
        "cpu_ms_per_traj": round(
            (usage.ru_utime + usage.ru_stime) * 1000 / report["total_trajectories"], 2
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000])
    parser.add_argument("--engines", nargs="+", default=list(ENGINES), choices=list(ENGINES))
    parser.add_argument("--json", action="store_true", help="print JSON rows")
    args = parser.parse_args()
    print(f"# {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for size in args.sizes:
            data = work / f"data-{size}.jsonl"
            build(size, data)
            mb = data.stat().st_size / 1e6
            for engine in args.engines:
                row = {"size": size, "input_mb": round(mb, 1), **run_engine(data, engine, work)}
                rows.append(row)
                if args.json:
                    print(json.dumps(row), flush=True)
                else:
                    print(
                        f"{size:>7,} {engine:>4}: {row['traj_per_s']:>7,.1f} traj/s "
                        f"{row['tokens_per_s']:>9,} tok/s  batch {row['batch_seconds']:>7.1f} s "
                        f"wall {row['wall_seconds']:>7.1f} s  CPU {row['cpu_seconds']:>7.1f} s "
                        f"(parent {row['parent_cpu_seconds']:.1f} s; "
                        f"{row['cpu_ms_per_traj']:.2f} ms/traj)  "
                        f"peak RSS {row['peak_rss_mb']:>6.1f} MB "
                        f"(input {mb:.1f} MB, {row['compressed']:,} compressed)",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
