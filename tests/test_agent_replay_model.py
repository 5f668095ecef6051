"""The replay model: recorded replies served in order, unknown usage, the replayed window."""

from __future__ import annotations

import asyncio

import pytest

from agent_helpers import NATIVE_TRANSCRIPT as NATIVE
from palimpsest.agent.replay_model import (
    ReplayChatModel,
    ReplayExhaustedError,
    build_script,
)
from palimpsest.errors import ContextOverflowError, ProviderError


class TestReplayChatModel:
    def test_serves_replies_in_order_with_unknown_usage(self) -> None:
        script = build_script(NATIVE)
        model = ReplayChatModel(script.replies, model="replay:t")
        first = model.complete([{"role": "user", "content": "x"}])
        assert first.content == "Looking."
        assert first.tool_calls[0]["id"] == "c1"
        assert first.finish_reason == "tool_calls"
        assert first.usage is None
        assert model.complete([]).content == "Two files."
        assert model.complete([]).content == "You're welcome."
        assert model.served == 3 and model.remaining == 0

    def test_running_out_is_a_provider_error(self) -> None:
        model = ReplayChatModel([])
        with pytest.raises(ReplayExhaustedError, match="no more recorded") as info:
            model.complete([{"role": "user", "content": "x"}])
        assert isinstance(info.value, ProviderError)

    def test_running_out_can_answer_empty(self) -> None:
        model = ReplayChatModel([], when_exhausted="empty")
        reply = model.complete([])
        assert reply.content is None and reply.tool_calls == []
        assert model.unrecorded == 1

    def test_a_memory_flush_does_not_consume_a_reply(self) -> None:
        model = ReplayChatModel([{"role": "assistant", "content": "real"}])
        memory_only = [{"type": "function", "function": {"name": "memory", "parameters": {}}}]
        flush = model.complete([], tools=memory_only)
        assert flush.content is None and flush.tool_calls == []
        assert model.complete([], tools=memory_only + memory_only).content == "real"

    def test_a_request_over_the_window_overflows_and_keeps_the_reply(self) -> None:
        model = ReplayChatModel([{"role": "assistant", "content": "fits"}], context_length=50)
        big = [{"role": "user", "content": "word " * 400}]
        with pytest.raises(ContextOverflowError) as info:
            model.complete(big)
        assert info.value.limit == 50 and (info.value.requested or 0) > 50
        assert model.remaining == 1
        assert model.complete([{"role": "user", "content": "short"}]).content == "fits"

    def test_load_replaces_the_queue_and_reports_leftovers(self) -> None:
        model = ReplayChatModel([{"role": "assistant", "content": "a"}] * 2)
        model.complete([])
        assert model.load([{"role": "assistant", "content": "b"}]) == 1
        assert model.complete([]).content == "b"

    def test_acomplete_is_the_same_queue(self) -> None:
        model = ReplayChatModel([{"role": "assistant", "content": "a"}])
        assert asyncio.run(model.acomplete([])).content == "a"
