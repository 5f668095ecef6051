"""The fixed strings a compaction writes into a transcript, and how to recognize them later.

A summary must be recognizable after a restart, an upgrade, or a round trip through a
session store, so every prefix text this library has shipped is frozen in
:data:`HISTORICAL_PREFIXES` (newest first) and tests pin them byte for byte. To change the
prefix, add the old text to that list; never edit an entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..messages.content import content_text, part_type, role_of

__all__ = [
    "COMPACTION_NOTE",
    "COMPACTION_STUB_RESULT",
    "END_MARKER",
    "HISTORICAL_PREFIXES",
    "LEGACY_SUMMARY_PREFIX",
    "SUMMARY_FLAG",
    "SUMMARY_PREFIX",
    "SUMMARY_USER_TURN_FLAG",
    "is_compaction_summary_message",
    "is_real_user_message",
    "split_earlier_summaries",
    "split_summary_content",
    "strip_summary_prefix",
    "with_summary_prefix",
]

SUMMARY_PREFIX = (
    "[CONTEXT COMPACTION — REFERENCE ONLY] The earlier part of this conversation was "
    "condensed into the handoff summary below, written at the end of a previous context "
    "window. Read it as background, not as instructions: the questions and requests it "
    "mentions were already dealt with, so do not answer or carry them out again. The "
    "'## Active Task' section names the task that was open at the time; pick it up from "
    "there. Persistent memory in the system prompt (MEMORY.md, USER.md) remains "
    "authoritative; this note does not lower its priority. Reply only to the newest user "
    "message that comes after this summary. Files, configuration and other state may "
    "already reflect the work described here, so check before repeating any of it:"
)
"""Starts every summary message; one line, ends with a colon (spec CC-89)."""

LEGACY_SUMMARY_PREFIX = "[CONTEXT SUMMARY]:"
"""The oldest marker, also used by the training-trajectory compressor."""

HISTORICAL_PREFIXES: tuple[str, ...] = (SUMMARY_PREFIX,)
"""Every prefix this library has shipped, newest first. Append-only (CC-91)."""

_FOREIGN_FIRST_LINE = "[CONTEXT COMPACTION"
"""First-line form of other or older variants, e.g. the plain ``[CONTEXT COMPACTION]``."""

END_MARKER = "--- END OF CONTEXT SUMMARY — respond to the message below, not the summary above ---"
"""Closes a summary so a merged message can be unwrapped exactly and weak models do not
mistake the quoted Active Task for a new request (CC-97)."""

COMPACTION_NOTE = (
    "[Note: Part of this conversation was compacted into a handoff summary to save "
    "context space. The environment may already reflect the work it describes, so build "
    "on the summary and the current state instead of redoing that work. Persistent "
    "memory (MEMORY.md, USER.md) keeps its full authority regardless of compaction.]"
)
"""Appended once to the system message on the first compaction (CC-88)."""

COMPACTION_STUB_RESULT = (
    "[Result removed during context compaction; the handoff summary above covers it.]"
)
"""Content of a stub inserted for a tool call whose result was compacted away (CC-103)."""

SUMMARY_FLAG = "_compressed_summary"
SUMMARY_USER_TURN_FLAG = "_compressed_summary_has_user_turn"


def _known_prefix(text: str) -> str | None:
    if text.startswith(LEGACY_SUMMARY_PREFIX):
        return LEGACY_SUMMARY_PREFIX
    for prefix in HISTORICAL_PREFIXES:
        if text.startswith(prefix):
            return prefix
    return None


def strip_summary_prefix(text: str) -> str:
    """The body of a summary text: prefix and end marker removed, whitespace stripped."""
    body = (text or "").strip()
    prefix = _known_prefix(body)
    if prefix is not None:
        body = body[len(prefix) :].lstrip()
    elif body.startswith(_FOREIGN_FIRST_LINE):
        body = body.split("\n", 1)[1].lstrip() if "\n" in body else ""
    cut = body.find(END_MARKER)
    if cut != -1:
        body = body[:cut].rstrip()
    return body


def with_summary_prefix(text: str) -> str:
    """Normalize a summary to the current handoff format (CC-90); never doubles a prefix."""
    body = strip_summary_prefix(text)
    return f"{SUMMARY_PREFIX}\n{body}" if body else SUMMARY_PREFIX


def _looks_like_summary(text: str) -> bool:
    head = text.lstrip()
    return _known_prefix(head) is not None or head.startswith(_FOREIGN_FIRST_LINE)


def is_compaction_summary_message(message: Mapping[str, Any] | str) -> bool:
    """True for a summary message: the metadata flag, or text starting like a summary.

    Accepts a message dict or a plain string (CC-101).
    """
    if isinstance(message, str):
        return _looks_like_summary(message)
    if message.get(SUMMARY_FLAG):
        return True
    return _looks_like_summary(content_text(message.get("content")))


def split_summary_content(message: Mapping[str, Any]) -> tuple[str, Any]:
    """Split a summary message into ``(summary body, original content)``.

    A standalone summary has no original content (``None``). A summary merged into a
    tail message keeps that message's own content after :data:`END_MARKER`.
    """
    content = message.get("content")
    if isinstance(content, list):
        for i, part in enumerate(content):
            text = content_text([part])
            if _looks_like_summary(text):
                rest = [p for j, p in enumerate(content) if j != i]
                return strip_summary_prefix(text), (rest or None)
        return "", content
    text = content_text(content)
    cut = text.find(END_MARKER)
    if cut == -1:
        return strip_summary_prefix(text), None
    original = text[cut + len(END_MARKER) :].lstrip("\n")
    return strip_summary_prefix(text[:cut]), (original or None)


def split_earlier_summaries(
    messages: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[str]]:
    """``messages`` without earlier summaries, and the bodies of those summaries.

    An earlier summary travels to the summarizer as the previous summary, so it is not
    summarized again as a turn; a summary merged into a message is unwrapped back to that
    message's own content (CC-111).
    """
    turns: list[dict[str, Any]] = []
    bodies: list[str] = []
    for message in messages:
        if not is_compaction_summary_message(message):
            turns.append(message)
            continue
        body, original = split_summary_content(message)
        if body:
            bodies.append(body)
        if original is not None:
            plain = {
                k: v for k, v in message.items() if k not in (SUMMARY_FLAG, SUMMARY_USER_TURN_FLAG)
            }
            plain["content"] = original
            turns.append(plain)
    return turns, bodies


_BLANK_TEXT_TYPES = ("text", "input_text")


def _is_blank_content(content: Any) -> bool:
    if content is None:
        return True
    if isinstance(content, str):
        return not content.strip()
    if isinstance(content, list):
        for part in content:
            if isinstance(part, str):
                if part.strip():
                    return False
            elif isinstance(part, Mapping):
                if part_type(part) in _BLANK_TEXT_TYPES:
                    if str(part.get("text") or "").strip():
                        return False
                else:
                    return False  # an image, audio or file part is real input
            else:
                return False
        return True
    return False


def is_real_user_message(message: Mapping[str, Any]) -> bool:
    """A user message written by a person: not a summary, not blank (CC-53)."""
    if role_of(message) != "user":
        return False
    if _is_blank_content(message.get("content")):
        return False
    return not is_compaction_summary_message(message)
