"""Binding to sessions: resume the lineage tip, create a given id, /new."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_helpers import (
    compressor,
    history,
    make_agent,
    stored,
)
from palimpsest.config import CompressionSettings, Settings


class TestResume:
    def test_resume_loads_history_and_prompt(self, tmp_path: Path):
        agent = make_agent(tmp_path, ["first answer"])
        agent.ask("first question")
        sid, prompt = agent.session_id, agent.system_prompt
        agent.close()
        again = make_agent(tmp_path, ["second answer"], store=agent.store, session_id=sid)
        assert again.session_id == sid and again.messages == agent.messages
        assert again.system_prompt == prompt
        again.ask("second question")
        assert len(stored(again)) == 4

    def test_unknown_session_id_creates_that_session(self, tmp_path: Path):
        agent = make_agent(tmp_path, ["x"], session_id="my-session")
        assert agent.session_id == "my-session"
        assert agent.store.get_session("my-session") is not None  # type: ignore[union-attr]

    @pytest.mark.parametrize("in_place", [False, True], ids=["rotation", "in_place"])
    def test_resume_lands_on_the_tip_after_a_compaction(self, tmp_path: Path, in_place: bool):
        mode = Settings(compression=CompressionSettings(in_place=in_place))
        agent = make_agent(
            tmp_path,
            messages=history(12),
            compressor=compressor(),
            context_length=None,
            settings=mode,
        )
        root = agent.session_id
        agent.compress()
        tip = agent.session_id
        assert (tip == root) is in_place
        again = make_agent(
            tmp_path, store=agent.store, session_id=root, compressor=compressor(), settings=mode
        )
        assert again.session_id == tip and again.messages == agent.messages
        assert again.compressor.compression_count == 1


def test_a_session_the_user_ended_is_reopened_on_resume(tmp_path: Path):
    agent = make_agent(tmp_path, ["first"])
    agent.ask("hello")
    store, sid = agent.store, agent.session_id
    assert store is not None and sid is not None
    store.end_session(sid, "user_exit")
    again = make_agent(tmp_path, ["second"], store=store, session_id=sid)
    assert store.get_session(sid)["ended_at"] is None  # type: ignore[index]
    assert again.ask("back again").text == "second" and len(store.get_messages(sid)) == 4
    assert again.turn == 2
