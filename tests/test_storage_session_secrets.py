"""What a session revealed, collected once and carried to every reader (issue 20)."""

from __future__ import annotations

import json
from pathlib import Path

from palimpsest.safety.redact import REDACTED
from palimpsest.storage.search_text import hit_snippets
from palimpsest.storage.session_secrets import hit_text, session_secrets
from palimpsest.storage.sessions import SessionStore

VALUE = "Kq7vN2pLx9Rw"


def _store(tmp_path: Path) -> SessionStore:
    store = SessionStore(tmp_path / "state.db")
    store.create_session("a", source="cli")
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "db", "arguments": json.dumps({"password": VALUE})},
    }
    store.append_messages(
        "a",
        [
            {"role": "user", "content": "connect to the staging db"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": f"login ok with {VALUE}"},
        ],
    )
    store.create_session("b", source="cli")
    store.append_messages("b", [{"role": "user", "content": f"unrelated {VALUE} mention"}])
    return store


def test_values_come_from_any_message_and_stay_in_their_session(tmp_path: Path) -> None:
    with _store(tmp_path) as store, store.connection_for_reads() as con:
        found = session_secrets(con, ["a", "b", "missing"])
    assert found == {"a": frozenset({VALUE}), "b": frozenset(), "missing": frozenset()}


def test_a_search_snippet_hides_a_value_revealed_by_another_message(tmp_path: Path) -> None:
    with _store(tmp_path) as store:
        hits = store.search_messages("login")
        assert len(hits) == 1 and VALUE not in hits[0]["snippet"]
        assert f"ok with {REDACTED}" in hits[0]["snippet"]
        # the other session never named it as a secret: its text is its own
        assert VALUE in store.search_messages("unrelated")[0]["snippet"]
        with store.connection_for_reads() as con:
            (snippet,) = hit_snippets(con, hits, "login")
        assert snippet.text.startswith(f"login ok with {REDACTED}") and VALUE not in snippet.text


def test_the_collection_is_cached_until_the_session_changes(tmp_path: Path) -> None:
    with _store(tmp_path) as store:
        with store.connection_for_reads() as con:
            first = session_secrets(con, ["b"])["b"]
            assert session_secrets(con, ["b"])["b"] is first  # unchanged: not collected again
        store.append_messages("b", [{"role": "user", "content": f"token={VALUE}"}])
        with store.connection_for_reads() as con:
            assert session_secrets(con, ["b"])["b"] == frozenset({VALUE})


def test_hit_text_puts_each_part_on_its_own_line() -> None:
    row = {"content": "Authorization: token ab12cd34\nZx9Lp7Wq", "tool_name": "http"}
    assert hit_text(row) == "Authorization: token ab12cd34\nZx9Lp7Wq\nhttp"
