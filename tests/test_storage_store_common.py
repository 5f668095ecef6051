"""The store methods both backends share (palimpsest.storage.store_common), run on each.

The contract suite (test_storage_contract) checks the whole promise; this module checks
what the shared half itself does: its ``?``-written updates reach either backend, counts
with and without a filter, the search filters it hands to both searches.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from palimpsest import open_store
from palimpsest.errors import SessionNotFoundError
from palimpsest.storage import Store
from palimpsest.storage.store_common import SearchFilters, StoreCommon


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    target = tmp_path / "s.db" if request.param == "sqlite" else request.getfixturevalue("pg_url")
    with open_store(target) as opened:
        yield opened


def test_both_backends_share_one_copy(store: Store) -> None:
    assert isinstance(store, StoreCommon)
    assert type(store).search_messages is StoreCommon.search_messages


def test_updates_written_with_question_marks_reach_either_backend(store: Store) -> None:
    sid = store.ensure_session("s1", source="cli")
    store.update_system_prompt(sid, "be brief")
    assert store.require_session(sid)["system_prompt"] == "be brief"
    assert store.end_session(sid, "user_exit")
    store.reopen_session(sid)
    assert store.require_session(sid)["ended_at"] is None
    with pytest.raises(SessionNotFoundError):
        store.update_system_prompt("nope", "x")
    with pytest.raises(SessionNotFoundError):
        store.require_session("nope")
    assert store.resolve_session_id("nope") is None


def test_counts_with_and_without_a_filter(store: Store) -> None:
    store.create_session("a", source="cli")
    store.create_session("b", source="cron")
    store.append_message("a", "user", "one")
    store.append_messages(
        "b", [{"role": "user", "content": "two"}, {"role": "user", "content": "3"}]
    )
    assert store.session_count() == 2 and store.session_count("cron") == 1
    assert store.message_count() == 3 and store.message_count("b") == 2
    assert store.session_count("nowhere") == 0


def test_search_filters_apply_on_either_backend(store: Store) -> None:
    store.create_session("a", source="cli")
    store.create_session("b", source="cron")
    store.append_message("a", "user", "the zeppelin landed")
    store.append_message("b", "assistant", "a zeppelin again")
    assert {h["session_id"] for h in store.search_hits("zeppelin")} == {"a", "b"}
    assert [h["session_id"] for h in store.search_hits("zeppelin", source="cron")] == ["b"]
    assert [h["session_id"] for h in store.search_hits("zeppelin", role_filter="user")] == ["a"]
    assert [h["session_id"] for h in store.search_hits("zeppelin", exclude_session_ids=["a"])] == [
        "b"
    ]
    assert [h["session_id"] for h in store.search_messages("zeppelin", exclude_sources="cron")] == [
        "a"
    ]


def test_search_filters_as_sql() -> None:
    where, params = SearchFilters(role_filter="user", exclude_session_ids=("x",)).conditions()
    assert where[0] == "m.role IN (?)" and params == ["user", "x"]
    assert sum(w.count("?") for w in where) == len(params)
    # rewound turns stay hidden whatever the filters (compacted ones stay searchable)
    assert SearchFilters().conditions() == (["(m.active = 1 OR m.compacted = 1)"], [])
