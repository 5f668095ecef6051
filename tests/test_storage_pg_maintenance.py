"""pg_maintenance: what verify finds on a PostgreSQL store, and what repair fixes."""

from __future__ import annotations

from palimpsest import open_store


def test_an_undecodable_row_is_named_not_raised(pg_url: str) -> None:
    with open_store(pg_url) as store:
        sid = store.create_session("s")
        ids = store.append_messages(sid, [{"role": "assistant", "content": "x", "tool_calls": []}])
        store.database.write(
            lambda con: con.execute(
                "UPDATE messages SET tool_calls = ? WHERE id = ?", ("{not json", ids[0])
            )
        )
        problems = store.verify()
        assert len(problems) == 1 and problems[0].startswith(f"message {ids[0]}:")
        assert any("recounted" in line for line in store.repair())
        assert store.verify() == problems  # repair keeps rows it cannot read


def test_a_healthy_store_verifies_clean(pg_url: str) -> None:
    with open_store(pg_url) as store:
        assert store.verify() == []
        assert store.schema_version >= 1


def test_token_totals_are_checked_and_recounted(pg_url: str) -> None:
    with open_store(pg_url) as store:
        sid = store.create_session("s")
        store.append_messages(sid, [{"role": "user", "content": "three tokens here"}])
        assert store.verify() == []
        store.database.write(
            lambda con: con.execute("UPDATE sessions SET word_total = 40 WHERE id = ?", (sid,))
        )
        assert store.verify() == [f"session {sid}: word_total 40, 3 tokens in its rows"]
        assert "recounted messages: 1 session(s) corrected" in store.repair()
        assert store.verify() == []
