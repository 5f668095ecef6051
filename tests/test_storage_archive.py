"""In-place compaction in the store (storage/archive.py): archive, search, undo, migrate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from palimpsest.errors import SessionNotFoundError
from palimpsest.storage import migrations
from palimpsest.storage.archive import (
    archive_in_place,
    archived_messages,
    in_place_compactions,
    in_place_count,
    last_in_place,
    original_messages,
    searchable_messages,
    undo_in_place,
)
from palimpsest.storage.sessions import SessionStore


def msg(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "content": text}


OLD = [msg("user", "set up the walrusgate proxy"), msg("assistant", "walrusgate is up on :8080")]
SUMMARY = {"role": "user", "content": "[summary] a proxy was set up", "_compressed_summary": True}
COMPACTED = [SUMMARY, msg("assistant", "ready")]


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    with SessionStore(tmp_path / "state.db") as opened:
        yield opened


def started(store: SessionStore) -> str:
    sid = store.create_session(source="cli", model="m", system_prompt="prompt 0")
    store.append_messages(sid, OLD)
    return sid


def test_archive_keeps_the_id_and_makes_the_compacted_list_live(store: SessionStore) -> None:
    sid = started(store)
    done = archive_in_place(
        store, sid, COMPACTED, system_prompt="prompt 1", system_prompt_before="prompt 0"
    )
    assert (done.number, done.archived, done.written) == (1, 2, 2)
    assert store.get_messages(sid) == COMPACTED
    assert archived_messages(store, sid) == OLD
    assert searchable_messages(store, sid) == [*OLD, *COMPACTED]
    assert store.get_session(sid)["system_prompt"] == "prompt 1"  # type: ignore[index]
    assert store.session_count() == 1 and in_place_count(store, sid) == 1
    assert store.get_session(sid)["ended_at"] is None  # type: ignore[index]


def test_archived_rows_stay_searchable_even_for_their_own_session(store: SessionStore) -> None:
    sid = started(store)
    other = store.create_session(source="cli")
    store.append_messages(other, [msg("user", "walrusgate elsewhere")])
    archive_in_place(store, sid, COMPACTED, system_prompt=None, system_prompt_before=None)
    hits = store.search_messages("walrusgate")
    assert {h["session_id"] for h in hits} == {sid, other}
    # the caller's own session: its live rows are left out, its archive is not
    own = store.search_messages("walrusgate", exclude_session_ids=[sid, other])
    assert [h["session_id"] for h in own] == [sid, sid]
    assert store.search_messages("ready", exclude_session_ids=[sid]) == []


def test_undo_restores_the_archive_and_hides_the_compacted_rows(store: SessionStore) -> None:
    sid = started(store)
    archive_in_place(
        store,
        sid,
        COMPACTED,
        system_prompt="prompt 1",
        system_prompt_before="prompt 0",
        compression_count_before=0,
    )
    store.append_messages(sid, [msg("user", "and later")])
    undone = undo_in_place(store, sid)
    assert undone is not None and undone.number == 1
    assert store.get_messages(sid) == [*OLD, msg("user", "and later")]
    assert archived_messages(store, sid) == []
    assert store.get_session(sid)["system_prompt"] == "prompt 0"  # type: ignore[index]
    # the undone summary is hidden from search as well as from the history
    assert store.search_messages("summary") == []
    assert last_in_place(store, sid) is None and in_place_count(store, sid) == 0
    assert in_place_compactions(store, sid)[0].undone_at is not None
    assert undo_in_place(store, sid) is None


def test_a_missing_session_is_refused_and_nothing_changes(store: SessionStore) -> None:
    with pytest.raises(SessionNotFoundError):
        archive_in_place(store, "nope", COMPACTED, system_prompt=None, system_prompt_before=None)
    assert store.message_count() == 0


def test_deleting_a_session_forgets_its_compactions(store: SessionStore) -> None:
    sid = started(store)
    archive_in_place(store, sid, COMPACTED, system_prompt=None, system_prompt_before=None)
    assert store.delete_session(sid)
    assert in_place_compactions(store, sid) == []


def test_m010_adds_the_archive_columns_to_an_older_store(tmp_path: Path) -> None:
    """A schema-6 file gains the columns and table, keeps its rows live, and archives."""
    path = tmp_path / "state.db"
    path.write_bytes(
        (Path(__file__).parent / "data" / "stores" / "state_v6_inline.db").read_bytes()
    )
    with SessionStore(path) as old:
        assert old.schema_version == len(migrations.MIGRATIONS)
        assert "m010_in_place_compaction" in migrations.MIGRATIONS
        sid = next(r["id"] for r in old.list_sessions(limit=50) if old.get_messages(r["id"]))
        before = old.get_messages(sid)
        assert archived_messages(old, sid) == []
        archive_in_place(old, sid, COMPACTED, system_prompt=None, system_prompt_before=None)
        assert archived_messages(old, sid) == before
        undo_in_place(old, sid)
        assert old.get_messages(sid) == before


@settings(max_examples=25, deadline=None)
@given(rounds=st.lists(st.integers(min_value=0, max_value=3), min_size=1, max_size=4))
def test_undoing_every_compaction_gives_back_everything_said(
    tmp_path_factory: pytest.TempPathFactory, rounds: list[int]
) -> None:
    """Whatever is said between compactions, undoing them all (newest first) leaves the
    whole conversation live again, in order, and no archive behind."""
    with SessionStore(tmp_path_factory.mktemp("archive") / "state.db") as store:
        sid = started(store)
        said = list(OLD)
        for n, extra in enumerate(rounds):
            live = store.get_messages(sid)
            archive_in_place(
                store,
                sid,
                [{"role": "user", "content": f"summary {n} of {len(live)}"}],
                system_prompt=None,
                system_prompt_before=None,
            )
            later = [msg("user", f"turn {n}.{i}") for i in range(extra)]
            store.append_messages(sid, later)
            said.extend(later)
        for _ in rounds:
            assert undo_in_place(store, sid) is not None
        assert store.get_messages(sid) == said
        assert archived_messages(store, sid) == []


def test_a_chain_export_gives_the_original_history_of_an_in_place_session(
    store: SessionStore,
) -> None:
    sid = started(store)
    archive_in_place(store, sid, [SUMMARY, OLD[1]], system_prompt=None, system_prompt_before=None)
    store.append_messages(sid, [msg("user", "next")])
    archive_in_place(store, sid, [SUMMARY], system_prompt=None, system_prompt_before=None)
    store.append_messages(sid, [msg("assistant", "last")])
    said = [*OLD, msg("user", "next"), msg("assistant", "last")]
    assert original_messages(store, sid) == said
    assert store.export_session(sid, chain=True) == said
    assert store.export_session(sid) == [SUMMARY, msg("assistant", "last")]  # the live rows
