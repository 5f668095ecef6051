"""Which identifiers of a span the run went on to use, and how often: the identifier probe.

A name matters after compaction when the agent needs it again. So the probe takes every
identifier that appears in the span (in the agent's words, its actions, and the tools'
output: a function a ``grep`` found, an error class a traceback named) and keeps those
that a LATER assistant message uses (its prose, a command, an edit), anywhere after the
name's first appearance: later in the span, in the kept tail, or in the rest of the run
past the compacted prefix. Each is weighted by the number of later assistant messages
that use it, so a name used ten times counts ten times as much as one used once.

"Uses" means the name appears as a whole word in the later message. Names already in the
head (the system prompt, the task) are never at risk and are not probed.

This is the eval's own reading (:mod:`.identifiers`, :mod:`.actions`, :mod:`.spans`); it
does not import the summarizers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..messages.content import content_text
from .actions import actions_of, prose_of
from .identifiers import code_identifiers, prose_identifiers
from .spans import user_requests

__all__ = ["UsedName", "later_used_names"]

_WORD_RE = re.compile(r"#\d+|[A-Z][A-Z0-9]{1,9}-\d+|[A-Za-z_$][\w$]*")
OUTPUT_SCAN_CHARS = 20_000
"""Characters of one tool output read for names (the head of a very long listing)."""


@dataclass(frozen=True, slots=True)
class UsedName:
    """An identifier of the span: where it first appeared and how often it was used later."""

    name: str
    first: int
    uses: int
    from_output: bool


def _assistant_words(message: Mapping[str, Any]) -> set[str]:
    """The words of an assistant message's prose and actions (argument values only)."""
    texts = [prose_of(message)]
    for action in actions_of(message):
        texts.extend(action.texts())
    words: set[str] = set()
    for text in texts:
        words.update(_WORD_RE.findall(text))
    return words


def _names_in(message: Mapping[str, Any], is_request: bool) -> tuple[list[str], bool]:
    """The identifiers in one message and whether they come from a tool's output."""
    if message.get("role") == "assistant":
        names = prose_identifiers(prose_of(message))
        for action in actions_of(message):
            for text in action.texts():
                names.extend(code_identifiers(text))
        return names, False
    text = content_text(message.get("content"))
    content = message.get("content")
    if isinstance(content, list):  # Anthropic tool_result blocks carry the output
        for part in content:
            if isinstance(part, Mapping) and part.get("type") == "tool_result":
                inner = part.get("content")
                text += "\n" + (inner if isinstance(inner, str) else content_text(inner))
    if is_request:
        return prose_identifiers(text), False
    return code_identifiers(text[:OUTPUT_SCAN_CHARS]), True


def later_used_names(
    messages: Sequence[Mapping[str, Any]],
    start: int,
    end: int,
) -> list[UsedName]:
    """Identifiers of ``messages[start:end]`` used by a later assistant message, in order
    of first appearance; ``messages`` is the whole run (its tail and future included)."""
    requests = {i for i, _ in user_requests(messages)}
    first: dict[str, tuple[int, bool]] = {}
    for index in range(start, min(end, len(messages))):
        message = messages[index]
        if message.get("role") == "system":
            continue
        names, from_output = _names_in(message, index in requests)
        for name in names:
            if name not in first:
                first[name] = (index, from_output)
    if not first:
        return []
    used: list[UsedName] = []
    words_at = {
        i: _assistant_words(m)
        for i, m in enumerate(messages)
        if i > start and m.get("role") == "assistant"
    }
    for name, (index, from_output) in first.items():
        uses = sum(1 for i, words in words_at.items() if i > index and name in words)
        if uses:
            used.append(UsedName(name, index, uses, from_output))
    return used
