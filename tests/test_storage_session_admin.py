"""Prefix lookup, families and deletion of sessions (storage/session_admin.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from palimpsest.errors import AmbiguousSessionIdError, SessionNotFoundError
from palimpsest.storage.session_admin import (
    MAX_CANDIDATES,
    delete_sessions,
    family,
    import_key,
    matching_ids,
    resolve_prefix,
)
from palimpsest.storage.sessions import SessionStore


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    s = SessionStore(tmp_path / "state.db")
    for n in range(12):
        s.create_session(f"20261123_1000{n:02d}_x", "cli")
    s.create_session("a_b%c", "cli")
    return s


def test_resolve_exact_unique_ambiguous_and_missing(store: SessionStore) -> None:
    with store.connection_for_reads() as con:
        assert resolve_prefix(con, "20261123_100003_x") == "20261123_100003_x"
        assert resolve_prefix(con, "20261123_100011") == "20261123_100011_x"
        with pytest.raises(AmbiguousSessionIdError) as info:
            resolve_prefix(con, "20261123")
        assert info.value.count == 12 and len(info.value.candidates) == MAX_CANDIDATES
        assert info.value.candidates == sorted(info.value.candidates)
        assert "and 2 more" in str(info.value)
        # LIKE wildcards in a prefix are literal.
        assert resolve_prefix(con, "a_b%") == "a_b%c"
        with pytest.raises(SessionNotFoundError) as missing:
            resolve_prefix(con, "a%")
        assert not isinstance(missing.value, AmbiguousSessionIdError)
        with pytest.raises(SessionNotFoundError):
            resolve_prefix(con, "")
        assert matching_ids(con, "2026112", limit=3) == (
            ["20261123_100000_x", "20261123_100001_x", "20261123_100002_x"],
            12,
        )


def test_family_and_delete_sessions(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "s.db") as store:
        store.create_session("root", "cli")
        store.append_message("root", "user", "one")
        child = store.start_continuation(
            "root", session_id="child", messages=[{"role": "user", "content": "s"}]
        )
        store.create_session("sub", "cli", parent_session_id="child")
        store.database.write(
            lambda con: con.execute(
                "INSERT INTO state_meta (key, value) VALUES (?, 'child')", (import_key("d"),)
            )
        )
        with store.connection_for_reads() as con:
            links = family(con, child)
            assert (links.parent, links.children) == ("root", ["sub"]) and links.linked
            assert set(links.lineage) == {"root", "child", "sub"}
            assert not family(con, "sub").children
        removed = store.database.write(lambda con: delete_sessions(con, ["child"]))
        assert removed == 1
        assert store.get_session("child") is None
        assert store.require_session("sub")["parent_session_id"] is None  # orphaned, kept
        with store.connection_for_reads() as con:
            keys = [str(r[0]) for r in con.execute("SELECT key FROM state_meta")]
        assert import_key("d") not in keys and not any(k.endswith(":child") for k in keys)
        assert store.verify() == []
