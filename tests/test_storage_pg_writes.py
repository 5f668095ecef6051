"""pg_writes: the row helpers the PostgreSQL store runs inside its transactions."""

from __future__ import annotations

import psycopg
import pytest

from palimpsest import open_store
from palimpsest.errors import SessionNotFoundError
from palimpsest.storage.pg_writes import insert_messages, session_meta_text


def test_meta_text_spells_the_date_as_words() -> None:
    from datetime import datetime

    epoch = datetime(2023, 6, 7, 12, 0).timestamp()
    assert session_meta_text("Garden", epoch, "telegram") == (
        "Garden 2023-06-07 June 7 2023 Wednesday telegram"
    )
    assert session_meta_text(None, None, "cli") == "cli"


def test_insert_locks_an_existing_session_only(pg_url: str) -> None:
    with open_store(pg_url):
        pass  # migrated
    with psycopg.connect(pg_url) as con:
        with pytest.raises(SessionNotFoundError):
            insert_messages(con, "missing", [], 0)
        con.rollback()
        con.execute("INSERT INTO sessions (id, source, started_at) VALUES ('s', 'cli', 0)")
        row = {"role": "user", "content": "x", "content_json": 0, "_compressed_summary": 0}
        columns = (
            "tool_call_id",
            "tool_calls",
            "tool_name",
            "token_count",
            "finish_reason",
            "reasoning",
            "reasoning_content",
            "reasoning_details",
            "codex_reasoning_items",
            "codex_message_items",
            "extra",
        )
        encoded = [{**row, **dict.fromkeys(columns)} for _ in range(3)]
        ids = insert_messages(con, "s", encoded, 0)
        assert ids == sorted(ids) and len(ids) == 3
        assert con.execute("SELECT message_count FROM sessions").fetchone() == (3,)
