"""Where SQLite and PostgreSQL rank the recall benchmark's questions differently.

``.ci/with-postgres python benchmarks/search_recall_parity.py --backend pg`` loads the
recall benchmark's corpus (:mod:`recall_corpus`, seed 11 by default) into a SQLite store
and into a PostgreSQL store (a fresh schema, dropped after), asks every question of both
with words only (``search_messages`` for turns, the ``session_search`` tool for sessions,
as :mod:`search_recall` does), and prints:

* session any@1, session any@5 and turn any@5 per question type for both backends, on
  the tuning half and the held-out half (even- and odd-numbered conversations, as
  :func:`search_recall.split` splits them);
* every question whose top 5 turns or top 5 sessions differ between the backends, the
  two rankings side by side (turns as ``session#index``), gold marked with ``*``.

The search by meaning is left out: its fused part is the same code on both backends,
and the words part is what this tool is for (issue 26: "Same figures on PostgreSQL
within 2 points of SQLite").
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import search_recall_pg as pg
from recall_corpus import TAGS, Corpus, Question, generate
from search_recall import (
    OurSearch,
    Ranking,
    add_corpus_arguments,
    load_store,
    rank_all,
    score,
)
from store_scale import drop_schema, pg_schema

METRICS = ("session@1", "session@5", "turn@5")


def _key_of(ids: dict[tuple[str, int], int]) -> dict[int, str]:
    return {mid: f"{sid}#{i}" for (sid, i), mid in ids.items()}


def _turns(ranking: Ranking, keys: dict[int, str]) -> list[str]:
    return [keys[mid] for mid in ranking.turns]


def differences(
    questions: Sequence[Question],
    sqlite: Sequence[Ranking],
    postgres: Sequence[Ranking],
    sqlite_keys: dict[int, str],
    pg_keys: dict[int, str],
) -> list[dict[str, Any]]:
    """One row per question whose top 5 turns or sessions differ between the backends."""
    rows = []
    for q, a, b in zip(questions, sqlite, postgres, strict=True):
        turns_a, turns_b = _turns(a, sqlite_keys), _turns(b, pg_keys)
        if turns_a == turns_b and a.sessions == b.sessions:
            continue
        gold = {f"{sid}#{i}" for sid, i in q.gold_turns}
        rows.append(
            {
                "question": q.text,
                "tags": sorted(q.tags),
                "half": "held_out" if q.conversation % 2 else "tuning",
                "gold_turns": sorted(gold),
                "gold_sessions": sorted(q.gold_sessions),
                "turns": {"sqlite": turns_a, "pg": turns_b},
                "sessions": {"sqlite": a.sessions, "pg": b.sessions},
            }
        )
    return rows


def _mark(items: Sequence[str], gold: Sequence[str]) -> str:
    return " ".join(f"{x}*" if x in gold else x for x in items)


def render(report: dict[str, Any]) -> str:
    lines = []
    for half in ("tuning", "held_out"):
        lines += ["", f"{half} ({report['halves'][half]['n']} questions), words only"]
        lines.append(
            f"{'type':9}{'n':>5} | "
            + " | ".join(f"{m.replace('@', ' any@'):^15}" for m in METRICS)
            + " | gap (pg - sqlite)"
        )
        a, b = report["halves"][half]["sqlite"], report["halves"][half]["pg"]
        for tag in TAGS:
            cells = " | ".join(
                f"{100 * (a[tag][m] or 0):6.1f} {100 * (b[tag][m] or 0):6.1f}" for m in METRICS
            )
            gaps = " ".join(f"{100 * ((b[tag][m] or 0) - (a[tag][m] or 0)):+.1f}" for m in METRICS)
            lines.append(f"{tag:9}{a[tag]['n']:>5} | {cells} | {gaps}")
    lines += ["", f"{len(report['differences'])} questions ranked differently"]
    for row in report["differences"]:
        lines.append(f"\n[{row['half']} {','.join(row['tags'])}] {row['question']}")
        for name in ("sqlite", "pg"):
            lines.append(
                f"  turns    {name:6} {_mark(row['turns'][name], row['gold_turns'])}"
                f"\n  sessions {name:6} {_mark(row['sessions'][name], row['gold_sessions'])}"
            )
    return "\n".join(lines)


def evaluate_parity(corpus: Corpus, url: str, workdir: Path) -> dict[str, Any]:
    """Both backends' words-only rankings of every question of ``corpus``, scored per
    half, and the questions they rank differently (the PostgreSQL schema is dropped)."""
    questions = corpus.questions
    lite, lite_ids = load_store(workdir / "state.db", corpus)
    try:
        ours = OurSearch(lite)
        ranked_lite = rank_all(questions, ours.sessions, ours.turns)
    finally:
        lite.close()
    schema_url, schema = pg_schema(url)
    try:
        store, pg_ids = pg.load_pg_store(schema_url, corpus)
        try:
            ours = OurSearch(store)
            ranked_pg = rank_all(questions, ours.sessions, ours.turns)
        finally:
            store.close()
    finally:
        drop_schema(url, schema)
    halves: dict[str, Any] = {}
    for half, odd in (("tuning", 0), ("held_out", 1)):
        pick = [i for i, q in enumerate(questions) if q.conversation % 2 == odd]
        part = [questions[i] for i in pick]
        halves[half] = {
            "n": len(pick),
            "sqlite": score(part, [ranked_lite[i] for i in pick], lite_ids),
            "pg": score(part, [ranked_pg[i] for i in pick], pg_ids),
        }
    return {
        "halves": halves,
        "differences": differences(
            questions, ranked_lite, ranked_pg, _key_of(lite_ids), _key_of(pg_ids)
        ),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_corpus_arguments(parser)
    pg.add_arguments(parser)
    args = parser.parse_args(argv)
    url = pg.wanted_url(args, parser)
    if url is None:
        parser.error("needs a PostgreSQL server: --backend pg or --url")
    corpus = generate(args.conversations, args.sessions, args.seed)
    with tempfile.TemporaryDirectory(prefix="recall-parity-") as tmp:
        report = evaluate_parity(corpus, url, Path(tmp))
    report["config"] = {
        "conversations": args.conversations,
        "sessions": args.sessions,
        "seed": args.seed,
    }
    print(json.dumps(report, indent=2) if args.json else render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
