"""The agent's window and threshold with their sources, through the real loop and store."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from agent_helpers import answer, history, make_agent
from palimpsest import ScriptedChatModel
from palimpsest.agent.events import CompactionEvent, WarningEvent
from palimpsest.agent.status import render_status
from palimpsest.compaction.window import PROBES
from palimpsest.config import settings_from_dict
from palimpsest.errors import ConfigError, ContextOverflowError

_names = itertools.count()


def _compactions(events: list[Any]) -> list[CompactionEvent]:
    return [e for e in events if isinstance(e, CompactionEvent) and e.compacted]


def test_a_model_threshold_override_changes_when_compaction_fires(tmp_path: Path) -> None:
    # ~9K tokens of history on a 40K window: under the default trigger (0.5, floored to
    # 85% of a small window), over the 0.2 the table gives this model.
    seeded = history(20, chars=1_800)
    plain = make_agent(
        tmp_path / "a",
        [answer("ok")],
        messages=seeded,
        context_length=40_000,
        settings=settings_from_dict({}),
    )
    events = list(plain.run("next"))
    assert not _compactions(events)
    assert plain.context_status()["threshold_source"] == "default"

    tuned = settings_from_dict(
        {"compression": {"model_thresholds": {"scripted": 0.5, "scripted-big": 0.2}}}
    )
    model = ScriptedChatModel([answer("ok")], model="scripted-big-1")
    agent = make_agent(
        tmp_path / "b", messages=seeded, context_length=40_000, settings=tuned, model=model
    )
    assert agent.compressor.threshold_tokens == 8_000
    events = list(agent.run("next"))
    assert [e.path for e in _compactions(events)] == ["preflight"]
    status = agent.context_status()
    assert status["threshold_source"] == "compression.model_thresholds['scripted-big']"
    assert status["window_source"] == "caller"
    text = render_status(status)
    assert "Window: 40,000 tokens, from caller" in text
    assert "threshold ratio from compression.model_thresholds['scripted-big']" in text


def test_the_window_source_is_configured_or_the_providers(tmp_path: Path) -> None:
    configured = settings_from_dict({"model": {"context_length": 50_000}})
    agent = make_agent(tmp_path / "a", context_length=None, settings=configured)
    assert agent.context_status()["window_source"] == "configured (model.context_length)"

    class Listed(ScriptedChatModel):
        provider = "local"
        base_url = "http://127.0.0.1:1/v1"

        def probe_context_length(self) -> int:
            return 32_768

    model = Listed(model=f"listed-{next(_names)}")
    agent = make_agent(
        tmp_path / "b", context_length=None, model=model, settings=settings_from_dict({})
    )
    assert agent.context_length == 32_768
    assert agent.context_status()["window_source"] == "provider"


def test_a_failed_probe_is_not_retried_for_every_agent(tmp_path: Path) -> None:
    asked: list[int] = []

    class Unlisted(ScriptedChatModel):
        provider = "local"

        def probe_context_length(self) -> int:
            asked.append(1)
            raise OSError("this server has no model list")

    name = f"unlisted-{next(_names)}"
    for attempt in range(3):
        with pytest.raises(ConfigError, match="context length"):
            make_agent(
                tmp_path / str(attempt),
                context_length=None,
                model=Unlisted(model=name),
                settings=settings_from_dict({}),
            )
    assert asked == [1]  # cooled down after the first failure
    assert PROBES.cooling_down(f"local::{name}")


def test_an_overflow_error_becomes_the_windows_source(tmp_path: Path) -> None:
    model = ScriptedChatModel(
        [ContextOverflowError("prompt is too long", limit=60_000), answer("done")]
    )
    agent = make_agent(
        tmp_path,
        messages=history(12, chars=1_500),
        model=model,
        context_length=100_000,
        settings=settings_from_dict({}),
    )
    events = list(agent.run("go on"))
    assert any(isinstance(e, WarningEvent) and e.code == "context_reduced" for e in events)
    status = agent.context_status()
    assert status["context_length"] == 60_000
    assert status["window_source"].startswith("overflow (the provider's overflow error said 60,000")
