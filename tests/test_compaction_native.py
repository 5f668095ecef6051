"""The ``native`` engine: the provider's compaction first, the compressor as the fallback.

Routes are the real ones over the real SDKs, answered by a replay server on 127.0.0.1.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from palimpsest.compaction import load_engine
from palimpsest.compaction.compressor import ContextCompressor
from palimpsest.compaction.native import NativeCompactionEngine, NativeCompactionRoute
from palimpsest.messages.native import ANTHROPIC_BLOCKS_KEY, RESPONSES_ITEMS_KEY
from palimpsest.providers.anthropic_messages import AnthropicChatModel
from palimpsest.providers.native_routes import AnthropicRoute, ResponsesRoute
from palimpsest.providers.openai_responses import OpenAIResponsesModel
from providers_fixtures import ReplayServer, running_server


@pytest.fixture
def replay() -> Iterator[ReplayServer]:
    yield from running_server()


def anthropic_route(server: ReplayServer) -> AnthropicRoute:
    model = AnthropicChatModel(
        "claude-sonnet-4-6", base_url=server.url, api_key="sk-ant-test", max_retries=0
    )
    return AnthropicRoute(model)


def responses_route() -> ResponsesRoute:
    model = OpenAIResponsesModel("gpt-5", base_url="http://127.0.0.1:9/v1", api_key="sk-test")
    return ResponsesRoute(model)


def engine(route: NativeCompactionRoute | None = None, **kwargs: Any) -> NativeCompactionEngine:
    kwargs.setdefault("threshold_percent", 0.5)
    return NativeCompactionEngine(
        20_000, route=route, protect_first_n=1, protect_last_n=1, quiet_mode=True, **kwargs
    )


def conversation(turns: int, chars: int = 1_200) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(turns):
        out.append({"role": "user", "content": f"Step {i}: port table_{i}. " + "x " * chars})
        out.append({"role": "assistant", "content": f"Ported table_{i}. " + "y " * chars})
    out.append({"role": "user", "content": "Now the refunds table."})
    return out


def test_it_is_registered_and_without_a_route_it_is_the_compressor() -> None:
    loaded = load_engine("native", context_length=20_000)
    assert isinstance(loaded, NativeCompactionEngine) and loaded.name == "native"
    messages = conversation(4)
    plain = ContextCompressor(
        20_000, threshold_percent=0.5, protect_first_n=1, protect_last_n=1, quiet_mode=True
    )
    assert engine().compress(messages) == plain.compress(messages)


def test_an_inline_route_is_armed_the_margin_below_and_rearmed_on_a_new_window() -> None:
    route = responses_route()
    native = engine(route, native_margin_tokens=1_000)
    assert route.threshold_tokens == native.threshold_tokens - 1_000
    sent = route.model.default_options["context_management"]
    assert sent == [{"type": "compaction", "compact_threshold": native.native_threshold_tokens}]
    native.update_model("gpt-5", 40_000)
    assert route.threshold_tokens == native.threshold_tokens - 1_000
    assert native.get_status()["native_threshold_tokens"] == route.threshold_tokens


def test_the_estimate_starts_at_the_newest_compaction() -> None:
    messages = conversation(3)
    carrier = {
        "role": "assistant",
        "content": "Continuing.",
        RESPONSES_ITEMS_KEY: [{"type": "compaction", "encrypted_content": "gA"}],
    }
    with_item = [*messages, carrier, {"role": "user", "content": "go on"}]
    native = engine(responses_route())
    assert native.estimate_request_tokens(with_item) == native.estimate_request_tokens(
        with_item[-2:]
    )
    assert native.estimate_request_tokens(with_item) < native.estimate_request_tokens(messages)


def test_the_fallback_on_an_inline_route_works_from_the_compaction_on() -> None:
    carrier = {
        "role": "assistant",
        "content": "Continuing.",
        RESPONSES_ITEMS_KEY: [{"type": "compaction", "encrypted_content": "gA"}],
    }
    messages = [*conversation(2), carrier, *conversation(4)]
    result = engine(responses_route()).compress(messages)
    assert result[0] == carrier  # the protected head is the provider's item
    assert not any("Step 0: port" in str(m.get("content")) for m in result[:1])
    assert len(result) < len(messages) - 5


def test_a_request_route_compacts_and_keeps_the_current_turn(replay: ReplayServer) -> None:
    route = anthropic_route(replay)
    native = engine(route)
    messages = conversation(4)
    replay.file("anthropic/message_compaction.json")
    result = native.compress(messages)
    assert result[0][ANTHROPIC_BLOCKS_KEY][0]["type"] == "compaction"
    assert result[1:] == messages[-1:]
    assert native.last_native_used and native.native_compactions == 1
    assert native.compression_count == 1 and native.last_stats.compressed
    assert "Now the refunds table" not in str(replay.last.body["messages"])


def test_an_unusable_reply_falls_back_and_the_route_is_asked_again(replay: ReplayServer) -> None:
    route = anthropic_route(replay)
    native = engine(route)
    messages = conversation(4)
    replay.file("anthropic/message_no_compaction.json")
    result = native.compress(messages)
    assert not native.last_native_used and native.last_native_error
    assert "end_turn" in native.last_native_error
    assert route.refused is None
    assert native.last_stats.compressed and ANTHROPIC_BLOCKS_KEY not in result[0]
    replay.file("anthropic/message_compaction.json")
    native.compress(messages)
    assert native.last_native_used and len(replay.requests) == 2


def test_a_compaction_that_does_not_shrink_is_not_used(replay: ReplayServer) -> None:
    route = anthropic_route(replay)
    native = engine(route)
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "next"},
    ]
    replay.file("anthropic/message_compaction.json")  # its summary is longer than "hi ok"
    native.compress(messages)
    assert not native.last_native_used
    assert native.last_native_error and "did not shrink" in native.last_native_error


def test_no_request_when_there_is_nothing_before_the_current_turn(replay: ReplayServer) -> None:
    native = engine(anthropic_route(replay))
    only_turn = [{"role": "user", "content": "do it"}, {"role": "assistant", "content": "ok"}]
    native.compress(only_turn)
    assert replay.requests == [] and native.last_native_error


def test_a_refusal_turns_the_route_off(replay: ReplayServer) -> None:
    route = anthropic_route(replay)
    native = engine(route)
    replay.file("errors/anthropic_compaction_unsupported.json", status=400)
    native.compress(conversation(4))
    assert route.refused is not None and not native.native_active
    native.compress(conversation(4))
    assert len(replay.requests) == 1
    assert native.get_status()["native_refused"] == route.refused
