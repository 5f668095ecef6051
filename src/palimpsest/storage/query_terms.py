"""What a plain query asks for: content words, exact forms, and the FTS5 text of each mode.

A question like "What did Caroline's team research during the follow-up?" is mostly
grammar. :func:`parse_terms` keeps the evidence:

* **words**: lower-cased, stopwords fit for questions dropped (:data:`STOPWORDS`: who,
  what, when, did, the, he, she, his, her, during, ...), possessives cut (``team's`` ->
  ``team``), hyphenated and apostrophe-joined words split into words (``follow-up`` ->
  ``follow``, ``up``), never turned into phrases. The word index stems them (porter):
  ``research`` finds ``Researching``;
* **exact forms**: a quoted phrase (``"Researching"``) and a token with punctuation that
  is not just a hyphen or apostrophe between letters (``--force``, ``-rf``, ``100%``,
  ``C++``, ``a_b``, ``my-app.config.ts``). The word index only sees their words (``force``,
  ``100``), so each exact form is also checked against the raw text of every candidate
  with :func:`exact_match` (registered in SQLite as :data:`EXACT_FUNCTION`): ``--force``
  never matches the bare word "force", ``"donate"`` never matches "donated". Exact forms
  are required in every match mode.

A query that uses FTS5 syntax (``AND``/``OR``/``NOT``, parentheses, ``NEAR``, ``prefix*``)
is ``explicit`` and runs as typed through :func:`~.fts_sanitize.sanitize_query`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from .fts_sanitize import lex_query, quote_phrase

__all__ = [
    "EXACT_FUNCTION",
    "STOPWORDS",
    "QueryTerms",
    "exact_match",
    "parse_terms",
]

EXACT_FUNCTION = "palimpsest_exact"
"""SQL name of :func:`exact_match`, registered on the connection that runs a search."""

# A standard English list plus the auxiliaries and pronouns questions are made of. Words
# that carry dates or topics stay searchable: "may" (a month), "june", "first", "last".
_STOPWORDS_TEXT = """
a about above after again against all also am an and any are aren as at be because been
before being below between both but by can could couldn d did didn do does doesn doing don
down during each either ever few for from further had hadn has hasn have haven having he
her here hers herself him himself his how i if in into is isn it its itself just ll m me
might mightn more most must mustn my myself no nor not now o of off on once only or other
our ours ourselves out over own re s same shall shan she should shouldn so some such t than
that the their theirs them themselves then there these they this those through to too under
until up upon us ve very was wasn we were weren what whatever when whenever where which
while who whom whose why will with won would wouldn y you your yours yourself yourselves
"""
STOPWORDS: frozenset[str] = frozenset(_STOPWORDS_TEXT.split())
"""Words that are never evidence on their own; dropped while other terms remain."""

_POSSESSIVE = re.compile(r"(?:['’][sS]|(?<=[sS])['’])$")
_WORDY = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*")
_JOINERS = re.compile(r"['’\-]")


@dataclass(frozen=True)
class QueryTerms:
    """The evidence in a query; see the module docstring."""

    words: tuple[str, ...] = ()
    exact: tuple[str, ...] = ()
    explicit: bool = False

    @property
    def count(self) -> int:
        """How many content terms the query has (words and exact forms)."""
        return len(self.words) + len(self.exact)

    def match_all(self) -> str:
        """FTS5 text requiring every word and every exact form (implicit AND)."""
        return " ".join([*map(quote_phrase, self.words), *map(quote_phrase, self.exact)])

    def match_any(self, words: Sequence[str] | None = None) -> str:
        """FTS5 text matching any of ``words`` (default: all words), exact forms required."""
        chosen = self.words if words is None else tuple(words)
        parts = []
        if chosen:
            joined = " OR ".join(map(quote_phrase, chosen))
            parts.append(f"({joined})" if len(chosen) > 1 and self.exact else joined)
        parts += [quote_phrase(e) for e in self.exact]
        return " AND ".join(parts)

    def match_candidates(self, rare: Sequence[str]) -> str:
        """The ANY query restricted to rows holding one of the ``rare`` words.

        FTS5 ranks every phrase of the expression, so the rare words count twice in the
        BM25 sum: a bias toward the rarest evidence, which is what chose the candidates.
        """
        return f"({self.match_any(rare)}) AND ({self.match_any()})"


def _split_word(text: str) -> tuple[list[str], str | None]:
    """``(words, exact_form)`` for one bare term of the query."""
    text = _POSSESSIVE.sub("", text)
    if _WORDY.fullmatch(text):
        return [w.lower() for w in _JOINERS.split(text) if w], None
    return [], text


def parse_terms(text: str) -> QueryTerms:
    """The content words and exact forms of ``text`` (see the module docstring)."""
    toks = lex_query(text)
    explicit = any(
        t.kind in ("op", "open", "close", "near") or (t.kind in ("term", "phrase") and t.prefix)
        for t in toks
    )
    words: list[str] = []
    exact: list[str] = []
    for tok in toks:
        if tok.kind == "phrase":
            exact.append(" ".join(tok.text.split()))
        elif tok.kind == "term":
            found, form = _split_word(tok.text)
            words += found
            if form is not None:
                exact.append(form)
    unique = list(dict.fromkeys(words))
    content = [w for w in unique if w not in STOPWORDS]
    if content or exact:
        unique = content
    return QueryTerms(tuple(unique), tuple(dict.fromkeys(exact)), explicit)


@functools.lru_cache(maxsize=256)
def _pattern(needle: str) -> re.Pattern[str]:
    body = r"\s+".join(re.escape(part) for part in needle.split())
    # A boundary only where the needle itself starts or ends with a word character:
    # "100%" must not match inside "1100%", but "C++" may be followed by "17".
    head = r"(?<!\w)" if needle[:1].isalnum() else ""
    tail = r"(?!\w)" if needle[-1:].isalnum() else ""
    return re.compile(head + body + tail, re.IGNORECASE)


def exact_match(text: object, needle: object) -> bool:
    """True when ``needle`` occurs in ``text`` as written (case-insensitive; whitespace
    runs are equal; a needle starting or ending with a letter or digit must start or end
    on a word boundary)."""
    if not isinstance(text, str) or not isinstance(needle, str) or not needle.strip():
        return False
    return _pattern(needle.strip()).search(text) is not None
