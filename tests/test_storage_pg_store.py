"""pg_store: what only the PostgreSQL store does (the shared behaviour is in
test_storage_contract.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from palimpsest import open_store
from palimpsest.errors import DuplicateTranscriptError
from palimpsest.storage.pg_store import PostgresSessionStore


def test_rows_look_like_sqlite_rows(pg_url: str) -> None:
    with open_store(pg_url) as store:
        assert isinstance(store, PostgresSessionStore)
        store.create_session("s", title="T")
        row = store.require_session("s")
        assert "rowid" not in row and "meta_tsv" not in row
        assert all("rowid" not in r and "meta_tsv" not in r for r in store.list_sessions())


def test_a_retitle_is_searchable(pg_url: str) -> None:
    with open_store(pg_url) as store:
        store.create_session("s")
        store.append_message("s", "user", "hello")
        assert store.search_messages("zanzibar") == []
        store.set_session_title("s", "Zanzibar trip")
        assert [h["session_id"] for h in store.search_messages("zanzibar")] == ["s"]


def test_an_import_is_one_transaction(pg_url: str, tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    with open_store(pg_url) as store:
        store.import_transcript(path)
        with pytest.raises(DuplicateTranscriptError):
            store.import_transcript(path)
        assert store.session_count() == 1  # the refused import left no session behind


def test_a_continuation_of_a_missing_session(pg_url: str) -> None:
    from palimpsest.errors import SessionNotFoundError

    with open_store(pg_url) as store, pytest.raises(SessionNotFoundError):
        store.start_continuation("nope")
