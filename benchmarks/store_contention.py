"""One writer process and two searcher processes on one store file: errors and search p95.

The issue's fault item: readers must never wait on a writer, and a writer must retry
instead of failing while others read. This runs, on a fresh file seeded with
``--seed-messages`` messages:

1. a baseline: the two searchers alone for ``--baseline-seconds``;
2. contention: one writer appending one message per transaction (as an agent does) while
   the same two searchers search, for ``--seconds``.

Each searcher opens its own ``SessionStore`` and runs ``search_messages`` with a random
word; the writer runs ``append_message``. Every exception in any process is counted as an
error. It prints searches, errors, search p50/p95/max for both phases (and their ratio),
appends, append p95/max. Exit status 1 when any error happened.

Run: ``.venv/bin/python benchmarks/store_contention.py --seconds 30``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from palimpsest.storage.sessions import SessionStore

WORDS = [
    *("deploy", "kubernetes", "database", "migration", "index", "search", "cluster"),
    *("backup", "restore", "token", "session", "compaction", "summary", "python"),
    *("docker", "network", "latency", "cache", "replica", "shard", "schema", "trigger"),
    *("release", "rollback", "incident", "alert", "metric", "dashboard", "queue"),
]


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 80)))


def seed(path: Path, messages: int) -> None:
    rng = random.Random(11)
    with SessionStore(path) as store:
        per_session = 50
        for index in range(0, messages, per_session):
            sid = store.create_session(f"seed_{index:07d}", source="cli")
            batch = [
                {"role": "user" if j % 2 == 0 else "assistant", "content": _text(rng)}
                for j in range(min(per_session, messages - index))
            ]
            store.append_messages(sid, batch)


def _start(ready: Any, go: Any, start: Any, seconds: float) -> float:
    """Report ready, wait for every process, return the common deadline."""
    ready.put(True)
    go.wait()
    return float(start.value) + seconds


def _searcher(path: str, seconds: float, seed_value: int, sync: tuple[Any, ...]) -> None:
    ready, go, start, out = sync
    rng = random.Random(seed_value)
    latencies: list[float] = []
    errors: list[str] = []
    try:
        with SessionStore(path) as store:
            until = _start(ready, go, start, seconds)
            while time.time() < until:
                started = time.perf_counter()
                try:
                    store.search_messages(rng.choice(WORDS), limit=20)
                except Exception as exc:  # every failure is a finding, not a crash
                    errors.append(f"{type(exc).__name__}: {exc}")
                latencies.append(time.perf_counter() - started)
    except Exception as exc:
        errors.append(f"open: {type(exc).__name__}: {exc}")
        ready.put(False)
    out.put({"role": "searcher", "latencies": latencies, "errors": errors})


def _writer(path: str, seconds: float, sync: tuple[Any, ...]) -> None:
    ready, go, start, out = sync
    rng = random.Random(7)
    latencies: list[float] = []
    errors: list[str] = []
    try:
        with SessionStore(path) as store:
            sid = store.create_session(source="cli")
            until = _start(ready, go, start, seconds)
            while time.time() < until:
                started = time.perf_counter()
                try:
                    store.append_message(sid, "assistant", _text(rng))
                except Exception as exc:
                    errors.append(f"{type(exc).__name__}: {exc}")
                latencies.append(time.perf_counter() - started)
    except Exception as exc:
        errors.append(f"open: {type(exc).__name__}: {exc}")
        ready.put(False)
    out.put({"role": "writer", "latencies": latencies, "errors": errors})


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def phase(path: Path, seconds: float, *, writer: bool) -> dict[str, Any]:
    """Run two searchers (and the writer, if asked) for ``seconds``; collect their results."""
    ctx = mp.get_context("spawn")
    # Processes take a second or more to import and open the store: all of them start
    # measuring together, once every one is ready.
    ready, go, start, out = ctx.Queue(), ctx.Event(), ctx.Value("d", 0.0), ctx.Queue()
    sync = (ready, go, start, out)
    procs = [ctx.Process(target=_searcher, args=(str(path), seconds, s, sync)) for s in (1, 2)]
    if writer:
        procs.append(ctx.Process(target=_writer, args=(str(path), seconds, sync)))
    for proc in procs:
        proc.start()
    for _ in procs:
        ready.get(timeout=120)
    start.value = time.time()
    go.set()
    results = [out.get(timeout=seconds + 120) for _ in procs]
    for proc in procs:
        proc.join(timeout=30)
    searches = [x for r in results if r["role"] == "searcher" for x in r["latencies"]]
    appends = [x for r in results if r["role"] == "writer" for x in r["latencies"]]
    errors = [e for r in results for e in r["errors"]]
    exits = [p.exitcode for p in procs if p.exitcode != 0]
    if not searches or (writer and not appends):
        errors.append("a process measured nothing")  # never report an unknown as zero
    return {
        "searches": len(searches),
        "search_p50_ms": round(_percentile(searches, 50) * 1000, 2),
        "search_p95_ms": round(_percentile(searches, 95) * 1000, 2),
        "search_max_ms": round(max(searches, default=float("nan")) * 1000, 2),
        "appends": len(appends),
        "append_p95_ms": round(_percentile(appends, 95) * 1000, 2) if appends else None,
        "append_max_ms": round(max(appends) * 1000, 2) if appends else None,
        "errors": len(errors) + len(exits),
        "error_samples": errors[:5],
    }


def run(seconds: float, baseline_seconds: float, seed_messages: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "state.db"
        seed(path, seed_messages)
        baseline = phase(path, baseline_seconds, writer=False)
        contention = phase(path, seconds, writer=True)
        with SessionStore(path) as store:
            problems = store.verify()
    ratio = contention["search_p95_ms"] / baseline["search_p95_ms"]
    return {
        "seconds": seconds,
        "seed_messages": seed_messages,
        "baseline": baseline,
        "contention": contention,
        "search_p95_ratio": round(ratio, 2),
        "verify_problems": problems,
        "errors": baseline["errors"] + contention["errors"] + len(problems),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="contention phase")
    parser.add_argument("--baseline-seconds", type=float, default=None, help="default seconds/5")
    parser.add_argument("--seed-messages", type=int, default=5000)
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    baseline_seconds = args.baseline_seconds or max(1.0, args.seconds / 5)
    result = run(args.seconds, baseline_seconds, args.seed_messages)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        base, busy = result["baseline"], result["contention"]
        print(f"store contention: 1 writer + 2 searchers, {args.seconds:g} s")
        print(
            f"  searchers alone:   {base['searches']} searches, p50 {base['search_p50_ms']} ms,"
            f" p95 {base['search_p95_ms']} ms, errors {base['errors']}"
        )
        print(
            f"  beside the writer: {busy['searches']} searches, p50 {busy['search_p50_ms']} ms,"
            f" p95 {busy['search_p95_ms']} ms (x{result['search_p95_ratio']}),"
            f" max {busy['search_max_ms']} ms"
        )
        print(
            f"  writer:            {busy['appends']} appends, p95 {busy['append_p95_ms']} ms,"
            f" max {busy['append_max_ms']} ms"
        )
        print(f"  errors: {result['errors']}  verify: {result['verify_problems'] or 'ok'}")
        for sample in busy["error_samples"] + base["error_samples"]:
            print(f"    {sample}")
    return 1 if result["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
