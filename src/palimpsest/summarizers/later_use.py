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
is not vocabulary. Each text is scanned in bounded windows, so a long tail costs little.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..messages.content import content_text, tool_calls_of
from .identifiers import IdentifierTally

__all__ = ["TAIL_SCAN_CHARS", "NameUse", "tail_uses", "words_of"]

TAIL_SCAN_CHARS = 12_000
"""Characters of one tail assistant message (text and call arguments) read for names."""
TAIL_WEIGHT = 3
"""A use in the kept tail counts this many uses in the span."""
LATER_WEIGHT = 2
"""A later use of a name a tool printed counts this many plain uses."""

_WORD = re.compile(r"#\d+|[A-Z][A-Z0-9]{1,9}-\d+|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def words_of(text: str) -> set[str]:
    """The name-like words of ``text``: whole dotted names, their parts, issue ids."""
    words: set[str] = set()
    for word in _WORD.findall(text):
        words.add(word)
        if "." in word:
            words.update(word.split("."))
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

    ``agent`` counts names in the agent's own words (and the user's requests); ``printed``
    holds the names tools printed, with the position of their first appearance; a later
    assistant message that uses a printed name adds to ``later``.
    """

    def __init__(self, agent: IdentifierTally) -> None:
        self.agent = agent
        self.printed = IdentifierTally()
        self.printed_at: dict[str, int] = {}
        self.later: Counter[str] = Counter()

    def saw_output(self, position: int, text: str, window: int) -> None:
        """Names in a tool output (its first and last ``window`` characters)."""
        if not text:
            return
        pieces = [text] if len(text) <= 2 * window else [text[:window], text[-window:]]
        for piece in pieces:
            for name in self.printed.add(piece):
                self.printed_at.setdefault(name, position)

    def agent_used(self, position: int, names: Iterable[str]) -> None:
        """An assistant message at ``position`` used ``names``: count printed ones as later use."""
        at = self.printed_at
        words = set(names)
        for name in list(words):
            if "." in name:  # `dates.parse_iso_week` uses the printed `parse_iso_week`
                words.update(name.split("."))
        for name in words:
            first = at.get(name)
            if first is not None and first < position:
                self.later[name] += 1

    def ranked(
        self, tail: Counter[str], focus_words: list[str] | None = None, limit: int = 100
    ) -> list[str]:
        """Up to ``limit`` names, most used later first (ties by first appearance).

        Names the agent used and printed names that were used afterwards (in the span or
        the tail) are candidates; names matching the focus come first; a name redaction
        removes from where it was seen is a secret and is left out (see
        :meth:`IdentifierTally.ranked`).
        """
        agent = self.agent
        candidates = sorted(agent.counts, key=lambda n: (-agent.counts[n], agent.first[n]))
        known = set(candidates)
        for name in self.printed.first:
            if name not in known and (self.later[name] or tail[name]):
                candidates.append(name)
                known.add(name)
        order = {name: i for i, name in enumerate(candidates)}

        def score(name: str) -> int:
            return (
                TAIL_WEIGHT * tail[name] + LATER_WEIGHT * self.later[name] + self.agent.counts[name]
            )

        names = sorted(candidates, key=lambda n: (-score(n), order[n]))
        if focus_words:
            hits = [n for n in names if any(w in n.lower() for w in focus_words)]
            chosen = set(hits)
            names = hits + [n for n in names if n not in chosen]
        kept: list[str] = []
        for name in names:
            if len(kept) >= limit:
                break
            owner = agent if name in agent.counts else self.printed
            if owner.is_clean(name):
                kept.append(name)
        return kept
