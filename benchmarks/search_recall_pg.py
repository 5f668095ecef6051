"""The recall benchmark's corpus on PostgreSQL, scored beside SQLite in the same run.

``python benchmarks/search_recall.py --url postgresql://...`` (or ``--backend pg``, which
takes ``PALIMPSEST_TEST_PG_URL``, set by ``.ci/with-postgres``) loads the same generated
corpus into a :class:`~palimpsest.storage.pg_store.PostgresSessionStore` in a fresh schema
of that database (dropped afterwards), dated the same way, and asks it the same questions
through the same ``search_messages`` / ``session_search`` calls:

* words only, every question, beside SQLite's words-only figures;
* with ``--vectors``: the same embedding model and the fusion weight the SQLite run chose
  on its tuning half, scored on the held-out half, beside SQLite's held-out figures.

The question the issue asks: is PostgreSQL within 2 points of SQLite (session any@5 and
turn any@5)?
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence
from typing import Any

from palimpsest.storage.pg_store import PostgresSessionStore
from palimpsest.storage.pg_writes import meta_words
from recall_corpus import TAGS, Corpus, Question
from search_recall import (
    STEP_SECONDS,
    OurSearch,
    fill,
    latency,
    load_embedder,
    rank_all,
    score,
    split,
)
from store_scale import drop_schema, pg_schema

URL_ENVS = ("PALIMPSEST_TEST_PG_URL", "PALIMPSEST_DATABASE_URL")
"""Where ``--backend pg`` finds the server, in this order."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--url",
        help="a postgresql:// URL: also load the corpus into a PostgreSQL store (a fresh"
        " schema of that database, dropped after) and print it beside SQLite",
    )
    parser.add_argument(
        "--backend",
        choices=("sqlite", "pg"),
        default="sqlite",
        help="pg: as --url, with the URL from " + " or ".join(URL_ENVS),
    )


def wanted_url(args: argparse.Namespace, parser: argparse.ArgumentParser) -> str | None:
    """The server to compare against, or ``None`` for SQLite only."""
    if args.url:
        return str(args.url)
    if args.backend != "pg":
        return None
    for name in URL_ENVS:
        if os.environ.get(name, "").strip():
            return os.environ[name].strip()
    parser.error(f"--backend pg needs --url or one of {', '.join(URL_ENVS)}")
    return None  # pragma: no cover


def load_pg_store(
    url: str, corpus: Corpus, embedder: Any = None
) -> tuple[PostgresSessionStore, dict[tuple[str, int], int]]:
    """The corpus in a PostgreSQL store, dated as :func:`search_recall.load_store` dates
    it on SQLite (the session's date words in ``meta_tsv`` too); statistics analysed."""
    store = PostgresSessionStore(url, embedder=embedder, background_embedding=False)
    ids = fill(store, corpus)

    def stamp(con: Any) -> None:
        with con.cursor() as cur:
            cur.executemany(
                "UPDATE sessions SET started_at = %s, ended_at = %s, end_reason = 'new_session',"
                " meta_tsv = %s::tsvector, meta_words = %s WHERE id = %s",
                [
                    (
                        s.start,
                        s.start + STEP_SECONDS * len(s.turns),
                        *meta_words(None, s.start, "cli"),
                        s.sid,
                    )
                    for s in corpus.sessions
                ],
            )
            cur.executemany(
                "UPDATE messages SET timestamp = %s WHERE id = %s",
                [
                    (s.start + STEP_SECONDS * i, ids[(s.sid, i)])
                    for s in corpus.sessions
                    for i in range(len(s.turns))
                ],
            )

    store.database.transact(stamp)
    with store.database.connection() as con:
        con.execute("ANALYZE")
    return store, ids


def _scored(
    search: OurSearch, questions: Sequence[Question], ids: dict[tuple[str, int], int]
) -> dict[str, Any]:
    ranked = rank_all(questions, search.sessions, search.turns)
    return {"scores": score(questions, ranked, ids), "latency": latency(ranked)}


def evaluate_pg(
    corpus: Corpus, url: str, sqlite: dict[str, Any], embedder: str = "bundled"
) -> dict[str, Any]:
    """Words on every question, and when the SQLite run (its report ``sqlite``) searched by
    meaning, meaning fused at its chosen weight on the held-out half (module docstring)."""
    weight = sqlite["vectors"]["weight"] if "vectors" in sqlite else None
    schema_url, schema = pg_schema(url)
    try:
        t0 = time.perf_counter()
        store, ids = load_pg_store(
            schema_url, corpus, load_embedder(embedder) if weight is not None else None
        )
        report: dict[str, Any] = {"load_seconds": round(time.perf_counter() - t0, 2)}
        plain = PostgresSessionStore(schema_url)
        try:
            with plain.database.connection() as con:
                row = con.execute("SHOW server_version").fetchone()
            report["server"] = str(row[0]) if row else "unknown"
            report["words"] = _scored(OurSearch(plain), corpus.questions, ids)
            if store.vectors is not None:
                t0 = time.perf_counter()
                report["messages_embedded"] = store.vectors.embed_pending()
                report["embed_seconds"] = round(time.perf_counter() - t0, 2)
                with store.database.connection() as con:
                    con.execute("ANALYZE message_vectors")  # as autovacuum would, soon
                store.vectors.weight = report["weight"] = weight
                _, held = split(corpus.questions)
                report["held_out"] = {
                    "vectors": _scored(OurSearch(store), held, ids),
                    "words": _scored(OurSearch(plain), held, ids),
                }
        finally:
            plain.close()
            store.close()
    finally:
        drop_schema(url, schema)
    return report


def _pct(value: float | int | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _table(title: str, sqlite: dict[str, Any], pg: dict[str, Any]) -> list[str]:
    metrics = ("session@1", "session@5", "turn@5")
    lines = [
        "",
        title,
        f"{'type':9}{'n':>5} | "
        + " | ".join(f"{m.replace('@', ' any@'):^17}" for m in metrics)
        + " | gap s@5 / t@5 (pg - sqlite)",
        f"{'':14} | " + " | ".join(f"{'sqlite':>8}{'pg':>9}" for _ in metrics) + " |",
    ]
    for tag in TAGS:
        a, b = sqlite["scores"][tag], pg["scores"][tag]
        cells = " | ".join(f"{_pct(a[m]):>8}{_pct(b[m]):>9}" for m in metrics)
        gaps = [
            "n/a" if a[m] is None or b[m] is None else f"{100 * (b[m] - a[m]):+.1f}"
            for m in ("session@5", "turn@5")
        ]
        lines.append(f"{tag:9}{a['n']:>5} | {cells} | {gaps[0]} / {gaps[1]}")
    for name, got in (("sqlite", sqlite), ("pg", pg)):
        lat = got["latency"]
        lines.append(
            f"latency {name} (ms, p50/p95): turns {lat['turn_p50_ms']:.2f}/"
            f"{lat['turn_p95_ms']:.2f}, sessions {lat['session_p50_ms']:.2f}/"
            f"{lat['session_p95_ms']:.2f}"
            if lat["turn_p50_ms"] is not None
            else f"latency {name}: n/a"
        )
    return lines


def render_pg(report: dict[str, Any]) -> str:
    """SQLite and PostgreSQL side by side (``report`` is the whole run's report)."""
    pg = report["postgresql"]
    sqlite_words = {"scores": report["scores"]["ours"], "latency": report["latency"]["ours"]}
    lines = [
        f"\nPostgreSQL {pg['server']} (corpus loaded in {pg['load_seconds']} s) beside SQLite,"
        " same corpus, same questions",
        *_table("words only, every question", sqlite_words, pg["words"]),
    ]
    if "held_out" in pg:
        held = report["vectors"]["parts"]["held_out"]
        lines.append(
            f"\n{pg['messages_embedded']} messages embedded in {pg['embed_seconds']} s;"
            f" fusion weight {pg['weight']} (chosen on SQLite's tuning half)"
        )
        lines += _table("with vectors, held-out half", held["vectors"], pg["held_out"]["vectors"])
        lines += _table("words only, held-out half", held["words"], pg["held_out"]["words"])
    return "\n".join(lines)
