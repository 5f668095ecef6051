"""palimpsest.integrations.langchain: a real create_agent / create_react_agent run over 44
real turns with LangChain's own fake chat model, at a window of 8,000 tokens."""

from __future__ import annotations

import asyncio
import importlib
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import StructuredTool
from langgraph.checkpoint.memory import InMemorySaver

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
from palimpsest.integrations.langchain import PalimpsestMiddleware, pre_model_hook
from palimpsest.integrations.langchain_messages import messages_to_dicts


class ToolCallingFake(GenericFakeChatModel):
    """LangChain's GenericFakeChatModel, accepting tools as a tool-calling model does."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ToolCallingFake:
        return self


class Inputs(BaseCallbackHandler):
    """Records what the chat model was sent, through LangChain's own callbacks."""

    def __init__(self) -> None:
        self.seen: list[list[BaseMessage]] = []

    def on_chat_model_start(
        self, serialized: dict[str, Any], messages: list[list[BaseMessage]], **kwargs: Any
    ) -> None:
        self.seen.extend(list(batch) for batch in messages)


def replies(turns: Sequence[Turn]) -> list[AIMessage]:
    out = []
    for turn in turns:
        if turn.tool is not None:
            call = {"name": TOOL_NAME, "args": {"command": turn.tool.command}}
            out.append(AIMessage(turn.tool.text, tool_calls=[{**call, "id": turn.tool.call_id}]))
        out.append(AIMessage(turn.reply))
    return out


def terminal_tool(turns: Sequence[Turn]) -> StructuredTool:
    outputs = ToolOutputs(turns)

    def terminal(command: str) -> str:
        """Run a shell command."""
        return outputs(command)

    return StructuredTool.from_function(terminal, name=TOOL_NAME)


@pytest.fixture(scope="module")
def turns() -> list[Turn]:
    return conversation()


def _agent(turns: list[Turn], middleware: PalimpsestMiddleware) -> Any:
    return create_agent(
        model=ToolCallingFake(messages=iter(replies(turns))),
        tools=[terminal_tool(turns)],
        system_prompt=system_prompt(),
        middleware=[middleware],
        checkpointer=InMemorySaver(),
    )


def _check_run(inputs: Inputs, turns: list[Turn], final: list[BaseMessage]) -> None:
    check = check_inputs([messages_to_dicts(batch) for batch in inputs.seen], turns)
    assert check.summaries > 0, "no handoff summary reached the model"
    # the graph state keeps every message; only the model's view was compacted
    assert sum(isinstance(m, HumanMessage) for m in final) == len(turns)
    assert sum(isinstance(m, ToolMessage) for m in final) == sum(t.tool is not None for t in turns)


def test_create_agent_compacts_a_long_conversation_and_stores_it(
    turns: list[Turn], tmp_path: Path
) -> None:
    store = SessionStore(tmp_path / "state.db", background_upkeep=False)
    middleware = PalimpsestMiddleware(WINDOW, store=store)
    agent = _agent(turns, middleware)
    inputs = Inputs()
    config: Any = {"configurable": {"thread_id": "t1"}, "callbacks": [inputs]}
    for turn in turns:
        state = agent.invoke({"messages": [HumanMessage(turn.user)]}, config)
    _check_run(inputs, turns, state["messages"])
    # the thread lives in the store as a compression chain; the last reply is in it
    tip = middleware.keeper.session_id("t1")
    assert tip is not None
    chain = store.compression_chain(tip)
    assert len(chain) >= 2
    assert store.get_session(chain[0])["source"] == "langchain"
    assert store.get_messages(tip)[-1]["content"] == turns[-1].reply
    assert store.search_messages("marshmallow")
    store.close()


def test_the_async_agent_compacts_the_same_way(turns: list[Turn]) -> None:
    agent = _agent(turns, PalimpsestMiddleware(WINDOW))
    inputs = Inputs()
    config: Any = {"configurable": {"thread_id": "t2"}, "callbacks": [inputs]}

    async def run() -> list[BaseMessage]:
        state: dict[str, Any] = {}
        for turn in turns:
            state = await agent.ainvoke({"messages": [HumanMessage(turn.user)]}, config)
        return list(state["messages"])

    _check_run(inputs, turns, asyncio.run(run()))


def test_a_short_conversation_reaches_the_model_unchanged(turns: list[Turn]) -> None:
    agent = _agent(turns[:2], PalimpsestMiddleware(WINDOW))
    inputs = Inputs()
    config: Any = {"configurable": {"thread_id": "t3"}, "callbacks": [inputs]}
    state = agent.invoke({"messages": [HumanMessage(turns[0].user)]}, config)
    assert inputs.seen[-1] == [SystemMessage(system_prompt()), *state["messages"][:-1]]


def test_pre_model_hook_for_create_react_agent(turns: list[Turn]) -> None:
    with warnings.catch_warnings():
        # create_react_agent is deprecated in favour of create_agent (LangGraph 1.0)
        warnings.simplefilter("ignore", DeprecationWarning)
        from langgraph.prebuilt import create_react_agent

        agent = create_react_agent(
            ToolCallingFake(messages=iter(replies(turns))),
            [terminal_tool(turns)],
            prompt=system_prompt(),
            pre_model_hook=pre_model_hook(WINDOW),
            checkpointer=InMemorySaver(),
        )
    inputs = Inputs()
    config: Any = {"configurable": {"thread_id": "t4"}, "callbacks": [inputs]}
    for turn in turns:
        state = agent.invoke({"messages": [HumanMessage(turn.user)]}, config)
    _check_run(inputs, turns, state["messages"])


def test_without_the_extra_the_import_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in sys.modules if n.split(".")[0] == "langchain"]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, "palimpsest.integrations.langchain", raising=False)
    with pytest.raises(MissingDependencyError, match=r"pip install -e '\.\[langchain\]'"):
        importlib.import_module("palimpsest.integrations.langchain")
