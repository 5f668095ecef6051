"""AnthropicChatModel against the real ``anthropic`` SDK and a replay server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import anthropic
import pytest

from palimpsest.errors import (
    AuthError,
    ConfigError,
    ContextOverflowError,
    OutputLimitError,
    ProviderError,
    QuotaError,
    RateLimitError,
)
from palimpsest.providers import ChatModel
from palimpsest.providers.anthropic_messages import (
    CONTEXT_MANAGEMENT_BETA,
    AnthropicChatModel,
    applied_edits,
    completion_from_message,
    tool_clearing_edit,
)
from palimpsest.providers.caching import count_cache_markers
from providers_fixtures import ReplayServer, Reply, running_server


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


def model_for(
    server: ReplayServer, name: str = "claude-sonnet-4-6", **kwargs: object
) -> AnthropicChatModel:
    kwargs.setdefault("max_retries", 0)
    return AnthropicChatModel(name, base_url=server.url, api_key="sk-ant-test", **kwargs)  # type: ignore[arg-type]


CONVERSATION = [
    {"role": "system", "content": "You are a weather bot."},
    {"role": "user", "content": "Weather in SF?"},
    {
        "role": "assistant",
        "content": "Checking.",
        "tool_calls": [
            {
                "id": "toolu_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"location": "SF"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "toolu_1", "content": "15 C, fog", "_persisted": True},
    {"role": "user", "content": "And tomorrow?"},
]


def test_is_a_chat_model(replay: ReplayServer) -> None:
    assert isinstance(model_for(replay), ChatModel)


def test_request_conversion_and_cache_write_usage(replay: ReplayServer) -> None:
    replay.file("anthropic/message_cache_write.json")
    done = model_for(replay).complete(CONVERSATION, tools=[WEATHER_TOOL], temperature=0)
    sent = replay.last
    assert sent.path == "/v1/messages"
    # Older SDKs send x-api-key, newer ones a bearer token.
    auth = sent.headers.get("x-api-key") or sent.headers.get("authorization", "")
    assert auth.endswith("sk-ant-test")
    body = sent.body
    assert body["max_tokens"] == 4096  # required by the API; the default when not given
    assert body["temperature"] == 0
    assert body["system"] == [
        {"type": "text", "text": "You are a weather bot.", "cache_control": {"type": "ephemeral"}}
    ]
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "user"]
    assistant = body["messages"][1]["content"]
    assert assistant[-1]["type"] == "tool_use"
    assert assistant[-1]["input"] == {"location": "SF"}
    merged_user = body["messages"][2]["content"]
    assert merged_user[0]["type"] == "tool_result"
    assert merged_user[0]["tool_use_id"] == "toolu_1"
    assert merged_user[1]["text"] == "And tomorrow?"
    assert "_persisted" not in json.dumps(body)
    assert count_cache_markers([{"content": body["system"]}, *body["messages"]]) == 4
    assert body["tools"] == [
        {
            "name": "get_weather",
            "description": "Current weather for a location.",
            "input_schema": {"type": "object", "properties": {"location": {"type": "string"}}},
        }
    ]
    usage = done.usage
    assert (usage.input_tokens, usage.cache_write_tokens, usage.cache_read_tokens) == (
        21,
        188086,
        0,
    )
    assert usage.prompt_tokens == 188107 and usage.output_tokens == 393
    assert done.finish_reason == "stop" and done.content.startswith("Pride and Prejudice")


def test_cache_read_usage_counts_in_prompt_tokens(replay: ReplayServer) -> None:
    replay.file("anthropic/message_cache_read.json")
    usage = model_for(replay).complete([{"role": "user", "content": "themes?"}]).usage
    assert usage.cache_read_tokens == 188086
    assert usage.prompt_tokens == 21 + 188086
    assert usage.total_tokens == 21 + 188086 + 393


def test_tool_use_reply_becomes_openai_tool_call(replay: ReplayServer) -> None:
    replay.file("anthropic/message_tool_use.json")
    done = model_for(replay).complete([{"role": "user", "content": "SF?"}], max_tokens=512)
    assert replay.last.body["max_tokens"] == 512
    assert done.finish_reason == "tool_calls"
    assert done.content.startswith("<thinking>")
    (call,) = done.tool_calls
    assert call["id"] == "toolu_01A09q90qw90lq917835lq9"
    assert call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"]) == {
        "location": "San Francisco, CA",
        "unit": "celsius",
    }


def test_stream_accumulates_text_tool_input_and_usage(replay: ReplayServer) -> None:
    replay.file("anthropic/stream_tool_use.sse")
    done = model_for(replay).complete([{"role": "user", "content": "weather"}], stream=True)
    assert replay.last.body["stream"] is True
    assert done.content == "Let me check the weather."
    (call,) = done.tool_calls
    assert json.loads(call["function"]["arguments"])["elements"][0]["temperature"] == 58
    assert done.finish_reason == "tool_calls"
    assert done.model == "claude-haiku-4-5-20251001"
    assert (done.usage.input_tokens, done.usage.cache_read_tokens) == (849, 1536)
    assert done.usage.output_tokens == 47


def test_async_plain_and_stream(replay: ReplayServer) -> None:
    replay.file("anthropic/message_tool_use.json")
    replay.file("anthropic/stream_tool_use.sse")
    model = model_for(replay)

    async def both() -> tuple[object, object]:
        a = await model.acomplete([{"role": "user", "content": "a"}])
        b = await model.acomplete([{"role": "user", "content": "b"}], stream=True)
        return a, b

    first, second = asyncio.run(both())
    assert first.tool_calls[0]["function"]["name"] == "get_weather"  # type: ignore[attr-defined]
    assert second.usage.output_tokens == 47  # type: ignore[attr-defined]


def test_caching_can_be_turned_off_and_ttl_is_passed(replay: ReplayServer) -> None:
    replay.file("anthropic/message_cache_read.json")
    replay.file("anthropic/message_cache_read.json")
    model_for(replay, prompt_caching=False).complete(CONVERSATION)
    assert "cache_control" not in json.dumps(replay.last.body)
    model_for(replay, cache_ttl="1h").complete(CONVERSATION)
    assert replay.last.body["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}


def test_tool_choice_and_stop_are_converted(replay: ReplayServer) -> None:
    replay.file("anthropic/message_tool_use.json")
    model_for(replay).complete(
        [{"role": "user", "content": "x"}],
        tools=[WEATHER_TOOL],
        tool_choice={"type": "function", "function": {"name": "get_weather"}},
        stop="\n\nHuman:",
    )
    body = replay.last.body
    assert body["tool_choice"] == {"type": "tool", "name": "get_weather"}
    assert body["stop_sequences"] == ["\n\nHuman:"]


def test_missing_key_names_env_var() -> None:
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        AnthropicChatModel("claude-sonnet-4-6")


def test_plain_dict_message_is_read() -> None:
    done = completion_from_message(
        {
            "content": [{"type": "text", "text": "hi"}],
            "usage": {"input_tokens": 3, "output_tokens": 1},
        }
    )
    assert (done.content, done.usage.total_tokens) == ("hi", 4)


# --- errors -------------------------------------------------------------------------


def test_prompt_too_long(replay: ReplayServer) -> None:
    replay.file("errors/anthropic_prompt_too_long.json", status=400)
    with pytest.raises(ContextOverflowError) as info:
        model_for(replay).complete([{"role": "user", "content": "x"}])
    err = info.value
    assert (err.limit, err.requested, err.status_code) == (200000, 208310, 400)
    assert (err.provider, err.model) == ("anthropic", "claude-sonnet-4-6")
    assert isinstance(err.__cause__, anthropic.BadRequestError)


def test_max_tokens_above_output_maximum(replay: ReplayServer) -> None:
    replay.file("errors/anthropic_max_tokens_output.json", status=400)
    with pytest.raises(OutputLimitError) as info:
        model_for(replay).complete([{"role": "user", "content": "x"}], max_tokens=128001)
    assert info.value.suggested_max_tokens == 64000
    assert info.value.reason == "max_tokens_too_large"


def test_input_plus_max_tokens_over_window(replay: ReplayServer) -> None:
    replay.file("errors/anthropic_input_plus_max_tokens.json", status=400)
    with pytest.raises(OutputLimitError) as info:
        model_for(replay).complete([{"role": "user", "content": "x"}], max_tokens=64000)
    err = info.value
    assert (err.limit, err.input_tokens) == (200000, 143653)
    assert err.suggested_max_tokens == 200000 - 143653 - 256


def test_413_request_too_large(replay: ReplayServer) -> None:
    replay.file("errors/anthropic_request_too_large.json", status=413)
    with pytest.raises(ContextOverflowError) as info:
        model_for(replay).complete([{"role": "user", "content": "x"}])
    assert info.value.payload_too_large is True
    assert isinstance(info.value.__cause__, anthropic.APIStatusError)


def test_429_with_retry_after(replay: ReplayServer) -> None:
    replay.file("errors/anthropic_rate_limit.json", status=429, headers={"retry-after": "17"})
    with pytest.raises(RateLimitError) as info:
        model_for(replay).complete([{"role": "user", "content": "x"}])
    assert info.value.retry_after == 17.0
    assert isinstance(info.value.__cause__, anthropic.RateLimitError)


def test_401_authentication(replay: ReplayServer) -> None:
    replay.file("errors/anthropic_authentication.json", status=401)
    with pytest.raises(AuthError) as info:
        model_for(replay).complete([{"role": "user", "content": "x"}])
    assert info.value.status_code == 401


def test_credit_balance_400_is_quota(replay: ReplayServer) -> None:
    replay.file("errors/anthropic_credit_balance.json", status=400)
    with pytest.raises(QuotaError):
        model_for(replay).complete([{"role": "user", "content": "x"}])


def test_529_overloaded_is_retryable_provider_error(replay: ReplayServer) -> None:
    replay.file("errors/anthropic_overloaded.json", status=529)
    with pytest.raises(ProviderError) as info:
        model_for(replay).complete([{"role": "user", "content": "x"}])
    assert type(info.value) is ProviderError
    assert info.value.reason == "server_error" and info.value.status_code == 529


def test_tool_pairing_error_asks_for_sanitizing(replay: ReplayServer) -> None:
    replay.file("errors/anthropic_tool_use_without_result.json", status=400)
    with pytest.raises(ProviderError) as info:
        model_for(replay).complete([{"role": "user", "content": "x"}])
    assert info.value.reason == "tool_message_malformed"


def test_async_error_translation(replay: ReplayServer) -> None:
    replay.file("errors/anthropic_prompt_too_long.json", status=400)
    with pytest.raises(ContextOverflowError):
        asyncio.run(model_for(replay).acomplete([{"role": "user", "content": "x"}]))


def test_error_event_inside_a_stream(replay: ReplayServer) -> None:
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 5, "output_tokens": 1},
        },
    }
    # The error event of docs.anthropic.com/en/api/messages-streaming ("Error events").
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    stream = f"event: message_start\ndata: {json.dumps(start)}\n\nevent: error\ndata: {json.dumps(error)}\n\n"
    replay.replies.append(Reply(200, stream.encode(), {}, "text/event-stream"))
    with pytest.raises(ProviderError) as info:
        model_for(replay).complete([{"role": "user", "content": "x"}], stream=True)
    assert info.value.reason == "server_error" and info.value.status_code == 529


def test_on_text_receives_the_text_deltas(replay: ReplayServer) -> None:
    replay.file("anthropic/stream_tool_use.sse")
    pieces: list[str] = []
    done = model_for(replay).complete(
        [{"role": "user", "content": "weather"}], on_text=pieces.append
    )
    assert replay.last.body["stream"] is True
    assert pieces and "".join(pieces) == done.content


CLEARED_REPLY = {
    "id": "msg_ce1",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [{"type": "text", "text": "Tomorrow: sun."}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 30,
        "output_tokens": 7,
        "cache_creation_input_tokens": 900,
        "cache_read_input_tokens": 0,
    },
    "context_management": {
        "applied_edits": [
            {
                "type": "clear_tool_uses_20250919",
                "cleared_tool_uses": 1,
                "cleared_input_tokens": 45000,
            }
        ]
    },
}


def test_server_side_tool_clearing_is_sent_with_its_beta_and_read_back(
    replay: ReplayServer,
) -> None:
    replay.json(CLEARED_REPLY)
    edit = tool_clearing_edit(trigger_tokens=50_000, keep_tool_uses=2, clear_at_least_tokens=4096)
    model = model_for(replay, tool_clearing=edit)
    done = model.complete(CONVERSATION, tools=[WEATHER_TOOL])
    sent = replay.last
    assert CONTEXT_MANAGEMENT_BETA in sent.headers.get("anthropic-beta", "").split(",")
    assert sent.body["context_management"] == {
        "edits": [
            {
                "type": "clear_tool_uses_20250919",
                "trigger": {"type": "input_tokens", "value": 50_000},
                "keep": {"type": "tool_uses", "value": 2},
                "clear_at_least": {"type": "input_tokens", "value": 4096},
            }
        ]
    }
    # the conversation itself is sent whole: the server does the clearing
    assert sent.body["messages"][2]["content"][0]["content"] == "15 C, fog"
    assert done.content == "Tomorrow: sun."
    assert applied_edits(done.raw) == CLEARED_REPLY["context_management"]["applied_edits"]
    assert done.usage is not None and done.usage.cache_write_tokens == 900


def test_tool_clearing_true_uses_the_server_defaults_and_off_sends_nothing(
    replay: ReplayServer,
) -> None:
    replay.json(CLEARED_REPLY)
    model_for(replay, tool_clearing=True).complete(CONVERSATION)
    assert replay.last.body["context_management"] == {
        "edits": [{"type": "clear_tool_uses_20250919"}]
    }
    replay.json(CLEARED_REPLY)
    done = model_for(replay).complete(CONVERSATION)
    assert "context_management" not in replay.last.body
    assert "anthropic-beta" not in replay.last.headers
    assert applied_edits(done.raw) == applied_edits(CLEARED_REPLY)
    assert applied_edits({"content": []}) == []
