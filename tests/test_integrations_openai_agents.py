"""palimpsest.integrations.openai_agents: the Agents SDK Runner with a fake Model over 44
real turns, and the Session driven directly, at a window of 8,000 tokens."""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, ModelSettings, RunConfig, Runner, function_tool
from agents.items import ModelResponse, TResponseInputItem
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from cli_run import run_cli
from integration_script import (
    TOOL_NAME,
    WINDOW,
    ToolOutputs,
    Turn,
    check_inputs,
    conversation,
    exact_counter,
    system_prompt,
)
from palimpsest import (
    MissingDependencyError,
    SessionStore,
    is_compaction_summary_message,
    validate_transcript,
)
from palimpsest.integrations.openai_agents import PalimpsestSession
from palimpsest.integrations.openai_agents_items import items_to_dicts


def _message(text: str, n: int) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id=f"msg_{n}",
        content=[ResponseOutputText(text=text, type="output_text", annotations=[])],
        role="assistant",
        status="completed",
        type="message",
    )


class ReplayModel(Model):
    """A fake Model answering each turn as the transcript did; it records every input."""

    def __init__(self, turns: Sequence[Turn], *, response_ids: bool = False) -> None:
        self.response_ids = response_ids
        self.turns = list(turns)
        self.turn = -1
        self.seen: list[tuple[str | None, list[Any]]] = []

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: ModelSettings,
        tools: list[Any],
        output_schema: Any,
        handoffs: list[Any],
        tracing: Any,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: Any,
    ) -> ModelResponse:
        items = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        self.seen.append((system_instructions, items))
        n = len(self.seen)
        if items[-1].get("type") == "function_call_output":
            output: list[Any] = [_message(self.turns[self.turn].reply, n)]
        else:
            self.turn += 1
            turn = self.turns[self.turn]
            output = [_message(turn.reply if turn.tool is None else turn.tool.text, n)]
            if turn.tool is not None:
                arguments = json.dumps({"command": turn.tool.command})
                output.append(
                    ResponseFunctionToolCall(
                        arguments=arguments,
                        call_id=turn.tool.call_id,
                        name=TOOL_NAME,
                        type="function_call",
                        id=f"fc_{n}",
                    )
                )
        response_id = f"resp_{n}" if self.response_ids else None
        return ModelResponse(output=output, usage=Usage(), response_id=response_id)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the tests run without streaming")


def _agent(turns: Sequence[Turn], *, response_ids: bool = False) -> tuple[Agent[Any], ReplayModel]:
    model = ReplayModel(turns, response_ids=response_ids)
    outputs = ToolOutputs(turns)

    @function_tool(name_override=TOOL_NAME)
    def terminal(command: str) -> str:
        """Run a shell command."""
        return outputs(command)

    return Agent(name="replay", instructions=system_prompt(), model=model, tools=[terminal]), model


def _model_inputs(model: ReplayModel) -> list[list[dict[str, Any]]]:
    return [
        [{"role": "system", "content": system or ""}, *items_to_dicts(items)]
        for system, items in model.seen
    ]


@pytest.fixture(scope="module")
def turns() -> list[Turn]:
    return conversation()


def test_the_runner_with_the_session_stays_inside_the_window(
    turns: list[Turn], tmp_path: Path
) -> None:
    store = SessionStore(tmp_path / "state.db", background_upkeep=False)
    session = PalimpsestSession("agents-run", context_length=WINDOW, store=store)
    agent, model = _agent(turns)
    config = RunConfig(
        call_model_input_filter=session.call_model_input_filter, tracing_disabled=True
    )

    async def run() -> str:
        output = ""
        for turn in turns:
            result = await Runner.run(agent, turn.user, session=session, run_config=config)
            output = result.final_output
        return output

    assert asyncio.run(run()) == turns[-1].reply
    check = check_inputs(_model_inputs(model), turns)
    assert check.summaries > 0
    chain = store.compression_chain(store.get_compression_tip("agents-run"))
    assert chain[0] == "agents-run" and len(chain) >= 2
    assert store.get_session("agents-run")["source"] == "openai-agents"
    assert store.get_messages(chain[-1])[-1]["content"] == turns[-1].reply
    assert store.search_messages("marshmallow")
    store.close()


class CountingSession(PalimpsestSession):
    """Counts the SDK's calls of the compaction hook."""

    hook_calls: list[dict[str, Any]]

    async def run_compaction(self, args: Any = None) -> None:
        self.hook_calls = [*getattr(self, "hook_calls", []), dict(args or {})]
        await super().run_compaction(args)


def test_the_runner_calls_the_compaction_hook(turns: list[Turn], tmp_path: Path) -> None:
    """With response ids (as the Responses API gives), the SDK asks the session to compact
    after each turn: our compressor answers."""
    store = SessionStore(tmp_path / "state.db", background_upkeep=False)
    session = CountingSession("hooked", context_length=WINDOW, store=store)
    agent, model = _agent(turns, response_ids=True)
    config = RunConfig(
        call_model_input_filter=session.call_model_input_filter, tracing_disabled=True
    )

    async def run() -> None:
        for turn in turns:
            await Runner.run(agent, turn.user, session=session, run_config=config)

    asyncio.run(run())
    assert len(session.hook_calls) == len(turns)
    assert check_inputs(_model_inputs(model), turns).summaries > 0
    assert len(store.compression_chain("hooked")) >= 2
    store.close()


def _turn_items(turn: Turn, n: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [{"role": "user", "content": turn.user}]
    if turn.tool is not None:
        items.append(_message(turn.tool.text, n).model_dump(mode="json"))
        items.append(
            {
                "type": "function_call",
                "call_id": turn.tool.call_id,
                "name": TOOL_NAME,
                "arguments": json.dumps({"command": turn.tool.command}),
            }
        )
        items.append(
            {
                "type": "function_call_output",
                "call_id": turn.tool.call_id,
                "output": turn.tool.output,
            }
        )
    items.append(_message(turn.reply, n).model_dump(mode="json"))
    return items


def test_the_session_driven_directly_returns_what_fits(turns: list[Turn], tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "state.db", background_upkeep=False)
    session = PalimpsestSession("direct", context_length=WINDOW, store=store)
    counter = exact_counter()
    added: list[dict[str, Any]] = []
    summaries = 0

    async def drive() -> None:
        nonlocal summaries
        compacted = False
        for n, turn in enumerate(turns):
            items = _turn_items(turn, n)
            await session.add_items(items)
            added.extend(items)
            got = await session.get_items()
            dicts = items_to_dicts(got)
            assert counter.count_messages(dicts) < WINDOW
            assert got[-len(items) :] == items or turn.tool is not None
            if not compacted and got != added:
                compacted = True
            if not compacted:
                # nothing compacted yet: the items come back exactly as added
                assert got == added
            validate_transcript(dicts, strict=True)
            summaries += any(is_compaction_summary_message(d) for d in dicts)
        assert compacted

    asyncio.run(drive())
    assert summaries > 0
    assert len(store.compression_chain(store.get_compression_tip("direct"))) >= 2
    store.close()


def test_pop_limit_clear_and_forced_compaction(turns: list[Turn], tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "state.db", background_upkeep=False)
    session = PalimpsestSession("small", context_length=WINDOW, store=store)
    items = [item for n, turn in enumerate(turns[:6]) for item in _turn_items(turn, n)]

    async def drive() -> None:
        await session.add_items(items)
        assert await session.get_items(limit=2) == items[-2:]
        # the last tool turn's assistant message and call share one stored message
        assert await session.pop_item() == items[-1]
        assert await session.get_items() == items[:-1]
        await session.run_compaction({"force": True})
        after = await session.get_items()
        assert len(after) < len(items) - 1
        assert after[-1] == items[-2]
        await session.clear_session()
        assert await session.get_items() == []
        assert await session.pop_item() is None

    asyncio.run(drive())
    assert store.search_messages("marshmallow")
    store.close()


def test_without_the_extra_the_import_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in sys.modules if n.split(".")[0] == "agents"]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, "palimpsest.integrations.openai_agents", raising=False)
    with pytest.raises(MissingDependencyError, match=r"pip install -e '\.\[openai-agents\]'"):
        importlib.import_module("palimpsest.integrations.openai_agents")


def test_palimpsest_sessions_search_finds_the_conversation(turns: list[Turn]) -> None:
    """The default store is the one the command line reads."""
    session = PalimpsestSession("cli-visible", context_length=WINDOW)
    asyncio.run(session.add_items(_turn_items(turns[0], 0)))
    session.close()
    done = run_cli("sessions", "search", "--source", "openai-agents", "--json", "CSAW")
    assert done.returncode == 0, done.stderr
    hits = json.loads(done.stdout)
    assert hits and {hit["session_id"] for hit in hits} == {"cli-visible"}
