"""OpenAIResponsesModel against the real ``openai`` SDK and a replay server on 127.0.0.1."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from palimpsest.errors import ContextOverflowError, ProviderError
from palimpsest.providers import ChatModel, connect
from palimpsest.providers.convert_responses import RESPONSES_ITEMS_KEY
from palimpsest.providers.openai_responses import OpenAIResponsesModel
from providers_fixtures import ReplayServer, running_server


@pytest.fixture
def replay() -> Iterator[ReplayServer]:
    yield from running_server()


WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a location.",
        "parameters": {"type": "object", "properties": {"location": {"type": "string"}}},
    },
}


def model_for(server: ReplayServer, **kwargs: object) -> OpenAIResponsesModel:
    kwargs.setdefault("max_retries", 0)
    return OpenAIResponsesModel("gpt-5", base_url=f"{server.url}/v1", api_key="sk-test", **kwargs)  # type: ignore[arg-type]


def test_connect_builds_it_and_it_is_a_chat_model(replay: ReplayServer) -> None:
    model = connect("openai-responses:gpt-5", base_url=f"{replay.url}/v1", api_key="sk-test")
    assert isinstance(model, OpenAIResponsesModel) and isinstance(model, ChatModel)


def test_tool_call_reply_usage_and_request_shape(replay: ReplayServer) -> None:
    replay.file("responses/response_tool_call.json")
    messages = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Weather in Paris?", "_id": 3},
    ]
    done = model_for(replay).complete(messages, [WEATHER_TOOL], max_tokens=500)
    assert replay.last.path == "/v1/responses"
    body = replay.last.body
    assert body["input"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Weather in Paris?"},
    ]
    assert body["tools"][0]["name"] == "get_weather" and body["max_output_tokens"] == 500
    assert body["store"] is False
    assert done.tool_calls == [
        {
            "id": "call_Wx7pQ2",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"location":"Paris"}'},
        }
    ]
    assert done.finish_reason == "tool_calls"
    usage = done.usage
    assert usage is not None
    # Responses' input_tokens include the cached ones: 86 fresh + 1,920 read from cache.
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (86, 1920, 300)
    assert usage.prompt_tokens == 2006 and usage.reasoning_tokens == 128
    # The reasoning item rides on the assistant message and goes back on the next call.
    message = done.to_message()
    assert message[RESPONSES_ITEMS_KEY][0]["encrypted_content"] == "gAAAAABo-opaque-reasoning"
    replay.file("responses/response_incomplete.json")
    follow = [
        *messages,
        message,
        {"role": "tool", "tool_call_id": "call_Wx7pQ2", "content": "18 C"},
    ]
    cut = model_for(replay).complete(follow, max_tokens=16)
    sent = replay.last.body["input"]
    assert [i.get("type") for i in sent[2:]] == [
        "reasoning",
        "function_call",
        "function_call_output",
    ]
    assert cut.finish_reason == "length" and cut.content == "The first three steps are"


def test_compaction_item_is_kept_with_the_reply(replay: ReplayServer) -> None:
    replay.file("responses/response_compacted.json")
    done = model_for(replay).complete([{"role": "user", "content": "go on"}])
    assert done.content == "Continuing with the migration."
    kept = done.to_message()[RESPONSES_ITEMS_KEY]
    assert kept == [
        {
            "type": "compaction",
            "id": "cmp_68a1c0",
            "encrypted_content": "gAAAAABo-opaque-compaction-state",
        }
    ]


def test_stream_text_arrives_in_pieces(replay: ReplayServer) -> None:
    replay.file("responses/stream_text.sse")
    pieces: list[str] = []
    done = model_for(replay).complete([{"role": "user", "content": "hi"}], on_text=pieces.append)
    assert pieces == ["Hello", " there", "."]
    assert (
        done.content == "Hello there." and done.usage is not None and done.usage.prompt_tokens == 21
    )
    assert replay.last.body["stream"] is True


def test_overflow_reported_inside_a_stream_is_an_overflow(replay: ReplayServer) -> None:
    replay.file("responses/stream_failed_overflow.sse")
    with pytest.raises(ContextOverflowError):
        model_for(replay).complete([{"role": "user", "content": "x"}], on_text=lambda _: None)


def test_a_stream_that_stops_without_a_final_event_is_an_error_not_an_empty_answer(
    replay: ReplayServer,
) -> None:
    replay.file("responses/stream_cut_short.sse")
    with pytest.raises(ProviderError, match="ended before"):
        model_for(replay).complete([{"role": "user", "content": "x"}], on_text=lambda _: None)


def test_http_overflow_is_classified(replay: ReplayServer) -> None:
    replay.file("responses/error_context_length.json", status=400)
    with pytest.raises(ContextOverflowError):
        model_for(replay).complete([{"role": "user", "content": "x"}])


def test_async_twin_answers_the_same(replay: ReplayServer) -> None:
    replay.file("responses/response_tool_call.json")
    done = asyncio.run(
        model_for(replay).acomplete([{"role": "user", "content": "w?"}], [WEATHER_TOOL])
    )
    assert done.tool_calls[0]["id"] == "call_Wx7pQ2"
