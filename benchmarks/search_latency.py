"""Query latency by query class on a store built once (issue 11, item 5).

``store_scale.py`` measures everything at once (inserts, size, stalls, queries) and takes
long to build; changing the ranking needs only its query half, repeated, on the same
file. This script reuses a store that ``store_scale.py --no-floor --keep --db PATH`` built
(same ``--messages``/``--seed``/``--plants``), replays its generator (no writes) to get
the same queries and planted answers, and times ``SessionStore.search_messages`` per
class:

* ``selective``: one rare word, or a rare and a common word (default ``auto`` mode);
* ``selective_all``: the same queries with ``match="all"`` (what ``store_scale`` times);
* ``natural``: questions over 2-4 common words (``auto``);
* ``phrase``: quoted two- or three-word phrases taken from stored messages;
* ``planted``: questions for the old planted answers buried under newer near-matches;
  ``found`` counts answers in the top 10.

To compare two versions of the code in the same run, call it once per source tree with a
different ``PYTHONPATH``, alternating, on the same ``--db``::

    PYTHONPATH=/tmp/base/src python benchmarks/search_latency.py --db D --messages 100000
    PYTHONPATH=$PWD/src      python benchmarks/search_latency.py --db D --messages 100000
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from palimpsest.storage.sessions import SessionStore
from store_scale import (
    DEFAULT_CORPUS,
    TOP_K_FOUND,
    Generator,
    _Replay,
    build_queries,
    insert_all,
    load_corpus,
    planted_ids,
    spread,
)

#: class -> (match mode, which store_scale query list)
CLASSES = {
    "selective": ("auto", "selective"),
    "selective_all": ("all", "selective"),
    "natural": ("auto", "natural"),
    "phrase": ("auto", "phrase"),
    "planted": ("auto", "planted"),
}


def time_classes(
    store: SessionStore,
    queries: dict[str, list[str]],
    planted: dict[str, int | None],
    rounds: int,
) -> dict[str, Any]:
    """Wall and CPU p50/p95 per class over ``rounds`` passes (pooled), and planted found.

    CPU time (this process) is the steadier figure on a shared machine: SQLite runs in
    the calling thread, so it counts the search's own work and not the waits for a core.
    """
    results: dict[str, Any] = {}
    for name, (mode, source) in CLASSES.items():
        times: list[float] = []
        cpu: list[float] = []
        found = 0
        for round_no in range(rounds):
            for query in queries[source]:
                t0, c0 = time.perf_counter(), time.process_time()
                hits = store.search_messages(query, limit=20, match=mode)
                times.append((time.perf_counter() - t0) * 1000)
                cpu.append((time.process_time() - c0) * 1000)
                want = planted.get(query)
                if round_no == 0 and want is not None:
                    found += want in [int(h["id"]) for h in hits[:TOP_K_FOUND]]
        cpu_spread = spread(cpu)
        results[name] = {
            **spread(times),
            "cpu_p50": cpu_spread["p50"],
            "cpu_p95": cpu_spread["p95"],
            "found": found,
            "asked": len(queries[source]),
        }
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, required=True, help="a store built by store_scale")
    parser.add_argument("--messages", type=int, required=True)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20260521)
    parser.add_argument("--plants", type=int, default=20)
    parser.add_argument("--queries", type=int, default=100, help="queries per class")
    parser.add_argument("--rounds", type=int, default=2, help="passes over each class")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--label", default="", help="printed with the results")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not args.db.exists():
        raise SystemExit(f"{args.db}: missing (build it with store_scale.py --keep --db)")
    gen = Generator(args.seed, load_corpus(args.corpus), args.messages, args.plants)
    with contextlib.redirect_stderr(io.StringIO()):  # same RNG path, no writes
        insert_all(_Replay(), None, gen, args.messages, args.batch)
    queries = build_queries(gen, args.queries)
    store = SessionStore(args.db)
    planted = {q: ids[0] for q, ids in planted_ids(store, None, gen).items()}
    for query in queries["selective"][:5]:  # warm the page cache a little, as in use
        store.search_messages(query, limit=20)
    results = time_classes(store, queries, planted, args.rounds)
    source = Path(sys.modules[SessionStore.__module__].__file__ or "?").parents[2]
    print(
        f"search_latency {args.label}: {args.messages:,} messages, code {source},"
        f" load average {os.getloadavg()[0]:.1f}"
    )
    for name, row in results.items():
        extra = f", found {row['found']}/{row['asked']}" if name == "planted" else ""
        print(
            f"  {name:<14} wall p50 {row['p50']:6.2f} p95 {row['p95']:6.2f} ms;"
            f" cpu p50 {row['cpu_p50']:6.2f} p95 {row['cpu_p95']:6.2f} ms{extra}"
        )
    if args.json:
        print(json.dumps({"label": args.label, "messages": args.messages, **results}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
