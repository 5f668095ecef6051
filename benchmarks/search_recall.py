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
[--json] [--vectors] [--url postgresql://... | --backend pg]`` (PostgreSQL beside SQLite:
:mod:`search_recall_pg`).
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


def load_store(
    path: Path, corpus: Corpus, embedder: Any = None
) -> tuple[SessionStore, dict[tuple[str, int], int]]:
    """Every session into a real ``SessionStore``, dated; returns the store and the message
    id of each (session id, message index)."""
    store = SessionStore(path, embedder=embedder)
    ids = fill(store, corpus)

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


def fill(store: Any, corpus: Corpus) -> dict[tuple[str, int], int]:
    """Every session and message of ``corpus`` into ``store`` (either backend), undated;
    the message id of each (session id, message index)."""
    ids: dict[tuple[str, int], int] = {}
    for session in corpus.sessions:
        store.create_session(session.sid, source="cli", model="recall-bench")
        got = store.append_messages(
            session.sid, [{"role": role, "content": text} for role, text in session.turns]
        )
        ids.update({(session.sid, i): mid for i, mid in enumerate(got)})
    return ids


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


# -- search by meaning (the [vectors] extra) ---------------------------------------------

WEIGHTS = tuple(round(0.1 * i, 1) for i in range(11))
"""The fusion weights tried on the tuning half. 0.0 (words only, the meaning hits only
filling up the candidates) is scored and shown but not chosen: it turns the feature off."""


def split(questions: Sequence[Question]) -> tuple[list[Question], list[Question]]:
    """(tuning, held out): questions of even-numbered conversations tune the weight, the
    odd-numbered conversations' questions are only scored with the weight chosen."""
    tune = [q for q in questions if q.conversation % 2 == 0]
    held = [q for q in questions if q.conversation % 2 == 1]
    return tune, held


def _overall(table: dict[str, dict[str, float | int | None]]) -> float:
    row = table["all"]
    return float(row["session@5"] or 0.0) + float(row["turn@5"] or 0.0)


def load_embedder(spec: str) -> Any:
    """``"bundled"``, or ``module:attribute`` naming a callable ``list[str] ->
    list[list[float]]`` (for trying another model as the caller's own function)."""
    if spec == "bundled" or ":" not in spec:
        return spec
    import importlib

    from palimpsest.storage.embedding import EmbeddingModel

    module, _, attribute = spec.partition(":")
    return EmbeddingModel(name=spec, embed=getattr(importlib.import_module(module), attribute))


def evaluate_vectors(corpus: Corpus, workdir: Path, embedder: str = "bundled") -> dict[str, Any]:
    """Ours with the bundled model, the fusion weight tuned on one half of the questions
    (by conversation) and reported on the other, beside ours without vectors and the
    baseline on the same questions."""
    t0 = time.perf_counter()
    store, ids = load_store(workdir / "vectors.db", corpus, embedder=load_embedder(embedder))
    loaded = time.perf_counter() - t0
    base = load_baseline(workdir / "vectors-baseline.db", corpus, ids)
    plain = SessionStore(workdir / "vectors.db", background_upkeep=False)
    try:
        index = store.vectors
        assert index is not None
        t0 = time.perf_counter()
        embedded = index.embed_pending()
        embed_seconds = time.perf_counter() - t0
        ours = OurSearch(store)
        tune, held = split(corpus.questions)
        tried = {}
        for weight in WEIGHTS:
            index.weight = weight
            tried[weight] = score(tune, rank_all(tune, ours.sessions, ours.turns), ids)
        chosen = max(WEIGHTS[1:], key=lambda w: (_overall(tried[w]), -w))
        index.weight = chosen
        words = OurSearch(plain)
        systems = {
            "vectors": (ours.sessions, ours.turns),
            "words": (words.sessions, words.turns),
            "baseline": (lambda q: baseline_sessions(base, q), lambda q: baseline_turns(base, q)),
        }
        parts: dict[str, Any] = {}
        for part, questions in (("held_out", held), ("tuning", tune)):
            parts[part] = {}
            for name, (sess, turns) in systems.items():
                ranked = rank_all(questions, sess, turns)
                parts[part][name] = {
                    "scores": score(questions, ranked, ids),
                    "latency": latency(ranked),
                }
    finally:
        store.close()
        plain.close()
        base.close()
    return {
        "model": index.model.name,
        "messages_embedded": embedded,
        "embed_seconds": round(embed_seconds, 2),
        "load_seconds": round(loaded, 2),
        "weights_tried": {str(w): _overall(t) / 2 for w, t in tried.items()},
        "weight": chosen,
        "questions": {"tuning": len(tune), "held_out": len(held)},
        "parts": parts,
    }


def render_vectors(report: dict[str, Any]) -> str:
    lines = [
        f"\nby meaning ({report['model']}): {report['messages_embedded']} messages embedded"
        f" in {report['embed_seconds']} s; weight tuned on {report['questions']['tuning']}"
        f" questions (even conversations), chosen {report['weight']} (0.0 is not a choice)",
        "  tried (mean of session any@5 and turn any@5 on the tuning half): "
        + ", ".join(f"{w}: {100 * v:.1f}%" for w, v in report["weights_tried"].items()),
    ]
    for part in ("held_out", "tuning"):
        got = report["parts"][part]
        n = report["questions"][part]
        lines += [
            "",
            f"{part.replace('_', ' ')} ({n} questions)",
            f"{'type':9}{'n':>5} | {'session any@1':^26} | {'session any@5':^26} | {'turn any@5':^26}",
            f"{'':14} | {'vec':>8}{'words':>9}{'fts5':>9} | {'vec':>8}{'words':>9}{'fts5':>9} |"
            f" {'vec':>8}{'words':>9}{'fts5':>9}",
        ]
        for tag in TAGS:
            cells = " | ".join(
                "".join(
                    f"{_pct(got[s]['scores'][tag][m]):>{8 if s == 'vectors' else 9}}"
                    for s in ("vectors", "words", "baseline")
                )
                for m in ("session@1", "session@5", "turn@5")
            )
            lines.append(f"{tag:9}{got['vectors']['scores'][tag]['n']:>5} | {cells}")
        lat = got["vectors"]["latency"]
        lines.append(
            f"latency with vectors (ms, p50/p95): turns {_ms(lat['turn_p50_ms'])}/"
            f"{_ms(lat['turn_p95_ms'])}, sessions {_ms(lat['session_p50_ms'])}/"
            f"{_ms(lat['session_p95_ms'])}"
        )
    return "\n".join(lines)


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


def add_corpus_arguments(parser: argparse.ArgumentParser) -> None:
    """The generated corpus's size and seed, and ``--json``: the options every recall
    benchmark over :func:`recall_corpus.generate` takes."""
    parser.add_argument("--conversations", type=int, default=12)
    parser.add_argument("--sessions", type=int, default=20, help="mean sessions per conversation")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_corpus_arguments(parser)
    parser.add_argument(
        "--vectors",
        action="store_true",
        help="also search by meaning (needs the [vectors] extra): tune the fusion weight on"
        " half of the questions, report the other half",
    )
    parser.add_argument(
        "--embedder",
        default="bundled",
        help="with --vectors: 'bundled' or module:callable (list[str] -> list[list[float]])",
    )
    import search_recall_pg as pg  # the same corpus on PostgreSQL too

    pg.add_arguments(parser)
    args = parser.parse_args(argv)
    if args.conversations < 1 or args.sessions < 1:
        parser.error("--conversations and --sessions must be at least 1")
    url = pg.wanted_url(args, parser)
    corpus = generate(args.conversations, args.sessions, args.seed)
    with tempfile.TemporaryDirectory(prefix="search-recall-") as tmp:
        report = run(args.conversations, args.sessions, args.seed, Path(tmp))
        if args.vectors:
            report["vectors"] = evaluate_vectors(corpus, Path(tmp), args.embedder)
    text = render(report) + (render_vectors(report["vectors"]) if args.vectors else "")
    if url:
        report["postgresql"] = pg.evaluate_pg(corpus, url, report, args.embedder)
        text += pg.render_pg(report)
    print(json.dumps(report, indent=2) if args.json else text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
