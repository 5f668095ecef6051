"""compress_trajectory end to end: the spec's acceptance examples and the pass's invariants.

As in the spec, the tokenizer is a double counting whitespace-separated words and the
summarizer one that answers ``did X`` (model-boundary doubles); the LLM path runs a
``ScriptedChatModel``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from palimpsest.errors import RateLimitError
from palimpsest.providers import Completion, ScriptedChatModel
from palimpsest.trajectories import (
    FALLBACK_SUMMARY,
    CompressionConfig,
    ModelSummarizer,
    TrajectorySummaryRequest,
    compress_trajectory,
    compress_trajectory_async,
)
from palimpsest.trajectories.compress import backoff_delay

FAST = {"retry_delay": 0.001}


class Words:
    """The spec's stub tokenizer: whitespace-separated words."""

    def count_text(self, text: str) -> int:
        return len(text.split())


class DidX:
    """The spec's stub summarizer; records what it was asked."""

    def __init__(self, answer: str | None = "did X") -> None:
        self.answer = answer
        self.requests: list[TrajectorySummaryRequest] = []

    def summarize(self, request: TrajectorySummaryRequest) -> str | None:
        self.requests.append(request)
        return self.answer


class Raises:
    def __init__(self) -> None:
        self.calls = 0

    def summarize(self, request: TrajectorySummaryRequest) -> str:
        self.calls += 1
        raise RuntimeError("provider down")


def turn(role: str, words: int, tag: str = "w") -> dict[str, Any]:
    return {"from": role, "value": " ".join([tag] * words)}


def example_3() -> list[dict[str, Any]]:
    sizes = [("system", 100), ("human", 100), ("gpt", 100), ("tool", 2000), ("gpt", 100),
             ("tool", 2000), ("gpt", 100), ("tool", 2000), ("gpt", 100), ("human", 100)]  # fmt: skip
    return [turn(r, n, f"t{i}") for i, (r, n) in enumerate(sizes)]


EXAMPLE_3 = CompressionConfig(
    target_max_tokens=5_000, summary_target_tokens=500, protect_last_n_turns=2, **FAST
)


def run(turns: list[dict[str, Any]], config: CompressionConfig, summarizer: Any = None) -> Any:
    return compress_trajectory(turns, config, summarizer=summarizer or DidX(), counter=Words())


def test_example_1_under_target() -> None:
    turns = [turn("system", 200), turn("human", 300), turn("gpt", 500)]
    summarizer = DidX()
    out, m = run(turns, CompressionConfig(), summarizer)
    assert out == turns
    assert m.skipped_under_target and m.compression_ratio == 1.0
    assert (m.compressed_tokens, m.compressed_turns) == (1_000, 3)
    assert summarizer.requests == []


def test_example_3_greedy_and_snapping() -> None:
    turns = example_3()
    summarizer = DidX()
    out, m = run(turns, EXAMPLE_3, summarizer)
    assert len(out) == 7 and m.turns_removed == 3
    assert (m.turns_compressed_start_idx, m.turns_compressed_end_idx) == (4, 8)
    assert out[:4] == [turns[0] | {"value": turns[0]["value"] + EXAMPLE_3.summary_notice_text},
                       *turns[1:4]]  # fmt: skip
    assert out[4] == {"from": "human", "value": "[CONTEXT SUMMARY]: did X"}
    assert out[5:] == turns[8:]
    assert m.was_compressed and not m.still_over_limit
    assert m.compressed_tokens == sum(len(t["value"].split()) for t in out)
    assert m.tokens_saved == 6_700 - m.compressed_tokens
    assert m.compression_ratio == pytest.approx(m.compressed_tokens / 6_700)
    assert m.turns_in_compressed_region == 4
    assert m.summarization_api_calls == 1 and m.summarization_errors == 0
    request = summarizer.requests[0]
    assert request.rendered.startswith("[Turn 4 - GPT]:\nt4 t4")
    assert "[Turn 7 - TOOL]:" in request.rendered and "[Turn 8" not in request.rendered


def test_input_is_never_mutated() -> None:
    turns = example_3()
    before = json.dumps(turns)
    run(turns, EXAMPLE_3)
    assert json.dumps(turns) == before


def test_example_6_net_savings_guard() -> None:
    turns = [turn("system", 4_000), turn("human", 4_000), turn("gpt", 4_000), turn("tool", 4_000)]
    turns += [turn(r, 50) for r in ["gpt", "tool"] * 4]
    turns += [turn(r, 4_000) for r in ["gpt", "tool"] * 2]
    summarizer = DidX()
    out, m = run(turns, CompressionConfig(summary_target_tokens=750), summarizer)
    assert out == turns and summarizer.requests == []
    assert m.still_over_limit == (m.original_tokens > 15_250) is True
    assert m.turns_compressed_start_idx == -1 and not m.was_compressed


def test_example_7_none_content_gives_bare_prefix() -> None:
    out, _ = run(example_3(), EXAMPLE_3, DidX(None))
    assert out[4]["value"] == "[CONTEXT SUMMARY]:"


def test_example_8_failure_fallback() -> None:
    summarizer = Raises()
    out, m = run(example_3(), EXAMPLE_3, summarizer)
    assert summarizer.calls == 3
    assert out[4]["value"] == FALLBACK_SUMMARY
    assert out[4]["value"].startswith("[CONTEXT SUMMARY]:") and "failed" in out[4]["value"]
    assert m.summarization_errors == 3 and m.summarization_api_calls == 3


@pytest.mark.parametrize("notice", [True, False])
def test_example_9_notice(notice: bool) -> None:
    config = EXAMPLE_3.replace(add_summary_notice=notice)
    out, _ = run(example_3(), config)
    suffix = "Some of your previous tool responses may be summarized to preserve context."
    assert out[0]["value"].endswith(suffix) is notice
    if not notice:
        assert out[0] == example_3()[0]


def test_example_10_still_over() -> None:
    turns = [turn("system", 5_000), turn("human", 2_500), turn("gpt", 2_500)]
    turns += [turn(r, 2_000) for r in ["gpt", "tool"] * 5]
    turns += [turn(r, 2_500) for r in ["gpt", "tool", "gpt", "human"]]
    _, m = run(turns, CompressionConfig(protect_first_tool=True))
    assert m.original_tokens == 40_000
    assert m.was_compressed and m.still_over_limit
    assert m.compressed_tokens > 15_250


def test_summary_is_redacted() -> None:
    out, _ = run(example_3(), EXAMPLE_3, DidX("used key sk-proj-abcdefghijklmnopqrstuvwx123456"))
    assert "sk-proj" not in out[4]["value"] and "[REDACTED]" in out[4]["value"]


def test_a_longer_result_is_not_kept() -> None:
    long_answer = " ".join(["word"] * 8_000)
    out, m = run(example_3(), EXAMPLE_3, DidX(long_answer))
    assert out == example_3() and not m.was_compressed
    assert m.summarization_api_calls == 1 and m.still_over_limit


class TestModelSummarizer:
    def test_request_shape(self) -> None:
        model = ScriptedChatModel(["[CONTEXT SUMMARY]: ran the tests"], model="gpt-4o-mini")
        config = EXAMPLE_3.replace(temperature=0.3)
        out, m = run(example_3(), config, ModelSummarizer(model, config))
        assert out[4]["value"] == "[CONTEXT SUMMARY]: ran the tests"
        messages, _, max_tokens, options = model.calls[0]
        assert max_tokens == 1_000 and options == {"temperature": 0.3}
        prompt = messages[0]["content"]
        assert "Target approximately 500 tokens" in prompt
        assert "TURNS TO SUMMARIZE:\n---\n[Turn 4 - GPT]:" in prompt
        assert prompt.count("\n---") == 2 and "[CONTEXT SUMMARY]:" in prompt
        assert "same language" in prompt and "REPLACE" in prompt
        assert m.summarization_api_calls == 1

    def test_fixed_temperature_models_get_none(self) -> None:
        model = ScriptedChatModel(["ok"], model="kimi-for-coding")
        run(example_3(), EXAMPLE_3, ModelSummarizer(model, EXAMPLE_3))
        assert "temperature" not in model.calls[0][3]

    def test_length_is_a_failure_and_retried(self) -> None:
        cut = Completion(content="half a summ", finish_reason="length")
        model = ScriptedChatModel([cut, RateLimitError("slow down"), "done"])
        _, m = run(example_3(), EXAMPLE_3, ModelSummarizer(model, EXAMPLE_3))
        assert len(model.calls) == 3
        assert (m.summarization_api_calls, m.summarization_errors) == (3, 2)

    def test_async_uses_acomplete(self) -> None:
        model = ScriptedChatModel(["async summary"])
        out, m = asyncio.run(
            compress_trajectory_async(
                example_3(),
                EXAMPLE_3,
                summarizer=ModelSummarizer(model, EXAMPLE_3),
                counter=Words(),
            )
        )
        assert out[4]["value"] == "[CONTEXT SUMMARY]: async summary"
        assert m.was_compressed


def test_async_matches_sync() -> None:
    sync = run(example_3(), EXAMPLE_3)
    other = asyncio.run(
        compress_trajectory_async(example_3(), EXAMPLE_3, summarizer=DidX(), counter=Words())
    )
    assert sync == other


def test_async_fallback_after_retries() -> None:
    summarizer = Raises()
    out, m = asyncio.run(
        compress_trajectory_async(example_3(), EXAMPLE_3, summarizer=summarizer, counter=Words())
    )
    assert out[4]["value"] == FALLBACK_SUMMARY and m.summarization_errors == 3


def test_keyboard_interrupt_is_not_swallowed() -> None:
    class Interrupted:
        def summarize(self, request: TrajectorySummaryRequest) -> str:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run(example_3(), EXAMPLE_3, Interrupted())


def test_backoff_grows_and_caps() -> None:
    assert backoff_delay(0, 2.0, lambda: 1.0) == pytest.approx(2.0)
    assert backoff_delay(2, 2.0, lambda: 0.0) == pytest.approx(4.0)
    assert backoff_delay(10, 2.0, lambda: 1.0) == pytest.approx(30.0)


# --- invariants over generated trajectories ---------------------------------------------


@st.composite
def trajectories(draw: st.DrawFn) -> list[dict[str, Any]]:
    """system?, human, then rounds of (gpt call + 1..2 tool answers | plain gpt | human)."""
    size = st.integers(min_value=0, max_value=400)
    turns: list[dict[str, Any]] = []
    if draw(st.booleans()):
        turns.append(turn("system", draw(size)))
    turns.append(turn("human", draw(size)))
    for _ in range(draw(st.integers(min_value=0, max_value=14))):
        kind = draw(st.sampled_from(["call", "call", "plain", "human"]))
        if kind == "call":
            turns.append({"from": "gpt", "value": "CALL" + " w" * draw(size)})
            turns += [turn("tool", draw(size)) for _ in range(draw(st.integers(1, 2)))]
        else:
            turns.append(turn("gpt" if kind == "plain" else "human", draw(size)))
    return turns


configs = st.builds(
    CompressionConfig,
    target_max_tokens=st.integers(min_value=1, max_value=3_000),
    summary_target_tokens=st.integers(min_value=0, max_value=300),
    protect_last_n_turns=st.integers(min_value=0, max_value=6),
    protect_first_gpt=st.booleans(),
    protect_first_tool=st.booleans(),
    add_summary_notice=st.booleans(),
)


def _pairs_intact(turns: list[dict[str, Any]]) -> bool:
    for i, t in enumerate(turns):
        if t["from"] == "tool" and (i == 0 or turns[i - 1]["from"] not in ("gpt", "tool")):
            return False
        if t["value"].startswith("CALL") and (
            i + 1 == len(turns) or turns[i + 1]["from"] != "tool"
        ):
            return False
    calls = sum(t["value"].startswith("CALL") for t in turns)
    answered = sum(
        1 for i, t in enumerate(turns) if t["from"] == "tool" and turns[i - 1]["from"] == "gpt"
    )
    return calls == answered


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trajectories(), configs)
def test_invariants(turns: list[dict[str, Any]], config: CompressionConfig) -> None:
    out, m = run(turns, config)
    words = Words()
    assert _pairs_intact(out)  # example 4
    if not m.was_compressed:
        assert out == turns
        assert m.compressed_tokens == m.original_tokens
        return
    assert m.compressed_tokens < m.original_tokens
    start, end = m.turns_compressed_start_idx, m.turns_compressed_end_idx
    head = [t["value"] for t in out[:start]]
    notice = config.summary_notice_text if config.add_summary_notice else ""
    expected_head = [t["value"] + (notice if t["from"] == "system" else "") for t in turns[:start]]
    assert head == expected_head
    assert out[start] == {"from": "human", "value": "[CONTEXT SUMMARY]: did X"}
    assert out[start + 1 :] == turns[end:]
    assert m.compressed_tokens == sum(words.count_text(t["value"]) for t in out)
    assert m.still_over_limit == (m.compressed_tokens > config.target_max_tokens)


@settings(max_examples=150, deadline=None)
@given(trajectories(), configs)
def test_under_target_path_is_idempotent(
    turns: list[dict[str, Any]], config: CompressionConfig
) -> None:
    out, m = run(turns, config)
    if m.skipped_under_target or not m.still_over_limit:
        again, m2 = run(out, config)
        assert again == out and not m2.was_compressed


class CountingWords(Words):
    """Words, remembering every text it was asked to count."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def count_text(self, text: str) -> int:
        self.asked.append(text)
        return super().count_text(text)


def test_counts_are_reused_not_redone_and_agree_with_a_full_recount() -> None:
    """Issue 27: the tail keeps the plan's counts, a repeated system prompt is counted once."""
    counter = CountingWords()
    system = "a shared system prompt " + "word " * 50  # unlike the other tests' prompts
    first = [{"from": "system", "value": system}, *example_3()[1:]]
    out, m = compress_trajectory(first, EXAMPLE_3, summarizer=DidX(), counter=counter)
    assert m.was_compressed
    assert m.compressed_tokens == sum(Words().count_text(t["value"]) for t in out)
    tail_values = [t["value"] for t in first[m.turns_compressed_end_idx :]]
    assert sum(counter.asked.count(v) for v in tail_values) == len(tail_values)  # once each
    counter.asked.clear()
    second = [dict(t) for t in first]
    second[1] = {"from": "human", "value": "another task " + "w " * 99}
    compress_trajectory(second, EXAMPLE_3, summarizer=DidX(), counter=counter)
    assert system not in counter.asked  # counted for the first trajectory already
    assert system + EXAMPLE_3.summary_notice_text not in counter.asked


def test_the_prompt_is_rendered_only_for_a_summarizer_that_reads_it() -> None:
    summarizer = DidX()
    run(example_3(), EXAMPLE_3, summarizer)
    (request,) = summarizer.requests
    assert "prompt" not in vars(request) and "rendered" not in vars(request)
    assert request.prompt.startswith("Summarize the following") and "[Turn 4 - GPT]" in (
        request.rendered
    )


def test_an_unhashable_counter_still_counts() -> None:
    class Unhashable(Words):
        __hash__ = None  # type: ignore[assignment]

    out, m = compress_trajectory(example_3(), EXAMPLE_3, summarizer=DidX(), counter=Unhashable())
    assert m.was_compressed and m.compressed_tokens == sum(len(t["value"].split()) for t in out)


def test_a_full_system_count_cache_keeps_the_prompt_just_counted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The cache is shared by the process: whatever filled it before (other runs, other
    # tests), a prompt counted for one trajectory is still there for the next.
    from palimpsest.trajectories import compress as module

    monkeypatch.setattr(module, "_SYSTEM_COUNTS", {})
    words = Words()
    for i in range(module._SYSTEM_COUNTS_KEPT - 1):
        module._system_count(words, f"an earlier prompt {i}")
    test_counts_are_reused_not_redone_and_agree_with_a_full_recount()
