"""``context.engine`` picks the agent's engine; ``native`` end to end through the real SDKs.

The providers are the real ``openai`` and ``anthropic`` SDKs pointed at a replay server on
127.0.0.1 that answers in each documented shape (a Responses reply with a ``compaction``
item, an Anthropic ``compaction`` block, an error for a route that does not offer it); the
agent loop, the store, the compressor and the search are the real ones.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from palimpsest import ScriptedChatModel
from palimpsest.agent.engine_choice import configured_engine
from palimpsest.agent.events import AgentEvent, CompactionEvent, TurnEnd
from palimpsest.agent.loop import Agent
from palimpsest.compaction.compressor import ContextCompressor
from palimpsest.compaction.native import NativeCompactionEngine
from palimpsest.config import Settings
from palimpsest.errors import PluginNotFoundError
from palimpsest.messages.native import ANTHROPIC_BLOCKS_KEY, RESPONSES_ITEMS_KEY
from palimpsest.providers.anthropic_messages import COMPACTION_BETA, AnthropicChatModel
from palimpsest.providers.native_routes import AnthropicRoute, ResponsesRoute
from palimpsest.providers.openai_responses import OpenAIResponsesModel
from palimpsest.storage.search import SessionSearch
from palimpsest.storage.sessions import SessionStore
from providers_fixtures import ReplayServer, load_payload, running_server


@pytest.fixture
def replay() -> Iterator[ReplayServer]:
    yield from running_server()


def native_settings(**compression: Any) -> Settings:
    return Settings.model_validate(
        {
            "context": {"engine": "native"},
            "compression": {"protect_first_n": 1, "protect_last_n": 1, **compression},
            "memory": {"flush_before_compression": False},
        }
    )


def responses_model(server: ReplayServer) -> OpenAIResponsesModel:
    return OpenAIResponsesModel(
        "gpt-5", base_url=f"{server.url}/v1", api_key="sk-test", max_retries=0
    )


def anthropic_model(server: ReplayServer) -> AnthropicChatModel:
    return AnthropicChatModel(
        "claude-sonnet-4-6", base_url=server.url, api_key="sk-ant-test", max_retries=0
    )


def agent_for(model: Any, store: SessionStore, settings: Settings, **kwargs: Any) -> Agent:
    kwargs.setdefault("context_length", 100_000)
    return Agent(model, store=store, settings=settings, builtin_tools=False, **kwargs)


def turn(agent: Agent, text: str) -> list[AgentEvent]:
    events = list(agent.run(text))
    end = events[-1]
    assert isinstance(end, TurnEnd) and end.completed, end
    return events


def compactions(events: list[AgentEvent]) -> list[CompactionEvent]:
    return [e for e in events if isinstance(e, CompactionEvent) and e.compacted]


def big(tag: str, tokens: int) -> str:
    """A user message of about ``tokens`` tokens (4 characters each) naming ``tag``."""
    rows = "".join(f" Row {i} of {tag} needs its amount checked." for i in range(tokens // 10))
    return f"Task {tag}:{rows}"


def found(store: SessionStore, query: str) -> bool:
    """Whether ``session_search`` (as the tool runs it, from no session) finds ``query``."""
    payload = json.loads(SessionSearch(store).run(query))
    return bool(payload.get("results"))


# -- choosing the engine ---------------------------------------------------------------


def test_default_is_the_compressor_and_native_gets_the_models_route(replay: ReplayServer) -> None:
    plain = configured_engine(Settings(), ScriptedChatModel(), 50_000, {})
    assert type(plain) is ContextCompressor
    settings = native_settings()
    on_responses = configured_engine(settings, responses_model(replay), 50_000, {})
    assert isinstance(on_responses, NativeCompactionEngine)
    assert isinstance(on_responses.route, ResponsesRoute)
    on_anthropic = configured_engine(settings, anthropic_model(replay), 50_000, {})
    assert isinstance(on_anthropic, NativeCompactionEngine)
    assert isinstance(on_anthropic.route, AnthropicRoute)
    no_route = configured_engine(settings, ScriptedChatModel(), 50_000, {})
    assert isinstance(no_route, NativeCompactionEngine) and no_route.route is None


def test_an_unknown_engine_name_is_a_clear_error() -> None:
    settings = Settings.model_validate({"context": {"engine": "nonesuch"}})
    with pytest.raises(PluginNotFoundError, match="nonesuch"):
        configured_engine(settings, ScriptedChatModel(), 50_000, {})


# -- OpenAI Responses: inline compaction -------------------------------------------------


def test_responses_native_compaction_is_used_stored_and_resumed(
    replay: ReplayServer, tmp_path: Path
) -> None:
    store = SessionStore(tmp_path / "state.db")
    agent = agent_for(responses_model(replay), store, native_settings())
    engine = agent.compressor
    assert isinstance(engine, NativeCompactionEngine)
    replay.file("responses/response_plain.json")
    replay.file("responses/response_compacted.json")
    replay.file("responses/response_plain.json")
    turn(agent, "The refunds ledger keeps amounts in integer cents.")
    first = replay.last.body
    assert first["context_management"] == [
        {"type": "compaction", "compact_threshold": engine.native_threshold_tokens}
    ]
    assert engine.native_threshold_tokens == engine.threshold_tokens - 4_000
    turn(agent, "Go on with the migration.")
    events = turn(agent, "And the refunds table?")
    assert not compactions(events)  # the provider compacted; the compressor did not
    sent = replay.last.body["input"]
    assert sent[0]["role"] == "system"
    assert sent[1] == load_payload("responses/response_compacted.json")["output"][0]
    assert not any("integer cents" in json.dumps(item) for item in sent)

    # stored with the session: the original text and the compaction item both
    kept = store.get_messages(agent.session_id or "")
    assert kept[0]["content"] == "The refunds ledger keeps amounts in integer cents."
    carrier = [m for m in kept if RESPONSES_ITEMS_KEY in m]
    assert carrier[0][RESPONSES_ITEMS_KEY][0]["encrypted_content"].startswith("gAAAA")
    assert found(store, "integer cents")

    # a new agent on the same store and session continues from the stored item
    replay.file("responses/response_plain.json")
    resumed = agent_for(
        responses_model(replay), store, native_settings(), session_id=agent.session_id
    )
    turn(resumed, "Continue.")
    sent = replay.last.body["input"]
    assert sent[1]["type"] == "compaction"
    assert sent[1]["encrypted_content"] == "gAAAAABo-opaque-compaction-state"
    assert sent[-1] == {"role": "user", "content": "Continue."}
    assert not any("integer cents" in json.dumps(item) for item in sent)


def test_responses_route_that_refuses_falls_back_to_the_compressor(
    replay: ReplayServer, tmp_path: Path
) -> None:
    store = SessionStore(tmp_path / "state.db")
    settings = native_settings(threshold=0.5, native_margin_tokens=500)
    agent = agent_for(responses_model(replay), store, settings, context_length=8_000)
    engine = agent.compressor
    assert isinstance(engine, NativeCompactionEngine) and engine.route is not None
    size = int(engine.threshold_tokens * 0.3)
    replay.file("errors/openai_context_management_unsupported.json", status=400)
    for _ in range(4):
        replay.file("responses/response_plain.json")
    turn(agent, big("alpha", size))
    assert engine.route.refused is not None
    assert "context_management" not in replay.last.body  # sent again without it
    turn(agent, big("beta", size))
    turn(agent, big("gamma", size))
    events = turn(agent, big("delta", size))
    done = compactions(events)
    assert len(done) == 1 and done[0].path == "preflight"
    assert engine.native_compactions == 0
    assert len(replay.requests) == 5
    assert all("context_management" not in r.body for r in replay.requests[1:])
    assert found(store, "alpha")


# -- Anthropic Messages: compaction on request --------------------------------------------


def test_anthropic_native_compaction_is_used_stored_and_resumed(
    replay: ReplayServer, tmp_path: Path
) -> None:
    store = SessionStore(tmp_path / "state.db")
    settings = native_settings(threshold=0.5, in_place=False)  # the rotation case
    agent = agent_for(anthropic_model(replay), store, settings, context_length=8_000)
    engine = agent.compressor
    assert isinstance(engine, NativeCompactionEngine)
    size = int(engine.threshold_tokens * 0.3)
    for _ in range(3):
        replay.file("anthropic/message_text.json")
    replay.file("anthropic/message_compaction.json")
    replay.file("anthropic/message_text.json")
    turn(agent, big("alpha", size))
    turn(agent, big("beta", size))
    turn(agent, big("gamma", size))
    first_session = agent.session_id
    events = turn(agent, big("delta", size))

    done = compactions(events)
    assert len(done) == 1 and engine.native_compactions == 1 and engine.last_native_used
    compaction_request, main = replay.requests[3], replay.requests[4]
    assert compaction_request.body["compaction"] == {"type": "summarize"}
    assert COMPACTION_BETA in compaction_request.headers["anthropic-beta"]
    assert "Task alpha" in json.dumps(compaction_request.body["messages"])
    assert "Task delta" not in json.dumps(compaction_request.body["messages"])
    block = load_payload("anthropic/message_compaction.json")["content"][0]
    first = main.body["messages"][0]
    assert first["role"] == "assistant"
    assert {k: v for k, v in first["content"][0].items() if k != "cache_control"} == block
    assert "Task alpha" not in json.dumps(main.body["messages"])
    assert "Task delta" in json.dumps(main.body["messages"])
    assert COMPACTION_BETA in main.headers["anthropic-beta"]

    # the continuation holds the block; the parent keeps the originals, still searchable
    assert agent.session_id != first_session
    kept = store.get_messages(agent.session_id or "")
    assert kept[0][ANTHROPIC_BLOCKS_KEY] == [block]
    assert "Task alpha" in store.get_messages(first_session or "")[0]["content"]
    assert found(store, "alpha")

    replay.file("anthropic/message_text.json")
    resumed = agent_for(
        anthropic_model(replay), store, settings, context_length=8_000, session_id=agent.session_id
    )
    turn(resumed, "Continue.")
    again = replay.last.body["messages"]
    assert again[0]["content"][0]["type"] == "compaction"
    assert again[0]["content"][0]["signature"] == block["signature"]
    assert "Task alpha" not in json.dumps(again)


def test_anthropic_route_that_refuses_falls_back_and_is_not_asked_again(
    replay: ReplayServer, tmp_path: Path
) -> None:
    store = SessionStore(tmp_path / "state.db")
    settings = native_settings(threshold=0.5)
    agent = agent_for(anthropic_model(replay), store, settings, context_length=8_000)
    engine = agent.compressor
    assert isinstance(engine, NativeCompactionEngine) and engine.route is not None
    size = int(engine.threshold_tokens * 0.3)
    for _ in range(3):
        replay.file("anthropic/message_text.json")
    replay.file("errors/anthropic_compaction_unsupported.json", status=400)
    replay.file("anthropic/message_text.json")
    turn(agent, big("alpha", size))
    turn(agent, big("beta", size))
    turn(agent, big("gamma", size))
    events = turn(agent, big("delta", size))
    done = compactions(events)
    assert len(done) == 1 and engine.native_compactions == 0
    assert engine.route.refused is not None and engine.last_native_error
    assert "compaction" in replay.requests[3].body
    main = replay.requests[4].body["messages"]
    assert not any(
        isinstance(b, dict) and b.get("type") == "compaction"
        for m in main
        for b in (m["content"] if isinstance(m["content"], list) else [])
    )
    # the next compaction goes straight to the compressor: no second compaction request
    for _ in range(3):
        replay.file("anthropic/message_text.json")
    for tag in ("epsilon", "zeta", "eta"):
        turn(agent, big(tag, size))
    assert engine.compression_count >= 2
    assert len(replay.requests) == 8
    assert not any("compaction" in (r.body or {}) for r in replay.requests[4:])
    assert found(store, "alpha")
