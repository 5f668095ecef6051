"""Session search recall on LoCoMo (a held-out public benchmark), beside the plain FTS5 floor.

LoCoMo (snap-research/LoCoMo, ``data/locomo10.json``, CC BY-NC 4.0) is not in this
repository and must never be committed to it: pass a copy with ``--data``. The file is a
JSON list of samples, each with ``qa`` (``question``, ``evidence``: ``["D<session>:<turn>",
...]``, ``category``) and ``conversation`` (``speaker_a``, ``speaker_b``,
``session_<n>_date_time`` and ``session_<n>``: ``[{speaker, dia_id, text}, ...]``).

Each sample becomes its own store (one SQLite file, and the same texts in the FTS5 floor of
:mod:`search_recall`): every LoCoMo session one palimpsest session started at its
``date_time`` (read as UTC), every turn one message, ``speaker_a`` as the user and
``speaker_b`` as the assistant (the roles :mod:`recall_corpus` uses), its text
``"<speaker>: <text>"`` so that the names the questions use are in the text. Image turns
keep their text only (captions are not added). Every question is asked verbatim, except
category 5 (adversarial: the question's premise is false, so its evidence is not an answer)
and questions with no evidence, which are counted and skipped. A question's gold sessions
and turns are all its evidence turns; any@k is a hit when one of them is in the top k.

Three systems, on the same questions: the FTS5 floor, ours with words only (a
``SessionStore`` opened without an embedder) and ours with the ``[vectors]`` extra (the
bundled model at the shipped fusion weight: nothing is tuned on this data). Loading,
searching and scoring are :mod:`search_recall`'s own functions.

Run: ``python benchmarks/search_recall_locomo.py --data /path/to/locomo10.json
[--no-vectors] [--misses 5] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from palimpsest.storage.sessions import SessionStore
from recall_corpus import Corpus, Question, Session
from search_recall import (
    OurSearch,
    Ranking,
    baseline_sessions,
    baseline_turns,
    hits,
    latency,
    load_baseline,
    load_embedder,
    load_store,
    rank_all,
)

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
"""LoCoMo's category numbers as the released file uses them (5 is skipped)."""
SKIPPED_CATEGORY = 5
EVIDENCE = re.compile(r"D(\d+):(\d+)")
SYSTEMS = ("fts5", "words", "vectors")
METRICS = ("session@1", "session@5", "turn@5")


class DataError(ValueError):
    """The ``--data`` file is missing or not shaped like locomo10.json."""


# -- reading LoCoMo -----------------------------------------------------------------------


def read_data(path: Path) -> list[dict[str, Any]]:
    """The samples of a locomo10.json-shaped file, checked enough to load."""
    try:
        samples = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{path}: not readable JSON ({exc})") from None
    if not isinstance(samples, list) or not samples:
        raise DataError(f"{path}: expected a non-empty JSON list of samples")
    for i, sample in enumerate(samples):
        where = f"{path}: sample {i}"
        if not isinstance(sample, dict):
            raise DataError(f"{where}: not an object")
        conv, qa = sample.get("conversation"), sample.get("qa")
        if not isinstance(conv, dict) or not isinstance(qa, list):
            raise DataError(f"{where}: needs 'conversation' (object) and 'qa' (list)")
        if not session_numbers(conv):
            raise DataError(f"{where}: conversation has no session_<n> lists")
        for n in session_numbers(conv):
            if not isinstance(conv.get(f"session_{n}_date_time"), str):
                raise DataError(f"{where}: session_{n} has no session_{n}_date_time")
            try:
                parse_date(conv[f"session_{n}_date_time"])
            except ValueError:
                raise DataError(
                    f"{where}: unreadable session_{n}_date_time {conv[f'session_{n}_date_time']!r}"
                ) from None
            for turn in conv[f"session_{n}"]:
                if not isinstance(turn, dict) or not all(
                    isinstance(turn.get(k), str) for k in ("speaker", "dia_id", "text")
                ):
                    raise DataError(f"{where}: session_{n} has a turn without speaker/dia_id/text")
        for q in qa:
            if not isinstance(q, dict) or not isinstance(q.get("question"), str):
                raise DataError(f"{where}: a qa entry has no question")
            if not isinstance(q.get("evidence", []), list):
                raise DataError(f"{where}: evidence of {q['question']!r} is not a list")
    return samples


def session_numbers(conv: dict[str, Any]) -> list[int]:
    return sorted(
        int(m.group(1))
        for k, v in conv.items()
        if (m := re.fullmatch(r"session_(\d+)", k)) and isinstance(v, list)
    )


def parse_date(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` as a UTC datetime."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def category_name(category: Any) -> str:
    return f"{category} {CATEGORIES.get(category, '?')}"


def to_corpus(sample: dict[str, Any], index: int) -> tuple[Corpus, dict[str, Any]]:
    """One sample as :mod:`recall_corpus` shapes a corpus; also the skipped questions and
    the text of every turn (for showing misses)."""
    conv = sample["conversation"]
    speaker_a = conv.get("speaker_a")
    sessions: list[Session] = []
    where: dict[str, tuple[str, int]] = {}
    text_of: dict[Any, Any] = {}
    for n in session_numbers(conv):
        start = parse_date(conv[f"session_{n}_date_time"])
        session = Session(f"{start:%Y%m%d_%H%M%S}_{index:02x}{n:04x}", index, start.timestamp())
        for turn in conv[f"session_{n}"]:
            role = "user" if turn["speaker"] == speaker_a else "assistant"
            text = f"{turn['speaker']}: {turn['text']}"
            where[turn["dia_id"]] = (session.sid, len(session.turns))
            text_of[turn["dia_id"]] = text
            session.turns.append((role, text))
        sessions.append(session)
    questions, skipped, unknown = [], {"adversarial": 0, "no_evidence": 0}, []
    for q in sample["qa"]:
        category = q.get("category")
        if category == SKIPPED_CATEGORY:
            skipped["adversarial"] += 1
            continue
        ids = [f"D{s}:{t}" for e in q.get("evidence", []) for s, t in EVIDENCE.findall(str(e))]
        known = [d for d in ids if d in where]
        unknown += [(q["question"], d) for d in ids if d not in where]
        if not known:
            skipped["no_evidence"] += 1
            continue
        gold_turns = tuple(dict.fromkeys(where[d] for d in known))
        gold_sessions = tuple(dict.fromkeys(sid for sid, _ in gold_turns))
        tags = ("all", category_name(category))
        questions.append(
            Question(q["question"], tags, gold_sessions, gold_turns, index, "", "", None)
        )
        text_of[("evidence", len(questions) - 1)] = [text_of[d] for d in known]
    sessions.sort(key=lambda s: (s.start, s.sid))
    info = {
        "sample_id": sample.get("sample_id", f"sample-{index}"),
        "sessions": len(sessions),
        "turns": len(where),
        "questions_in_file": len(sample["qa"]),
        "asked": len(questions),
        "skipped": skipped,
        "evidence_not_in_conversation": unknown,
        "texts": text_of,
    }
    return Corpus(sessions, questions), info


# -- measuring ----------------------------------------------------------------------------


def evaluate_sample(
    corpus: Corpus, workdir: Path, vectors: bool, embedder: str
) -> tuple[dict[str, list[Ranking]], dict[tuple[str, int], int], dict[str, Any]]:
    """Every question of one sample asked of each system; the rankings, the message ids and
    what loading cost."""
    t0 = time.perf_counter()
    store, ids = load_store(
        workdir / "state.db", corpus, embedder=load_embedder(embedder) if vectors else None
    )
    base = load_baseline(workdir / "baseline.db", corpus, ids)
    cost: dict[str, Any] = {"load_seconds": round(time.perf_counter() - t0, 2)}
    plain = SessionStore(workdir / "state.db", background_upkeep=False) if vectors else None
    rankings: dict[str, list[Ranking]] = {}
    try:
        rankings["fts5"] = rank_all(
            corpus.questions,
            lambda q: baseline_sessions(base, q),
            lambda q: baseline_turns(base, q),
        )
        if vectors:
            index = store.vectors
            assert index is not None, "the [vectors] extra is not available"
            t0 = time.perf_counter()
            cost["embedded"] = index.embed_pending()
            cost["embed_seconds"] = round(time.perf_counter() - t0, 2)
            cost["pending_after"] = index.pending_count()
            cost["model"], cost["weight"] = index.model.name, index.weight
            assert plain is not None
            words = OurSearch(plain)
            rankings["words"] = rank_all(corpus.questions, words.sessions, words.turns)
            ours = OurSearch(store)
            rankings["vectors"] = rank_all(corpus.questions, ours.sessions, ours.turns)
            cost["gold_rank_vectors"] = [
                gold_rank(store, q, ids)
                for q, r in zip(corpus.questions, rankings["vectors"], strict=True)
                if not hits(q, r, ids)["turn@5"]
            ]
        else:
            words = OurSearch(store)
            rankings["words"] = rank_all(corpus.questions, words.sessions, words.turns)
    finally:
        store.close()
        if plain is not None:
            plain.close()
        base.close()
    return rankings, ids, cost


def gold_rank(
    store: SessionStore, question: Question, ids: dict[tuple[str, int], int]
) -> int | None:
    """Where the first gold turn of a turn any@5 miss ranks in the top 50 (None: not there)."""
    found = OurSearch(store).turns(question.text, k=50)
    gold = {ids[t] for t in question.gold_turns}
    return next((i + 1 for i, mid in enumerate(found) if mid in gold), None)


def table(
    rows: Sequence[tuple[Question, dict[str, dict[str, bool]]]], systems: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """Per tag (``all`` and each category): n and the share found, per system and metric."""
    tags = sorted({t for q, _ in rows for t in q.tags}, key=lambda t: (t != "all", t))
    out: dict[str, dict[str, Any]] = {}
    for tag in tags:
        mine = [found for q, found in rows if tag in q.tags]
        out[tag] = {"n": len(mine)}
        for system in systems:
            out[tag][system] = {
                m: sum(f[system][m] for f in mine) / len(mine) if mine else None for m in METRICS
            }
    return out


def run(samples: list[dict[str, Any]], vectors: bool, embedder: str, misses: int) -> dict[str, Any]:
    t0 = time.perf_counter()
    systems = SYSTEMS if vectors else SYSTEMS[:2]
    rows: list[tuple[Question, dict[str, dict[str, bool]]]] = []
    per_sample: list[dict[str, Any]] = []
    missed: list[dict[str, Any]] = []
    lat: dict[str, list[Ranking]] = {s: [] for s in systems}
    for index, sample in enumerate(samples):
        corpus, info = to_corpus(sample, index)
        with tempfile.TemporaryDirectory(prefix="locomo-recall-") as tmp:
            rankings, ids, cost = evaluate_sample(corpus, Path(tmp), vectors, embedder)
        texts = info.pop("texts")
        for system in systems:
            lat[system] += rankings[system]
        for i, q in enumerate(corpus.questions):
            found = {s: hits(q, rankings[s][i], ids) for s in systems}
            rows.append((q, found))
            if vectors and not found["vectors"]["turn@5"]:
                missed.append(
                    {
                        "sample": info["sample_id"],
                        "category": q.tags[1],
                        "question": q.text,
                        "evidence": texts[("evidence", i)],
                        "session@5": found["vectors"]["session@5"],
                        "fts5_turn@5": found["fts5"]["turn@5"],
                        "words_turn@5": found["words"]["turn@5"],
                    }
                )
        if vectors:
            ranks = cost.pop("gold_rank_vectors")
            for m, r in zip(missed[len(missed) - len(ranks) :], ranks, strict=True):
                m["gold_rank_top50"] = r
        per_sample.append({**info, **cost})
    return {
        "data": "LoCoMo",
        "systems": list(systems),
        "samples": per_sample,
        "scores": table(rows, systems),
        "latency": {s: latency(lat[s]) for s in systems},
        "vector_turn_misses": missed,
        "misses_shown": misses,
        "seconds": round(time.perf_counter() - t0, 2),
    }


# -- showing ------------------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def render(report: dict[str, Any]) -> str:
    systems = report["systems"]
    lines = ["search recall on LoCoMo (one store per sample, questions verbatim)"]
    for s in report["samples"]:
        lines.append(
            f"  {s['sample_id']}: {s['sessions']} sessions, {s['turns']} turns,"
            f" {s['questions_in_file']} questions, {s['asked']} asked (skipped: "
            f"{s['skipped']['adversarial']} category 5 adversarial,"
            f" {s['skipped']['no_evidence']} without evidence)"
            + (
                f"; {s['embedded']} left to embed after loading (embedded in"
                f" {s['embed_seconds']} s), {s['pending_after']} pending when asked"
                if "embedded" in s
                else ""
            )
        )
        for q, d in s["evidence_not_in_conversation"]:
            lines.append(f"    evidence {d} of {q!r} is not a turn of the conversation")
    if "vectors" in systems:
        first = report["samples"][0]
        lines.append(f"  vectors: {first['model']} at the shipped weight {first['weight']}")
    width = 9 * len(systems)
    head = " | ".join(f"{m.replace('@', ' any@'):^{width}}" for m in METRICS)
    sub = " | ".join("".join(f"{s:>9}" for s in systems) for _ in METRICS)
    lines += ["", f"{'category':16}{'n':>5} | {head}", f"{'':21} | {sub}"]
    for tag, row in report["scores"].items():
        cells = " | ".join("".join(f"{_pct(row[s][m]):>9}" for s in systems) for m in METRICS)
        lines.append(f"{tag:16}{row['n']:>5} | {cells}")
    lines += ["", f"{'latency (ms)':22}{'p50':>8}{'p95':>8}"]
    for system in systems:
        for kind in ("turn", "session"):
            p50, p95 = (report["latency"][system][f"{kind}_p{q}_ms"] for q in (50, 95))
            lines.append(f"{system + ' ' + kind + 's':22}{p50:>8.2f}{p95:>8.2f}")
    missed = report["vector_turn_misses"]
    if missed and report["misses_shown"]:
        n_asked = report["scores"]["all"]["n"]
        nowhere = sum(1 for m in missed if m.get("gold_rank_top50") is None)
        lines += [
            "",
            f"vectors miss the evidence turn in the top 5 for {len(missed)} of {n_asked}"
            f" questions; {nowhere} of them have no evidence turn in the top 50."
            f" {report['misses_shown']} of them:",
        ]
        step = max(1, len(missed) // report["misses_shown"])
        for m in missed[::step][: report["misses_shown"]]:
            lines.append(
                f"- [{m['sample']}, {m['category']}] {m['question']!r}"
                f" (gold rank in top 50: {m.get('gold_rank_top50')}; session any@5"
                f" {'hit' if m['session@5'] else 'miss'}; fts5 turn any@5"
                f" {'hit' if m['fts5_turn@5'] else 'miss'})"
            )
            lines += [f"    evidence: {t!r}" for t in m["evidence"]]
    lines.append(f"\nwhole run: {report['seconds']} s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, type=Path, help="a locomo10.json-shaped file")
    parser.add_argument("--no-vectors", action="store_true", help="floor and words only")
    parser.add_argument("--embedder", default="bundled", help="'bundled' or module:callable")
    parser.add_argument("--misses", type=int, default=5, help="vector misses to show")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    try:
        samples = read_data(args.data)
    except DataError as exc:
        print(f"search_recall_locomo: {exc}", file=sys.stderr)
        return 2
    report = run(samples, not args.no_vectors, args.embedder, args.misses)
    print(json.dumps(report, indent=2) if args.json else render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
