"""In-place compaction through the real agent loop (issue 24): the session keeps its id, the
archived messages are found by ``session_search`` and put back by ``/undo``; ``/undo`` works
the same way in rotation mode. Only the model is scripted; the store is a real file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_helpers import answer, call, calls, compressor, history, make_agent, user
from palimpsest.agent.events import CompactionEvent
from palimpsest.config import CompressionSettings, Settings
from palimpsest.storage.archive import archived_messages, in_place_compactions
from palimpsest.storage.sessions import SessionStore
from palimpsest.usage import CanonicalUsage

MARKER = "quokkaflange"
"""A word only the early (archived) messages hold."""


def settings(in_place: bool) -> Settings:
    return Settings(compression=CompressionSettings(in_place=in_place))


def seeded() -> list[dict[str, Any]]:
    """Twelve exchanges; the third request names :data:`MARKER` (it ends in the middle)."""
    msgs = history(12)
    msgs[4] = user(f"Request 2: the {MARKER} config in parser_2.py must stay as it is.")
    return msgs


def search_reply(query: str) -> Any:
    return calls(call("session_search", {"query": query}, "s1"))


def tool_result(agent: Any, cid: str) -> dict[str, Any]:
    found = [m for m in agent.messages if m.get("tool_call_id") == cid]
    assert found, f"no result for {cid}"
    return dict(json.loads(found[-1]["content"]))


def test_an_automatic_compaction_keeps_the_session_id(tmp_path: Path) -> None:
    """After-round compaction in the turn loop: no continuation, the old rows archived."""

    def noop() -> str:
        """Does nothing."""
        return "done"

    msgs = seeded()
    over = CanonicalUsage(input_tokens=7_000, output_tokens=10, raw_usage={"x": 1})
    agent = make_agent(
        tmp_path,
        # the round reports 7,000 prompt tokens: over the 4,000-token threshold
        [calls(call("noop", {}, "n1"), usage=over), answer("noted")],
        messages=msgs,
        compressor=compressor(8_000),
        context_length=None,  # the compressor's window
        settings=settings(True),
        speculative=False,
        tools=[noop],
    )
    sid = agent.session_id
    store = agent.store
    assert store is not None and sid is not None
    events = list(agent.run("carry on"))
    done = [e for e in events if isinstance(e, CompactionEvent) and e.compacted]
    assert [e.path for e in done] == ["after_round"]
    event = done[0]
    assert event.mode == "in_place" and event.session_id == sid
    assert event.parent_session_id is None
    assert agent.session_id == sid and store.session_count() == 1
    # the live reload is the compacted list (and the answer after it), the archive is
    # everything said before the compaction
    assert store.get_messages(sid) == agent.messages
    assert agent.messages[-1]["content"] == "noted"
    assert len(agent.messages) < len(msgs)
    archived = archived_messages(store, sid)
    assert archived[: len(msgs) + 1] == [*msgs, user("carry on")]
    assert [m.get("tool_call_id") for m in archived[len(msgs) + 2 :]] == ["n1"]
    assert [c.number for c in in_place_compactions(store, sid)] == [1]


def test_session_search_finds_what_the_compaction_archived(tmp_path: Path) -> None:
    agent = make_agent(
        tmp_path,
        [search_reply(MARKER), answer("found it")],
        messages=seeded(),
        compressor=compressor(8_000),
        settings=settings(True),
        speculative=False,
    )
    sid = agent.session_id
    agent.compress()
    assert agent.session_id == sid
    agent.ask("what did I say about the config?")
    result = tool_result(agent, "s1")
    assert result["success"] and result["count"] == 1
    hit = result["results"][0]
    assert hit["session_id"] == sid
    assert MARKER in hit["preview"]


def test_rotation_leaves_the_same_text_out_of_session_search(tmp_path: Path) -> None:
    """The search gap in-place compaction closes: the parent is the caller's own lineage."""
    agent = make_agent(
        tmp_path,
        [search_reply(MARKER), answer("nothing")],
        messages=seeded(),
        compressor=compressor(8_000),
        settings=settings(False),
        speculative=False,
    )
    first = agent.session_id
    agent.compress()
    assert agent.session_id != first
    agent.ask("what did I say about the config?")
    assert tool_result(agent, "s1")["count"] == 0


@pytest.mark.parametrize("in_place", [True, False], ids=["in_place", "rotation"])
def test_undo_restores_the_pre_compaction_messages(tmp_path: Path, in_place: bool) -> None:
    msgs = seeded()
    agent = make_agent(
        tmp_path,
        ["after the compaction", "after the undo"],
        messages=msgs,
        compressor=compressor(8_000),
        settings=settings(in_place),
        speculative=False,
    )
    store = agent.store
    assert store is not None
    first = agent.session_id
    prompt = agent.system_prompt
    agent.compress()
    agent.ask("a question after the compaction")
    assert (agent.session_id == first) is in_place
    result = agent.command("/undo")
    assert result is not None and result.text.startswith("Undid the last compaction")
    said = [user("a question after the compaction"), *said_since(agent)]
    assert agent.messages == [*msgs, *said]
    assert agent.compressor.compression_count == 0
    assert agent.system_prompt == prompt
    assert agent.session_id is not None
    assert store.get_messages(agent.session_id) == agent.messages
    if in_place:
        assert agent.session_id == first and store.session_count() == 1
        assert "keeps its id" in result.text
    else:
        assert agent.session_id != first and store.session_count() == 3
    agent.ask("go on")
    assert store.get_messages(agent.session_id)[-1]["content"] == "after the undo"
    assert agent.command("/undo").text.startswith("Nothing to undo")  # type: ignore[union-attr]


def said_since(agent: Any) -> list[dict[str, Any]]:
    return [m for m in agent.messages if m.get("content") == "after the compaction"]


def test_undo_of_an_in_place_compaction_after_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    msgs = seeded()
    agent = make_agent(
        tmp_path,
        store=SessionStore(db),
        messages=msgs,
        compressor=compressor(8_000),
        settings=settings(True),
        speculative=False,
    )
    agent.compress()
    sid, compacted = agent.session_id, list(agent.messages)
    agent.close()
    agent.store.close()  # type: ignore[union-attr]
    again = make_agent(
        tmp_path,
        store=SessionStore(db),
        session_id=sid,
        compressor=compressor(8_000),
        settings=settings(True),
    )
    assert again.session_id == sid and again.messages == compacted
    assert again.compressor.compression_count == 1
    result = again.command("/undo")
    assert result is not None and "Undid" in result.text
    assert again.messages == msgs and again.compressor.compression_count == 0
    assert again.store is not None and again.store.get_messages(sid) == msgs  # type: ignore[arg-type]


def test_two_in_place_compactions_undo_one_at_a_time(tmp_path: Path) -> None:
    msgs = seeded()
    agent = make_agent(
        tmp_path,
        [],
        messages=msgs,
        compressor=compressor(8_000, protect_first_n=1, protect_last_n=2),
        settings=settings(True),
        speculative=False,
    )
    agent.compress()
    once = list(agent.messages)
    agent.messages.extend(history(8, start=20))
    agent.save()
    twice_before = list(agent.messages)
    agent.compress()
    assert agent.compressor.compression_count == 2
    agent.command("/undo")
    assert agent.messages == twice_before
    agent.command("/undo")  # no record in memory now: the store's next one
    assert agent.messages == [*msgs, *twice_before[len(once) :]]
    assert agent.store is not None and agent.session_id is not None
    assert agent.store.get_messages(agent.session_id) == agent.messages
