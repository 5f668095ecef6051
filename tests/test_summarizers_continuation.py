"""The summary as a continuation of the cached conversation: when, and what is sent."""

from __future__ import annotations

from typing import Any

from palimpsest import ScriptedChatModel
from palimpsest.compaction.cache_policy import CacheRates
from palimpsest.summarizers.base import SummaryRequest
from palimpsest.summarizers.continuation import Continuation, continuation_prompt
from palimpsest.summarizers.llm import LLMSummarizer

SONNET = CacheRates(input=3.0, cache_read=0.3, cache_write=3.75)
CONVERSATION = [
    {"role": "system", "content": "You are a coding agent."},
    *[
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i} " + "x " * 2_000}
        for i in range(12)
    ],
]
TOOLS = [{"type": "function", "function": {"name": "read_file", "parameters": {}}}]


def request(prompt_chars: int = 40_000) -> SummaryRequest:
    return SummaryRequest(
        turns=[{"role": "user", "content": "turn"}],
        previous_summary=None,
        focus_topic="the parser",
        budget_tokens=2_000,
        prompt="TURNS TO SUMMARIZE:\n" + "y " * (prompt_chars // 2),
    )


def offer(model: Any, **kw: Any) -> Continuation:
    values: dict[str, Any] = {
        "last_request": lambda: (CONVERSATION, TOOLS),
        "warm": lambda: True,
        "rates": lambda: SONNET,
        "span": lambda request: (3, 8, 4),
    }
    values.update(kw)
    return Continuation(model=model, **values)


def test_the_prompt_names_the_span_instead_of_repeating_it() -> None:
    text = continuation_prompt(request(), 3, 8, 4)
    assert "conversation above, from message 3 to message 8" in text
    assert "The 4 message(s) after them stay" in text
    assert "the parser" in text  # the focus topic is kept
    assert "y y y" not in text


def test_a_warm_cheaper_continuation_sends_the_cached_conversation_first() -> None:
    model = ScriptedChatModel([], model="claude-sonnet-4-5")
    call = offer(model).call_for(model, request(), request().prompt)
    assert call is not None
    assert call.messages[: len(CONVERSATION)] == CONVERSATION
    assert call.messages[-1]["role"] == "user"
    assert call.options == {"tools": TOOLS, "tool_choice": "none"}


def test_another_model_a_cold_cache_unknown_rates_or_no_span_send_it_fresh() -> None:
    model = ScriptedChatModel([], model="claude-sonnet-4-5")
    other = ScriptedChatModel([], model="claude-sonnet-4-5")
    fresh = request().prompt
    assert offer(model).call_for(other, request(), fresh) is None
    assert offer(model, warm=lambda: False).call_for(model, request(), fresh) is None
    unknown = CacheRates(input=3.0, cache_read=None, cache_write=None)
    assert offer(model, rates=lambda: unknown).call_for(model, request(), fresh) is None
    assert offer(model, rates=lambda: None).call_for(model, request(), fresh) is None
    assert offer(model, span=lambda request: None).call_for(model, request(), fresh) is None
    assert offer(model, last_request=lambda: None).call_for(model, request(), fresh) is None


def test_a_short_fresh_prompt_beats_rereading_a_long_prefix() -> None:
    model = ScriptedChatModel([], model="claude-sonnet-4-5")
    small = request(prompt_chars=2_000)
    assert offer(model).call_for(model, small, small.prompt) is None


def test_the_llm_summarizer_sends_the_continuation_when_offered() -> None:
    model = ScriptedChatModel(["## Goal\nFix the parser.\n## Progress\nRead it."])
    summarizer = LLMSummarizer(model)
    summarizer.continuation = offer(model)
    body = summarizer.summarize(request())
    assert "Fix the parser" in body
    messages, tools, _cap, options = model.calls[0]
    assert messages[: len(CONVERSATION)] == CONVERSATION
    assert tools == TOOLS and options["tool_choice"] == "none"
    assert summarizer.last_fit == "continuation"
    assert summarizer.continuation.used == 1


def test_a_continuation_that_would_not_fit_the_window_is_sent_fresh() -> None:
    model = ScriptedChatModel(["## Goal\nFix the parser."])
    summarizer = LLMSummarizer(model, context_length=12_000)  # the ~12K-token prefix
    summarizer.continuation = offer(model)
    summarizer.summarize(request(prompt_chars=16_000))
    messages = model.calls[0][0]
    assert len(messages) == 1 and summarizer.last_fit != "continuation"
