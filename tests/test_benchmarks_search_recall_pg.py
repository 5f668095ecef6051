"""The recall benchmark on PostgreSQL (benchmarks/search_recall_pg.py), on a real server.

The same corpus must load dated into PostgreSQL, be asked the same questions, be scored
with PostgreSQL's own message ids, and leave no schema behind. Skipped without a server
(tests/conftest.py).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import search_recall  # noqa: E402
import search_recall_pg  # noqa: E402
from recall_corpus import Corpus, Question, Session  # noqa: E402

DAY = datetime(2024, 6, 3, 12, tzinfo=UTC).timestamp()


def _corpus() -> Corpus:
    sessions = [
        Session("20240603_120000_aaaaaa", 1, DAY, [("user", "Omar repaired the tractor clutch.")]),
        Session("20240610_120000_bbbbbb", 1, DAY + 7 * 86400, [("user", "Pasta for dinner.")]),
        Session("20240901_120000_cccccc", 1, DAY + 90 * 86400, [("user", "We sold the boat.")]),
    ]
    sessions[0].turns.append(("assistant", "Good to hear."))

    def ask(text: str, session: int, turn: int) -> Question:
        sid = sessions[session].sid
        return Question(text, ("all",), (sid,), ((sid, turn),), 1, "t", "Omar")

    questions = [
        ask("tractor", 0, 0),
        ask("clutch repaired", 0, 0),
        ask("what did we do in September 2024", 2, 0),  # only the session date says so
        ask("zebra quantum", 1, 0),  # no word of it is stored
    ]
    return Corpus(sessions, questions)


def _bench_schemas(url: str) -> set[str]:
    with psycopg.connect(url) as con:
        rows = con.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'bench\\_%'"
        ).fetchall()
    return {str(r[0]) for r in rows}


def test_words_on_postgresql_score_like_sqlite_and_leave_no_schema(
    pg_server: str, tmp_path: Path
) -> None:
    corpus = _corpus()
    sqlite = search_recall.evaluate(corpus, tmp_path)
    before = _bench_schemas(pg_server)
    pg = search_recall_pg.evaluate_pg(corpus, pg_server, sqlite)
    assert _bench_schemas(pg_server) == before
    assert pg["words"]["scores"]["all"] == sqlite["scores"]["ours"]["all"]
    assert pg["words"]["scores"]["all"] == {
        "n": 4,
        "session@1": 3 / 4,
        "session@5": 3 / 4,
        "turn@5": 3 / 4,
    }
    assert pg["words"]["latency"]["turn_p95_ms"] > 0 and "held_out" not in pg
    report = {**sqlite, "postgresql": pg}
    text = search_recall_pg.render_pg(report)
    assert "words only, every question" in text and "+0.0 / +0.0" in text


def test_the_corpus_is_dated_on_postgresql(pg_url: str) -> None:
    corpus = _corpus()
    store, ids = search_recall_pg.load_pg_store(pg_url, corpus)
    try:
        row = store.require_session(corpus.sessions[1].sid)
        assert row["started_at"] == DAY + 7 * 86400 and row["end_reason"] == "new_session"
        assert len(ids) == 4
        hits = store.search_hits("September 2024", match="any")
        assert hits and hits[0]["session_id"] == corpus.sessions[2].sid
    finally:
        store.close()


@pytest.mark.skipif(
    importlib.util.find_spec("wordllama") is None, reason="the [vectors] extra is not installed"
)
def test_with_vectors_the_held_out_half_is_scored_at_sqlites_weight(
    pg_server: str, tmp_path: Path
) -> None:
    corpus = _corpus()
    sqlite = {**search_recall.evaluate(corpus, tmp_path), "vectors": {"weight": 0.3}}
    pg = search_recall_pg.evaluate_pg(corpus, pg_server, sqlite)
    assert pg["weight"] == 0.3 and pg["messages_embedded"] == 4
    held = pg["held_out"]  # conversation 1 is odd: every question is held out
    assert held["vectors"]["scores"]["all"]["n"] == 4
    assert held["words"]["scores"]["all"] == pg["words"]["scores"]["all"]


def test_backend_pg_needs_a_url(monkeypatch: pytest.MonkeyPatch) -> None:
    parser = argparse.ArgumentParser()
    search_recall_pg.add_arguments(parser)
    for name in search_recall_pg.URL_ENVS:
        monkeypatch.delenv(name, raising=False)
    assert search_recall_pg.wanted_url(parser.parse_args([]), parser) is None
    with pytest.raises(SystemExit):
        search_recall_pg.wanted_url(parser.parse_args(["--backend", "pg"]), parser)
    monkeypatch.setenv("PALIMPSEST_DATABASE_URL", "postgresql://x@/y")
    assert search_recall_pg.wanted_url(parser.parse_args(["--backend", "pg"]), parser) == (
        "postgresql://x@/y"
    )
    given = parser.parse_args(["--url", "postgresql://a@/b"])
    assert search_recall_pg.wanted_url(given, parser) == "postgresql://a@/b"
