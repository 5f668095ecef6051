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
