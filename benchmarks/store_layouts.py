"""Inline vs external-content FTS layout: file size, where the bytes go, insert rate.

Run: ``.venv/bin/python benchmarks/store_layouts.py [N_MESSAGES]`` (default 100,000).

Messages are the real transcripts in ``tests/data/transcripts`` (SWE-agent, mini-swe-agent,
Claude Code, Codex: prose, code, tool calls and tool output), cycled in order with a
per-copy marker so no two rows are identical, plus one CJK sentence in every 20th
message. Each layout gets a fresh store; messages go in through
``SessionStore.append_messages`` in batches of 1,000 (one transaction each) across
sessions of 200 messages. Sizes are measured after a TRUNCATE checkpoint with the
``dbstat`` table, so the per-table split is exact.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from palimpsest.messages import load_transcript
from palimpsest.storage.sessions import SessionStore

ROOT = Path(__file__).resolve().parents[1]
TRANSCRIPTS = ROOT / "tests" / "data" / "transcripts"
BATCH = 1_000
SESSION_SIZE = 200
CJK = "我们讨论了数据库迁移方案,并决定先在测试环境验证索引重建。"


def corpus() -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for path in sorted(TRANSCRIPTS.rglob("*")):
        if path.is_file() and path.suffix != ".md":
            messages.extend(load_transcript(path))
    return messages


def generate(n: int) -> list[dict[str, Any]]:
    base = corpus()
    out = []
    for i in range(n):
        message = dict(base[i % len(base)])
        if isinstance(message.get("content"), str):
            extra = f" {CJK}" if i % 20 == 0 else ""
            message["content"] = f"{message['content']} [copy {i // len(base)}]{extra}"
        out.append(message)
    return out


def raw_text_bytes(messages: list[dict[str, Any]]) -> int:
    import json

    total = 0
    for m in messages:
        content = m.get("content")
        text = content if isinstance(content, str) else json.dumps(content or "")
        total += len(text.encode()) + len(json.dumps(m.get("tool_calls") or "").encode())
    return total


def measure(layout: str, messages: list[dict[str, Any]], workdir: Path) -> dict[str, Any]:
    path = workdir / f"{layout}.db"
    store = SessionStore(path, fts_layout=layout)  # type: ignore[arg-type]
    start = time.perf_counter()
    sid = ""
    for offset in range(0, len(messages), BATCH):
        chunk = messages[offset : offset + BATCH]
        for part in range(0, len(chunk), SESSION_SIZE):
            if (offset + part) % SESSION_SIZE == 0:
                sid = store.create_session(source="bench")
        store.append_messages(sid, chunk)
    elapsed = time.perf_counter() - start
    store.checkpoint("TRUNCATE")
    with store.connection_for_reads() as con:
        by_table: dict[str, int] = {}
        for name, size in con.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"):
            key = str(name)
            group = (
                "messages"
                if key == "messages" or key.startswith("sqlite_autoindex_messages")
                else "messages_fts (unicode61)"
                if key.startswith("messages_fts_") and "trigram" not in key
                else "messages_fts_trigram"
                if key.startswith("messages_fts_trigram")
                else "other"
            )
            by_table[group] = by_table.get(group, 0) + int(size)
    problems = store.verify()
    store.close()
    return {
        "layout": layout,
        "seconds": elapsed,
        "rate": len(messages) / elapsed,
        "file": path.stat().st_size,
        "tables": by_table,
        "ok": not problems,
    }


def statement_shapes(n: int = 20_000) -> None:
    """Why ``append_messages`` inserts a batch with one INSERT ... SELECT FROM json_each.

    Through the FTS triggers, one statement per row (``executemany``) is several times
    slower than one statement per batch: FTS5 flushes its pending index data at every
    statement boundary inside a transaction.
    """
    import json

    import apsw

    rows = [(i + 1, f"note {i}: the quick brown fox jumps over the lazy dog") for i in range(n)]
    for tokenizer in ("unicode61", "trigram"):
        for shape in ("executemany", "json_each"):
            with tempfile.TemporaryDirectory() as tmp:
                con = apsw.Connection(str(Path(tmp) / "s.db"))
                con.execute("PRAGMA journal_mode = WAL").fetchall()
                con.execute(
                    "CREATE TABLE m (id INTEGER PRIMARY KEY, content TEXT);"
                    f"CREATE VIRTUAL TABLE f USING fts5(content, tokenize='{tokenizer}');"
                    "CREATE TRIGGER t AFTER INSERT ON m BEGIN"
                    " INSERT INTO f (rowid, content) VALUES (new.id, new.content); END;"
                )
                start = time.perf_counter()
                for offset in range(0, n, BATCH):
                    batch = rows[offset : offset + BATCH]
                    con.execute("BEGIN")
                    if shape == "executemany":
                        con.executemany("INSERT INTO m (id, content) VALUES (?, ?)", batch)
                    else:
                        con.execute(
                            "INSERT INTO m (id, content) SELECT value ->> 0, value ->> 1"
                            " FROM json_each(?)",
                            (json.dumps(batch),),
                        )
                    con.execute("COMMIT")
                rate = n / (time.perf_counter() - start)
                con.close()
            print(f"  {tokenizer:<10} {shape:<12} {rate:10,.0f} rows/s")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    print("insert through triggers, batches of 1,000 short rows:")
    statement_shapes()
    messages = generate(n)
    raw = raw_text_bytes(messages)
    print(f"{n:,} messages, raw text {raw / 1e6:.1f} MB")
    with tempfile.TemporaryDirectory() as tmp:
        results = [measure(layout, messages, Path(tmp)) for layout in ("inline", "external")]
    for r in results:
        print(
            f"\n{r['layout']:>8}: file {r['file'] / 1e6:.1f} MB ({r['file'] / raw:.2f}x raw),"
            f" insert {r['rate']:,.0f} msg/s, verify {'ok' if r['ok'] else 'FAILED'}"
        )
        for table, size in sorted(r["tables"].items()):
            print(f"          {table:<26} {size / 1e6:8.1f} MB")
    inline, external = results
    saved = 1 - external["file"] / inline["file"]
    print(
        f"\nexternal/inline file size: {external['file'] / inline['file']:.2f}"
        f" ({saved:.0%} smaller); insert rate ratio {external['rate'] / inline['rate']:.2f}"
    )


if __name__ == "__main__":
    main()
