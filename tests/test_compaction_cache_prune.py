"""Cache-aware pruning: the proactive pass (CC-45) and the compaction's head, warm vs cold."""

from __future__ import annotations

import json
from typing import Any

from palimpsest.compaction.cache_policy import CacheRates, CacheState
from palimpsest.compaction.cache_prune import first_change, proactive_prune, reclaimed_tokens
from palimpsest.compaction.compressor import ContextCompressor
from palimpsest.config import Settings
from palimpsest.messages import validate_transcript
from palimpsest.usage import CanonicalUsage

SONNET = CacheRates(input=3.0, cache_read=0.3, cache_write=3.75)
BIG = 40_000  # characters: ~10K tokens a result


def call(cid: str, path: str) -> dict[str, Any]:
    args = json.dumps({"path": path})
    return {"id": cid, "type": "function", "function": {"name": "read_file", "arguments": args}}


def session(results: int, tail: int = 6, prose: int = 0) -> list[dict[str, Any]]:
    """A task, ``results`` large file reads (each call with ``prose`` characters of
    reasoning, which no prune touches), then ``tail`` short turns."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix the parser in src/parse.py"},
    ]
    for i in range(results):
        thought = f"thinking about f{i}. " * (prose // 20) or None
        calls = [call(f"c{i}", f"f{i}.py")]
        messages.append({"role": "assistant", "content": thought, "tool_calls": calls})
        body = f"line {i}\n" * (BIG // 7)
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": body})
    for i in range(tail):
        role = "user" if i % 2 == 0 else "assistant"
        messages.append({"role": role, "content": f"short {i}"})
    return messages


def warm_state(prefix: int, at: float = 100.0) -> CacheState:
    state = CacheState(ttl_seconds=300)
    state.observe(CanonicalUsage(input_tokens=50, cache_read_tokens=60_000), prefix, at=at)
    return state


def run(messages: list[dict[str, Any]], **kw: Any) -> Any:
    kw.setdefault("current_tokens", 80_000)
    kw.setdefault("trigger_tokens", 50_000)
    kw.setdefault("protect_last_n", 6)
    return proactive_prune(messages, **kw)


def test_off_below_the_trigger_or_with_nothing_to_reclaim() -> None:
    messages = session(6)
    assert run(messages, trigger_tokens=0).messages is messages
    below = run(messages, current_tokens=10_000)
    assert below.messages is messages and "below" in below.reason
    small = run(messages, min_reclaim_tokens=10**9)
    assert small.messages is messages and not small.changed


def test_without_cache_knowledge_it_prunes_every_old_result_like_the_seed() -> None:
    messages = session(6)
    result = run(messages)
    assert result.changed and result.pruned_count == 6
    assert result.reclaimed_tokens > 50_000
    assert first_change(messages, result.messages) == 3
    validate_transcript(result.messages, strict=True)
    assert messages[3]["content"].startswith("line 0")  # the input is untouched


def test_a_warm_cache_keeps_the_prefix_when_the_rewrite_does_not_pay() -> None:
    messages = session(6, prose=80_000)  # far more reasoning than reclaimable output
    state = warm_state(prefix=len(messages) - 1)
    result = run(messages, cache=state, rates=SONNET, now=150.0)
    assert result.messages is messages and not result.changed
    assert result.decision is not None and not result.decision.rewrite
    assert "costs more" in result.reason or "cost more" in result.reason


def test_the_same_prune_goes_ahead_once_the_cache_has_expired() -> None:
    messages = session(6, prose=80_000)
    state = warm_state(prefix=len(messages) - 1, at=100.0)
    result = run(messages, cache=state, rates=SONNET, now=100.0 + 301)
    assert result.changed and result.decision is not None and "cold" in result.reason


def test_a_rewrite_that_saves_more_than_it_costs_goes_ahead_while_warm() -> None:
    # Almost all of the cached prefix is reclaimable: little is written back.
    messages = session(6)
    state = warm_state(prefix=len(messages) - 1)
    result = run(messages, cache=state, rates=SONNET, now=150.0, horizon_calls=8)
    assert result.decision is not None
    assert result.decision.saving_usd is not None and result.decision.cost_usd is not None
    assert result.changed == (result.decision.saving_usd > result.decision.cost_usd)
    assert result.changed  # 60K reclaimed x 0.3 x 8 beats ~1K rewritten x 3.45


def test_unknown_prices_keep_a_warm_prefix_and_prune_only_beyond_it() -> None:
    messages = session(8)
    unknown = CacheRates(input=None, cache_read=None, cache_write=None)
    state = warm_state(prefix=9)  # the first three reads are cached, the rest is not
    result = run(messages, cache=state, rates=unknown, now=150.0)
    assert result.changed
    assert all(result.messages[i] is messages[i] for i in range(9))
    assert first_change(messages, result.messages) == 9
    assert result.reclaimed_tokens == reclaimed_tokens(messages, result.messages)


def _compressor(**kw: Any) -> ContextCompressor:
    return ContextCompressor(
        40_000, threshold_percent=0.5, protect_first_n=3, protect_last_n=4, quiet_mode=True, **kw
    )


def test_a_compaction_keeps_the_warm_cached_head_when_pruning_it_does_not_pay() -> None:
    messages = session(8)
    clock = [100.0]
    engine = _compressor()
    engine.cache_horizon_calls = 0  # no later call would read the saving
    engine.configure_cache(ttl_seconds=300, rates=SONNET, clock=lambda: clock[0])
    engine.observe_call(CanonicalUsage(cache_read_tokens=70_000), len(messages))
    clock[0] = 130.0
    result = engine.compress(messages)
    assert engine.last_stats.compressed
    # head: system, task, first call, its result (aligned past the tool message)
    assert result[3]["content"] == messages[3]["content"]
    assert engine.last_cache_decision is not None and not engine.last_cache_decision.rewrite


def test_a_compaction_prunes_a_warm_head_when_that_pays() -> None:
    # The head's result is its last message: pruning it rewrites nothing else.
    messages = session(8)
    engine = _compressor()
    engine.configure_cache(ttl_seconds=300, rates=SONNET, clock=lambda: 100.0)
    engine.observe_call(CanonicalUsage(cache_read_tokens=70_000), len(messages))
    result = engine.compress(messages)
    assert result[3]["content"].startswith("[read_file]")
    decision = engine.last_cache_decision
    assert decision is not None and decision.rewrite and "saves more" in decision.reason


def test_a_compaction_prunes_the_head_once_the_cache_is_cold() -> None:
    messages = session(8)
    clock = [100.0]
    engine = _compressor()
    engine.configure_cache(ttl_seconds=300, rates=SONNET, clock=lambda: clock[0])
    engine.observe_call(CanonicalUsage(cache_read_tokens=70_000), len(messages))
    clock[0] = 1_000.0
    result = engine.compress(messages)
    assert engine.last_stats.compressed
    assert result[3]["content"] != messages[3]["content"]
    assert result[3]["content"].startswith("[read_file]")


def test_cache_awareness_off_prunes_the_warm_head_as_the_seed_did() -> None:
    messages = session(8)
    engine = _compressor()
    engine.cache_aware = False
    engine.configure_cache(ttl_seconds=300, rates=SONNET, clock=lambda: 100.0)
    engine.observe_call(CanonicalUsage(cache_read_tokens=70_000), len(messages))
    result = engine.compress(messages)
    assert result[3]["content"].startswith("[read_file]")


def test_settings_configure_the_proactive_pass() -> None:
    settings = Settings.model_validate(
        {
            "model": {"context_length": 100_000},
            "compression": {
                "proactive_prune_tokens": 30_000,
                "proactive_prune_min_reclaim_tokens": 1_000,
                "proactive_prune_min_result_chars": 50,
                "cache_aware": False,
                "cache_horizon_calls": 3,
            },
        }
    )
    engine = ContextCompressor.from_settings(settings)
    assert engine.proactive_prune_tokens == 30_000
    assert engine.proactive_min_reclaim_tokens == 1_000
    assert engine.proactive_min_result_chars == 200  # never below 200 (CC-45)
    assert not engine.cache_aware and engine.cache_horizon_calls == 3
    messages = session(12)
    pruned = engine.prune_before_call(messages, 80_000)
    assert pruned.changed and pruned.messages is not messages


def test_a_warm_cache_defers_a_prune_until_the_warm_calls_pay_for_the_rewrite() -> None:
    # Far more reasoning than reclaimable output after the first result: with 8 calls the
    # rewrite does not pay; each warm call lengthens the horizon by half a call, and the
    # prune goes ahead at the first call where the saving covers the write, in one rewrite.
    messages = session(6, prose=80_000)
    state = CacheState(ttl_seconds=300)
    first = None
    pruned_at = None
    for call_no in range(1, 200):
        now = 10.0 * call_no
        state.observe(CanonicalUsage(cache_read_tokens=60_000), len(messages) - 1, at=now)
        result = run(messages, cache=state, rates=SONNET, now=now + 5.0, horizon_calls=8)
        assert result.decision is not None
        if first is None:
            first = result.decision
        if result.changed:
            pruned_at = call_no
            break
        assert result.messages is messages  # deferred: nothing rewritten yet
    assert first is not None and not first.rewrite
    assert first.saving_usd is not None and first.cost_usd is not None
    per_call = first.saving_usd / 8
    expected = next(k for k in range(1, 200) if per_call * max(8, k // 2) > first.cost_usd)
    assert pruned_at == expected > 8
    assert result.pruned_count == 6  # every old result in the same bulk rewrite
    assert state.calls_since_rewrite == 0  # the batching count starts again


def test_a_cold_cache_prunes_at_once_whatever_the_horizon() -> None:
    messages = session(6, prose=80_000)
    state = CacheState(ttl_seconds=300)
    state.observe(CanonicalUsage(cache_read_tokens=60_000), len(messages) - 1, at=0.0)
    result = run(messages, cache=state, rates=SONNET, now=301.0, horizon_calls=0)
    assert result.changed and result.pruned_count == 6
    assert result.decision is not None and "cold" in result.decision.reason


def test_a_long_warm_stretch_lengthens_the_compactions_horizon_too() -> None:
    messages = session(8)
    clock = [100.0]
    engine = _compressor()
    engine.cache_horizon_calls = 0
    engine.configure_cache(ttl_seconds=300, rates=SONNET, clock=lambda: clock[0])
    for _ in range(4):  # four warm calls: a horizon of two
        clock[0] += 10.0
        engine.observe_call(CanonicalUsage(cache_read_tokens=70_000), len(messages))
    result = engine.compress(messages)
    assert result[3]["content"].startswith("[read_file]")
    decision = engine.last_cache_decision
    assert decision is not None and decision.rewrite and decision.saving_usd
