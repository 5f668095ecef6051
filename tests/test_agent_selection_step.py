"""select_context through the real loop: it changes only the request, and fails open."""

from __future__ import annotations

import copy
import logging
from pathlib import Path
from typing import Any

import pytest

from agent_helpers import answer, history, make_agent, stored
from palimpsest import ScriptedChatModel
from palimpsest.agent.events import TurnEnd, WarningEvent
from palimpsest.compaction.compressor import ContextCompressor
from palimpsest.config import settings_from_dict
from palimpsest.tokens import estimate_messages_tokens_rough


class LastTurnOnly(ContextCompressor):
    """A topic-routing engine: each request carries only the user's newest message."""

    def __init__(self, context_length: int, *, fail: bool = False) -> None:
        super().__init__(context_length, quiet_mode=True)
        self.fail = fail
        self.seen: list[dict[str, Any]] = []

    def select_context(  # type: ignore[override]
        self,
        request_messages: list[dict[str, Any]],
        *,
        conversation_messages: list[dict[str, Any]],
        incoming_message: str,
        budget_tokens: int,
    ) -> list[dict[str, Any]] | None:
        self.seen.append(
            {"incoming": incoming_message, "budget": budget_tokens, "n": len(conversation_messages)}
        )
        conversation_messages.clear()  # copies: the agent's history must not notice
        request_messages[0]["content"] = "tampered"
        if self.fail:
            raise RuntimeError("the retrieval index is down")
        return [m for m in request_messages if m.get("content") == incoming_message]


def test_select_context_changes_only_the_request(tmp_path: Path) -> None:
    model = ScriptedChatModel([answer("short answer")])
    engine = LastTurnOnly(100_000)
    agent = make_agent(
        tmp_path,
        messages=history(6),
        model=model,
        compressor=engine,
        settings=settings_from_dict({}),
    )
    prompt = agent.system_prompt
    before = copy.deepcopy(agent.messages)
    end = agent.ask("what is in parser_9.py?")
    assert end.completed and end.text == "short answer"
    sent = model.calls[0][0]
    assert sent == [
        {"role": "system", "content": prompt},
        {"role": "user", "content": "what is in parser_9.py?"},
    ]
    assert engine.seen[0]["incoming"] == "what is in parser_9.py?"
    assert engine.seen[0]["n"] == len(before) + 1
    assert 0 < engine.seen[0]["budget"] < engine.threshold_tokens
    # the stored conversation, the live history and the cached prompt are untouched
    assert agent.system_prompt == prompt
    assert agent.messages[: len(before)] == before
    assert [m["content"] for m in agent.messages[len(before) :]] == [
        "what is in parser_9.py?",
        "short answer",
    ]
    assert [m["content"] for m in stored(agent)] == [m["content"] for m in agent.messages]


def test_an_engine_that_raises_is_ignored_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedChatModel([answer("answered anyway")])
    agent = make_agent(
        tmp_path,
        messages=history(3),
        model=model,
        compressor=LastTurnOnly(100_000, fail=True),
        settings=settings_from_dict({}),
    )
    with caplog.at_level(logging.WARNING, logger="palimpsest.agent"):
        events = list(agent.run("hello"))
    warnings = [e for e in events if isinstance(e, WarningEvent)]
    assert [w.code for w in warnings] == ["context_selection_failed"]
    assert "the retrieval index is down" in warnings[0].message
    assert "context selection by engine compressor ignored" in caplog.text
    end = events[-1]
    assert isinstance(end, TurnEnd) and end.completed and end.text == "answered anyway"
    sent = model.calls[0][0]
    assert sent[0]["content"] == agent.system_prompt
    assert len(sent) == 1 + 6 + 1  # the request as built: system, history, the new message


def test_usage_is_calibrated_against_the_request_sent(tmp_path: Path) -> None:
    # The provider counts the selected request (small); the agent must compare that count
    # with the selection's size, not the whole history's, or calibration learns 0.5x (the
    # floor) and every later estimate of the full history is halved.
    def counted(messages: list[dict[str, Any]]) -> Any:
        return answer("ok", prompt=estimate_messages_tokens_rough(messages) + 40)

    model = ScriptedChatModel([counted, counted])
    agent = make_agent(
        tmp_path,
        messages=history(20, chars=1_500),
        model=model,
        compressor=LastTurnOnly(100_000),
        settings=settings_from_dict({}),
        builtin_tools=False,
    )
    agent.ask("one " * 600)
    agent.ask("two " * 600)
    assert 0.8 < agent.usage.calibrator.factor(agent.model_name) < 1.5
