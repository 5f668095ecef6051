"""What pruning and compaction cost against a provider with a prompt cache: three policies.

Long transcripts made of real turns (:mod:`long_transcript`: the real runs of
``tests/data/transcripts``, copies of ``../shared/data/transcripts``, cut into turns and
chained; every message size is the real one) are replayed through the real
:class:`~palimpsest.agent.loop.Agent` (``palimpsest replay``'s script and tools: the recorded
assistant turns answer, the recorded tool outputs come back) against a **simulated
provider** that bills the way the route documents:

- a **prefix cache**: a request's longest prefix of whole messages that an earlier request
  sent within the cache lifetime is a cache read; the rest is written to the cache
  (Anthropic: billed as cache writes) or sent as input (OpenAI: cached for free, billed as
  input). Every hit refreshes the lifetime. Lifetimes are
  :data:`palimpsest.compaction.cache_policy.CACHE_TTL_SECONDS` (5 minutes for both);
- prices from genai-prices (through :func:`palimpsest.pricing.estimate_usage_cost`) for two
  real models: ``claude-sonnet-4-5`` (Anthropic: input $3, cache read $0.30, cache write
  $3.75, output $15 per million) and ``gpt-5`` (OpenAI: input $1.25, cache read $0.125,
  output $10);
- a virtual clock: 10 s a model call, 30 s between user turns (the cache stays warm);
- token counts are the rough count (:func:`palimpsest.tokens.message_budget_tokens`).

Policies (same window, 128K tokens, and compaction threshold, 50%, for all three):

- ``seed``: the proactive prune (CC-45, ``compression.proactive_prune_tokens`` = 32K, results
  over 1,000 characters, at least 4,096 tokens reclaimed) runs before every call whatever the
  cache, and the compaction prunes its head as the seed did (``compression.cache_aware`` off);
- ``cache_aware``: the same settings with ``compression.cache_aware`` on;
- ``native``: no client prune; the simulated provider compacts server-side when a request
  reaches 56K input tokens (Anthropic's threshold compaction, ``compact_20260112``, minimum
  trigger 50K): an extra sampling pass reads the whole context (billed like a request over
  the same prefix, cache reads included) and writes a 3,500-token summary (the example
  figure of Anthropic's documentation), the answer then reads system + summary + what came
  after; everything before the compaction block is dropped from later requests.
  palimpsest's own compressor, the fallback when a route refuses, is off: the simulated
  route never refuses, and the client's history is not shortened by the simulation, so an
  armed compressor would fire on a size the server never sees.

The client policies summarize with the extractive summarizer, which sends no request: their
compactions cost nothing themselves (a model-written summary would add its request), while
the native policy pays for its summary pass. Printed: total cost, cached share of input
tokens on the calls after the first, and compactions, per policy and route; ``--json``
prints ``{policy: {cost_usd, cached_share, compactions}}`` summed over routes and
transcripts. Continuity: ``palimpsest.eval`` continuity probes at depths 0.5/0.7/0.9 on the
same transcripts (rough token counts, for speed), with the compressor as each client policy
configures it (warm cache for ``cache_aware``). Run:

    python benchmarks/cache_cost.py [--messages 600] [--seeds 7 11] [--json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from long_transcript import build
from palimpsest.agent.events import CompactionEvent
from palimpsest.agent.loop import Agent
from palimpsest.agent.replay_model import ReplayChatModel, build_script, replay_tools
from palimpsest.compaction.cache_policy import CACHE_TTL_SECONDS, cache_rates
from palimpsest.compaction.compressor import ContextCompressor
from palimpsest.config import Settings
from palimpsest.eval import aggregate, evaluate_transcript
from palimpsest.pricing import estimate_usage_cost
from palimpsest.providers.base import Completion
from palimpsest.tokens import RoughCounter, estimate_tokens_rough, message_budget_tokens
from palimpsest.usage import CanonicalUsage

WINDOW = 128_000
PROACTIVE_TOKENS = 32_000
NATIVE_TRIGGER = 56_000
NATIVE_SUMMARY_TOKENS = 3_500
SECONDS_PER_CALL = 10.0
SECONDS_BETWEEN_TURNS = 30.0
POLICIES = ("seed", "cache_aware", "native")


@dataclass(frozen=True)
class Route:
    model: str
    provider: str
    writes_billed: bool
    ttl: float


ROUTES = (
    Route("claude-sonnet-4-5", "anthropic", True, CACHE_TTL_SECONDS["anthropic:5m"]),
    Route("gpt-5", "openai", False, CACHE_TTL_SECONDS["openai"]),
)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Bill:
    calls: int = 0
    cost: float = 0.0
    unknown: int = 0
    prompt_after_first: int = 0
    cached_after_first: int = 0
    native_compactions: int = 0


def _key(previous: str, message: Mapping[str, Any]) -> str:
    text = json.dumps(message, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha1((previous + text).encode()).hexdigest()


@dataclass
class CachingProvider:
    """The simulated route: recorded answers, billed with a prefix cache (module docstring)."""

    inner: ReplayChatModel
    route: Route
    clock: Clock
    native: bool = False
    bill: Bill = field(default_factory=Bill)
    cache: dict[str, float] = field(default_factory=dict)
    native_cut: int = 0
    native_summary: dict[str, Any] | None = None

    @property
    def model(self) -> str:
        return self.route.model

    @property
    def provider(self) -> str:
        return self.route.provider

    base_url = None

    def _price(self, usage: CanonicalUsage) -> None:
        cost = estimate_usage_cost(self.route.model, usage, provider=self.route.provider)
        if cost.amount_usd is None:
            self.bill.unknown += 1
        else:
            self.bill.cost += cost.amount_usd

    def _read(self, request: Sequence[Mapping[str, Any]], output: int) -> CanonicalUsage:
        """Bill one pass over ``request``; the cache learns every prefix of it."""
        now = self.clock.now
        key, cached, total, hit = "", 0, 0, True
        keys = []
        for message in request:
            key = _key(key, message)
            size = message_budget_tokens(message)
            total += size
            keys.append(key)
            if hit and self.cache.get(key, -1.0) > now:
                cached += size
            else:
                hit = False
        for k in keys:
            self.cache[k] = now + self.route.ttl
        rest = total - cached
        usage = CanonicalUsage(
            input_tokens=0 if self.route.writes_billed else rest,
            cache_write_tokens=rest if self.route.writes_billed else 0,
            cache_read_tokens=cached,
            output_tokens=output,
        )
        self.bill.calls += 1
        if self.bill.calls > 1:
            self.bill.prompt_after_first += total
            self.bill.cached_after_first += cached
        self._price(usage)
        return usage

    def _served(self, messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """What the server reads: with native compaction, system + summary + the rest."""
        if not self.native:
            return list(messages)
        system, conversation = list(messages[:1]), list(messages[1:])
        if self.native_summary is not None:
            conversation = [self.native_summary, *conversation[self.native_cut :]]
        served = system + conversation
        size = sum(message_budget_tokens(m) for m in served)
        if size >= NATIVE_TRIGGER:
            self._read(served, NATIVE_SUMMARY_TOKENS)  # the summary pass
            self.bill.native_compactions += 1
            self.native_cut = len(messages) - 1
            text = f"[compaction {self.bill.native_compactions}] " + "s " * (
                NATIVE_SUMMARY_TOKENS * 2
            )
            self.native_summary = {"role": "user", "content": text}
            served = [*system, self.native_summary]
        return served

    def complete(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
        **options: Any,
    ) -> Completion:
        self.clock.now += SECONDS_PER_CALL
        reply = self.inner.complete(messages, tools, max_tokens, **options)
        answer = reply.to_message()
        output = max(1, message_budget_tokens(answer) or estimate_tokens_rough(str(answer)))
        served = self._served(messages)
        if tools:
            served = [{"role": "system", "content": json.dumps(list(tools))}, *served]
        reply.usage = self._read(served, output)
        return reply

    async def acomplete(self, *args: Any, **kwargs: Any) -> Completion:
        return self.complete(*args, **kwargs)


HORIZON = [8]
PROTECT_LAST = [20]


def settings_for(policy: str, home: str) -> Settings:
    compression: dict[str, Any] = {
        # native: the simulated route never refuses, so the client's fallback never has a
        # reason to run; and its own history is not shortened by the simulation (the
        # server drops what precedes its summary), so armed it would fire on that.
        "enabled": policy != "native",
        "threshold": 0.5,
        "cache_horizon_calls": HORIZON[0],
        "protect_last_n": PROTECT_LAST[0],
    }
    if policy in ("seed", "cache_aware"):
        compression.update(
            proactive_prune_tokens=PROACTIVE_TOKENS,
            proactive_prune_min_result_chars=1_000,
            proactive_prune_min_reclaim_tokens=0,  # seed: prune every time
            cache_aware=policy == "cache_aware",
        )
    return Settings.model_validate(
        {
            "model": {"context_length": WINDOW},
            "compression": compression,
            "memory": {"flush_before_compression": False},
            "outputs": {"path": str(Path(home) / "outputs")},
        }
    )


@dataclass
class Run:
    cost: float
    unknown: int
    prompt_after_first: int
    cached_after_first: int
    compactions: int
    calls: int
    native_compactions: int = 0


def replay(messages: list[dict[str, Any]], policy: str, route: Route) -> Run:
    script = build_script(messages)
    clock = Clock()
    inner = ReplayChatModel(model=route.model, when_exhausted="empty")
    model = CachingProvider(inner, route, clock, native=policy == "native")
    with tempfile.TemporaryDirectory() as home:
        settings = settings_for(policy, home)
        agent = Agent(
            model,  # type: ignore[arg-type]
            tools=replay_tools(script),
            store=None,
            context_length=WINDOW,
            system_message=script.system,
            builtin_tools=False,
            max_iterations=max((len(t.replies) for t in script.turns), default=0) + 4,
            settings=settings,
        )
        agent.compressor.cache_clock = clock  # type: ignore[attr-defined]
        agent.usage.compactions.clock = clock
        compactions = 0
        try:
            for turn in script.turns:
                inner.load(turn.replies)
                clock.now += SECONDS_BETWEEN_TURNS
                for event in agent.run(turn.user):
                    if isinstance(event, CompactionEvent) and event.compacted:
                        compactions += 1
        finally:
            agent.close()
    bill = model.bill
    return Run(
        bill.cost,
        bill.unknown,
        bill.prompt_after_first,
        bill.cached_after_first,
        compactions + bill.native_compactions,
        bill.calls,
        bill.native_compactions,
    )


def continuity(transcripts: list[tuple[str, list[dict[str, Any]]]]) -> dict[str, Any]:
    """The continuity probes with each client policy's compressor (warm cache for one)."""
    rates = cache_rates(ROUTES[0].model, provider=ROUTES[0].provider)

    def seed(window: int) -> ContextCompressor:
        engine = ContextCompressor(window, quiet_mode=True)
        engine.cache_aware = False
        return engine

    def aware(window: int) -> ContextCompressor:
        engine = ContextCompressor(window, quiet_mode=True)
        engine.configure_cache(ttl_seconds=300, rates=rates, clock=lambda: 0.0)
        engine.observe_call(CanonicalUsage(cache_read_tokens=10**6), 10**6)
        return engine

    out: dict[str, Any] = {}
    for name, factory in (("seed", seed), ("cache_aware", aware)):
        cases = []
        for label, messages in transcripts:
            cases.extend(
                evaluate_transcript(
                    label, messages, counter=RoughCounter(), make_compressor=factory
                )
            )
        row = aggregate(cases)["palimpsest"]
        out[name] = {
            k: row[k]
            for k in ("files_named", "last_failure_kept", "identifiers_kept", "cases")
            if k in row
        }
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=600)
    parser.add_argument("--seeds", type=int, nargs="+", default=[7, 11])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-continuity", action="store_true")
    parser.add_argument("--horizon", type=int, default=8, help="compression.cache_horizon_calls")
    parser.add_argument("--protect-last", type=int, default=20, help="compression.protect_last_n")
    parser.add_argument("--route", choices=[r.provider for r in ROUTES], action="append")
    args = parser.parse_args(argv)
    HORIZON[0] = args.horizon
    PROTECT_LAST[0] = args.protect_last
    routes = [r for r in ROUTES if not args.route or r.provider in args.route]
    transcripts = [(f"long-{s}", build(args.messages, seed=s)) for s in args.seeds]
    totals: dict[str, Run] = {p: Run(0.0, 0, 0, 0, 0, 0) for p in POLICIES}
    rows = []
    for label, messages in transcripts:
        for route in routes:
            for policy in POLICIES:
                run = replay(messages, policy, route)
                rows.append((label, route.model, policy, run))
                t = totals[policy]
                totals[policy] = Run(
                    t.cost + run.cost,
                    t.unknown + run.unknown,
                    t.prompt_after_first + run.prompt_after_first,
                    t.cached_after_first + run.cached_after_first,
                    t.compactions + run.compactions,
                    t.calls + run.calls,
                )
    result = {
        p: {
            "cost_usd": None if r.unknown else round(r.cost, 4),
            "cached_share": round(r.cached_after_first / r.prompt_after_first, 4)
            if r.prompt_after_first
            else None,
            "compactions": r.compactions,
        }
        for p, r in totals.items()
    }
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"window {WINDOW:,}, threshold 50%, proactive prune at {PROACTIVE_TOKENS:,}, "
          f"native trigger {NATIVE_TRIGGER:,}; {len(transcripts)} transcript(s) of "
          f"{args.messages} messages")  # fmt: skip
    print("| transcript | model | policy | calls | cost | cached share (after 1st) | compactions |")
    print("|---|---|---|---:|---:|---:|---:|")
    for label, model, policy, run in rows:
        share = run.cached_after_first / run.prompt_after_first if run.prompt_after_first else 0
        cost = "unknown" if run.unknown else f"${run.cost:.2f}"
        print(f"| {label} | {model} | {policy} | {run.calls} | {cost} | {share:.1%} "
              f"| {run.compactions} |")  # fmt: skip
    print("| all | both | policy | | cost | cached share | compactions |")
    for policy, row in result.items():
        print(f"| all | both | {policy} | | ${row['cost_usd']} | {row['cached_share']:.1%} "
              f"| {row['compactions']} |")  # fmt: skip
    seed_cost = result["seed"]["cost_usd"]
    aware_cost = result["cache_aware"]["cost_usd"]
    if seed_cost and aware_cost is not None:
        print(f"cache_aware / seed cost: {aware_cost / seed_cost:.2f}x (aim <= 0.80x)")
    if not args.no_continuity:
        print("continuity (palimpsest eval, depths 0.5/0.7/0.9):")
        print(json.dumps(continuity(transcripts), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
