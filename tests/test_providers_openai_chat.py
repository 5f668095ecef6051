"""OpenAIChatModel against the real ``openai`` SDK and a replay server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import openai
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
from palimpsest.providers.caching import count_cache_markers
from palimpsest.providers.openai_chat import OpenAIChatModel, completion_from_chunks
from providers_fixtures import ReplayServer, Reply, running_server


@pytest.fixture
def replay() -> Iterator[ReplayServer]:
    yield from running_server()


WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a location.",
        "parameters": {
            "type": "object",
            "properties": {"location": {"type": "string"}},
            "required": ["location"],
        },
    },
}


def model_for(server: ReplayServer, name: str = "gpt-4o", **kwargs: object) -> OpenAIChatModel:
    kwargs.setdefault("max_retries", 0)
    return OpenAIChatModel(name, base_url=f"{server.url}/v1", api_key="sk-test", **kwargs)  # type: ignore[arg-type]


def test_is_a_chat_model(replay: ReplayServer) -> None:
    assert isinstance(model_for(replay), ChatModel)


def test_cached_usage_and_request_shape(replay: ReplayServer) -> None:
    replay.file("openai/chat_completion_cached.json")
    model = model_for(replay)
    messages = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Key terms?", "_id": 7, "_tokens": 3},
    ]
    done = model.complete(messages, max_tokens=300, temperature=0)
    assert done.content.startswith("The agreement's key terms")
    assert done.finish_reason == "stop"
    assert done.model == "gpt-4o-2024-08-06"
    assert done.tool_calls == []
    usage = done.usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (86, 1920, 300)
    assert usage.prompt_tokens == 2006 and usage.total_tokens == 2306
    sent = replay.last
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer sk-test"
    assert sent.body["messages"][1] == {"role": "user", "content": "Key terms?"}
    assert sent.body["max_tokens"] == 300 and sent.body["temperature"] == 0
    assert "stream" not in sent.body
    assert messages[1]["_id"] == 7  # the caller's message is untouched


def test_reasoning_tokens_are_not_prompt_tokens(replay: ReplayServer) -> None:
    replay.file("openai/chat_completion_reasoning.json")
    usage = model_for(replay, "o1").complete([{"role": "user", "content": "x"}]).usage
    assert usage.reasoning_tokens == 1024
    assert usage.prompt_tokens == 75
    assert usage.output_tokens == 1186


def test_tool_call_reply(replay: ReplayServer) -> None:
    replay.file("openai/chat_completion_tool_call.json")
    done = model_for(replay).complete(
        [{"role": "user", "content": "Weather in Paris?"}], tools=[WEATHER_TOOL]
    )
    assert done.content is None
    assert done.finish_reason == "tool_calls"
    assert done.tool_calls == [
        {
            "id": "call_12345xyz",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"location":"Paris, France"}'},
        }
    ]
    assert replay.last.body["tools"] == [WEATHER_TOOL]
    assert done.to_message()["tool_calls"][0]["id"] == "call_12345xyz"


def test_stream_accumulates_tool_call_and_usage(replay: ReplayServer) -> None:
    replay.file("openai/stream_tool_call.sse")
    done = model_for(replay).complete(
        [{"role": "user", "content": "Weather in Paris?"}], tools=[WEATHER_TOOL], stream=True
    )
    assert replay.last.body["stream"] is True
    assert replay.last.body["stream_options"] == {"include_usage": True}
    assert done.finish_reason == "tool_calls"
    assert len(done.tool_calls) == 1
    call = done.tool_calls[0]
    assert call["id"] == "call_DdmO9pD3xa9XTPNJ32zg2hcA"
    assert call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"]) == {"location": "Paris, France"}
    assert done.usage.cache_read_tokens == 1280
    assert done.usage.prompt_tokens == 1431
    assert done.usage.output_tokens == 17
    assert isinstance(done.raw, list) and len(done.raw) == 10


def test_stream_text(replay: ReplayServer) -> None:
    replay.file("openai/stream_text.sse")
    done = model_for(replay).complete([{"role": "user", "content": "hi"}], stream=True)
    assert done.content == "Hello! How can I help you today?"
    assert done.finish_reason == "stop"
    assert done.usage.total_tokens == 18


def test_stream_without_usage_is_unknown_not_zero(replay: ReplayServer) -> None:
    """llama.cpp's server streams no usage chunk; we used to record that as 0 tokens."""
    replay.file("openai/stream_llamacpp_no_usage.sse")
    done = model_for(replay).complete([{"role": "user", "content": "hi"}], stream=True)
    assert done.content == "We deploy to eu-west-1." and done.finish_reason == "stop"
    assert done.usage is None
    assert replay.last.body["stream_options"] == {"include_usage": True}  # asked, not given


def test_async_plain_and_stream(replay: ReplayServer) -> None:
    replay.file("openai/chat_completion_cached.json")
    replay.file("openai/stream_tool_call.sse")
    model = model_for(replay)

    async def both() -> tuple[object, object]:
        first = await model.acomplete([{"role": "user", "content": "a"}])
        second = await model.acomplete([{"role": "user", "content": "b"}], stream=True)
        return first, second

    first, second = asyncio.run(both())
    assert first.usage.cache_read_tokens == 1920  # type: ignore[attr-defined]
    assert second.tool_calls[0]["function"]["name"] == "get_weather"  # type: ignore[attr-defined]


def test_claude_on_openrouter_gets_cache_markers(replay: ReplayServer) -> None:
    replay.file("openai/chat_completion_cached.json")
    model = model_for(replay, "anthropic/claude-sonnet-4", provider="openrouter")
    assert model.prompt_caching is True
    messages = [
        {"role": "system", "content": "sys"},
        *[{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(6)],
    ]
    model.complete(messages)
    sent = replay.last.body["messages"]
    assert count_cache_markers(sent) == 4
    assert sent[0]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert sent[-1]["content"] == [
        {"type": "text", "text": "m5", "cache_control": {"type": "ephemeral"}}
    ]
    assert sent[1] == {"role": "user", "content": "m0"}


def test_gpt_model_gets_no_cache_markers(replay: ReplayServer) -> None:
    replay.file("openai/chat_completion_cached.json")
    model_for(replay).complete(
        [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    )
    assert count_cache_markers(replay.last.body["messages"]) == 0


def test_official_openai_uses_max_completion_tokens() -> None:
    model = OpenAIChatModel("gpt-5", api_key="sk-test")
    request = model.build_request([{"role": "user", "content": "x"}], None, 100, {})
    assert request["max_completion_tokens"] == 100 and "max_tokens" not in request


def test_missing_key_for_official_endpoint_names_env_var() -> None:
    with pytest.raises(ConfigError, match="OPENAI_API_KEY") as info:
        OpenAIChatModel("gpt-4o")
    assert info.value.key == "OPENAI_API_KEY"


# --- errors -------------------------------------------------------------------------


def test_context_overflow_with_reported_limit(replay: ReplayServer) -> None:
    replay.file("errors/openai_context_overflow_messages.json", status=400)
    with pytest.raises(ContextOverflowError) as info:
        model_for(replay).complete([{"role": "user", "content": "x"}])
    err = info.value
    assert (err.limit, err.requested, err.payload_too_large) == (128000, 192041, False)
    assert (err.status_code, err.provider, err.model) == (400, "openai", "gpt-4o")
    assert err.reason == "context_overflow"
    assert isinstance(err.__cause__, openai.BadRequestError)
    assert "context_length_exceeded" in (err.body or "")


def test_itemised_overflow_that_fits_without_the_cap_is_an_output_limit(
    replay: ReplayServer,
) -> None:
    # 3120 prompt tokens fit in 4097; the 1000-token cap is what overflows (TK-26).
    replay.file("errors/openai_context_length_exceeded.json", status=400)
    with pytest.raises(OutputLimitError) as info:
        model_for(replay).complete([{"role": "user", "content": "x"}], max_tokens=1000)
    err = info.value
    assert (err.limit, err.input_tokens, err.suggested_max_tokens) == (4097, 3120, 721)


def test_max_tokens_above_model_output_maximum(replay: ReplayServer) -> None:
    replay.file("errors/openai_max_tokens_too_large.json", status=400)
    with pytest.raises(OutputLimitError) as info:
        model_for(replay).complete([{"role": "user", "content": "x"}], max_tokens=20480)
    assert info.value.suggested_max_tokens == 16384
    assert info.value.limit is None  # the window was not reported: never shrink it


def test_413_html_page_is_payload_too_large(replay: ReplayServer) -> None:
    replay.file("errors/openresty_413.html", status=413)
    with pytest.raises(ContextOverflowError) as info:
        model_for(replay).complete([{"role": "user", "content": "x"}])
    assert info.value.payload_too_large is True
    assert info.value.status_code == 413
    assert info.value.reason == "payload_too_large"


def test_429_retry_after_header(replay: ReplayServer) -> None:
    replay.file("errors/openai_rate_limit_tpm.json", status=429, headers={"retry-after": "20"})
    with pytest.raises(RateLimitError) as info:
        model_for(replay).complete([{"role": "user", "content": "x"}])
    assert info.value.retry_after == 20.0
    assert info.value.status_code == 429


def test_429_retry_after_from_body_when_no_header(replay: ReplayServer) -> None:
    replay.file("errors/openai_rate_limit_tpm.json", status=429)
    with pytest.raises(RateLimitError) as info:
        model_for(replay).complete([{"role": "user", "content": "x"}])
    assert info.value.retry_after == pytest.approx(3.89)


def test_429_insufficient_quota_is_quota(replay: ReplayServer) -> None:
    replay.file("errors/openai_insufficient_quota.json", status=429)
    with pytest.raises(QuotaError):
        model_for(replay).complete([{"role": "user", "content": "x"}])


def test_401_is_auth_error(replay: ReplayServer) -> None:
    replay.file("errors/openai_invalid_api_key.json", status=401)
    with pytest.raises(AuthError) as info:
        model_for(replay).complete([{"role": "user", "content": "x"}])
    assert info.value.status_code == 401
    assert isinstance(info.value.__cause__, openai.AuthenticationError)


def test_openrouter_402_is_quota(replay: ReplayServer) -> None:
    replay.file("errors/openrouter_402_credits.json", status=402)
    with pytest.raises(QuotaError) as info:
        model_for(replay, provider="openrouter").complete([{"role": "user", "content": "x"}])
    assert info.value.provider == "openrouter"


def test_llama_server_context_size_reads_n_ctx_from_body(replay: ReplayServer) -> None:
    replay.file("errors/llamacpp_exceed_context_size.json", status=400)
    with pytest.raises(ContextOverflowError) as info:
        model_for(replay, provider="llamacpp-server").complete([{"role": "user", "content": "x"}])
    assert (info.value.limit, info.value.requested) == (8192, 14429)


def test_vllm_max_tokens_too_large(replay: ReplayServer) -> None:
    replay.file("errors/vllm_max_tokens_too_large.json", status=400)
    with pytest.raises(OutputLimitError) as info:
        model_for(replay, provider="vllm").complete([{"role": "user", "content": "x"}])
    assert (info.value.input_tokens, info.value.suggested_max_tokens) == (1210, 6726)


def test_500_is_a_plain_provider_error(replay: ReplayServer) -> None:
    replay.json(
        {"error": {"message": "The server had an error while processing your request."}}, 500
    )
    with pytest.raises(ProviderError) as info:
        model_for(replay).complete([{"role": "user", "content": "x"}])
    assert type(info.value) is ProviderError
    assert info.value.reason == "server_error"


def test_disconnect_on_small_request_is_transport(replay: ReplayServer) -> None:
    replay.disconnect()
    with pytest.raises(ProviderError) as info:
        model_for(replay).complete([{"role": "user", "content": "x"}])
    assert type(info.value) is ProviderError
    assert info.value.reason == "connection"
    assert isinstance(info.value.__cause__, openai.APIConnectionError)


def test_disconnect_on_request_above_threshold_is_overflow(replay: ReplayServer) -> None:
    replay.disconnect()
    model = model_for(replay, threshold_tokens=100)
    with pytest.raises(ContextOverflowError):
        model.complete([{"role": "user", "content": "y" * 4000}])


def test_timeout(replay: ReplayServer) -> None:
    replay.slow(2.0)
    with pytest.raises(ProviderError) as info:
        model_for(replay, timeout=0.3).complete([{"role": "user", "content": "x"}])
    assert info.value.reason == "timeout"
    assert isinstance(info.value.__cause__, openai.APITimeoutError)


def test_async_errors_are_translated_too(replay: ReplayServer) -> None:
    replay.file("errors/openai_invalid_api_key.json", status=401)
    with pytest.raises(AuthError):
        asyncio.run(model_for(replay).acomplete([{"role": "user", "content": "x"}]))


def test_chunks_may_be_plain_dicts() -> None:
    chunks = [
        {"model": "m", "choices": [{"delta": {"content": "a"}, "finish_reason": None}]},
        {"model": "m", "choices": [{"delta": {"content": "b"}, "finish_reason": "stop"}]},
        {"model": "m", "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2}},
    ]
    done = completion_from_chunks(chunks)
    assert (done.content, done.finish_reason, done.usage.total_tokens) == ("ab", "stop", 7)


def test_error_inside_a_stream_is_classified(replay: ReplayServer) -> None:
    chunk = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": "a"}, "finish_reason": None}],
    }
    error = {
        "error": {
            "message": "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
            "type": "invalid_request_error",
        }
    }
    stream = f"data: {json.dumps(chunk)}\n\ndata: {json.dumps(error)}\n\n"
    replay.replies.append(Reply(200, stream.encode(), {}, "text/event-stream"))
    with pytest.raises(ContextOverflowError) as info:
        model_for(replay).complete([{"role": "user", "content": "x"}], stream=True)
    assert info.value.limit == 8192
    assert isinstance(info.value.__cause__, openai.APIError)


def test_on_text_receives_the_reply_as_it_streams(replay: ReplayServer) -> None:
    replay.file("openai/stream_text.sse")
    pieces: list[str] = []
    done = model_for(replay).complete([{"role": "user", "content": "hi"}], on_text=pieces.append)
    assert replay.last.body["stream"] is True  # asking for the text asks for a stream
    assert len(pieces) > 1 and "".join(pieces) == done.content
    assert done.usage.total_tokens == 18  # the whole Completion still comes back


def test_the_agent_streams_text_deltas_through_the_sdk(replay: ReplayServer) -> None:
    from palimpsest.agent import Agent, TextDelta, TurnEnd

    replay.file("openai/stream_text.sse")
    agent = Agent(model_for(replay), builtin_tools=False, context_length=32_000, stream=True)
    events = list(agent.run("hi"))
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 1 and "".join(deltas) == "Hello! How can I help you today?"
    assert isinstance(events[-1], TurnEnd) and events[-1].text == "".join(deltas)
    assert agent.messages[-1]["content"] == "".join(deltas)  # stored once, whole
    agent.close()


def test_an_overflow_reported_inside_a_stream_is_recovered(
    replay: ReplayServer, tmp_path: Path
) -> None:
    """llama.cpp answers HTTP 200 and reports the oversized prompt as an ``event: error``
    the SDK skips: an empty stream. The agent reads it as an overflow, compacts, retries,
    and the user's message gets its reply."""
    from agent_helpers import history, make_agent
    from palimpsest.agent import CompactionEvent, TurnEnd, WarningEvent

    error = {
        "error": {
            "code": 400,
            "message": "request (4132 tokens) exceeds the available context size (4096 tokens)",
            "type": "exceed_context_size_error",
        }
    }
    silent = f"event: error\ndata: {json.dumps(error)}\n\n".encode()
    replay.replies.append(Reply(200, silent, {}, "text/event-stream"))
    replay.file("openai/stream_text.sse")
    agent = make_agent(
        tmp_path,
        model=model_for(replay),
        messages=history(6, chars=900),  # ~2,700 rough tokens: under the 3,481 threshold
        context_length=4096,
        builtin_tools=False,
        stream=True,
    )
    events = list(agent.run("and now?"))
    compactions = [e for e in events if isinstance(e, CompactionEvent) and e.compacted]
    assert [c.path for c in compactions] == ["reactive"]
    assert not any(isinstance(e, WarningEvent) and e.code == "empty_answer" for e in events)
    end = events[-1]
    assert isinstance(end, TurnEnd) and end.completed and end.text
    assert agent.messages[-1]["role"] == "assistant"  # the user's message has its reply
    agent.close()


def test_the_model_lists_window_is_probed(replay: ReplayServer) -> None:
    replay.json(
        {
            "object": "list",
            "data": [
                {"id": "other", "object": "model", "max_model_len": 4_096},
                {"id": "qwen3-coder", "object": "model", "max_model_len": 131_072},
            ],
        }
    )
    model = model_for(replay, "qwen3-coder", provider="vllm")
    assert model.probe_context_length() == 131_072
    assert (replay.last.method, replay.last.path) == ("GET", "/v1/models")


def test_a_model_list_without_a_window_says_none(replay: ReplayServer) -> None:
    replay.json({"object": "list", "data": [{"id": "gpt-4o", "object": "model"}]})
    assert model_for(replay).probe_context_length() is None
    replay.json({"error": {"message": "not found"}}, status=404)
    with pytest.raises(Exception):  # noqa: B017 - the SDK's own error: the probe cools it down
        model_for(replay).probe_context_length()
