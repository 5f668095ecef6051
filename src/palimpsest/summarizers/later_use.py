"""Which names a run went on to use: a span's identifiers ranked by their later use.

The names that matter after compaction are the ones the agent needs again. Many first
appear in a tool's output (a function ``grep`` found, a test name pytest printed, an error
class a traceback named) and only then in the agent's own commands and edits. So the
summary's "Identifiers worked with" line is ranked by use *after* a name appeared:

* **in the kept tail** (:attr:`SummaryRequest.tail`): an assistant message after the span
  uses the name; the strongest sign the continuation still needs it;
* **later in the span**: a name from a tool's output that a later assistant message uses;
* **by the agent in the span**: how often the agent's own words, commands and edits used it.

A name only ever printed by a tool and never used again is not listed: a directory listing
is not vocabulary. Outputs are only split into words as the walk goes (the expensive
name-shape test runs once, at the end, on the few words the agent went on to use), and
each text is read in bounded windows, so long outputs and a long tail cost little.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..messages.content import content_text, tool_calls_of
from ..safety.redact import redact
from .identifiers import SCAN_CHARS, IdentifierTally, accept_name, text_context

__all__ = ["TAIL_SCAN_CHARS", "NameUse", "tail_uses", "words_of"]

TAIL_SCAN_CHARS = 12_000
"""Characters of one tail assistant message (text and call arguments) read for names."""
TAIL_WEIGHT = 3
"""A use in the kept tail counts this many uses in the span."""
LATER_WEIGHT = 2
"""A later use of a name a tool printed counts this many plain uses."""

# Starting only where a name can start and never giving back a word's characters keeps
# these linear: without the guard a long word not followed by "." or "(" was retried from
# each of its characters (a 6,000-character word took about 1 s).
_DOTTED = re.compile(r"(?<![A-Za-z_])[A-Za-z_]\w*+(?:\.[A-Za-z_]\w*+)+")
_ISSUE = re.compile(r"#\d+|\b[A-Z][A-Z0-9]{1,9}-\d+")
_PLAIN_WORD = re.compile(r"[A-Za-z_]\w*")
_CALLED_WORD = re.compile(r"(?<![A-Za-z_])([A-Za-z_]\w*+)\(")


def words_of(text: str) -> set[str]:
    """The name-like words of ``text``: plain words, whole dotted names, issue ids."""
    words = set(_PLAIN_WORD.findall(text))  # in C; the rarer shapes only when they can occur
    if "." in text:
        words.update(_DOTTED.findall(text))
    if "#" in text or "-" in text:
        words.update(_ISSUE.findall(text))
    return words


def _assistant_text(message: Mapping[str, Any]) -> str:
    """An assistant message's words: its text, its call arguments, its tool_use inputs."""
    parts = [content_text(message.get("content"))]
    for call in tool_calls_of(message):
        fn = call.get("function") if isinstance(call, Mapping) else None
        raw = fn.get("arguments") if isinstance(fn, Mapping) else None
        parts.append(raw if isinstance(raw, str) else json.dumps(raw, default=str))
    content = message.get("content")
    if isinstance(content, list):
        for part in content:
            if isinstance(part, Mapping) and part.get("type") == "tool_use":
                parts.append(json.dumps(part.get("input"), default=str))
    return "\n".join(p for p in parts if p)[:TAIL_SCAN_CHARS]


def tail_uses(tail: Sequence[Any] | None) -> Counter[str]:
    """For each word, how many assistant messages of ``tail`` use it."""
    uses: Counter[str] = Counter()
    for message in tail or ():
        if isinstance(message, Mapping) and message.get("role") == "assistant":
            uses.update(words_of(_assistant_text(message)))
    return uses


class NameUse:
    """The span's names and their later uses, gathered by the walk; :meth:`ranked` orders them.

    ``agent`` counts the code-shaped names of the agent's own words (and the user's
    requests). A tool's output is only split into words as it goes by (a C-speed scan; the
    words are matched against what the agent used once, at the end), and every assistant
    message's words are kept with its position: a word a tool printed before an assistant
    message used it is a *later use*.
    """

    def __init__(self, agent: IdentifierTally) -> None:
        self.agent = agent
        self.outputs: list[tuple[int, str, frozenset[str], frozenset[str]]] = []
        self.uses: list[tuple[int, frozenset[str]]] = []

    def saw_output(self, position: int, text: str, window: int) -> None:
        """A tool output at ``position``: its words (first and last ``window`` characters)."""
        if not text:
            return
        pieces = [text] if len(text) <= 2 * window else [text[:window], text[-window:]]
        words: set[str] = set()
        called: set[str] = set()
        for piece in pieces:  # findall and set() run in C: no Python loop per word
            words.update(_PLAIN_WORD.findall(piece))
            if "(" in piece:
                called.update(_CALLED_WORD.findall(piece))
        self.outputs.append((position, text, frozenset(words), frozenset(called)))

    def agent_used(self, position: int, texts: Iterable[str]) -> None:
        """An assistant message at ``position`` wrote ``texts`` (prose, commands, edits)."""
        words: set[str] = set()
        for text in texts:
            words |= words_of(text[:SCAN_CHARS])
        if words:
            self.uses.append((position, frozenset(words)))

    def _printed(self, wanted: set[str]) -> tuple[dict[str, int], set[str]]:
        """Where each of ``wanted`` was first printed, and which were printed as calls."""
        first: dict[str, int] = {}
        called: set[str] = set()
        for position, _, words, calls in self.outputs:
            for word in (words & wanted).difference(first):
                first[word] = position
            called |= calls & wanted
        return first, called

    def later_uses(self, tail: Counter[str]) -> tuple[Counter[str], dict[str, int], set[str]]:
        """Later uses in the span of printed words, where each was first printed, and
        which were printed as calls."""
        used: set[str] = set(tail)
        for _, words in self.uses:
            used |= words
        first, called = self._printed(used)
        later: Counter[str] = Counter()
        for position, words in self.uses:
            for word in words.intersection(first):
                if first[word] < position:
                    later[word] += 1
        return later, first, called

    def _clean_printed(self, name: str, at: int) -> bool:
        for position, text, _, _ in self.outputs:
            if position == at:
                index = text.find(name)
                return index < 0 or name in redact(text_context(text, index, index + len(name)))
        return True

    def ranked(
        self, tail: Counter[str], focus_words: list[str] | None = None, limit: int = 100
    ) -> list[str]:
        """Up to ``limit`` names, most used later first (ties: the agent's, by first use,
        then printed ones by first print).

        Names the agent used and code-shaped names a tool printed that were used
        afterwards (in the span or the tail) are candidates; names matching the focus come
        first; a name redaction removes from where it was seen is a secret and is left out
        (see :meth:`IdentifierTally.ranked`).
        """
        agent = self.agent
        later, first, called = self.later_uses(tail)
        candidates = sorted(agent.counts, key=lambda n: (-agent.counts[n], agent.first[n]))
        known = set(candidates)
        for name in sorted(first, key=lambda n: (first[n], n)):
            if name in known or not (later[name] or tail[name]):
                continue
            if accept_name(name, call=name in called):
                candidates.append(name)
                known.add(name)
        order = {name: i for i, name in enumerate(candidates)}

        def score(name: str) -> int:
            return TAIL_WEIGHT * tail[name] + LATER_WEIGHT * later[name] + agent.counts[name]

        names = sorted(candidates, key=lambda n: (-score(n), order[n]))
        if focus_words:
            hits = [n for n in names if any(w in n.lower() for w in focus_words)]
            chosen = set(hits)
            names = hits + [n for n in names if n not in chosen]
        kept: list[str] = []
        for name in names:
            if len(kept) >= limit:
                break
            clean = (
                agent.is_clean(name)
                if name in agent.counts
                else self._clean_printed(name, first[name])
            )
            if clean:
                kept.append(name)
        return kept
