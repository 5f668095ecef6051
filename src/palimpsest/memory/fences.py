"""The ``<memory-context>`` fence: wrapping recalled text, and removing it again.

Recalled memory enters a request as a fenced block on the current user message (MEM-05,
MEM-06). The fence tells the model the text is reference data, not new user input, and it
gives the sanitizers something exact to find: a model that echoes the block back must not
get it displayed or stored (MEM-48, MEM-49). Everything here is a pure function of its
input; :class:`StreamingContextScrubber` gives the same answer for any chunking of a text.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..messages import append_text, role_of

__all__ = [
    "FENCE_CLOSE",
    "FENCE_NOTE",
    "FENCE_OPEN",
    "StreamingContextScrubber",
    "build_memory_context_block",
    "clean_recalled_text",
    "inject_memory_context",
    "is_trivial_prompt",
    "sanitize_context",
]

log = logging.getLogger(__name__)

FENCE_OPEN = "<memory-context>"
FENCE_CLOSE = "</memory-context>"
FENCE_NOTE = (
    "[System note: The following is recalled memory context, NOT new user input. It is "
    "authoritative reference data from the agent's persistent memory; use it to inform "
    "your response.]"
)

# Whitespace inside tags is bounded so a partial tag held back by the stream scrubber has
# a maximum length, which keeps the scrubber's output independent of chunking.
_WS = r"[ \t\r\n]{0,16}"
_TAG = re.compile(rf"<{_WS}(/?){_WS}memory-context{_WS}>", re.IGNORECASE)
_CLOSE = re.compile(rf"<{_WS}/{_WS}memory-context{_WS}>", re.IGNORECASE)
_SPAN = re.compile(rf"<{_WS}memory-context{_WS}>[\s\S]*?<{_WS}/{_WS}memory-context{_WS}>", re.I)
_NOTE = re.compile(
    r"[ \t]*\[System note:[^\]\n]*(?:recalled memory context|informational background data)"
    r"[^\]\n]*\][ \t]*\n?",
    re.IGNORECASE,
)
_MAX_TAG = 1 + 16 + 1 + 16 + len("memory-context") + 16 + 1
_TAG_WORD = "memory-context"

_TRIVIAL_WORDS = (
    *[
        "yes",
        "no",
        "ok",
        "okay",
        "sure",
        "thanks",
        "y",
        "n",
        "yep",
        "nope",
        "yeah",
        "nah",
        "hi",
        "hey",
        "hello",
        "yo",
        "sup",
        "continue",
    ],
    *["proceed", "cool", "nice", "great", "done", "next", "lgtm", "k"],
    *("thank you", "go ahead", "do it", "got it"),
)
_TRIVIAL = re.compile(
    r"^\s*(?:" + "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in _TRIVIAL_WORDS) + r")"
    r"[\W_]*$",
    re.IGNORECASE,
)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+\S")


def is_trivial_prompt(prompt: str) -> bool:
    """True for prompts that need no recall: blank, slash commands, bare acknowledgements."""
    stripped = prompt.strip()
    return not stripped or stripped.startswith("/") or bool(_TRIVIAL.match(stripped))


def sanitize_context(text: str) -> str:
    """``text`` without memory fences: whole spans, system notes, then stray tags (MEM-48)."""
    text = _SPAN.sub("", text)
    text = _NOTE.sub("", text)
    return _TAG.sub("", text)


def clean_recalled_text(text: str) -> str:
    """Recalled text made safe to fence: nested fences removed, repeated bullets dropped.

    Bullets are deduplicated within a section (a run of lines between blank lines), so the
    same fact recalled twice costs its tokens once (MEM-07).
    """
    cleaned = sanitize_context(text)
    if cleaned != text:
        log.warning("recalled memory contained fence tags or system notes; they were removed")
    sections = []
    for section in re.split(r"\n[ \t]*\n", cleaned):
        seen: set[str] = set()
        lines = []
        for line in section.split("\n"):
            key = line.strip()
            if _BULLET.match(line):
                if key in seen:
                    continue
                seen.add(key)
            lines.append(line)
        sections.append("\n".join(lines))
    return "\n\n".join(sections).strip()


def build_memory_context_block(text: str) -> str:
    """``text`` in a ``<memory-context>`` fence with the system note; ``""`` when blank."""
    body = clean_recalled_text(text) if text and text.strip() else ""
    if not body:
        return ""
    return f"{FENCE_OPEN}\n{FENCE_NOTE}\n\n{body}\n{FENCE_CLOSE}"


def inject_memory_context(
    messages: Sequence[Mapping[str, Any]], block: str
) -> list[dict[str, Any]]:
    """A new message list for the request with ``block`` added to the last user message.

    The input list and its messages are never modified, so the fence cannot reach the
    stored history (MEM-05). Without a block or a user message the copy is unchanged.
    """
    out = [dict(m) for m in messages]
    if not block:
        return out
    for index in range(len(out) - 1, -1, -1):
        if role_of(out[index]) == "user":
            out[index]["content"] = append_text(out[index].get("content"), block)
            break
    return out


def _partial_tag_start(text: str) -> int:
    """Where a tag that the next chunk could complete begins, or ``len(text)``."""
    start = text.rfind("<")
    if start < 0 or len(text) - start > _MAX_TAG:
        return len(text)
    rest = text[start + 1 :].lower()
    # The grammar is: ws, optional "/", ws, "memory-context", ws, ">". Walk it.
    i = 0
    for allow_slash in (True, False):
        spaces = 0
        while i < len(rest) and rest[i] in " \t\r\n" and spaces < 16:
            i, spaces = i + 1, spaces + 1
        if allow_slash and i < len(rest) and rest[i] == "/":
            i += 1
            continue
        break
    word = rest[i : i + len(_TAG_WORD)]
    if not _TAG_WORD.startswith(word):
        return len(text)
    i += len(word)
    if len(word) < len(_TAG_WORD):
        return start if i == len(rest) else len(text)
    spaces = 0
    while i < len(rest) and rest[i] in " \t\r\n" and spaces < 16:
        i, spaces = i + 1, spaces + 1
    return start if i == len(rest) else len(text)


class StreamingContextScrubber:
    """Removes ``<memory-context>`` spans from a streamed reply, whatever the chunking.

    A possible partial tag at the end of a chunk is held back until the next chunk decides
    it. A span still open at :meth:`flush` is discarded; stray closing tags are dropped.
    """

    def __init__(self) -> None:
        self._buffer = ""
        self._inside = False

    def reset(self) -> None:
        self._buffer = ""
        self._inside = False

    def feed(self, delta: str) -> str:
        """The part of the stream so far that is safe to show."""
        self._buffer += delta
        out: list[str] = []
        while True:
            if self._inside:
                match = _CLOSE.search(self._buffer)
                if match is None:
                    self._buffer = self._buffer[_partial_tag_start(self._buffer) :]
                    break
                self._buffer = self._buffer[match.end() :]
                self._inside = False
                continue
            tag = _TAG.search(self._buffer)
            if tag is None:
                cut = _partial_tag_start(self._buffer)
                out.append(self._buffer[:cut])
                self._buffer = self._buffer[cut:]
                break
            out.append(self._buffer[: tag.start()])
            self._buffer = self._buffer[tag.end() :]
            self._inside = not tag.group(1)
        return "".join(out)

    def flush(self) -> str:
        """The held-back tail: shown if it never became a tag, dropped inside a span."""
        tail = "" if self._inside else self._buffer
        self.reset()
        return tail
