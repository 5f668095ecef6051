"""Session store at scale: batched inserts with both FTS5 indexes, size, and search latency.

Generates ``--messages`` messages (default 1,000,000) of mixed text -- prose, code, tool
output, tool calls with JSON arguments, and some Chinese/Japanese -- deterministically
from ``--seed``, with vocabulary, code lines and tool-output lines taken from the real
transcripts in ``/work/shared/data/transcripts`` (or ``--corpus``). It appends them
through ``SessionStore.append_messages`` in batches, then reports:

* insert rate (messages/s and MB/s of text), generation time excluded;
* database size against raw text size, with a per-table breakdown (``dbstat``);
* p50/p95/max latency of four query classes, each run through the library's own
  sanitizer and router (``build_search`` + ``run_search``, limit 20): selective keyword
  queries, natural-language questions (OR of their non-stopword terms), quoted phrases,
  and CJK queries (3+ characters: trigram index; 1-2 characters: LIKE scan).

Run: ``.venv/bin/python benchmarks/store_scale.py --messages 20000`` for a quick check.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apsw

from palimpsest.storage.fts_query import RANK_WINDOW, build_search, run_search
from palimpsest.storage.sessions import SessionStore

DEFAULT_CORPUS = Path("/work/shared/data/transcripts")
AIMS = {"insert_per_s": 50_000, "selective_p95_ms": 20.0, "natural_p95_ms": 200.0}

ZH = (
    "我们讨论了数据库迁移方案然后修复了登录接口的超时问题需要重新部署服务并检查日志文件中的错误"
    "信息配置缓存策略性能测试结果显示内存使用过高建议优化查询语句和索引结构"
)
JA = (
    "データベースの移行計画をレビューしましたログファイルのエラーを確認してサービスを再起動"
    "する必要がありますキャッシュの設定とパフォーマンステストの結果について話し合いました"
)
QUESTION_STARTS = [
    "how did we fix the",
    "what was the problem with the",
    "where did we change the",
    "why did the",
    "can you remind me about the",
    "what happened with the",
]


# -- corpus -------------------------------------------------------------------------------


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def load_corpus(root: Path) -> tuple[list[str], list[int], list[str], list[str]]:
    """``(words, weights, code_lines, output_lines)`` drawn from every transcript under root."""
    texts: list[str] = []
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.suffix not in (".json", ".jsonl", ".traj"):
            continue
        raw = path.read_text(encoding="utf-8", errors="replace")
        try:
            texts.extend(_strings(json.loads(raw)))
        except json.JSONDecodeError:
            for line in raw.splitlines():
                try:
                    texts.extend(_strings(json.loads(line)))
                except json.JSONDecodeError:
                    continue
    words: Counter[str] = Counter()
    code: set[str] = set()
    output: set[str] = set()
    for text in texts:
        words.update(w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9_]{2,24}", text))
        for line in text.splitlines():
            line = line.rstrip()
            if not 8 <= len(line) <= 160:
                continue
            if re.search(r"[(){}=:;\[\]]", line) and re.match(r"\s*[A-Za-z_#@.]", line):
                code.add(line)
            else:
                output.add(line)
    vocab = [w for w, _ in words.most_common(20_000)]
    weights = [words[w] for w in vocab]
    if not vocab or not code or not output:
        raise SystemExit(f"no usable transcripts under {root}")
    return vocab, weights, sorted(code), sorted(output)


# -- generation ---------------------------------------------------------------------------


class Generator:
    """Deterministic mixed messages: prose, code, tool calls, tool output, some CJK."""

    def __init__(self, seed: int, corpus: tuple[list[str], list[int], list[str], list[str]]):
        self.rng = random.Random(seed)
        self.vocab, weights, self.code, self.output = corpus
        total = 0
        self.cum: list[int] = []
        for w in weights:
            total += w
            self.cum.append(total)
        self.raw_bytes = 0
        self.samples: list[str] = []  # some stored prose, for phrase queries that exist

    def words(self, n: int) -> list[str]:
        return self.rng.choices(self.vocab, cum_weights=self.cum, k=n)

    def prose(self, low: int, high: int) -> str:
        sentences = []
        remaining = self.rng.randint(low, high)
        while remaining > 0:
            n = min(remaining, self.rng.randint(6, 18))
            sentences.append(" ".join(self.words(n)).capitalize() + ".")
            remaining -= n
        return " ".join(sentences)

    def cjk(self) -> str:
        pool = ZH if self.rng.random() < 0.6 else JA
        parts = []
        for _ in range(self.rng.randint(2, 5)):
            start = self.rng.randrange(len(pool) - 12)
            parts.append(pool[start : start + self.rng.randint(6, 12)])
            if self.rng.random() < 0.4:
                parts.append(" " + self.rng.choice(self.vocab) + " ")
        return "".join(parts) + "。"

    def message(self, index: int) -> dict[str, Any]:
        r = self.rng.random()
        if index % 4 == 0:
            content = self.cjk() if r < 0.05 else self.prose(8, 40)
            msg: dict[str, Any] = {"role": "user", "content": content}
        elif r < 0.30:
            name = self.rng.choice(["bash", "str_replace_editor", "search_files", "open"])
            args = {"command": " ".join(self.words(self.rng.randint(2, 8)))}
            if self.rng.random() < 0.5:
                args["path"] = "/".join(self.words(3)) + ".py"
            msg = {
                "role": "assistant",
                "content": self.prose(5, 20),
                "tool_calls": [
                    {
                        "id": f"call_{index}",
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args)},
                    }
                ],
            }
        elif r < 0.60:
            lines = self.rng.choices(self.output, k=self.rng.randint(3, 25))
            msg = {"role": "tool", "tool_call_id": f"call_{index - 1}", "content": "\n".join(lines)}
            msg["name"] = self.rng.choice(["bash", "str_replace_editor", "search_files"])
        elif r < 0.80:
            lines = self.rng.choices(self.code, k=self.rng.randint(4, 20))
            msg = {"role": "assistant", "content": "Here is the change:\n" + "\n".join(lines)}
        elif r < 0.83:
            msg = {"role": "assistant", "content": self.cjk()}
        else:
            msg = {"role": "assistant", "content": self.prose(20, 90)}
        if index % 997 == 0 and msg["role"] == "user" and not msg["content"].endswith("。"):
            self.samples.append(msg["content"])
        size = len(msg["content"].encode())
        if "tool_calls" in msg:
            size += len(json.dumps(msg["tool_calls"]).encode())
        self.raw_bytes += size
        return msg


# -- measurements -------------------------------------------------------------------------


class _Replay:
    """Stands in for the store to replay generation only (``--queries-only``)."""

    def create_session(self, *args: Any, **kwargs: Any) -> None:
        pass

    def append_messages(self, *args: Any, **kwargs: Any) -> None:
        pass


def insert_all(
    store: SessionStore | _Replay, gen: Generator, total: int, batch: int
) -> dict[str, float]:
    """Append ``total`` messages in sessions of 50-400 messages, ``batch`` per transaction."""
    insert_seconds = 0.0
    insert_cpu = 0.0
    gen_seconds = 0.0
    done = 0
    session_no = 0
    report_every = max(total // 10, 1)
    next_report = report_every
    while done < total:
        sid = f"bench_{session_no:06d}"
        source = "cron" if session_no % 10 == 9 else "cli"
        store.create_session(sid, source=source, model="bench-model", title=f"Bench {session_no}")
        size = min(gen.rng.randint(50, 400), total - done)
        written = 0
        while written < size:
            t0 = time.perf_counter()
            n = min(batch, size - written)
            msgs = [gen.message(done + written + i) for i in range(n)]
            t1 = time.perf_counter()
            c1 = time.process_time()
            store.append_messages(sid, msgs)
            insert_cpu += time.process_time() - c1
            t2 = time.perf_counter()
            gen_seconds += t1 - t0
            insert_seconds += t2 - t1
            written += n
        done += size
        session_no += 1
        if done >= next_report and insert_cpu > 0:
            print(
                f"  {done:>9,} messages, {done / insert_seconds:,.0f}/s so far "
                f"({done / insert_cpu:,.0f}/CPU-s)",
                file=sys.stderr,
                flush=True,
            )
            next_report += report_every
    return {
        "messages": done,
        "sessions": session_no,
        "insert_seconds": insert_seconds,
        "insert_cpu_seconds": insert_cpu,
        "generate_seconds": gen_seconds,
    }


def table_sizes(path: Path) -> dict[str, int]:
    con = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        sizes: Counter[str] = Counter()
        for name, size in con.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name"):
            group = name
            for prefix in ("messages_fts_trigram", "messages_fts", "sqlite_autoindex", "idx_"):
                if name.startswith(prefix):
                    group = prefix.rstrip("_") if prefix != "idx_" else "indexes"
                    break
            sizes[group] += int(size)
        return dict(sizes.most_common())
    finally:
        con.close()


def build_queries(gen: Generator, n: int) -> dict[str, list[tuple[str, bool]]]:
    """``class -> [(query, match_any)]`` drawn from the same vocabulary as the data."""
    rng = random.Random(gen.rng.random())
    vocab = gen.vocab
    rare = vocab[len(vocab) // 3 :]  # long tail: each word in few messages
    common = vocab[50:2000]
    selective = []
    for i in range(n):
        if i % 2:
            selective.append((rng.choice(rare), False))
        else:
            selective.append((f"{rng.choice(rare)} {rng.choice(common)}", False))
    natural = []
    for _ in range(n):
        topic = " ".join(rng.choice(common) for _ in range(rng.randint(2, 4)))
        natural.append((f"{rng.choice(QUESTION_STARTS)} {topic}", True))
    phrase = []
    for i in range(n):
        # two or three consecutive words of a message that was stored
        text = gen.samples[i % len(gen.samples)] if gen.samples else gen.prose(6, 12)
        words = re.findall(r"[a-z0-9_]+", text.lower())
        size = 2 + i % 2
        start = rng.randrange(max(1, len(words) - size))
        phrase.append(('"' + " ".join(words[start : start + size]) + '"', False))
    cjk = []
    for i in range(n):
        pool = ZH if i % 2 else JA
        start = rng.randrange(len(pool) - 4)
        length = (3, 4, 2, 1)[i % 4]
        cjk.append((pool[start : start + length], False))
    return {
        "selective": selective,
        "natural": natural,
        "phrase": phrase,
        "cjk_trigram": [q for q in cjk if len(q[0]) >= 3],
        "cjk_like": [q for q in cjk if len(q[0]) < 3],
    }


def time_queries(
    store: SessionStore, queries: list[tuple[str, bool]], rank_window: int | None
) -> dict[str, Any]:
    latencies = []
    cpu = []
    hits = []
    routes: Counter[str] = Counter()
    with store.connection_for_reads() as con:
        for query, match_any in queries:
            plan = build_search(
                query,
                limit=20,
                has_trigram=store.has_trigram,
                has_fts=store.has_fts5,
                match_any=match_any,
                rank_window=rank_window,
            )
            t0 = time.perf_counter()
            c0 = time.process_time()
            rows = run_search(con, plan)
            cpu.append((time.process_time() - c0) * 1000)
            latencies.append((time.perf_counter() - t0) * 1000)
            hits.append(len(rows))
            routes[plan.route] += 1
    latencies.sort()
    cpu.sort()
    return {
        "cpu_p50_ms": statistics.median(cpu),
        "cpu_p95_ms": cpu[min(len(cpu) - 1, int(0.95 * len(cpu)))],
        "n": len(latencies),
        "p50_ms": statistics.median(latencies),
        "p95_ms": latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))],
        "max_ms": latencies[-1],
        "mean_hits": statistics.mean(hits),
        "zero_hit_queries": sum(1 for h in hits if h == 0),
        "routes": dict(routes),
        "example": queries[0][0],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=1000, help="messages per transaction")
    parser.add_argument("--seed", type=int, default=20260521)
    parser.add_argument("--queries", type=int, default=100, help="queries per class")
    parser.add_argument("--layout", choices=["inline", "external"], default="inline")
    parser.add_argument(
        "--rank-window",
        type=int,
        default=RANK_WINDOW,
        help=f"BM25 ranks the newest N matches (default {RANK_WINDOW}; 0: all)",
    )
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--db", type=Path, help="database file (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the database file")
    parser.add_argument("--json", action="store_true", help="also print the results as JSON")
    parser.add_argument(
        "--queries-only",
        action="store_true",
        help="reuse --db from an earlier run with the same --messages/--seed: time queries only",
    )
    args = parser.parse_args(argv)

    tmp = None
    if args.db is None:
        tmp = tempfile.TemporaryDirectory(prefix="palimpsest-bench-")
        args.db = Path(tmp.name) / "state.db"
    if args.db.exists() != args.queries_only:
        raise SystemExit(f"{args.db}: {'missing' if args.queries_only else 'exists'}")
    gen = Generator(args.seed, load_corpus(args.corpus))
    if args.queries_only:
        insert_all(_Replay(), gen, args.messages, args.batch)  # same RNG path, no writes
        store = SessionStore(args.db)
        count = store.message_count()
        print(
            f"queries only: {args.db} holds {count:,} messages, {args.db.stat().st_size / 1e6:,.1f} MB"
        )
        return report_queries(store, gen, args, {})
    store = SessionStore(args.db, fts_layout=args.layout)
    print(
        f"store_scale: {args.messages:,} messages, batch {args.batch}, layout {args.layout}, "
        f"SQLite {apsw.sqlite_lib_version()}, {os.cpu_count()} CPUs, {platform.platform()}",
        flush=True,
    )
    inserted = insert_all(store, gen, args.messages, args.batch)
    store.checkpoint("TRUNCATE")
    rate = inserted["messages"] / inserted["insert_seconds"]
    cpu_rate = inserted["messages"] / inserted["insert_cpu_seconds"]
    db_bytes = args.db.stat().st_size
    print(
        f"insert: {inserted['messages']:,} messages in {inserted['sessions']:,} sessions, "
        f"{inserted['insert_seconds']:.1f} s -> {rate:,.0f} messages/s "
        f"({cpu_rate:,.0f} per CPU-second), "
        f"{gen.raw_bytes / inserted['insert_seconds'] / 1e6:.1f} MB/s of text "
        f"(aim {AIMS['insert_per_s']:,}/s: {'met' if rate >= AIMS['insert_per_s'] else 'NOT met'})"
    )
    print(
        f"size: raw text {gen.raw_bytes / 1e6:,.1f} MB, database {db_bytes / 1e6:,.1f} MB "
        f"({db_bytes / gen.raw_bytes:.2f}x raw)"
    )
    sizes = table_sizes(args.db)
    for name, size in sizes.items():
        if size < 100_000:
            continue
        print(f"  {name:<22} {size / 1e6:>10,.1f} MB  {size / gen.raw_bytes:5.2f}x raw")
    results: dict[str, Any] = {
        "messages": inserted["messages"],
        "insert_per_s": rate,
        "insert_per_cpu_s": cpu_rate,
        "raw_bytes": gen.raw_bytes,
        "db_bytes": db_bytes,
        "tables": sizes,
    }
    return report_queries(store, gen, args, results, tmp)


def report_queries(
    store: SessionStore,
    gen: Generator,
    args: argparse.Namespace,
    results: dict[str, Any],
    tmp: tempfile.TemporaryDirectory[str] | None = None,
) -> int:
    queries = build_queries(gen, args.queries)
    with store.connection_for_reads() as con:  # warm the page cache a little, as in use
        for query, match_any in queries["selective"][:5]:
            run_search(con, build_search(query, limit=20, match_any=match_any))
    window = args.rank_window or None
    for label in ("first run", "second run (warm cache)"):
        print(f"latency, {label} ({args.queries} queries per class, limit 20, window {window}):")
        for name, items in queries.items():
            stats = time_queries(store, items, window)
            results[f"{name} ({label})"] = stats
            aim = {"selective": "selective_p95_ms", "natural": "natural_p95_ms"}.get(name)
            verdict = ""
            if aim:
                met = stats["p95_ms"] < AIMS[aim]
                verdict = f"  (aim p95 < {AIMS[aim]:.0f} ms: {'met' if met else 'NOT met'})"
            print(
                f"  {name:<12} p50 {stats['p50_ms']:7.1f} ms  p95 {stats['p95_ms']:7.1f} ms  "
                f"max {stats['max_ms']:7.1f} ms  (CPU p95 {stats['cpu_p95_ms']:6.1f} ms)  "
                f"hits/query {stats['mean_hits']:4.1f}  "
                f"e.g. {stats['example']!r}{verdict}"
            )
    store.close()
    if args.json:
        print(json.dumps(results, indent=2, ensure_ascii=False))
    if args.keep:
        print(f"kept {args.db}")
    elif tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
