"""The least a pruning policy could cost in ``cache_cost.py``: the seed's pruning, free.

``cache_cost.py`` compares the cache-aware prune with the seed's, which prunes every old
result over 1,000 characters outside the protected tail as soon as the prompt passes 32K
tokens, and pays a rewrite of everything after the first pruned message each time. A
cache-aware policy chooses *when* to prune what the seed prunes (never more: the trigger,
the size floor and the protected tail are the same settings), so no such policy can read
less than the seed reads. This script replays the seed policy exactly as ``cache_cost.py``
does and prices each call as if the prune had cost nothing: every message the previous
request already carried is a cache read, only the messages appended since are written
(Anthropic) or sent as input (OpenAI), the output as billed. That total is a lower bound
for any policy that prunes the seed's results and no more and does not compact where the
seed does not, however its rewrites are timed; the ratio to the seed's real cost is the
best such a policy can reach. (A policy that lets the context reach the compaction
threshold can read less after the compaction, which drops the middle of the history;
that is a compaction, not a cheaper prune.)

It assumes the seed's runs do not compact (the history only grows between prunes; the
script stops with an error if a request is shorter than the one before). Run:

    python benchmarks/cache_cost_bound.py [--messages 600] [--seeds 7 11] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import cache_cost
from long_transcript import build
from palimpsest.pricing import estimate_usage_cost
from palimpsest.tokens import message_budget_tokens
from palimpsest.usage import CanonicalUsage


@dataclass
class RecordingProvider(cache_cost.CachingProvider):
    """The benchmark's simulated route, keeping each request's message sizes."""

    requests: list[tuple[list[int], int]] = field(default_factory=list)

    def _read(self, request: Sequence[Mapping[str, Any]], output: int) -> CanonicalUsage:
        self.requests.append(([message_budget_tokens(m) for m in request], output))
        return super()._read(request, output)


def bound(requests: list[tuple[list[int], int]], route: cache_cost.Route) -> float:
    """The requests priced with only the appended messages uncached."""
    total, previous = 0.0, 0
    for sizes, output in requests:
        if len(sizes) < previous:
            raise SystemExit("a request shorter than the one before: the run compacted")
        new = sum(sizes[previous:])
        usage = CanonicalUsage(
            cache_read_tokens=sum(sizes) - new,
            cache_write_tokens=new if route.writes_billed else 0,
            input_tokens=0 if route.writes_billed else new,
            output_tokens=output,
        )
        cost = estimate_usage_cost(route.model, usage, provider=route.provider)
        if cost.amount_usd is None:
            raise SystemExit(f"no price for {route.model}")
        total += cost.amount_usd
        previous = len(sizes)
    return total


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=600)
    parser.add_argument("--seeds", type=int, nargs="+", default=[7, 11])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = []
    for seed in args.seeds:
        messages = build(args.messages, seed=seed)
        for route in cache_cost.ROUTES:
            recorded: list[RecordingProvider] = []

            def make(*a: Any, _keep: list[RecordingProvider] = recorded, **k: Any) -> Any:
                provider = RecordingProvider(*a, **k)
                _keep.append(provider)
                return provider

            cache_cost.CachingProvider = make  # type: ignore[misc]  # replay builds one
            run = cache_cost.replay(messages, "seed", route)
            rows.append((f"long-{seed}", route.model, run.cost, bound(recorded[0].requests, route)))
    seed_total = sum(r[2] for r in rows)
    bound_total = sum(r[3] for r in rows)
    if args.json:
        print(json.dumps({"seed_usd": round(seed_total, 4), "bound_usd": round(bound_total, 4),
                          "ratio": round(bound_total / seed_total, 4)}))  # fmt: skip
        return 0
    print("| transcript | model | seed | bound (seed's prunes, free) | ratio |")
    print("|---|---|---:|---:|---:|")
    for label, model, cost, low in rows:
        print(f"| {label} | {model} | ${cost:.2f} | ${low:.2f} | {low / cost:.3f}x |")
    print(f"| all | both | ${seed_total:.2f} | ${bound_total:.2f} | "
          f"{bound_total / seed_total:.3f}x |")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
