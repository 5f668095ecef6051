"""The recall benchmark's conversations and questions, generated from a seed.

:func:`generate` turns the word bank of :mod:`recall_data` into ``conversations``
multi-session conversations between a person and an assistant, and one question per
planted fact, with the gold session and the gold turn (message index) of each answer.
The same arguments always give the same corpus (``random.Random`` seeded with a string,
which does not depend on ``PYTHONHASHSEED``).

Each conversation has a cast of five people of its own (first names; once those run out,
first names with a surname) and between half and one and a half times ``sessions``
sessions, each on its own day between 1 May 2024 and 30 April 2025, starting between
12:00 and 14:00 UTC (so the calendar date is the same in any time zone within 10 hours of
UTC). About 1.2 facts per session are planted, one per (person, topic), and asked in turn
as ``form``, ``pronoun``, ``punct`` and ``date`` questions:

* a ``date`` fact's look-alikes (same person, same topic, other details) sit in sessions
  of other months, so only the session date tells them apart;
* about a third of the other facts are planted in the oldest 40% of sessions with 6-9
  look-alikes in newer ones; a question is tagged ``buried`` when at least
  :data:`BURIED_MIN` newer sessions hold look-alikes;
* other facts get 0-2 look-alikes anywhere.

Tags are also given for what a question's text shows: ``pronoun`` for he/she/his/her/him,
``punct`` for a possessive or hyphenated word, ``form`` for a marked word form.
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from recall_data import ASSISTANT_LINES, OPENERS, PEOPLE, SURNAMES, TOPICS, USER_LINES, Topic

__all__ = ["BURIED_MIN", "KINDS", "TAGS", "Corpus", "Question", "Session", "generate"]

FIRST_DAY = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
KINDS = ("form", "pronoun", "punct", "date")
TAGS = ("all", *KINDS, "buried")
BURIED_MIN = 5
"""A question is ``buried`` when at least this many newer sessions hold near-matches."""
FACTS_PER_SESSION = 1.2
CAST = 5
PRONOUNS = {"f": ("she", "her", "her"), "m": ("he", "him", "his")}
PRONOUN_WORD = re.compile(r"\b(he|she|his|her|him)\b", re.IGNORECASE)
PUNCT_WORD = re.compile(r"\w'\w|\w-\w")
FORM_MARK = re.compile(r"\[(\w+)\]")
_COMMON_STARTS = {"The", "At", "For", "On", "Once", "Someone", "After"}


@dataclass
class Session:
    """One dated session: ``turns`` alternate user and assistant, starting with the user."""

    sid: str
    conversation: int
    start: float
    turns: list[tuple[str, str]] = field(default_factory=list)  # (role, text)


@dataclass(frozen=True)
class Question:
    """One question, what it tests (``tags``) and where its answer is."""

    text: str
    tags: tuple[str, ...]
    gold_sessions: tuple[str, ...]
    gold_turns: tuple[tuple[str, int], ...]  # (session id, message index in the session)
    conversation: int
    topic: str
    person: str
    form_word: str | None = None


@dataclass
class Corpus:
    """Every session (oldest first, all conversations interleaved) and every question."""

    sessions: list[Session]
    questions: list[Question]


# -- generation -------------------------------------------------------------------------


def _fill(template: str, person: tuple[str, str], **slots: str) -> str:
    sub, obj, pos = PRONOUNS[person[1]]
    return template.format(name=person[0], sub=sub, Sub=sub.capitalize(), obj=obj, pos=pos, **slots)


@dataclass
class _Fact:
    person: tuple[str, str]
    topic: Topic
    kind: str
    gold: int  # session index within the conversation
    cue: str
    answer: str
    other_cues: list[str]  # look-alikes never repeat the cue that singles the fact out
    near_in: list[int]  # sessions holding a look-alike


def _plan_facts(rng: random.Random, cast: list[tuple[str, str]], months: list[str]) -> list[_Fact]:
    """Which facts go where: buried ones early with many newer look-alikes, dated ones in a
    month that none of their look-alikes shares."""
    n = len(months)
    pairs = [(p, t) for p in cast for t in TOPICS]
    rng.shuffle(pairs)
    facts = []
    for i, (person, topic) in enumerate(pairs[: max(4, round(n * FACTS_PER_SESSION))]):
        kind = KINDS[i % len(KINDS)]
        cue, *other_cues = rng.sample(topic.cues, len(topic.cues))
        early = int(n * 0.4)
        if kind != "date" and rng.random() < 0.35 and n - early > BURIED_MIN:
            gold = rng.randrange(early)
            later = range(gold + 1, n)
            near = rng.sample(later, min(len(later), rng.randint(BURIED_MIN + 1, BURIED_MIN + 4)))
        elif kind == "date":
            gold = rng.randrange(n)
            others = [s for s in range(n) if months[s] != months[gold]]
            near = rng.sample(others, min(len(others), rng.randint(3, 5)))
        else:
            gold = rng.randrange(n)
            near = rng.sample([s for s in range(n) if s != gold], min(n - 1, rng.randint(0, 2)))
        answer = rng.choice(topic.answers)
        facts.append(_Fact(person, topic, kind, gold, cue, answer, other_cues, sorted(near)))
    return facts


def _near_text(rng: random.Random, fact: _Fact) -> str:
    cue = rng.choice(fact.other_cues)
    answer = rng.choice([a for a in fact.topic.answers if a != fact.answer])
    return _fill(rng.choice(fact.topic.near), fact.person, cue=cue, answer=answer)


def _opened(opener: str, text: str) -> str:
    """``Oh, and the mechanic ...``: a sentence after an opener that ends in a comma goes
    on in lower case, unless it starts with a name."""
    first = text.split(" ", 1)[0]
    if opener.endswith(",") and first in _COMMON_STARTS:
        text = text[0].lower() + text[1:]
    return f"{opener} {text}".strip()


def _filler(rng: random.Random, cast: list[tuple[str, str]], lines: int) -> str:
    other = rng.choice(cast)
    picks = rng.sample(USER_LINES, lines)
    return " ".join(p.format(other=other[0], osub=PRONOUNS[other[1]][0]) for p in picks)


def _question(fact: _Fact, template: str, month: str) -> tuple[str, list[str], str | None]:
    """The question's text, its tags (except ``buried``) and its marked word form."""
    form = FORM_MARK.search(template)
    month_name, year = month.split()
    text = _fill(
        FORM_MARK.sub(r"\1", template), fact.person, cue=fact.cue, month=month_name, year=year
    )
    tags = ["all", fact.kind]
    if form and fact.kind != "form":
        tags.append("form")
    for tag, pattern in (("pronoun", PRONOUN_WORD), ("punct", PUNCT_WORD)):
        if tag != fact.kind and pattern.search(text):
            tags.append(tag)
    return text, tags, form.group(1) if form else None


def _conversation(
    rng: random.Random, index: int, mean_sessions: int, cast: list[tuple[str, str]]
) -> tuple[list[Session], list[Question]]:
    n = rng.randint(max(1, math.ceil(mean_sessions / 2)), max(1, mean_sessions * 3 // 2))
    days = sorted(rng.sample(range(365), n))
    starts = [FIRST_DAY + timedelta(days=d, minutes=rng.randint(0, 120)) for d in days]
    months = [f"{s:%B %Y}" for s in starts]
    sessions = [
        Session(f"{s:%Y%m%d_%H%M%S}_{rng.getrandbits(24):06x}", index, s.timestamp())
        for s in starts
    ]
    facts = _plan_facts(rng, cast, months)
    lines: list[list[tuple[str, _Fact | None]]] = [[] for _ in range(n)]
    for fact in facts:
        text = _fill(rng.choice(fact.topic.facts), fact.person, cue=fact.cue, answer=fact.answer)
        lines[fact.gold].append((text, fact))
        for s in fact.near_in:
            lines[s].append((_near_text(rng, fact), None))
    gold_turns: dict[int, tuple[str, int]] = {}
    for s, session in enumerate(sessions):
        pairs = rng.randint(6, 10)
        slots: dict[int, list[tuple[str, _Fact | None]]] = {}
        for line in lines[s]:
            slots.setdefault(rng.randrange(pairs), []).append(line)
        for turn in range(pairs):
            said = slots.get(turn, [])
            parts = [_opened(rng.choice(OPENERS), text) for text, _ in said]
            if not said or rng.random() < 0.3:
                parts.append(_filler(rng, cast, 1 if said else rng.randint(1, 3)))
            for _, planted in said:
                if planted is not None:
                    gold_turns[id(planted)] = (session.sid, len(session.turns))
            session.turns.append(("user", " ".join(parts)))
            # a reply after a fact names its person: a look-alike turn next to the gold one
            echo = next((f.person for _, f in said if f is not None), rng.choice(cast))
            session.turns.append(("assistant", rng.choice(ASSISTANT_LINES).format(other=echo[0])))
    questions = []
    for fact in facts:
        template = fact.topic.question(fact.kind)
        text, tags, form = _question(fact, template, months[fact.gold])
        if sum(1 for s in fact.near_in if s > fact.gold) >= BURIED_MIN:
            tags.append("buried")
        gold = ((sessions[fact.gold].sid,), (gold_turns[id(fact)],))
        questions.append(
            Question(text, tuple(tags), *gold, index, fact.topic.key, fact.person[0], form)
        )
    return sessions, questions


def _person(people: list[tuple[str, str]], n: int) -> tuple[str, str]:
    """The ``n``-th person: first names in order, then again with a surname, and so on."""
    (name, sex), rounds = people[n % len(people)], n // len(people)
    if rounds:
        name = f"{name} {SURNAMES[(rounds - 1) % len(SURNAMES)]}"
    return name, sex


def generate(conversations: int = 12, sessions: int = 20, seed: int = 11) -> Corpus:
    """The corpus for ``seed``: the same arguments always give the same corpus."""
    rng = random.Random(f"search-recall:{seed}")
    people = list(PEOPLE)
    rng.shuffle(people)
    all_sessions: list[Session] = []
    questions: list[Question] = []
    for c in range(conversations):
        # every conversation has its own people (names repeat only after 1,470 people)
        cast = [_person(people, c * CAST + i) for i in range(CAST)]
        found = _conversation(random.Random(f"search-recall:{seed}:{c}"), c, sessions, cast)
        all_sessions += found[0]
        questions += found[1]
    all_sessions.sort(key=lambda s: (s.start, s.sid))
    return Corpus(all_sessions, questions)
