"""One giant assistant message must not become the whole kept tail.

The tail is kept verbatim by position, so a 40K-token assistant reply (a generated file, a
long report) right before a compaction survives it whole and leaves no room for anything
else; the next turn compacts again. With ``compression.max_tail_assistant_tokens`` set, an
assistant message in the kept tail whose text is longer than the cap is cut to it: its
beginning and its end stay, and a note in the middle tells the model the full text is in the
session store, where ``session_search`` finds it (the store keeps every message as it was
added; a compaction never rewrites stored rows). Tool calls of the message are kept as they
are; only its text is cut. Unset (the default), the seed keeps the tail whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..messages.content import content_text, role_of
from ..tokens import estimate_tokens_rough

__all__ = ["CUT_NOTE", "cap_tail_assistants", "is_cut"]

CUT_NOTE = (
    "[... about {cut:,} tokens of this reply were cut when the conversation was compacted; "
    "the full text is kept in the session history: call session_search with words from it "
    "to read it whole ...]"
)

CHARS_PER_TOKEN = 4
HEAD_SHARE = 0.7
"""Of the kept text, the share taken from the beginning (the rest is the end)."""


def is_cut(text: str) -> bool:
    """Does ``text`` carry the cut note?"""
    return "tokens of this reply were cut when the conversation was compacted" in text


def _text_only(content: Any) -> str | None:
    """The message's text when its content is a string or text parts only; else ``None``
    (images and other parts are left alone rather than flattened)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
        isinstance(p, dict) and p.get("type") in ("text", "output_text") for p in content
    ):
        return content_text(content)
    return None


def _cut(text: str, cap_tokens: int) -> str:
    keep = cap_tokens * CHARS_PER_TOKEN
    head = int(keep * HEAD_SHARE)
    tail = keep - head
    cut_tokens = estimate_tokens_rough(text[head : len(text) - tail])
    return f"{text[:head]}\n\n{CUT_NOTE.format(cut=cut_tokens)}\n\n{text[len(text) - tail :]}"


def cap_tail_assistants(
    tail: Sequence[dict[str, Any]], cap_tokens: int | None
) -> tuple[list[dict[str, Any]], int]:
    """The tail with every assistant text over ``cap_tokens`` cut, and how many were cut.

    Messages are copied, never modified. ``cap_tokens`` ``None`` (or below 1) returns the
    tail unchanged.
    """
    if not cap_tokens or cap_tokens < 1:
        return list(tail), 0
    out: list[dict[str, Any]] = []
    cut = 0
    for message in tail:
        text = _text_only(message.get("content")) if role_of(message) == "assistant" else None
        if text is None or estimate_tokens_rough(text) <= cap_tokens or is_cut(text):
            out.append(message)
            continue
        out.append({**message, "content": _cut(text, cap_tokens)})
        cut += 1
    return out, cut
