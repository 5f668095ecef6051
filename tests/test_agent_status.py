"""Pull-based context status: real or estimated, never an unknown shown as zero."""

from __future__ import annotations

from pathlib import Path

from agent_helpers import answer, make_agent
from palimpsest.agent.status import render_status


def test_status_before_any_call_is_an_estimate(tmp_path: Path):
    agent = make_agent(tmp_path)
    status = agent.context_status()
    assert status["estimated"] is True and status["tokens"] > 0
    assert status["context_length"] == 100_000 and status["threshold_tokens"] == 64_000
    assert status["compactions"] == 0 and status["session_id"] == agent.session_id


def test_status_right_after_a_call_is_the_providers_figure(tmp_path: Path):
    agent = make_agent(tmp_path, [answer("a", prompt=5_000)])
    agent.ask("q")
    agent.last_request_len = len(agent.messages)  # as if the answer were already counted
    status = agent.context_status()
    assert status["tokens"] == 5_000 and status["estimated"] is False
    assert status["percent_of_window"] == 5.0
    text = render_status(status)
    assert (
        "Context: 5,000 / 100,000 tokens in the next request (messages, system prompt and tool schemas; 5.0% of the window, reported by the provider)"
        in text
    )
