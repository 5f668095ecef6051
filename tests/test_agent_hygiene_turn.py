"""The gateway turn helpers: answering a delivered message once, and AL-38's check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_helpers import history
from palimpsest import ScriptedChatModel, SessionStore
from palimpsest.agent.hygiene import GatewayHygiene
from palimpsest.agent.hygiene_turn import (
    CONTEXT_ERROR_MESSAGE,
    detach_pending,
    is_context_error,
)
from palimpsest.agent.loop import Agent
from palimpsest.errors import ContextOverflowError, ProviderError


def _agent(store: SessionStore, session_id: str, replies: list[str]) -> Agent:
    return Agent(
        ScriptedChatModel(replies),
        store=store,
        session_id=session_id,
        context_length=32_000,
        builtin_tools=False,
    )


class TestDetachPending:
    def test_the_delivered_message_is_answered_and_stored_once(self, tmp_path: Path) -> None:
        with SessionStore(tmp_path / "state.db") as store:
            store.create_session("chat", source="gateway")
            store.append_messages("chat", history(3))
            gate = GatewayHygiene(store, model=ScriptedChatModel([]), context_length=32_000)
            result = gate.deliver("chat", "what changed?")
            agent = _agent(store, result.session_id, ["nothing yet"])
            text = detach_pending(agent)
            assert text == "what changed?"
            assert agent.ask(text).text == "nothing yet"
            agent.close()
            stored = store.get_messages(result.session_id)
            assert [m["content"] for m in stored].count("what changed?") == 1
            assert stored[-2] == {"role": "user", "content": "what changed?"}
            assert stored[-1]["role"] == "assistant" and stored[-1]["content"] == "nothing yet"

    def test_nothing_pending_after_an_answer(self, tmp_path: Path) -> None:
        with SessionStore(tmp_path / "state.db") as store:
            store.create_session("chat", source="gateway")
            store.append_messages("chat", history(2))
            agent = _agent(store, "chat", [])
            assert detach_pending(agent) is None
            assert len(agent.messages) == 4

    def test_an_unstored_message_stays(self, tmp_path: Path) -> None:
        agent = Agent(ScriptedChatModel([]), context_length=32_000, builtin_tools=False)
        agent.messages.append({"role": "user", "content": "not stored"})
        assert detach_pending(agent) is None
        assert agent.messages[-1]["content"] == "not stored"


@pytest.mark.parametrize(
    ("error", "history_len", "expected"),
    [
        (ContextOverflowError("prompt is too long"), 3, True),
        ("This model's maximum context length is 8192", 3, True),
        ("Request payload size exceeds the limit", 3, True),
        ("too many tokens in the request", 3, True),
        ("Request too large for gpt-4o", 3, True),
        ("input too long", 3, True),
        (ProviderError("Bad Request", status_code=400), 51, True),
        (ProviderError("Bad Request", status_code=400), 50, False),
        ("HTTP 400 Bad Request", 80, True),
        ("HTTP 400 Bad Request", 10, False),
        (ProviderError("Entity", status_code=413), 2, True),
        (ProviderError("Invalid API key", status_code=401), 200, False),
        ("connection reset by peer", 200, False),
    ],
)
def test_is_context_error(error: Any, history_len: int, expected: bool) -> None:
    assert is_context_error(error, history_len) is expected


def test_context_error_message_names_the_fixes() -> None:
    assert "/compress" in CONTEXT_ERROR_MESSAGE and "/reset" in CONTEXT_ERROR_MESSAGE
