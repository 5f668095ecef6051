"""Does search by meaning slow appends? Single-append latency with and without vectors.

An agent appends one message per transaction. With a store opened with an embedding model
(``embedder="bundled"``, the ``[vectors]`` extra), the messages are embedded by the
store's upkeep thread, in batches, with the vectors written in their own short
transactions; an append never embeds. This appends ``--messages`` messages one at a time
(a short pause between them, as turns arrive) to a fresh store, once without and once
with the model (in the same process, alternating order with ``--rounds``), and prints per
configuration the append p50 / p99 / max and how many appends took over 50 ms, then how
long the thread took to embed whatever was left once the appends stopped.

Run: ``python benchmarks/vector_append.py [--messages 2000] [--rounds 2] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from palimpsest.storage.sessions import SessionStore

WORDS = [
    "deploy",
    "database",
    "migration",
    "index",
    "search",
    "cluster",
    "backup",
    "restore",
    "token",
    "session",
    "summary",
    "python",
    "docker",
    "network",
    "latency",
    "cache",
    "replica",
    "schema",
    "trigger",
    "release",
    "rollback",
    "incident",
    "alert",
    "metric",
    "dashboard",
    "queue",
    "kitten",
    "holiday",
    "violin",
    "tesla",
    "postgres",
    "lisbon",
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def one(path: Path, messages: int, embedder: str | None, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    store = SessionStore(path, embedder=embedder)
    sid = store.create_session(source="cli")
    spent = []
    for i in range(messages):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 60)))
        t0 = time.perf_counter()
        store.append_message(sid, "user" if i % 2 == 0 else "assistant", text)
        spent.append((time.perf_counter() - t0) * 1000)
        time.sleep(0.001)
    left = store.vectors.pending_count() if store.vectors is not None else 0
    t0 = time.perf_counter()
    while store.vectors is not None and store.vectors.pending_count():
        time.sleep(0.02)
    drained = time.perf_counter() - t0
    store.close()
    return {
        "embedder": embedder or "none",
        "appends": messages,
        "p50_ms": round(percentile(spent, 50), 2),
        "p99_ms": round(percentile(spent, 99), 2),
        "max_ms": round(max(spent), 2),
        "over_50ms": sum(s > 50 for s in spent),
        "pending_after_appends": left,
        "drain_seconds": round(drained, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.messages < 1 or args.rounds < 1:
        parser.error("--messages and --rounds must be at least 1")
    results = []
    with tempfile.TemporaryDirectory(prefix="vector-append-") as tmp:
        for r in range(args.rounds):
            order = [None, "bundled"] if r % 2 == 0 else ["bundled", None]
            for embedder in order:
                path = Path(tmp) / f"r{r}-{embedder}.db"
                results.append({"round": r, **one(path, args.messages, embedder, seed=r)})
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for row in results:
            print(
                f"round {row['round']} {row['embedder']:8} p50 {row['p50_ms']:6.2f}"
                f"  p99 {row['p99_ms']:6.2f}  max {row['max_ms']:7.2f} ms"
                f"  >50 ms: {row['over_50ms']}  left to embed {row['pending_after_appends']}"
                f" (drained in {row['drain_seconds']} s)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
