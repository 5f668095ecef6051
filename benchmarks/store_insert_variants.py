"""What limits the session store's insert rate: the same messages under eight schema variants.

Companion to ``store_scale.py`` (same generator, same seed). Each variant creates a
reduced ``messages`` table plus the two FTS5 tables of the store and inserts N messages
in batches of 1,000, one transaction per batch; it differs only in how the indexes are
fed (triggers or explicit ``INSERT ... SELECT``), in the insert statement (one per row or
one ``json_each`` statement per batch), and in which rows the trigram index receives
(all, or only rows containing CJK text). Rates are messages per CPU-second of this
process, so other load on the machine distorts them less than wall-clock rates.

Run: ``.venv/bin/python benchmarks/store_insert_variants.py --messages 30000``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import apsw

from palimpsest.storage import fts_layout

sys.path.insert(0, str(Path(__file__).parent))
from store_scale import DEFAULT_CORPUS, Generator, load_corpus

TEXT = "COALESCE({r}.content, '') || ' ' || COALESCE({r}.tool_name, '') || ' ' || COALESCE({r}.tool_calls, '')"
# The store's own row condition: an ASCII shortcut, then the router's CJK ranges as GLOB.
CJK_NEW, CJK_M = fts_layout.cjk_condition("new"), fts_layout.cjk_condition("m")
COLUMNS = "session_id, role, content, tool_calls, tool_name, timestamp"

Row = tuple[Any, ...]


def setup(path: Path, *, word: bool, trigram: bool, cjk_only: bool) -> apsw.Connection:
    con = apsw.Connection(str(path))
    con.execute("PRAGMA journal_mode=WAL")
    con.execute(
        "CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT,"
        " role TEXT, content TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL);"
        "CREATE INDEX idx_messages_session ON messages(session_id, timestamp);"
        "CREATE VIRTUAL TABLE messages_fts USING fts5(content);"
        "CREATE VIRTUAL TABLE messages_fts_trigram USING fts5(content, tokenize='trigram');"
    )
    new = TEXT.format(r="new")
    if word:
        con.execute(
            "CREATE TRIGGER fts_word AFTER INSERT ON messages BEGIN INSERT INTO messages_fts"
            f" (rowid, content) VALUES (new.id, {new}); END"
        )
    if trigram:
        when = f" WHEN {CJK_NEW}" if cjk_only else ""
        con.execute(
            f"CREATE TRIGGER fts_tri AFTER INSERT ON messages{when} BEGIN INSERT INTO"
            f" messages_fts_trigram (rowid, content) VALUES (new.id, {new}); END"
        )
    return con


def per_row(con: apsw.Connection, batch: list[Row], first: int) -> None:
    con.executemany(f"INSERT INTO messages ({COLUMNS}) VALUES ('s', ?, ?, ?, ?, 0)", batch)


def per_batch(con: apsw.Connection, batch: list[Row], first: int) -> None:
    con.execute(
        f"INSERT INTO messages ({COLUMNS}) SELECT 's', value->>0, value->>1, value->>2,"
        " value->>3, 0 FROM json_each(?)",
        (json.dumps(batch),),
    )


def explicit(cjk_only: bool) -> Callable[[apsw.Connection, list[Row], int], None]:
    def insert(con: apsw.Connection, batch: list[Row], first: int) -> None:
        per_row(con, batch, first)
        m = TEXT.format(r="m")
        con.execute(
            f"INSERT INTO messages_fts (rowid, content) SELECT m.id, {m} FROM messages AS m"
            " WHERE m.id >= ?",
            (first,),
        )
        where = f" AND {CJK_M}" if cjk_only else ""
        con.execute(
            f"INSERT INTO messages_fts_trigram (rowid, content) SELECT m.id, {m}"
            f" FROM messages AS m WHERE m.id >= ?{where}",
            (first,),
        )

    return insert


VARIANTS: list[tuple[str, dict[str, bool], Callable[[apsw.Connection, list[Row], int], None]]] = [
    ("both indexes by triggers, one statement per row", {}, per_row),
    ("both by triggers, one INSERT ... SELECT json_each per batch", {}, per_batch),
    ("trigram trigger only for CJK rows, per-row statements", {"cjk_only": True}, per_row),
    ("trigram trigger only for CJK rows, one statement per batch", {"cjk_only": True}, per_batch),
    (
        "no triggers: INSERT ... SELECT per index per batch",
        {"word": False, "trigram": False},
        explicit(False),
    ),
    ("no triggers, trigram only for CJK rows", {"word": False, "trigram": False}, explicit(True)),
    ("unicode61 only, by trigger, per-row statements", {"trigram": False}, per_row),
    ("messages only, no FTS", {"word": False, "trigram": False}, per_row),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=30_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    gen = Generator(args.seed, load_corpus(DEFAULT_CORPUS))
    rows: list[Row] = []
    for i in range(args.messages):
        m = gen.message(i)
        calls = json.dumps(m["tool_calls"]) if "tool_calls" in m else None
        rows.append((m["role"], m["content"], calls, m.get("name")))
    print(f"{args.messages:,} messages, {gen.raw_bytes / args.messages:.0f} bytes of text each")
    for label, options, insert in VARIANTS:
        flags = {"word": True, "trigram": True, "cjk_only": False, **options}
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "v.db"
            con = setup(path, **flags)
            c0, w0 = time.process_time(), time.perf_counter()
            for start in range(0, len(rows), 1000):
                with con:
                    insert(con, rows[start : start + 1000], start + 1)
            cpu, wall = time.process_time() - c0, time.perf_counter() - w0
            size = path.stat().st_size + Path(f"{path}-wal").stat().st_size
            con.close()
        print(
            f"  {label:<62} {args.messages / cpu:>9,.0f} msg/CPU-s"
            f" {args.messages / wall:>9,.0f} msg/s wall  {size / 1e6:6.0f} MB",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
