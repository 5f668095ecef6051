"""The write pointer and the durable compaction guards (CC-22) on a real store file."""

from __future__ import annotations

import time
from pathlib import Path

from agent_helpers import asst, compressor, user
from palimpsest.agent.persistence import (
    GuardState,
    SessionWriter,
    apply_guards,
    engine_guards,
    load_guards,
    read_guards,
    save_guards,
)
from palimpsest.storage.sessions import SessionStore


def test_writer_stores_each_message_once_and_retries_after_a_failure(tmp_path: Path):
    store = SessionStore(tmp_path / "s.db")
    writer = SessionWriter(store, "missing")  # no such session: the store refuses
    messages = [user("a"), asst("b")]
    assert writer.save(messages) is False and writer.persisted == 0
    assert writer.last_error is not None
    store.create_session("missing")
    messages.append(user("c"))
    assert writer.save(messages) is True and writer.persisted == 3
    assert writer.save(messages) is True
    assert store.get_messages("missing") == messages


def test_writer_without_a_store_only_moves_the_pointer():
    writer = SessionWriter(None, None)
    assert writer.save([user("a")]) and writer.persisted == 1


def test_guards_round_trip_including_a_running_cooldown(tmp_path: Path):
    store = SessionStore(tmp_path / "s.db")
    sid = store.create_session()
    engine = compressor()
    engine.ineffective_compression_count = 2
    engine.fallback_streak = 1
    engine.summary_failure_cooldown_until = engine._clock() + 45
    engine.summary_failure_error = "boom"
    saved = save_guards(store, sid, engine, None)
    assert saved is not None and saved.ineffective == 2 and saved.error == "boom"
    row = read_guards(store, sid)
    assert row is not None and row.fallback_streak == 1
    # stored to the millisecond: read back at once it may be up to 0.5 ms past 45 s
    assert row.cooldown_until is not None and 40 < row.cooldown_until - time.time() <= 45.001

    fresh = compressor()
    load_guards(store, sid, fresh)
    assert fresh.ineffective_compression_count == 2 and fresh.fallback_streak == 1
    assert 40 < fresh.cooldown_remaining() <= 45.001
    assert fresh.should_compress_info(10**9)[1] is not None  # blocked after the "restart"


def test_guards_are_written_only_on_change(tmp_path: Path):
    statements: list[str] = []
    store = SessionStore(tmp_path / "s.db", tracer=lambda sql, _: statements.append(sql))
    sid = store.create_session()
    engine = compressor()
    assert save_guards(store, sid, engine, None) is None  # default state: nothing to write
    engine.ineffective_compression_count = 1
    state = save_guards(store, sid, engine, None)
    writes = [s for s in statements if "compression_ineffective_count = ?" in s]
    assert len(writes) == 1
    assert save_guards(store, sid, engine, state) is state
    assert len([s for s in statements if "compression_ineffective_count = ?" in s]) == 1


def test_an_empty_row_does_not_clear_a_running_local_cooldown():
    engine = compressor()
    engine.summary_failure_cooldown_until = engine._clock() + 30
    apply_guards(engine, GuardState())
    assert engine.cooldown_remaining() > 25


def test_continuations_inherit_the_guards(tmp_path: Path):
    store = SessionStore(tmp_path / "s.db")
    sid = store.create_session()
    engine = compressor()
    engine.fallback_streak = 2
    save_guards(store, sid, engine, None)
    child = store.start_continuation(sid, messages=[user("x")])
    inherited = read_guards(store, child)
    assert inherited is not None and inherited.fallback_streak == 2
    state = engine_guards(engine)
    assert state is not None and state.fallback_streak == 2


def test_the_ledger_and_the_todos_survive_a_restart_and_a_compaction(tmp_path: Path):
    """What the agent knows by code (files changed, tasks) comes back when the session is
    resumed, also from the continuation a compaction started."""
    from agent_helpers import call, calls, history, make_agent
    from palimpsest import ScriptedChatModel
    from palimpsest.agent import Agent

    work = tmp_path / "work"
    work.mkdir()
    write = calls(call("write_file", {"path": "src/app.py", "content": "x = 1\n"}, "w1"))
    agent = make_agent(
        tmp_path, [write, "written"], messages=history(12), compressor=compressor(), workdir=work
    )
    agent.ask("create src/app.py")
    agent.todos.write([{"id": "1", "content": "add tests", "status": "pending"}])
    assert agent.compress().compacted  # the state is kept with the continuation too
    tip = agent.session_id
    agent.close()
    assert agent.store is not None
    agent.store.close()

    store = SessionStore(tmp_path / "state.db")
    again = Agent(
        ScriptedChatModel(default="ok"),
        store=store,
        session_id=tip,
        workdir=work,
        context_length=100_000,
    )
    assert again.session_id == tip
    assert again.ledger.files_modified() == ["src/app.py"]
    assert [item.content for item in again.todos.items()] == ["add tests"]
    again.close()
    store.close()


def test_unreadable_stored_state_is_ignored(tmp_path: Path):
    from palimpsest.agent.persistence import load_state, save_state

    store = SessionStore(tmp_path / "state.db")
    sid = store.create_session(source="cli")
    assert load_state(store, sid) is None
    save_state(store, sid, {"ledger": {}, "todos": [{"id": "1", "content": "x"}]})
    assert load_state(store, sid) == {"ledger": {}, "todos": [{"id": "1", "content": "x"}]}
    store.database.write(
        lambda con: con.execute(
            "UPDATE state_meta SET value = 'not json' WHERE key = ?", (f"agent_state:{sid}",)
        )
    )
    assert load_state(store, sid) is None
    store.close()
