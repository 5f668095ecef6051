"""Does session search find what people ask for? Recall against a plain FTS5 baseline.

Generates (:mod:`recall_corpus`, deterministic for ``--seed``) ``--conversations``
multi-session conversations between a person and an assistant, each session dated on its
own day over one year, with facts about people (who did what, where, names, numbers,
preferences, plans) in known user turns, and one question per fact, tagged by what it
tests:

* ``form``: another word form than the answer uses (research / researching);
* ``pronoun``: the question says he/she/his/her/him;
* ``punct``: a possessive or hyphenated word (``Priya's``, ``home-baked``);
* ``date``: a month and year that only the session's start date carries;
* ``buried``: five or more newer sessions of the same conversation hold look-alikes (same
  person, same topic words, other details).

Everything is loaded into a real ``SessionStore`` in a temp dir and, in the same run, into
the baseline: one table plus one external-content FTS5 ``porter unicode61`` index over the
same message texts, queried with the question's words OR-ed, ranked by ``bm25`` (a
session's rank is its best message's). Reported, for both: session any@1 and any@5, turn
any@5 (any@k: a gold session or turn is among the top k), overall and per tag, and query
latency p50/p95. "Ours" is ``SessionStore.search_messages`` for turns and the
``session_search`` tool (``SessionSearch``, no model) for sessions, with ``match="auto"``
when their signatures take a ``match`` argument.

Run: ``python benchmarks/search_recall.py [--conversations 12] [--sessions 20] [--seed 11]
[--json]``.
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import os
import platform
import re
import sys
import tempfile
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw

from palimpsest.storage.search import SessionSearch
from palimpsest.storage.sessions import SessionStore
from recall_corpus import TAGS, Corpus, Question, generate

STEP_SECONDS = 90.0
"""Seconds between the messages of a session."""


# -- loading ----------------------------------------------------------------------------


def load_store(path: Path, corpus: Corpus) -> tuple[SessionStore, dict[tuple[str, int], int]]:
    """Every session into a real ``SessionStore``, dated; returns the store and the message
    id of each (session id, message index)."""
    store = SessionStore(path)
    ids: dict[tuple[str, int], int] = {}
    for session in corpus.sessions:
        store.create_session(session.sid, source="cli", model="recall-bench")
        got = store.append_messages(
            session.sid, [{"role": role, "content": text} for role, text in session.turns]
        )
        ids.update({(session.sid, i): mid for i, mid in enumerate(got)})

    def stamp(con: apsw.Connection) -> None:
        con.executemany(
            "UPDATE sessions SET started_at = ?, ended_at = ?, end_reason = 'new_session'"
            " WHERE id = ?",
            [(s.start, s.start + STEP_SECONDS * len(s.turns), s.sid) for s in corpus.sessions],
        )
        con.executemany(
            "UPDATE messages SET timestamp = ? WHERE id = ?",
            [
                (s.start + STEP_SECONDS * i, ids[(s.sid, i)])
                for s in corpus.sessions
                for i in range(len(s.turns))
            ],
        )

    store.database.write(stamp)
    return store, ids


def load_baseline(path: Path, corpus: Corpus, ids: dict[tuple[str, int], int]) -> apsw.Connection:
    """The yardstick: one table, one external-content FTS5 ``porter unicode61`` index."""
    con = apsw.Connection(str(path))
    con.execute(
        "CREATE TABLE docs (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, content TEXT);"
        "CREATE VIRTUAL TABLE docs_fts USING fts5(content, content='docs', content_rowid='id',"
        " tokenize='porter unicode61');"
    )
    with con:
        con.executemany(
            "INSERT INTO docs (id, session_id, content) VALUES (?, ?, ?)",
            [
                (ids[(s.sid, i)], s.sid, text)
                for s in corpus.sessions
                for i, (_, text) in enumerate(s.turns)
            ],
        )
        con.execute("INSERT INTO docs_fts (docs_fts) VALUES ('rebuild')")
    return con


# -- searching --------------------------------------------------------------------------


def baseline_query(question: str) -> str:
    """The question's distinct words, each quoted, OR-ed."""
    words = dict.fromkeys(re.findall(r"\w+", question.lower()))
    return " OR ".join(f'"{w}"' for w in words)


def baseline_turns(con: apsw.Connection, question: str, k: int = 5) -> list[int]:
    sql = "SELECT rowid FROM docs_fts WHERE docs_fts MATCH ? ORDER BY bm25(docs_fts) LIMIT ?"
    return [row[0] for row in con.execute(sql, (baseline_query(question), k))]


def baseline_sessions(con: apsw.Connection, question: str, k: int = 5) -> list[str]:
    sql = (
        "WITH hit AS MATERIALIZED (SELECT rowid AS id, bm25(docs_fts) AS score FROM docs_fts"
        " WHERE docs_fts MATCH ?) SELECT d.session_id, MIN(hit.score) AS best FROM hit"
        " JOIN docs AS d ON d.id = hit.id GROUP BY d.session_id ORDER BY best, d.session_id"
        " LIMIT ?"
    )
    return [row[0] for row in con.execute(sql, (baseline_query(question), k))]


def match_auto(fn: Callable[..., Any]) -> dict[str, Any]:
    """``{"match": "auto"}`` when ``fn`` takes a ``match`` argument (the issue 11 API), else
    nothing: the call then runs with the library's current default behaviour."""
    return {"match": "auto"} if "match" in inspect.signature(fn).parameters else {}


class OurSearch:
    """Turns from ``search_messages``, sessions from the ``session_search`` tool (raw mode)."""

    def __init__(self, store: SessionStore) -> None:
        self.store = store
        self.turn_kwargs = match_auto(store.search_messages)
        self.tool = SessionSearch(store, None, **match_auto(SessionSearch))
        self.session_kwargs = match_auto(self.tool.search)

    def describe(self) -> dict[str, str]:
        def mode(found: dict[str, Any]) -> str:
            return "match='auto'" if found else "no match parameter: the library's default"

        tool_mode = self.session_kwargs or match_auto(SessionSearch)
        return {
            "turns": f"SessionStore.search_messages, {mode(self.turn_kwargs)}",
            "sessions": f"SessionSearch (no model), {mode(tool_mode)}",
        }

    def turns(self, question: str, k: int = 5) -> list[int]:
        hits = self.store.search_messages(question, limit=k, **self.turn_kwargs)
        return [int(h["id"]) for h in hits]

    def sessions(self, question: str, k: int = 5) -> list[str]:
        payload = self.tool.search(question, limit=k, **self.session_kwargs)
        if not payload.get("success"):
            raise RuntimeError(f"session_search failed on {question!r}: {payload.get('error')}")
        return [str(r["session_id"]) for r in payload["results"]]


# -- scoring ----------------------------------------------------------------------------


def any_at(ranked: Sequence[Any], gold: Collection[Any], k: int) -> bool:
    """True when one of the first ``k`` ranked items is gold."""
    return any(item in gold for item in ranked[:k])


@dataclass
class Ranking:
    """What one system returned for one question, and how long it took (seconds)."""

    sessions: list[str]
    turns: list[int]
    session_seconds: float
    turn_seconds: float


def hits(question: Question, ranking: Ranking, ids: dict[tuple[str, int], int]) -> dict[str, bool]:
    gold_turns = {ids[t] for t in question.gold_turns}
    return {
        "session@1": any_at(ranking.sessions, question.gold_sessions, 1),
        "session@5": any_at(ranking.sessions, question.gold_sessions, 5),
        "turn@5": any_at(ranking.turns, gold_turns, 5),
    }


def score(
    questions: Sequence[Question],
    rankings: Sequence[Ranking],
    ids: dict[tuple[str, int], int],
) -> dict[str, dict[str, float | int | None]]:
    """Per tag: the question count and the share of its questions each metric finds
    (``None`` for a tag no question has: unknown, not zero)."""
    found = [hits(q, r, ids) for q, r in zip(questions, rankings, strict=True)]
    table: dict[str, dict[str, float | int | None]] = {}
    for tag in TAGS:
        rows = [f for q, f in zip(questions, found, strict=True) if tag in q.tags]
        table[tag] = {"n": len(rows)}
        for metric in ("session@1", "session@5", "turn@5"):
            table[tag][metric] = sum(r[metric] for r in rows) / len(rows) if rows else None
    return table


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (``q`` in 0..100); ``None`` for no values."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)] if ordered else None


def latency(rankings: Sequence[Ranking]) -> dict[str, float | None]:
    out = {}
    for kind in ("turn", "session"):
        spent = [getattr(r, f"{kind}_seconds") * 1000 for r in rankings]
        out[f"{kind}_p50_ms"] = percentile(spent, 50)
        out[f"{kind}_p95_ms"] = percentile(spent, 95)
    return out


def _timed(fn: Callable[[str], list[Any]], question: str) -> tuple[list[Any], float]:
    t0 = time.perf_counter()
    found = fn(question)
    return found, time.perf_counter() - t0


def rank_all(
    questions: Sequence[Question],
    sessions: Callable[[str], list[str]],
    turns: Callable[[str], list[int]],
) -> list[Ranking]:
    out = []
    for q in questions:
        ranked_sessions, s_time = _timed(sessions, q.text)
        ranked_turns, t_time = _timed(turns, q.text)
        out.append(Ranking(ranked_sessions, ranked_turns, s_time, t_time))
    return out


# -- the run ----------------------------------------------------------------------------


def run(conversations: int, sessions: int, seed: int, workdir: Path) -> dict[str, Any]:
    """Generate the corpus for ``seed`` and :func:`evaluate` it in ``workdir``."""
    t0 = time.perf_counter()
    report = evaluate(generate(conversations, sessions, seed), workdir)
    config = {"conversations": conversations, "sessions": sessions, "seed": seed}
    return {"config": config, **report, "seconds": round(time.perf_counter() - t0, 2)}


def evaluate(corpus: Corpus, workdir: Path) -> dict[str, Any]:
    """Load ``corpus`` into both systems, ask every question of both; the report as a dict."""
    store, ids = load_store(workdir / "state.db", corpus)
    base = load_baseline(workdir / "baseline.db", corpus, ids)
    try:
        ours = OurSearch(store)
        ranked_ours = rank_all(corpus.questions, ours.sessions, ours.turns)
        ranked_base = rank_all(
            corpus.questions,
            lambda q: baseline_sessions(base, q),
            lambda q: baseline_turns(base, q),
        )
        described = ours.describe()
    finally:
        store.close()
        base.close()
    return {
        "corpus": {
            "sessions": len(corpus.sessions),
            "messages": len(ids),
            "questions": len(corpus.questions),
        },
        "ours": described,
        "baseline": "one table + FTS5 porter unicode61 (external content), words OR-ed, bm25",
        "scores": {
            "ours": score(corpus.questions, ranked_ours, ids),
            "baseline": score(corpus.questions, ranked_base, ids),
        },
        "latency": {"ours": latency(ranked_ours), "baseline": latency(ranked_base)},
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "sqlite": apsw.sqlite_lib_version(),
            "platform": platform.platform(),
        },
    }


def _pct(value: float | int | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def render(report: dict[str, Any]) -> str:
    """Both systems side by side, as text."""
    corpus, conf = report["corpus"], report["config"]
    ours, base = report["scores"]["ours"], report["scores"]["baseline"]
    lines = [
        f"search recall: {conf['conversations']} conversations, {corpus['sessions']} sessions,"
        f" {corpus['messages']} messages, {corpus['questions']} questions (seed {conf['seed']})",
        f"ours:     turns  = {report['ours']['turns']}",
        f"          sessions = {report['ours']['sessions']}",
        f"baseline: {report['baseline']}",
        "",
        f"{'':9}{'':>5} | {'session any@1':^17} | {'session any@5':^17} | {'turn any@5':^17}",
        f"{'type':9}{'n':>5} | {'ours':>8}{'fts5':>9} | {'ours':>8}{'fts5':>9} |"
        f" {'ours':>8}{'fts5':>9}",
    ]
    for tag in TAGS:
        cells = " | ".join(
            f"{_pct(ours[tag][m]):>8}{_pct(base[tag][m]):>9}"
            for m in ("session@1", "session@5", "turn@5")
        )
        lines.append(f"{tag:9}{ours[tag]['n']:>5} | {cells}")
    lines += ["", f"{'latency (ms)':22}{'p50':>8}{'p95':>8}"]
    for system in ("ours", "baseline"):
        lat = report["latency"][system]
        for kind in ("turn", "session"):
            p50, p95 = (_ms(lat[f"{kind}_p{q}_ms"]) for q in (50, 95))
            lines.append(f"{system + ' ' + kind + 's':22}{p50:>8}{p95:>8}")
    lines.append(f"\nwhole run: {report['seconds']} s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conversations", type=int, default=12)
    parser.add_argument("--sessions", type=int, default=20, help="mean sessions per conversation")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    if args.conversations < 1 or args.sessions < 1:
        parser.error("--conversations and --sessions must be at least 1")
    with tempfile.TemporaryDirectory(prefix="search-recall-") as tmp:
        report = run(args.conversations, args.sessions, args.seed, Path(tmp))
    print(json.dumps(report, indent=2) if args.json else render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
