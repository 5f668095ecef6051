"""Cache-aware pruning and compaction costs through the real agent loop (scripted model)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from agent_helpers import call, make_agent
from palimpsest import ScriptedChatModel
from palimpsest.agent.cache_hooks import server_clears_tool_results
from palimpsest.agent.events import CompactionEvent
from palimpsest.config import Settings
from palimpsest.providers.base import Completion
from palimpsest.usage import CanonicalUsage

NO_FLUSH = Settings.model_validate({"memory": {"flush_before_compression": False}})
BIG = 40_000  # characters a file read returns: ~10K tokens


def read_file(path: str) -> str:
    """Read a file.

    path: which file
    """
    return f"{path}: " + "x = compute(1, 2)\n" * (BIG // 18)


def settings(**compression: Any) -> Settings:
    base = {
        "proactive_prune_tokens": 20_000,
        "proactive_prune_min_reclaim_tokens": 2_000,
        "protect_last_n": 4,
    }
    return Settings.model_validate(
        {"model": {"context_length": 400_000}, "compression": {**base, **compression}}
    )


def cached_usage(messages: list[dict[str, Any]]) -> CanonicalUsage:
    """What a provider with a warm cache reports: everything but the newest part read."""
    size = sum(len(str(m.get("content") or "")) for m in messages) // 4
    return CanonicalUsage(input_tokens=50, cache_read_tokens=max(size - 50, 1), output_tokens=20)


def read_note(path: str) -> str:
    """Read a short note.

    path: which note
    """
    return f"{path}: " + "the parser keeps its state in Parser.buf\n" * 120


def reads(n: int, tool: str = "read_file") -> list[Any]:
    """``n`` tool rounds, each reading one file, then a final answer; all with cache usage."""
    replies: list[Any] = []
    for i in range(n):

        def reply(messages: list[dict[str, Any]], i: int = i) -> Completion:
            return Completion(
                tool_calls=[call(tool, {"path": f"f{i}.py"}, cid=f"c{i}")],
                usage=cached_usage(messages),
                finish_reason="tool_calls",
            )

        replies.append(reply)
    replies.append(
        lambda messages: Completion(
            content="done", usage=cached_usage(messages), finish_reason="stop"
        )
    )
    return replies


def claude(replies: list[Any]) -> ScriptedChatModel:
    model = ScriptedChatModel(replies, model="claude-sonnet-4-5")
    model.provider = "anthropic"  # type: ignore[attr-defined]
    return model


def full_reads(sent: list[dict[str, Any]]) -> int:
    return sum(1 for m in sent if m.get("role") == "tool" and len(str(m["content"])) > BIG // 2)


def breaks(calls: list[Any]) -> int:
    """Requests that are not the previous request plus new messages: cache misses."""
    return sum(
        1 for before, after in itertools.pairwise(calls) if after[0][: len(before[0])] != before[0]
    )


def test_a_warm_cache_is_kept_until_the_warm_calls_so_far_repay_the_rewrite(
    tmp_path: Path,
) -> None:
    # With no configured horizon only the session's own warm calls count (half of them):
    # the old results are read from the cache until that repays one bulk rewrite.
    agent = make_agent(
        tmp_path,
        model=claude(reads(8)),
        tools=[read_file],
        settings=settings(cache_horizon_calls=0),
        builtin_tools=False,
        context_length=400_000,
    )
    agent.ask("read the files")
    calls = agent.model.calls  # type: ignore[attr-defined]
    first = next(
        i
        for i, (before, after) in enumerate(itertools.pairwise(calls), 1)
        if after[0][: len(before[0])] != before[0]
    )
    assert first >= 6 and full_reads(calls[first - 1][0]) == 5  # kept while it did not pay
    assert breaks(calls) == 1  # then one rewrite pruned them together
    assert full_reads(calls[first][0]) <= 2


def test_cache_aware_pruning_breaks_the_prefix_less_often_than_the_seed(tmp_path: Path) -> None:
    aware = make_agent(
        tmp_path / "aware",
        model=claude(reads(8)),
        tools=[read_file],
        settings=settings(),
        builtin_tools=False,
        context_length=400_000,
    )
    aware.ask("read the files")
    seed = make_agent(
        tmp_path / "seed",
        model=claude(reads(8)),
        tools=[read_file],
        settings=settings(cache_aware=False),
        builtin_tools=False,
        context_length=400_000,
    )
    seed.ask("read the files")
    aware_calls = aware.model.calls  # type: ignore[attr-defined]
    seed_calls = seed.model.calls  # type: ignore[attr-defined]
    # the seed rewrites on every call a result leaves the tail; cache-aware waits until
    # a rewrite reclaims enough to repay the cache writes, then prunes as much in one go
    assert breaks(seed_calls) >= 4
    assert 0 < breaks(aware_calls) < breaks(seed_calls)
    assert full_reads(seed_calls[-1][0]) <= 4
    # the store keeps the originals either way
    assert seed.store is not None and seed.session_id is not None
    assert full_reads(seed.store.get_messages(seed.session_id)) == 8


def test_a_cold_cache_lets_the_agent_prune(tmp_path: Path) -> None:
    agent = make_agent(
        tmp_path,
        model=claude(reads(8)),
        tools=[read_file],
        settings=settings(),
        builtin_tools=False,
        context_length=400_000,
    )
    agent.compressor.cache_state.ttl_seconds = 0.0  # type: ignore[attr-defined]
    agent.ask("read the files")
    assert full_reads(agent.model.calls[-1][0]) <= 4  # type: ignore[attr-defined]


def test_an_unknown_route_has_no_cache_to_keep(tmp_path: Path) -> None:
    model = ScriptedChatModel(reads(8), model="house-model")
    agent = make_agent(
        tmp_path,
        model=model,
        tools=[read_file],
        settings=settings(),
        builtin_tools=False,
        context_length=400_000,
    )
    assert agent.compressor.cache_state.ttl_seconds is None  # type: ignore[attr-defined]
    agent.ask("read the files")
    assert full_reads(model.calls[-1][0]) <= 4


def test_server_side_clearing_replaces_the_local_prune(tmp_path: Path) -> None:
    model = claude(reads(8))
    model.tool_clearing = {"type": "clear_tool_uses_20250919"}  # type: ignore[attr-defined]
    agent = make_agent(
        tmp_path,
        model=model,
        tools=[read_file],
        settings=settings(cache_aware=False, server_tool_clearing=True),
        builtin_tools=False,
        context_length=400_000,
    )
    assert server_clears_tool_results(agent)
    agent.ask("read the files")
    assert full_reads(model.calls[-1][0]) == 8  # the server clears; nothing rewritten here


def test_a_compaction_event_carries_its_cost_and_usage_shows_the_saving(tmp_path: Path) -> None:
    replies = reads(6)
    model = claude(replies)
    agent = make_agent(
        tmp_path,
        model=model,
        tools=[read_file],
        builtin_tools=False,
        context_length=400_000,
        settings=NO_FLUSH,
    )
    agent.ask("read the files")
    model.enqueue(
        lambda messages: Completion(
            content="ok", usage=cached_usage(messages), finish_reason="stop"
        )
    )
    result = agent.command("/compress")
    assert result is not None
    events = result.events
    compactions = [e for e in events if isinstance(e, CompactionEvent) and e.compacted]
    assert compactions and compactions[0].cost is not None
    cost = compactions[0].cost
    assert cost.request_usd == 0.0  # the extractive summary sent no request
    assert not cost.settled
    agent.ask("and now?")
    entry = agent.usage.compactions.entries[0]
    assert entry.settled and entry.next_call_usd is not None
    assert entry.without_usd is not None and entry.saving_usd is not None
    assert entry.without_usd > entry.next_call_usd  # ~50K tokens fewer
    shown = agent.command("/usage")
    assert shown is not None
    text = shown.text
    assert "compaction 1: request 0 tokens, $0.00; next call" in text
    assert "Compaction saving so far: ~$" in text


def test_unreported_usage_leaves_the_compaction_saving_unknown(tmp_path: Path) -> None:
    model = ScriptedChatModel(["hi"] * 2, model="claude-sonnet-4-5")
    agent = make_agent(
        tmp_path,
        model=model,
        messages=[{"role": "user", "content": f"q{i} " * 400} for i in range(1)]
        + [
            m
            for i in range(12)
            for m in (
                {"role": "assistant", "content": f"answer {i} " * 300},
                {"role": "user", "content": f"question {i} " * 300},
            )
        ],
        builtin_tools=False,
        context_length=400_000,
        settings=NO_FLUSH,
    )
    agent.ask("first")
    agent.command("/compress")
    agent.ask("second")
    shown = agent.command("/usage")
    assert shown is not None
    text = shown.text
    assert "Compaction saving so far: unknown" in text
    assert agent.usage.compactions.running_saving_usd is None


def _summary_agent(tmp_path: Path, ttl: float | None) -> tuple[Any, ScriptedChatModel]:
    from palimpsest.compaction.compressor import ContextCompressor
    from palimpsest.summarizers.llm import LLMSummarizer

    model = claude(reads(12, tool="read_note"))  # outputs short enough to be sent whole
    engine = ContextCompressor(
        400_000,
        LLMSummarizer(model),
        threshold_percent=0.5,
        protect_first_n=2,
        protect_last_n=4,
        quiet_mode=True,
    )
    agent = make_agent(
        tmp_path,
        model=model,
        tools=[read_note],
        compressor=engine,
        settings=NO_FLUSH,
        builtin_tools=False,
        context_length=400_000,
    )
    agent.ask("read the files")
    if ttl is not None:
        engine.cache_state.ttl_seconds = ttl  # type: ignore[union-attr]
    model.default = Completion(
        content="## Goal\nRead f0.py to f5.py.\n## Progress\nAll six files were read.",
        usage=CanonicalUsage(input_tokens=900, cache_read_tokens=60_000, output_tokens=300),
        finish_reason="stop",
    )
    return agent, model


def _summary_calls(model: ScriptedChatModel) -> list[Any]:
    return [
        c
        for c in model.calls
        if "summar" in str(c[0][-1].get("content", "")).lower() and c[0][-1]["role"] == "user"
    ]


def test_a_summary_on_the_same_model_continues_the_cached_conversation(tmp_path: Path) -> None:
    agent, model = _summary_agent(tmp_path, ttl=None)
    last_messages, last_tools = agent.last_request
    result = agent.command("/compress")
    assert result is not None
    calls = _summary_calls(model)
    assert calls, "no summary request was made"
    messages, tools, _cap, options = calls[0]
    # the cached prefix, byte for byte, then the instructions naming the span
    assert messages[: len(last_messages)] == last_messages
    assert "The turns to summarize are the conversation above" in messages[-1]["content"]
    assert "Parser.buf" not in messages[-1]["content"]  # the turns are not repeated
    assert tools == last_tools and options["tool_choice"] == "none"
    assert agent.compressor.summarizer.continuation.used >= 1  # type: ignore[attr-defined]


def test_a_cold_cache_sends_the_summary_as_a_fresh_request(tmp_path: Path) -> None:
    agent, model = _summary_agent(tmp_path, ttl=0.0)
    agent.command("/compress")
    calls = _summary_calls(model)
    assert calls
    messages, tools, _cap, options = calls[0]
    assert len(messages) == 1 and messages[0]["role"] == "user"
    assert tools is None and "tool_choice" not in options
    assert agent.compressor.summarizer.continuation.used == 0  # type: ignore[attr-defined]
