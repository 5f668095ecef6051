"""/undo: the originals come back into the live context and the store records it."""

from __future__ import annotations

from pathlib import Path

from agent_helpers import ROTATION, compressor, history, make_agent
from palimpsest.storage.sessions import SessionStore


class TestUndo:
    def test_undo_restores_the_originals_and_records_it(self, tmp_path: Path):
        msgs = history(12)
        agent = make_agent(
            tmp_path, ["after undo"], messages=msgs, compressor=compressor(), settings=ROTATION
        )
        root = agent.session_id
        agent.compress()
        compacted = agent.session_id
        result = agent.command("/undo")
        assert result is not None and "Undid the last compaction" in result.text
        assert agent.messages == msgs
        assert agent.compressor.compression_count == 0
        store = agent.store
        assert store is not None
        assert store.get_session(compacted)["end_reason"] == "undone"  # type: ignore[index]
        restored = agent.session_id
        assert store.get_session(restored)["parent_session_id"] == root  # type: ignore[index]
        assert store.get_messages(restored) == msgs
        assert store.resume_target(root) == restored
        agent.ask("go on")
        assert store.get_messages(restored)[-1]["content"] == "after undo"
        assert agent.command("/undo").text.startswith("Nothing to undo")  # type: ignore[union-attr]

    def test_undo_keeps_what_was_said_after_the_compaction(self, tmp_path: Path):
        msgs = history(12)
        agent = make_agent(tmp_path, ["reply"], messages=msgs, compressor=compressor())
        agent.compress()
        agent.ask("a question after the compaction")
        agent.command("/undo")
        assert agent.messages[: len(msgs)] == msgs
        assert [m["content"] for m in agent.messages[len(msgs) :]] == [
            "a question after the compaction",
            "reply",
        ]

    def test_undo_after_a_restart_uses_the_store(self, tmp_path: Path):
        db = tmp_path / "state.db"
        msgs = history(12)
        agent = make_agent(tmp_path, store=SessionStore(db), messages=msgs, compressor=compressor())
        agent.compress()
        sid = agent.session_id
        agent.close()
        agent.store.close()  # type: ignore[union-attr]
        again = make_agent(
            tmp_path, store=SessionStore(db), session_id=sid, compressor=compressor()
        )
        assert again.compressor.compression_count == 1
        result = again.command("/undo")
        assert result is not None and "Undid" in result.text
        assert again.messages == msgs and again.compressor.compression_count == 0

    def test_nothing_to_undo(self, tmp_path: Path):
        agent = make_agent(tmp_path, messages=history(3))
        assert agent.command("/undo").text.startswith("Nothing to undo")  # type: ignore[union-attr]
