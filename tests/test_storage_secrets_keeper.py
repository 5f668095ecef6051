"""Keeping each session's revealed secrets off the append path, and readers trusting them."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apsw
import pytest

from palimpsest.storage import secrets_keeper
from palimpsest.storage import session_secrets as session_secrets_module
from palimpsest.storage.contract import Store
from palimpsest.storage.factory import open_store
from palimpsest.storage.pg_store import PostgresSessionStore
from palimpsest.storage.secrets_keeper import KeepPacer
from palimpsest.storage.session_secrets import session_secrets
from palimpsest.storage.sessions import SessionStore
from palimpsest.storage.upkeep import UpkeepPolicy

VALUE = "Kq7vN2pLx9Rw"


# -- kept values (the table the writers fill, the readers trust) -------------------------------

SECOND = "Zt4mQ8wLp2Vx"


@pytest.fixture(params=["sqlite", "postgresql"])
def kept_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    target = tmp_path / "k.db" if request.param == "sqlite" else request.getfixturevalue("pg_url")
    # no background work: each test says when the values are kept
    opened = open_store(target, background_upkeep=False)
    try:
        yield opened
    finally:
        opened.close()


def _row(store: Store, session_id: str) -> tuple[int, int, int, list[str]] | None:
    found = store.database.query(
        "SELECT generation, through_id, covered, secret_values FROM session_secrets"
        " WHERE session_id = ?",
        (session_id,),
    )
    if not found:
        return None
    row = found[0]
    return (
        int(row["generation"]),
        int(row["through_id"]),
        int(row["covered"]),
        json.loads(row["secret_values"]),
    )


class _Counting:
    """Counts the messages the reader redacts (what keeping saves)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.messages = 0
        real = session_secrets_module.message_texts

        def counted(*args: Any) -> list[str]:
            texts = real(*args)
            self.messages += len(texts)
            return texts

        monkeypatch.setattr(session_secrets_module, "message_texts", counted)


def _fill(store: Store) -> list[int]:
    store.create_session("s", source="cli")
    return store.append_messages(
        "s",
        [
            {"role": "user", "content": f"the db password={VALUE}"},
            {"role": "assistant", "content": f"psql accepted {VALUE}"},
            {"role": "user", "content": "and now the weather"},
        ],
    )


def test_kept_values_are_read_without_redacting_the_session_again(
    kept_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = _fill(kept_store)
    assert _row(kept_store, "s") is None
    assert kept_store.keep_secrets() is True
    assert _row(kept_store, "s") == (0, ids[-1], 3, [VALUE])
    counting = _Counting(monkeypatch)
    assert kept_store.session_secrets(["s"])["s"] == frozenset({VALUE})
    assert counting.messages == 0
    hits = kept_store.search_messages("accepted")
    assert hits and VALUE not in hits[0]["snippet"]


def test_a_reader_redacts_only_the_messages_past_the_kept_ones(
    kept_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(kept_store)
    kept_store.keep_secrets()
    kept_store.append_messages(
        "s",
        [
            {"role": "user", "content": f"token: {SECOND}"},
            {"role": "assistant", "content": f"stored {SECOND} and {VALUE}"},
        ],
    )
    counting = _Counting(monkeypatch)
    assert kept_store.session_secrets(["s"])["s"] == frozenset({VALUE, SECOND})
    assert counting.messages == 2
    kept_store.keep_secrets()
    row = _row(kept_store, "s")
    assert row is not None and row[2:] == (5, sorted([VALUE, SECOND]))


def test_an_edit_resets_the_kept_row_and_the_keeper_fills_it_again(kept_store: Store) -> None:
    ids = _fill(kept_store)
    kept_store.keep_secrets()
    kept_store.database.write(
        lambda con: con.execute(
            "UPDATE messages SET content = ? WHERE id = ?", (f"api_key={SECOND}", ids[2])
        )
    )
    assert _row(kept_store, "s") == (1, 0, 0, [])
    assert kept_store.session_secrets(["s"])["s"] == frozenset({VALUE, SECOND})
    kept_store.keep_secrets()
    assert _row(kept_store, "s") == (1, ids[-1], 3, sorted([VALUE, SECOND]))


def test_a_keeper_that_read_before_an_edit_does_not_overwrite_the_reset(
    kept_store: Store,
) -> None:
    ids = _fill(kept_store)
    kept_store.keep_secrets()
    kept_store.database.write(
        lambda con: con.execute("UPDATE messages SET content = 'x' WHERE id = ?", (ids[0],))
    )
    stale = ("s", 0, ids[-1] + 5, 3, json.dumps([VALUE]), "s")  # computed at generation 0
    kept_store.database.write(lambda con: con.execute(secrets_keeper._KEEP, stale))
    assert _row(kept_store, "s") == (1, 0, 0, [])


def test_deleting_a_message_resets_the_kept_row(kept_store: Store) -> None:
    ids = _fill(kept_store)
    kept_store.keep_secrets()
    kept_store.database.write(
        lambda con: con.execute("DELETE FROM messages WHERE id = ?", (ids[0],))
    )
    assert _row(kept_store, "s") == (1, 0, 0, [])
    # the value is no longer named as a secret anywhere in the session
    assert kept_store.session_secrets(["s"])["s"] == frozenset()


def test_a_message_the_kept_row_does_not_count_makes_the_reader_collect_again(
    kept_store: Store,
) -> None:
    # On PostgreSQL a transaction can commit a lower id after a higher one was kept.
    kept_store.create_session("s", source="cli")
    kept_store.create_session("other", source="cli")
    late = kept_store.append_messages("other", [{"role": "user", "content": "hello"}])[0]
    kept_store.database.write(lambda con: con.execute("DELETE FROM messages WHERE id = ?", (late,)))
    kept_store.append_messages("s", [{"role": "user", "content": "plain words"}])
    kept_store.keep_secrets()
    assert kept_store.session_secrets(["s"])["s"] == frozenset()

    def commit_late(con: Any) -> None:  # what insert_messages writes, with the lower id
        con.execute(
            "INSERT INTO messages (id, session_id, role, content, timestamp)"
            " VALUES (?, 's', 'user', ?, 0)",
            (late, f"password: {SECOND}"),
        )
        con.execute("UPDATE sessions SET message_count = message_count + 1 WHERE id = 's'")

    kept_store.database.write(commit_late)
    assert kept_store.session_secrets(["s"])["s"] == frozenset({SECOND})
    kept_store.append_messages("s", [{"role": "user", "content": "more words"}])
    kept_store.keep_secrets()  # the keeper collects it again too
    row = _row(kept_store, "s")
    assert row is not None and row[2:] == (3, [SECOND])


def test_a_writer_that_leaves_message_count_alone_hides_nothing(kept_store: Store) -> None:
    # Another program writing the same file (an older palimpsest, the reference agent)
    # may not bump sessions.message_count: the readers count the messages themselves.
    _fill(kept_store)
    kept_store.keep_secrets()
    kept_store.database.write(
        lambda con: con.execute(
            "INSERT INTO messages (session_id, role, content, timestamp)"
            " VALUES ('s', 'user', ?, 0)",
            (f"secret: {SECOND}",),
        )
    )
    assert kept_store.session_secrets(["s"])["s"] == frozenset({VALUE, SECOND})
    kept_store.keep_secrets()
    row = _row(kept_store, "s")
    assert row is not None and row[2:] == (4, sorted([VALUE, SECOND]))


def test_a_store_that_wrote_keeps_what_it_wrote_when_it_closes(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "c.db", background_upkeep=False) as store:
        ids = _fill(store)
    with SessionStore(tmp_path / "c.db", background_upkeep=False) as store:
        assert _row(store, "s") == (0, ids[-1], 3, [VALUE])


def test_the_upkeep_thread_keeps_new_messages(tmp_path: Path) -> None:
    policy = UpkeepPolicy(start_after_writes=1, idle_seconds=0.05)
    with SessionStore(tmp_path / "u.db", upkeep_policy=policy) as store:
        ids = _fill(store)
        assert store.upkeep is not None and store.upkeep.wait_idle(30)
        assert _row(store, "s") == (0, ids[-1], 3, [VALUE])


def test_the_postgresql_keeper_thread_keeps_new_messages(pg_url: str) -> None:
    store = open_store(pg_url)
    try:
        assert isinstance(store, PostgresSessionStore)
        ids = _fill(store)
        deadline = time.monotonic() + 30
        while _row(store, "s") is None and time.monotonic() < deadline:
            store.secrets.wait_idle(1)
        assert _row(store, "s") == (0, ids[-1], 3, [VALUE])
    finally:
        store.close()


def test_a_read_only_file_from_before_the_table_is_collected_as_before(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with SessionStore(path, background_upkeep=False) as store:
        _fill(store)
        store.database.write(lambda con: con.execute("DROP TABLE session_secrets"))
    con = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        assert session_secrets(con, ["s"]) == {"s": frozenset({VALUE})}
    finally:
        con.close()


# -- pacing beside the writers -------------------------------------------------------------


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _backlog(store: SessionStore, messages: int) -> None:
    store.create_session("s", source="cli")
    store.append_messages("s", [{"role": "user", "content": f"m {i}"} for i in range(messages)])


def _watermark(store: SessionStore) -> int:
    return int(
        store.database.scalar(
            "SELECT value FROM state_meta WHERE key = ?", (secrets_keeper.WATERMARK_KEY,)
        )
        or 0
    )


def test_the_pacer_keeps_small_steps_while_written_and_full_ones_when_quiet(
    tmp_path: Path,
) -> None:
    with SessionStore(tmp_path / "p.db", background_upkeep=False) as store:
        _backlog(store, 1000)
        clock = _Clock()
        writes = [0]
        pacer = KeepPacer(store.database, lambda: writes[0], busy_batch=64, clock=clock)
        writes[0] += 1  # a commit just now: not quiet
        assert pacer() is True
        assert _watermark(store) == 64  # one small step
        writes[0] += 1
        assert pacer() is True and _watermark(store) == 128
        clock.now += 1.0  # no commit for a second: full steps, back to back
        assert pacer() is True and _watermark(store) == 128 + 512
        while pacer():
            pass
        assert _watermark(store) == store.database.scalar("SELECT max(id) FROM messages")
        assert store.session_secrets(["s"])["s"] == frozenset()


def test_the_pacer_takes_at_most_its_share_while_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = _Clock()
    steps: list[int] = []

    def timed_step(db: Any, batch: int) -> bool:  # each step "takes" 20 ms of the clock
        steps.append(batch)
        clock.now += 0.02
        return True

    monkeypatch.setattr(secrets_keeper, "keep_step", timed_step)
    with SessionStore(tmp_path / "t.db", background_upkeep=False) as store:
        commits = [0]
        pacer = KeepPacer(store.database, lambda: commits[0], share=0.2, clock=clock)
        started = clock.now
        while clock.now - started < 10.0:
            pacer()
            clock.now += 0.005  # the thread's loop
            commits[0] += 1  # a writer commits all along
    assert steps and set(steps) == {pacer.busy_batch}
    assert 0.15 <= 0.02 * len(steps) / 10.0 <= 0.2
