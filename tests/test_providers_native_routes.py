"""The native-compaction routes against the real SDKs and a replay server on 127.0.0.1."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from palimpsest.errors import ContextOverflowError, NativeCompactionError
from palimpsest.messages.native import ANTHROPIC_BLOCKS_KEY, RESPONSES_ITEMS_KEY
from palimpsest.providers import ScriptedChatModel
from palimpsest.providers.anthropic_messages import COMPACTION_BETA, AnthropicChatModel
from palimpsest.providers.native_routes import AnthropicRoute, ResponsesRoute, native_route_for
from palimpsest.providers.openai_chat import OpenAIChatModel
from palimpsest.providers.openai_responses import OpenAIResponsesModel
from providers_fixtures import ReplayServer, load_payload, running_server


@pytest.fixture
def replay() -> Iterator[ReplayServer]:
    yield from running_server()


def responses_model(server: ReplayServer) -> OpenAIResponsesModel:
    return OpenAIResponsesModel(
        "gpt-5", base_url=f"{server.url}/v1", api_key="sk-test", max_retries=0
    )


def anthropic_model(server: ReplayServer) -> AnthropicChatModel:
    return AnthropicChatModel(
        "claude-sonnet-4-6", base_url=server.url, api_key="sk-ant-test", max_retries=0
    )


HISTORY: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a migration helper."},
    {"role": "user", "content": "Move billing from MySQL to Postgres."},
    {"role": "assistant", "content": "Plan: keep invoice ids, move cron jobs to the worker."},
    {"role": "user", "content": "Go on with the refunds table."},
]


def test_each_sdk_model_gets_its_route_and_others_none(replay: ReplayServer) -> None:
    assert isinstance(native_route_for(responses_model(replay)), ResponsesRoute)
    assert isinstance(native_route_for(anthropic_model(replay)), AnthropicRoute)
    chat = OpenAIChatModel("gpt-4o", base_url=f"{replay.url}/v1", api_key="sk-test")
    assert native_route_for(chat) is None
    assert native_route_for(ScriptedChatModel()) is None


def test_armed_responses_route_sends_context_management(replay: ReplayServer) -> None:
    model = responses_model(replay)
    route = ResponsesRoute(model)
    route.arm(60_000)
    replay.file("responses/response_compacted.json")
    done = model.complete(HISTORY)
    assert replay.last.body["context_management"] == [
        {"type": "compaction", "compact_threshold": 60_000}
    ]
    kept = done.to_message()[RESPONSES_ITEMS_KEY]
    assert kept[0]["type"] == "compaction"
    assert route.refused is None


def test_refused_context_management_is_dropped_and_the_request_resent(
    replay: ReplayServer,
) -> None:
    model = responses_model(replay)
    route = ResponsesRoute(model)
    route.arm(60_000)
    replay.file("errors/openai_context_management_unsupported.json", status=400)
    replay.file("responses/response_plain.json")
    done = model.complete(HISTORY)
    assert done.content == "Noted."
    first, second = replay.requests
    assert "context_management" in first.body
    assert "context_management" not in second.body
    assert route.refused is not None and "context_management" in route.refused
    route.arm(50_000)  # a later re-arm (a window change) does not bring it back
    assert "context_management" not in model.default_options


def test_an_overflow_is_not_read_as_a_refusal(replay: ReplayServer) -> None:
    model = responses_model(replay)
    ResponsesRoute(model).arm(60_000)
    replay.file("responses/error_context_length.json", status=400)
    with pytest.raises(ContextOverflowError):
        model.complete(HISTORY)
    assert "context_management" in model.default_options
    assert len(replay.requests) == 1


def test_messages_before_a_compaction_item_are_not_sent(replay: ReplayServer) -> None:
    model = responses_model(replay)
    carrier = {
        "role": "assistant",
        "content": "Continuing with the migration.",
        RESPONSES_ITEMS_KEY: [{"type": "compaction", "id": "cmp_1", "encrypted_content": "gA"}],
    }
    replay.file("responses/response_plain.json")
    model.complete([*HISTORY, carrier, {"role": "user", "content": "and the refunds?"}])
    sent = replay.last.body["input"]
    assert sent[0] == {"role": "system", "content": "You are a migration helper."}
    assert sent[1] == {"type": "compaction", "id": "cmp_1", "encrypted_content": "gA"}
    assert not any("Move billing" in str(item) for item in sent)


def test_anthropic_compaction_request_and_carrier(replay: ReplayServer) -> None:
    route = AnthropicRoute(anthropic_model(replay))
    replay.file("anthropic/message_compaction.json")
    carrier = route.compact(HISTORY[:3])
    body, headers = replay.last.body, replay.last.headers
    assert replay.last.path.startswith("/v1/messages")
    assert body["compaction"] == {"type": "summarize"}
    assert COMPACTION_BETA in headers["anthropic-beta"]
    assert body["system"][0]["text"] == "You are a migration helper."
    block = load_payload("anthropic/message_compaction.json")["content"][0]
    assert carrier == {
        "role": "assistant",
        "content": block["content"],
        ANTHROPIC_BLOCKS_KEY: [block],
    }
    assert route.last_usage["output_tokens"] == 412


def test_anthropic_carrier_is_sent_as_its_block_and_replaces_what_came_before(
    replay: ReplayServer,
) -> None:
    model = anthropic_model(replay)
    block = load_payload("anthropic/message_compaction.json")["content"][0]
    carrier = {"role": "assistant", "content": block["content"], ANTHROPIC_BLOCKS_KEY: [block]}
    replay.file("anthropic/message_tool_use.json")
    model.complete([*HISTORY[:3], carrier, {"role": "user", "content": "refunds next"}])
    body = replay.last.body
    assert body["messages"][0]["role"] == "assistant"
    sent_block = dict(body["messages"][0]["content"][0])
    sent_block.pop("cache_control", None)
    assert sent_block == block
    assert len(body["messages"]) == 2
    assert "Move billing" not in str(body["messages"])
    assert COMPACTION_BETA in replay.last.headers["anthropic-beta"]


def test_unsupported_model_is_a_refusal(replay: ReplayServer) -> None:
    route = AnthropicRoute(anthropic_model(replay))
    replay.file("errors/anthropic_compaction_unsupported.json", status=400)
    with pytest.raises(NativeCompactionError) as caught:
        route.compact(HISTORY[:3])
    assert caught.value.refused


def test_a_reply_without_a_block_is_unusable_not_a_refusal(replay: ReplayServer) -> None:
    route = AnthropicRoute(anthropic_model(replay))
    replay.file("anthropic/message_no_compaction.json")
    with pytest.raises(NativeCompactionError) as caught:
        route.compact(HISTORY[:3])
    assert not caught.value.refused
    assert "end_turn" in str(caught.value)


def test_a_server_error_is_not_a_refusal(replay: ReplayServer) -> None:
    route = AnthropicRoute(anthropic_model(replay))
    replay.file("errors/anthropic_overloaded.json", status=529)
    with pytest.raises(NativeCompactionError) as caught:
        route.compact(HISTORY[:3])
    assert not caught.value.refused


def test_the_compaction_request_carries_the_conversations_tools(replay: ReplayServer) -> None:
    model = anthropic_model(replay)
    weather = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a location.",
            "parameters": {"type": "object", "properties": {"location": {"type": "string"}}},
        },
    }
    replay.file("anthropic/message_tool_use.json")
    model.complete(HISTORY, tools=[weather])
    replay.file("anthropic/message_compaction.json")
    AnthropicRoute(model).compact(HISTORY[:3])
    assert [t["name"] for t in replay.last.body["tools"]] == ["get_weather"]
    assert "context_management" not in replay.last.body


def test_the_async_twin_also_drops_a_refused_context_management(replay: ReplayServer) -> None:
    model = responses_model(replay)
    route = ResponsesRoute(model)
    route.arm(60_000)
    replay.file("errors/openai_context_management_unsupported.json", status=400)
    replay.file("responses/response_plain.json")
    done = asyncio.run(model.acomplete(HISTORY))
    assert done.content == "Noted." and route.refused is not None
    assert "context_management" not in replay.last.body
