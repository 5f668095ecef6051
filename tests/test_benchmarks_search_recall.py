"""The recall benchmark (benchmarks/search_recall.py): a deterministic, honest corpus and a
harness that scores right.

The corpus must test what its tags claim: a ``form`` question's marked word must need
stemming to reach its answer (checked against real FTS5 ``porter`` and ``unicode61``
tables), a ``date`` question's month must live only in the session's date, and enough
questions must be buried. The harness must count any@k exactly and run end to end, as a
command, against a real store and a real baseline.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import apsw
import pytest

from palimpsest.storage.sessions import SessionStore

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import recall_corpus  # noqa: E402
import recall_data  # noqa: E402
import search_recall  # noqa: E402
from recall_corpus import Corpus, Question, Session, generate  # noqa: E402

PERSON = ("Priya", "f")


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return generate()  # the default size, as the command runs it


def words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def test_same_seed_same_corpus_other_seed_other_corpus() -> None:
    first = generate(3, 12, seed=5)
    assert first == generate(3, 12, seed=5)
    other = generate(3, 12, seed=6)
    assert [q.text for q in other.questions] != [q.text for q in first.questions]


def test_sizes_follow_the_options(corpus: Corpus) -> None:
    per_conversation: dict[int, list[Session]] = {}
    for session in corpus.sessions:
        per_conversation.setdefault(session.conversation, []).append(session)
    assert len(per_conversation) == 12
    for sessions in per_conversation.values():
        assert 10 <= len(sessions) <= 30
        days = [datetime.fromtimestamp(s.start, UTC).date() for s in sessions]
        assert len(set(days)) == len(days)  # every session starts on its own day
    assert [s.start for s in corpus.sessions] == sorted(s.start for s in corpus.sessions)
    assert len(corpus.questions) >= 12 * 10


def test_no_two_conversations_share_a_person() -> None:
    """Past the first-name list (14 conversations of 5) names get surnames."""
    corpus = generate(20, 2, seed=1)
    people: dict[str, set[int]] = {}
    for q in corpus.questions:
        people.setdefault(q.person, set()).add(q.conversation)
    assert all(len(conversations) == 1 for conversations in people.values())
    assert any(" " in name for name in people)


def test_every_tag_is_asked_and_enough_answers_are_buried(corpus: Corpus) -> None:
    counts = {tag: sum(tag in q.tags for q in corpus.questions) for tag in recall_corpus.TAGS}
    assert all(n >= 30 for n in counts.values()), counts
    assert counts["buried"] >= 0.15 * counts["all"]


def test_gold_turn_is_the_user_turn_that_states_the_fact(corpus: Corpus) -> None:
    turns = {(s.sid, i): turn for s in corpus.sessions for i, turn in enumerate(s.turns)}
    for q in corpus.questions:
        (sid,) = q.gold_sessions
        ((turn_sid, index),) = q.gold_turns
        role, text = turns[(turn_sid, index)]
        assert turn_sid == sid and role == "user"
        assert q.person in text


def test_no_message_names_a_month_and_date_questions_name_the_gold_month(
    corpus: Corpus,
) -> None:
    months = set(recall_data.MONTHS)
    for session in corpus.sessions:
        for _, text in session.turns:
            assert not words(text) & months, text
    starts = {s.sid: datetime.fromtimestamp(s.start, UTC) for s in corpus.sessions}
    dated = [q for q in corpus.questions if "date" in q.tags]
    for q in dated:
        start = starts[q.gold_sessions[0]]
        assert f"{start:%B} {start:%Y}" in q.text
    assert dated and all("{cue}" not in t.date for t in recall_data.TOPICS)


@pytest.mark.parametrize("topic", recall_data.TOPICS, ids=lambda t: t.key)
def test_form_word_reaches_the_answer_only_by_stemming(topic: recall_data.Topic) -> None:
    """Each answer sentence of the topic holds the form word's stem, never the word."""
    form = re.search(r"\[(\w+)\]", topic.form)
    assert form, topic.form
    word = form.group(1)
    con = apsw.Connection(":memory:")
    con.execute(
        "CREATE VIRTUAL TABLE stemmed USING fts5(t, tokenize='porter unicode61');"
        "CREATE VIRTUAL TABLE exact USING fts5(t, tokenize='unicode61');"
    )
    for template in topic.facts:
        text = template.format(
            name=PERSON[0], sub="she", obj="her", pos="her", cue=topic.cues[0], answer="x"
        )
        con.execute("DELETE FROM stemmed; DELETE FROM exact;")
        con.execute("INSERT INTO stemmed VALUES (?); INSERT INTO exact VALUES (?)", (text, text))
        found = con.execute("SELECT count(*) FROM stemmed WHERE stemmed MATCH ?", (word,))
        assert found.fetchall() == [(1,)], (word, text)
        missed = con.execute("SELECT count(*) FROM exact WHERE exact MATCH ?", (word,))
        assert missed.fetchall() == [(0,)], (word, text)


def test_tags_match_the_question_text(corpus: Corpus) -> None:
    for q in corpus.questions:
        assert ("pronoun" in q.tags) == bool(recall_corpus.PRONOUN_WORD.search(q.text)), q
        assert ("punct" in q.tags) == bool(recall_corpus.PUNCT_WORD.search(q.text)), q
        assert ("form" in q.tags) == (q.form_word is not None), q
        assert "[" not in q.text and "{" not in q.text, q


def _question(text: str, session: str, turn: int, tags: tuple[str, ...] = ("all",)) -> Question:
    return Question(text, tags, (session,), ((session, turn),), 0, "t", "Omar")


def test_score_counts_any_at_k() -> None:
    ids = {("s1", 0): 10, ("s2", 0): 20, ("s3", 2): 32}
    questions = [
        _question("a", "s1", 0, ("all", "form")),
        _question("b", "s2", 0, ("all", "form")),
        _question("c", "s3", 2, ("all", "buried")),
    ]
    rankings = [
        search_recall.Ranking(["s1", "s9"], [10], 0.001, 0.001),  # first everywhere
        search_recall.Ranking(["s8", "s7", "s6", "s5", "s2", "s2x"], [1, 2, 3, 4, 5, 20], 0, 0),
        search_recall.Ranking([], [], 0.002, 0.003),  # nothing found
    ]
    table = search_recall.score(questions, rankings, ids)
    assert table["all"] == {"n": 3, "session@1": 1 / 3, "session@5": 2 / 3, "turn@5": 1 / 3}
    assert table["form"] == {"n": 2, "session@1": 0.5, "session@5": 1.0, "turn@5": 0.5}
    assert table["buried"]["session@5"] == 0.0
    assert table["date"] == {"n": 0, "session@1": None, "session@5": None, "turn@5": None}


def test_harness_scores_a_tiny_corpus_on_a_real_store_and_baseline(tmp_path: Path) -> None:
    day = datetime(2024, 6, 3, 12, tzinfo=UTC).timestamp()
    sessions = [
        Session("20240603_120000_aaaaaa", 0, day, [("user", "Omar repaired the tractor clutch.")]),
        Session("20240610_120000_bbbbbb", 0, day + 7 * 86400, [("user", "Pasta for dinner.")]),
    ]
    sessions[0].turns.append(("assistant", "Good to hear."))
    questions = [
        _question("tractor", sessions[0].sid, 0),
        _question("clutch repaired", sessions[0].sid, 0),
        _question("zebra quantum", sessions[1].sid, 0),  # no word of it is stored
    ]
    report = search_recall.evaluate(Corpus(sessions, questions), tmp_path)
    assert report["corpus"] == {"sessions": 2, "messages": 3, "questions": 3}
    for system in ("ours", "baseline"):
        scores = report["scores"][system]["all"]
        assert scores == {"n": 3, "session@1": 2 / 3, "session@5": 2 / 3, "turn@5": 2 / 3}
        assert report["latency"][system]["turn_p95_ms"] > 0
    store = SessionStore(tmp_path / "state.db")
    try:
        later = store.get_session(sessions[1].sid)
        assert later is not None and later["started_at"] == day + 7 * 86400
        assert [m["role"] for m in store.get_messages(sessions[0].sid)] == ["user", "assistant"]
    finally:
        store.close()


def test_an_empty_corpus_reports_unknowns_not_zeros(tmp_path: Path) -> None:
    report = search_recall.evaluate(Corpus([], []), tmp_path)
    assert report["scores"]["ours"]["all"] == {
        "n": 0,
        "session@1": None,
        "session@5": None,
        "turn@5": None,
    }
    assert report["latency"]["baseline"]["turn_p95_ms"] is None
    assert "n/a" in search_recall.render(
        {**report, "config": {"conversations": 0, "seed": 1}, "seconds": 0}
    )


def test_baseline_query_ors_the_quoted_words() -> None:
    assert search_recall.baseline_query("What is Priya's go-to dish?") == (
        '"what" OR "is" OR "priya" OR "s" OR "go" OR "to" OR "dish"'
    )


def test_command_prints_json_for_a_small_run() -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(BENCHMARKS / "search_recall.py"),
            *("--conversations", "1", "--sessions", "6", "--seed", "3", "--json"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["config"] == {"conversations": 1, "sessions": 6, "seed": 3}
    assert set(report["scores"]) == {"ours", "baseline"}
    assert set(report["scores"]["ours"]) == set(recall_corpus.TAGS)
