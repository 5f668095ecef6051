"""palimpsest.integrations.pydantic_ai: a real pydantic-ai Agent run over 44 real turns with
pydantic-ai's own FunctionModel, at a window of 8,000 tokens."""

from __future__ import annotations

import asyncio
import importlib
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from integration_script import (
    TOOL_NAME,
    WINDOW,
    ToolOutputs,
    Turn,
    check_inputs,
    conversation,
    system_prompt,
)
from palimpsest import MissingDependencyError, SessionStore
from palimpsest.integrations.pydantic_ai import PalimpsestHistory, history_processor
from palimpsest.integrations.pydantic_ai_messages import messages_to_dicts


class Replayer:
    """The FunctionModel's function: answers each turn as the transcript did, and records
    every list of messages the model was given."""

    def __init__(self, turns: Sequence[Turn]) -> None:
        self.turns = list(turns)
        self.turn = -1
        self.seen: list[list[ModelMessage]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append(list(messages))
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        if any(isinstance(p, ToolReturnPart) for p in last.parts):
            return ModelResponse(parts=[TextPart(self.turns[self.turn].reply)])
        self.turn += 1
        turn = self.turns[self.turn]
        if turn.tool is None:
            return ModelResponse(parts=[TextPart(turn.reply)])
        call = ToolCallPart(TOOL_NAME, {"command": turn.tool.command}, turn.tool.call_id)
        return ModelResponse(parts=[TextPart(turn.tool.text), call])


def _agent(
    turns: Sequence[Turn], processor: PalimpsestHistory
) -> tuple[Agent[None, str], Replayer]:
    replayer = Replayer(turns)
    agent = Agent(
        FunctionModel(replayer),
        system_prompt=system_prompt(),
        capabilities=[ProcessHistory(processor)],
    )
    outputs = ToolOutputs(turns)

    @agent.tool_plain(name=TOOL_NAME)
    def terminal(command: str) -> str:
        """Run a shell command."""
        return outputs(command)

    return agent, replayer


@pytest.fixture(scope="module")
def turns() -> list[Turn]:
    return conversation()


@pytest.fixture
def event_loop_for_run_sync() -> Iterator[None]:
    """``run_sync`` runs on the thread's current event loop and leaves it open: give it one
    this test closes (an unclosed loop is a ResourceWarning, an error here)."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    yield
    loop.close()
    asyncio.set_event_loop(None)


@pytest.mark.usefixtures("event_loop_for_run_sync")
def test_an_agent_run_compacts_a_long_conversation_and_stores_it(
    turns: list[Turn], tmp_path: Path
) -> None:
    store = SessionStore(tmp_path / "state.db", background_upkeep=False)
    processor = history_processor(WINDOW, store=store, session_id="pydantic-run")
    agent, replayer = _agent(turns, processor)
    history: list[ModelMessage] = []
    for turn in turns:
        result = agent.run_sync(turn.user, message_history=history)
        history = result.all_messages()
    processor.record(history)
    check = check_inputs([messages_to_dicts(m) for m in replayer.seen], turns)
    assert check.summaries > 0
    assert result.output == turns[-1].reply
    chain = store.compression_chain(processor.keeper.session_id() or "")
    assert chain[0] == "pydantic-run" and len(chain) >= 2
    assert store.get_session(chain[0])["source"] == "pydantic-ai"
    assert store.get_messages(chain[-1])[-1]["content"] == turns[-1].reply
    assert store.search_messages("marshmallow")
    store.close()


def test_the_async_run_compacts_the_same_way(turns: list[Turn]) -> None:
    agent, replayer = _agent(turns, history_processor(WINDOW))

    async def run() -> None:
        history: list[ModelMessage] = []
        for turn in turns:
            result = await agent.run(turn.user, message_history=history)
            history = result.all_messages()

    asyncio.run(run())
    assert check_inputs([messages_to_dicts(m) for m in replayer.seen], turns).summaries > 0


@pytest.mark.usefixtures("event_loop_for_run_sync")
def test_a_short_history_reaches_the_model_as_it_is(turns: list[Turn]) -> None:
    agent, replayer = _agent(turns[:1], history_processor(WINDOW))
    result = agent.run_sync(turns[0].user)
    assert replayer.seen[0] == result.all_messages()[:1]


def test_without_the_extra_the_import_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in sys.modules if n.split(".")[0] == "pydantic_ai"]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, "palimpsest.integrations.pydantic_ai", raising=False)
    with pytest.raises(MissingDependencyError, match=r"pip install -e '\.\[pydantic-ai\]'"):
        importlib.import_module("palimpsest.integrations.pydantic_ai")
