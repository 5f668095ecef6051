"""Session store at scale, against a plain FTS5 floor built in the same run.

Generates ``--messages`` messages (default 1,000,000) of mixed text -- prose, code, tool
output, tool calls with JSON arguments, and some Chinese/Japanese -- deterministically
from ``--seed``, with vocabulary, code lines and tool-output lines taken from the real
transcripts in ``/work/shared/data/transcripts`` (or ``--corpus``). Every batch goes
through ``SessionStore.append_messages`` and, interleaved with it, into the **floor**: one
plain table and one FTS5 ``porter unicode61`` external-content index over the same text
(the store's indexed text: content, tool name, tool-call JSON), with the same batches,
journal mode and synchronous setting. The floor is what the machine can do for this text;
the store's figures are reported beside it, as ratios, because the shared machine's speed
drifts between runs but hits both alike.

Reported, store and floor side by side:

* batched insert rate (messages/s, generation time excluded) and insert time ratio;
* file size against the raw text (and a per-table breakdown from ``dbstat``);
* single-append stalls: after every batch one message is appended on its own (its own
  transaction, as an agent appends a turn) to each database, while the index grows; the
  p50/p99/max of those appends and how many exceeded 50 ms;
* p50/p95 latency of query classes (limit 20): selective keyword queries, natural-language
  questions, quoted phrases, CJK (store only); the store is asked through its public API
  (``search_messages(..., match=...)`` when that parameter exists, else ``build_search``
  with ``match_any`` for questions), the floor with a plain ``MATCH ... ORDER BY rank``;
* planted answers: ``--plants`` answer messages placed among the oldest 20% of the stream,
  each with a unique rare word, then buried under many newer near-matches (the same
  sentence without the rare word); each is asked as a question in other word forms, and
  counted found when its message is in the top 10.

Run: ``.venv/bin/python benchmarks/store_scale.py --messages 20000`` for a quick check.
``--url postgresql://...`` measures a PostgreSQL store instead (issue 26): the benchmark
creates a schema of its own in that database (dropped afterwards unless ``--keep``), and
the SQLite FTS5 floor is still built beside it in a temp dir, so the ratios compare the
same text on the same machine. Sizes are then PostgreSQL's relation sizes (tables, TOAST
and indexes).
"""

from __future__ import annotations

import argparse
import inspect
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
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import apsw

from palimpsest.storage.codec import encode_message
from palimpsest.storage.factory import open_store
from palimpsest.storage.fts_layout import set_fts_option
from palimpsest.storage.fts_query import RANK_WINDOW, build_search, run_search
from palimpsest.storage.maintenance import maintain
from palimpsest.storage.sessions import SessionStore

DEFAULT_CORPUS = Path("/work/shared/data/transcripts")
#: Issue 11, item 5: ratios to the floor and absolute aims.
AIMS = {
    "insert_time_ratio": 1.3,
    "size_x_raw": 2.5,
    "selective_p95_ms": 10.0,
    "natural_p95_ms": 100.0,
    "append_max_ms": 50.0,
}
TOP_K_FOUND = 10
STALL_MS = 50.0

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
#: (planted answer, question asked for it in other word forms); ``{x}`` is a rare word
#: unique to one plant. Newer near-matches repeat the answer with a common word for ``{x}``.
PLANTS = [
    (
        "We fixed the {x} deployment by rotating the credentials and restarting the workers.",
        "how did we fix the {x} deploys, something about rotated credentials?",
    ),
    (
        "The {x} migration failed because the index was dropped before the backfill finished.",
        "why did the {x} migrations fail?",
    ),
    (
        "Decided to cache the {x} responses for ten minutes to cut the dashboard latency.",
        "what did we decide about caching {x} responses?",
    ),
    (
        "The {x} tests were flaky since the fixture reused a temporary directory between runs.",
        "why were the {x} tests failing randomly?",
    ),
    (
        "Upgrading the {x} dependency to version 4.2 resolved the memory leak in production.",
        "which version of {x} fixed the leaking memory?",
    ),
]
SYLLABLES = ["zor", "quv", "blix", "wemp", "trak", "ny", "dro", "felk", "gup", "oss", "vra"]
NEAR_MATCH_RATE = 0.03
#: Function words the floor leaves out of an OR query (a plain baseline, not our list).
_FLOOR_STOP_TEXT = """a an and are about as at be but by can did do does for from had has have how
i in is it me of on or remind so some something that the then there these this to was we
were what when where which who why will with you your"""
FLOOR_STOPWORDS = frozenset(_FLOOR_STOP_TEXT.split())

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
    """Deterministic mixed messages: prose, code, tool calls, tool output, some CJK, and
    planted answers buried under newer near-matches."""

    def __init__(
        self,
        seed: int,
        corpus: tuple[list[str], list[int], list[str], list[str]],
        total: int,
        plants: int,
    ):
        self.rng = random.Random(seed)
        self.vocab, weights, self.code, self.output = corpus
        total_weight = 0
        self.cum: list[int] = []
        for w in weights:
            total_weight += w
            self.cum.append(total_weight)
        self.raw_bytes = 0
        self.samples: list[str] = []  # some stored prose, for phrase queries that exist
        known = set(self.vocab)
        self.plants: dict[int, tuple[str, str]] = {}  # stream index -> (answer, question)
        for k in range(plants):
            word = ""
            while not word or word in known:
                word = "".join(self.rng.choice(SYLLABLES) for _ in range(3)) + "ix"
            known.add(word)
            answer, question = PLANTS[k % len(PLANTS)]
            position = int(total * 0.2 * (k + 0.5) / plants)
            self.plants[position] = (answer.format(x=word), question.format(x=word))
        self.first_plant = min(self.plants, default=total)

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

    def single(self) -> dict[str, Any]:
        """A short chat turn for the single-append stream."""
        role = "user" if self.rng.random() < 0.5 else "assistant"
        return self._counted({"role": role, "content": self.prose(8, 40)})

    def message(self, index: int) -> dict[str, Any]:
        if index in self.plants:
            return self._counted({"role": "assistant", "content": self.plants[index][0]})
        r = self.rng.random()
        if index > self.first_plant and r < NEAR_MATCH_RATE:
            answer = self.rng.choice(PLANTS)[0].format(x=self.rng.choice(self.vocab[:300]))
            return self._counted({"role": "assistant", "content": answer + " " + self.prose(5, 15)})
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
        return self._counted(msg)

    def _counted(self, msg: dict[str, Any]) -> dict[str, Any]:
        size = len(msg["content"].encode())
        if "tool_calls" in msg:
            size += len(json.dumps(msg["tool_calls"]).encode())
        self.raw_bytes += size
        return msg


# -- the floor ----------------------------------------------------------------------------


def indexed_text(msg: dict[str, Any]) -> str:
    """The text the store indexes for ``msg``: content, tool name, tool-call JSON."""
    row = encode_message(msg)
    return f"{row['content'] or ''} {row['tool_name'] or ''} {row['tool_calls'] or ''}"


class Floor:
    """The yardstick: one table, one FTS5 ``porter unicode61`` external-content index."""

    def __init__(self, path: Path) -> None:
        create = not path.exists()
        self.path = path
        self.con = apsw.Connection(str(path))
        self.con.execute("PRAGMA journal_mode = WAL")
        self.con.execute("PRAGMA synchronous = NORMAL")
        if create:
            self.con.execute(
                "CREATE TABLE docs (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL,"
                " role TEXT NOT NULL, text TEXT NOT NULL);"
                "CREATE VIRTUAL TABLE docs_fts USING fts5(text, content='docs',"
                " content_rowid='id', tokenize='porter unicode61');"
            )

    def insert(self, session_id: str, msgs: list[dict[str, Any]]) -> None:
        """One transaction: the rows, then one ``INSERT ... SELECT`` into the index."""
        con = self.con
        con.execute("BEGIN IMMEDIATE")
        con.executemany(
            "INSERT INTO docs (session_id, role, text) VALUES (?, ?, ?)",
            [(session_id, m["role"], indexed_text(m)) for m in msgs],
        )
        first = con.last_insert_rowid() - len(msgs) + 1
        con.execute(
            "INSERT INTO docs_fts (rowid, text) SELECT id, text FROM docs WHERE id >= ?", (first,)
        )
        con.execute("COMMIT")

    def search(self, match: str, limit: int = 20) -> list[int]:
        return [
            row[0]
            for row in self.con.execute(
                "SELECT d.id, snippet(docs_fts, 0, '>>>', '<<<', '...', 40) FROM docs_fts"
                " JOIN docs AS d ON d.id = docs_fts.rowid WHERE docs_fts MATCH ?"
                " ORDER BY rank LIMIT ?",
                (match, limit),
            )
        ]

    def ids_of(self, texts: list[str]) -> dict[str, int]:
        marks = ", ".join("?" for _ in texts)
        found = self.con.execute(f"SELECT text, id FROM docs WHERE text IN ({marks})", texts)
        return {text: int(i) for text, i in found}

    def optimize(self) -> None:
        self.con.execute("INSERT INTO docs_fts (docs_fts) VALUES ('optimize')")

    def close(self) -> None:
        self.con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.con.close()


def floor_match(query: str, kind: str) -> str | None:
    """The floor's FTS5 query: terms ANDed, questions ORed without function words."""
    if kind.startswith("cjk"):
        return None  # unicode61 has no answer for CJK substrings; the store's trigram does
    if kind == "phrase":
        return query
    words = re.findall(r"[a-z0-9_]+", query.lower())
    if kind in ("natural", "planted"):
        kept = [w for w in words if w not in FLOOR_STOPWORDS] or words
        return " OR ".join(f'"{w}"' for w in kept)
    return " ".join(f'"{w}"' for w in words)


# -- inserting ----------------------------------------------------------------------------


class _Replay:
    """Stands in for the store to replay generation only (``--queries-only``)."""

    def create_session(self, *args: Any, **kwargs: Any) -> None:
        pass

    def append_messages(self, *args: Any, **kwargs: Any) -> None:
        pass


def _timed(fn: Callable[[], Any]) -> tuple[float, float]:
    c0 = time.process_time()
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0


def insert_all(
    store: SessionStore | _Replay,
    floor: Floor | None,
    gen: Generator,
    total: int,
    batch: int,
    between: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Append ``total`` messages in sessions of 50-400 messages, ``batch`` per transaction,
    to the store and the floor alternately; after each batch, one single append to each."""
    wall = {"store": 0.0, "floor": 0.0}
    cpu = {"store": 0.0, "floor": 0.0}
    single: dict[str, list[float]] = {"store": [], "floor": []}
    live = "bench_live"
    store.create_session(live, source="cli", model="bench-model", title="Live session")
    done = session_no = batch_no = 0
    report_every = max(total // 10, 1)
    next_report = report_every
    while done < total:
        sid = f"bench_{session_no:06d}"
        source = "cron" if session_no % 10 == 9 else "cli"
        store.create_session(sid, source=source, model="bench-model", title=f"Bench {session_no}")
        size = min(gen.rng.randint(50, 400), total - done)
        written = 0
        while written < size:
            n = min(batch, size - written)
            msgs = [gen.message(done + written + i) for i in range(n)]
            turn = gen.single()
            jobs: list[tuple[str, Callable[[], Any], Callable[[], Any]]] = [
                (
                    "store",
                    partial(store.append_messages, sid, msgs),
                    partial(store.append_messages, live, [turn]),
                )
            ]
            if floor is not None:
                jobs.append(
                    ("floor", partial(floor.insert, sid, msgs), partial(floor.insert, live, [turn]))
                )
            if batch_no % 2:
                jobs.reverse()  # neither side always runs second, on a warmer cache
            for name, bulk, _ in jobs:
                w, c = _timed(bulk)
                wall[name] += w
                cpu[name] += c
            for name, _, one in jobs:
                single[name].append(_timed(one)[0] * 1000)
            written += n
            batch_no += 1
            if between is not None:
                between(batch_no)
        done += size
        session_no += 1
        if done >= next_report and cpu["store"] > 0:
            line = f"  {done:>9,} messages: store {done / wall['store']:,.0f}/s"
            if floor is not None:
                line += f", floor {done / wall['floor']:,.0f}/s"
            print(line, file=sys.stderr, flush=True)
            next_report += report_every
    return {
        "messages": done,
        "sessions": session_no,
        "batches": batch_no,
        "wall": wall,
        "cpu": cpu,
        "single": single,
    }


def table_sizes(path: Path) -> dict[str, int]:
    con = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        sizes: Counter[str] = Counter()
        for name, size in con.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name"):
            group = name
            for prefix in (
                "messages_fts_trigram",
                "messages_fts",
                "docs_fts",
                "sqlite_autoindex",
                "idx_",
            ):
                if name.startswith(prefix):
                    group = prefix.rstrip("_") if prefix != "idx_" else "indexes"
                    break
            sizes[group] += int(size)
        return dict(sizes.most_common())
    finally:
        con.close()


def spread(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    if not ordered:
        return {"n": 0}
    at = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {
        "n": len(ordered),
        "p50": statistics.median(ordered),
        "p95": at(0.95),
        "p99": at(0.99),
        "max": ordered[-1],
        "over_50ms": sum(1 for v in ordered if v > STALL_MS),
    }


# -- querying -----------------------------------------------------------------------------


def build_queries(gen: Generator, n: int) -> dict[str, list[str]]:
    """``class -> queries`` drawn from the same vocabulary as the data."""
    rng = random.Random(gen.rng.random())
    vocab = gen.vocab
    rare = vocab[len(vocab) // 3 :]  # long tail: each word in few messages
    common = vocab[50:2000]
    selective = []
    for i in range(n):
        if i % 2:
            selective.append(rng.choice(rare))
        else:
            selective.append(f"{rng.choice(rare)} {rng.choice(common)}")
    natural = []
    for _ in range(n):
        topic = " ".join(rng.choice(common) for _ in range(rng.randint(2, 4)))
        natural.append(f"{rng.choice(QUESTION_STARTS)} {topic}")
    phrase = []
    for i in range(n):
        # two or three consecutive words of a message that was stored
        text = gen.samples[i % len(gen.samples)] if gen.samples else gen.prose(6, 12)
        words = re.findall(r"[a-z0-9_]+", text.lower())
        size = 2 + i % 2
        start = rng.randrange(max(1, len(words) - size))
        phrase.append('"' + " ".join(words[start : start + size]) + '"')
    cjk = []
    for i in range(n):
        pool = ZH if i % 2 else JA
        start = rng.randrange(len(pool) - 4)
        cjk.append(pool[start : start + (3, 4, 2, 1)[i % 4]])
    return {
        "selective": selective,
        "natural": natural,
        "phrase": phrase,
        "planted": [question for _, question in gen.plants.values()],
        "cjk_trigram": [q for q in cjk if len(q) >= 3],
        "cjk_like": [q for q in cjk if len(q) < 3],
    }


#: ``search_messages`` grew a ``match`` mode (issue 11, item 1): use it when present.
HAS_MATCH_MODE = "match" in inspect.signature(SessionStore.search_messages).parameters


def ask_store(store: SessionStore, query: str, kind: str, window: int | None) -> list[int]:
    question = kind in ("natural", "planted")
    if HAS_MATCH_MODE:
        mode = "auto" if question else "all"
        hits = store.search_messages(query, limit=20, match=mode)  # type: ignore[call-arg]
    else:
        plan = build_search(
            query,
            limit=20,
            has_trigram=store.has_trigram,
            has_fts=store.has_fts5,
            match_any=question,
            rank_window=window,
        )
        with store.connection_for_reads() as con:
            hits = run_search(con, plan)
    return [int(hit["id"]) for hit in hits]


def time_class(
    store: SessionStore,
    floor: Floor | None,
    queries: list[str],
    kind: str,
    window: int | None,
    planted: dict[str, tuple[int | None, int | None]],
) -> dict[str, Any]:
    """Each query against the store and the floor in turn (alternating which goes first)."""
    times: dict[str, list[float]] = {"store": [], "floor": []}
    hits: dict[str, list[int]] = {"store": [], "floor": []}
    found = {"store": 0, "floor": 0}
    for i, query in enumerate(queries):
        match = floor_match(query, kind) if floor is not None else None
        jobs: list[tuple[str, Callable[[], list[int]]]] = [
            ("store", partial(ask_store, store, query, kind, window))
        ]
        if match is not None and floor is not None:
            jobs.append(("floor", partial(floor.search, match)))
        if i % 2:
            jobs.reverse()
        for name, ask in jobs:
            t0 = time.perf_counter()
            ids = ask()
            times[name].append((time.perf_counter() - t0) * 1000)
            hits[name].append(len(ids))
            want = planted.get(query, (None, None))[0 if name == "store" else 1]
            if want is not None and want in ids[:TOP_K_FOUND]:
                found[name] += 1
    return {
        name: {
            **spread(times[name]),
            "mean_hits": statistics.mean(hits[name]) if hits[name] else 0.0,
            "found": found[name],
        }
        for name in times
        if times[name]
    }


# -- the run ------------------------------------------------------------------------------


def _verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=1000, help="messages per transaction")
    parser.add_argument("--seed", type=int, default=20260521)
    parser.add_argument("--queries", type=int, default=100, help="queries per class")
    parser.add_argument("--plants", type=int, default=20, help="old answers to plant")
    parser.add_argument("--layout", choices=["inline", "external"], default=None)
    parser.add_argument(
        "--rank-window",
        type=int,
        default=RANK_WINDOW,
        help=f"without match modes: BM25 ranks the newest N matches (default {RANK_WINDOW}; 0: all)",
    )
    parser.add_argument("--no-floor", action="store_true", help="skip the plain FTS5 floor")
    parser.add_argument(
        "--maintain",
        action="store_true",
        help="run the store's maintenance (and an FTS5 optimize of the floor) before queries",
    )
    parser.add_argument(
        "--maintain-every",
        type=int,
        default=0,
        help="run the store's maintenance (timed apart) every N batches: a background step",
    )
    experiments = parser.add_argument_group("write-path experiments (store only)")
    experiments.add_argument("--automerge", type=int, help="FTS5 automerge for the store's indexes")
    experiments.add_argument(
        "--no-background-upkeep",
        action="store_true",
        help="no upkeep thread in the store (merging and checkpoints then only by --maintain-every)",
    )
    experiments.add_argument(
        "--wal-autocheckpoint", type=int, help="SQLite's WAL autocheckpoint pages"
    )
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--db", type=Path, help="database file (default: a temp dir)")
    parser.add_argument(
        "--url",
        help="a postgresql:// URL: measure a PostgreSQL store in a fresh schema of that database",
    )
    parser.add_argument("--keep", action="store_true", help="keep the database files")
    parser.add_argument("--json", action="store_true", help="also print the results as JSON")
    parser.add_argument(
        "--queries-only",
        action="store_true",
        help="reuse --db (and floor.db beside it) from an earlier run with the same "
        "--messages/--seed/--plants: time queries only",
    )
    args = parser.parse_args(argv)

    tmp = None
    if args.db is None:
        tmp = tempfile.TemporaryDirectory(prefix="palimpsest-bench-")
        args.db = Path(tmp.name) / "state.db"
    floor_path = args.db.with_name("floor.db")
    if args.db.exists() != args.queries_only:
        raise SystemExit(f"{args.db}: {'missing' if args.queries_only else 'exists'}")
    if not args.queries_only and floor_path.exists():
        raise SystemExit(f"{floor_path}: exists")
    gen = Generator(args.seed, load_corpus(args.corpus), args.messages, args.plants)
    results: dict[str, Any] = {"messages": args.messages, "match_modes": HAS_MATCH_MODE}
    print(
        f"store_scale: {args.messages:,} messages, batch {args.batch}, "
        f"SQLite {apsw.sqlite_lib_version()}, {os.cpu_count()} CPUs, {platform.platform()}, "
        f"load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    if args.url:
        if args.queries_only:
            raise SystemExit("--queries-only is for SQLite files")
        args.url, schema = pg_schema(args.url)
        results["postgresql_schema"] = schema
        store: Any = open_store(args.url)
        floor = None if args.no_floor else Floor(floor_path)
        print(f"PostgreSQL store in schema {schema}", flush=True)
        results.update(report_inserts(store, floor, gen, args))
    elif args.queries_only:
        insert_all(_Replay(), None, gen, args.messages, args.batch)  # same RNG path, no writes
        store = SessionStore(args.db)
        floor = Floor(floor_path) if floor_path.exists() else None
    else:
        store = SessionStore(
            args.db, fts_layout=args.layout, background_upkeep=not args.no_background_upkeep
        )
        floor = None if args.no_floor else Floor(floor_path)
        results["experiments"] = apply_experiments(store, args)
        results.update(report_inserts(store, floor, gen, args))
    layout = getattr(store, "fts_layout", store.backend)
    print(f"store layout {layout}, schema version {store.schema_version}")
    if args.maintain and not args.url:
        results["maintain"] = run_maintenance(store, floor)
    return report_queries(store, floor, gen, args, results, tmp)


def pg_schema(url: str) -> tuple[str, str]:
    """A fresh schema in the database at ``url``, and the URL that puts it first on the
    search path (then ``public``, where ``pg_trgm`` lives)."""
    import secrets
    from urllib.parse import quote

    import psycopg

    schema = f"bench_{secrets.token_hex(4)}"
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public")
        con.execute(f"CREATE SCHEMA {schema}")
    joiner = "&" if "?" in url else "?"
    return f"{url}{joiner}options={quote(f'-csearch_path={schema},public')}", schema


def pg_sizes(url: str) -> dict[str, int]:
    """Bytes per relation group of the store's schema (heap, TOAST, indexes)."""
    import psycopg

    with psycopg.connect(url) as con:
        found = con.execute(
            "SELECT c.relname, c.relkind, pg_total_relation_size(c.oid), pg_relation_size(c.oid)"
            " FROM pg_class AS c WHERE c.relnamespace = current_schema()::regnamespace"
            " AND c.relkind IN ('r', 'i')"
        ).fetchall()
    sizes: Counter[str] = Counter()
    for name, kind, total, own in found:
        if kind == "r":
            sizes[f"{name} (table+toast)"] += int(total) - _index_bytes(found, name)
        else:
            sizes[name] += int(own)
    return dict(sizes.most_common())


def _index_bytes(found: list[Any], table: str) -> int:
    prefix = {"messages": "idx_messages", "sessions": "idx_sessions"}.get(table)
    own_pkey = f"{table}_pkey"
    return sum(
        int(own)
        for name, kind, _total, own in found
        if kind == "i" and (name == own_pkey or (prefix and name.startswith(prefix)))
    )


def drop_schema(url: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as con:
        con.execute(f"DROP SCHEMA {schema} CASCADE")


def apply_experiments(store: SessionStore, args: argparse.Namespace) -> dict[str, int]:
    """Write-path settings other modules own, tried here before recommending them."""
    applied = {}
    if args.automerge is not None:
        for table in ("messages_fts", "messages_fts_trigram"):
            store.database.write(
                partial(set_fts_option, table=table, key="automerge", value=args.automerge)
            )
        applied["automerge"] = args.automerge
    if args.wal_autocheckpoint is not None:
        store.database.writer.wal_autocheckpoint(args.wal_autocheckpoint)
        applied["wal_autocheckpoint"] = args.wal_autocheckpoint
    if applied:
        print(f"write-path experiments: {applied}")
    return applied


def report_inserts(
    store: SessionStore, floor: Floor | None, gen: Generator, args: argparse.Namespace
) -> dict[str, Any]:
    started = time.perf_counter()
    upkeep: list[float] = []

    def between(batch_no: int) -> None:
        if args.maintain_every and batch_no % args.maintain_every == 0:
            t0 = time.perf_counter()
            maintain(store.database)
            upkeep.append((time.perf_counter() - t0) * 1000)

    ins = insert_all(store, floor, gen, args.messages, args.batch, between)
    print(f"insert phase took {time.perf_counter() - started:,.0f} s wall (generation included)")
    if upkeep:
        s = spread(upkeep)
        print(
            f"background maintenance every {args.maintain_every} batches (not in insert time): "
            f"n {s['n']}, p50 {s['p50']:.0f} ms, max {s['max']:.0f} ms, total {sum(upkeep) / 1000:.1f} s"
        )
    out: dict[str, Any] = {"raw_bytes": gen.raw_bytes, "sessions": ins["sessions"]}
    if getattr(store, "upkeep", None) is not None:
        # The thread ran beside both sides' inserts (its CPU is in both CPU figures).
        st = store.upkeep.stats
        out["background_upkeep"] = {
            "merge_steps": st.merge_steps,
            "merge_s": st.merge_seconds,
            "longest_step_ms": st.longest_step_seconds * 1000,
            "checkpoints": st.checkpoints,
            "locked_checkpoints": st.locked_checkpoints,
            "longest_locked_checkpoint_ms": st.longest_locked_checkpoint_seconds * 1000,
            "checkpoint_s": st.checkpoint_seconds,
            "errors": st.errors,
            "shared_merges": st.shared_merges,
        }
        print(
            f"background upkeep during inserts (a thread, beside both sides): "
            f"{st.merge_steps} merge steps, {st.merge_seconds:.1f} s holding the write lock, "
            f"longest {st.longest_step_seconds * 1000:.1f} ms; {st.checkpoints} checkpoints "
            f"({st.locked_checkpoints} under the lock, longest "
            f"{st.longest_locked_checkpoint_seconds * 1000:.1f} ms), {st.checkpoint_seconds:.1f} s; "
            f"errors {st.errors}; bulk appends that also merged (thread behind): "
            f"{st.shared_merges}"
        )
        t0 = time.perf_counter()
        drained = store.upkeep.wait_idle(3600)
        out["background_upkeep"]["drain_s"] = time.perf_counter() - t0
        print(
            f"  upkeep left after the last insert (merging, session secrets): "
            f"{time.perf_counter() - t0:.1f} s ({drained=})"
        )
    keeper = getattr(store, "secrets", None)
    if keeper is not None:  # PostgreSQL: the session secrets' own thread
        t0 = time.perf_counter()
        drained = keeper.wait_idle(3600)
        out["secrets_drain_s"] = time.perf_counter() - t0
        print(
            f"  session secrets left after the last insert: {out['secrets_drain_s']:.1f} s"
            f" ({drained=})"
        )
    if isinstance(store, SessionStore):
        store.checkpoint("TRUNCATE")
    if floor is not None:
        floor.con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw = gen.raw_bytes
    print(
        f"inserted {ins['messages']:,} messages in {ins['sessions']:,} sessions "
        f"({ins['batches']:,} batches) plus one single append per batch; "
        f"raw text {raw / 1e6:,.1f} MB"
    )
    sides = ["store"] + (["floor"] if floor is not None else [])
    for side in sides:
        path = args.db if side == "store" else floor_path_of(args)
        pg = side == "store" and bool(args.url)
        tables = pg_sizes(args.url) if pg else table_sizes(path)
        size = sum(tables.values()) if pg else path.stat().st_size
        rate = ins["messages"] / ins["wall"][side]
        out[side] = {
            "insert_s": ins["wall"][side],
            "insert_cpu_s": ins["cpu"][side],
            "insert_per_s": rate,
            "db_bytes": size,
            "x_raw": size / raw,
            "tables": tables,
            "single_append_ms": spread(ins["single"][side]),
        }
        print(
            f"  {side}: insert {ins['wall'][side]:,.1f} s -> {rate:,.0f} messages/s "
            f"({ins['messages'] / ins['cpu'][side]:,.0f} per CPU-s); "
            f"file {size / 1e6:,.1f} MB = {size / raw:.2f}x raw"
        )
        for name, table_bytes in out[side]["tables"].items():
            if table_bytes >= 100_000:
                print(
                    f"      {name:<22} {table_bytes / 1e6:>10,.1f} MB  {table_bytes / raw:5.2f}x raw"
                )
        s = out[side]["single_append_ms"]
        print(
            f"      single appends: n {s['n']}, p50 {s['p50']:.2f} ms, p99 {s['p99']:.1f} ms, "
            f"max {s['max']:.1f} ms, over {STALL_MS:.0f} ms: {s['over_50ms']}"
        )
    store_s = out["store"]
    print(
        f"  store: size {store_s['x_raw']:.2f}x raw (aim <= {AIMS['size_x_raw']}x: "
        f"{_verdict(store_s['x_raw'] <= AIMS['size_x_raw'])}); single-append max "
        f"{store_s['single_append_ms']['max']:.1f} ms (aim <= {AIMS['append_max_ms']:.0f} ms: "
        f"{_verdict(store_s['single_append_ms']['max'] <= AIMS['append_max_ms'])})"
    )
    if floor is not None:
        ratio = out["store"]["insert_s"] / out["floor"]["insert_s"]
        cpu_ratio = out["store"]["insert_cpu_s"] / out["floor"]["insert_cpu_s"]
        out["insert_time_ratio"] = ratio
        out["insert_cpu_ratio"] = cpu_ratio
        out["size_ratio"] = out["store"]["db_bytes"] / out["floor"]["db_bytes"]
        print(
            f"  store/floor: insert time {ratio:.2f}x (CPU {cpu_ratio:.2f}x; aim <= "
            f"{AIMS['insert_time_ratio']}x: {_verdict(ratio <= AIMS['insert_time_ratio'])}), "
            f"file {out['size_ratio']:.2f}x"
        )
    return out


def floor_path_of(args: argparse.Namespace) -> Path:
    return Path(args.db).with_name("floor.db")


def run_maintenance(store: SessionStore, floor: Floor | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    t0 = time.perf_counter()
    report = maintain(store.database, optimize=True)
    out["store_s"] = time.perf_counter() - t0
    print(f"store maintain --optimize: {out['store_s']:.1f} s: {report.merge_steps}")
    if floor is not None:
        t0 = time.perf_counter()
        floor.optimize()
        out["floor_s"] = time.perf_counter() - t0
        print(f"floor FTS5 optimize: {out['floor_s']:.1f} s")
    return out


def planted_ids(
    store: SessionStore, floor: Floor | None, gen: Generator
) -> dict[str, tuple[int | None, int | None]]:
    """``question -> (store id, floor id)`` of each planted answer (one scan each)."""
    answers = {answer: question for answer, question in gen.plants.values()}
    if not answers:
        return {}
    marks = ", ".join("?" for _ in answers)
    with store.connection_for_reads() as con:
        in_store = dict(
            con.execute(
                f"SELECT content, id FROM messages WHERE content IN ({marks})", list(answers)
            )
        )
    texts = {indexed_text({"role": "assistant", "content": a}): a for a in answers}
    in_floor = {texts[t]: i for t, i in floor.ids_of(list(texts)).items()} if floor else {}
    return {q: (in_store.get(a), in_floor.get(a)) for a, q in answers.items()}


def report_queries(
    store: SessionStore,
    floor: Floor | None,
    gen: Generator,
    args: argparse.Namespace,
    results: dict[str, Any],
    tmp: tempfile.TemporaryDirectory[str] | None = None,
) -> int:
    queries = build_queries(gen, args.queries)
    planted = planted_ids(store, floor, gen)
    window = args.rank_window or None
    mode = "search_messages(match=...)" if HAS_MATCH_MODE else f"build_search, window {window}"
    for query in queries["selective"][:5]:  # warm the page cache a little, as in use
        ask_store(store, query, "selective", window)
        if floor is not None:
            floor.search(floor_match(query, "selective") or query)
    for label in ("first run", "second run"):
        print(f"latency, {label} ({args.queries} queries per class, limit 20; store via {mode}):")
        for kind, items in queries.items():
            stats = time_class(store, floor, items, kind, window, planted)
            results[f"{kind} ({label})"] = stats
            st = stats["store"]
            line = (
                f"  {kind:<12} store p50 {st['p50']:6.1f} p95 {st['p95']:6.1f} ms "
                f"hits {st['mean_hits']:4.1f}"
            )
            fl = stats.get("floor")
            if fl:
                line += (
                    f" | floor p50 {fl['p50']:6.1f} p95 {fl['p95']:6.1f} ms hits "
                    f"{fl['mean_hits']:4.1f} | p95 ratio {st['p95'] / max(fl['p95'], 1e-6):.2f}x"
                )
            if kind == "planted":
                line += f" | found in top {TOP_K_FOUND}: store {st['found']}/{len(items)}"
                if fl:
                    line += f", floor {fl['found']}/{len(items)}"
            aim = {"selective": "selective_p95_ms", "natural": "natural_p95_ms"}.get(kind)
            if aim:
                line += f" (aim p95 <= {AIMS[aim]:.0f} ms: {_verdict(st['p95'] <= AIMS[aim])})"
            print(line, flush=True)
    store.close()
    if floor is not None:
        floor.close()
    if args.json:
        print(json.dumps(results, indent=2, ensure_ascii=False, default=str))
    if args.url and not args.keep:
        drop_schema(args.url, results["postgresql_schema"])
    if args.keep:
        print(f"kept {args.db}" + (f" and {floor.path}" if floor is not None else ""))
    elif tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
