"""The fixed strings a compaction writes into a transcript, and how to recognize them later.

The prefixes and the recognizers live one layer down, in :mod:`palimpsest.messages.markers`,
so the messages layer's reading can use them; they are re-exported here unchanged.

A summary must be recognizable after a restart, an upgrade, or a round trip through a
session store, so every prefix text this library has shipped is frozen in
:data:`HISTORICAL_PREFIXES` (newest first) and tests pin them byte for byte. To change the
prefix, add the old text to that list; never edit an entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..messages.content import part_type, role_of
from ..messages.markers import (
    END_MARKER,
    HISTORICAL_PREFIXES,
    LEGACY_SUMMARY_PREFIX,
    SHORT_SUMMARY_PREFIX,
    SUMMARY_FLAG,
    SUMMARY_PREFIX,
    SUMMARY_USER_TURN_FLAG,
    is_compaction_summary_message,
    split_summary_content,
    strip_summary_prefix,
)
from ..messages.reading import MessageReading, read_user_turn

__all__ = [
    "COMPACTION_NOTE",
    "COMPACTION_STUB_RESULT",
    "END_MARKER",
    "HISTORICAL_PREFIXES",
    "LEGACY_SUMMARY_PREFIX",
    "SHORT_SUMMARY_PREFIX",
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


def with_summary_prefix(text: str) -> str:
    """Normalize a summary to the current handoff format (CC-90); never doubles a prefix."""
    body = strip_summary_prefix(text)
    return f"{SUMMARY_PREFIX}\n{body}" if body else SUMMARY_PREFIX


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


def is_real_user_message(message: Mapping[str, Any], reading: MessageReading | None = None) -> bool:
    """A user message written by a person: a request, not blank (CC-53).

    That is the reading's kind ``request``: not a summary (ours, Claude Code's, Codex's),
    not host chatter, and not an observation (a text-action agent's tool output). Pass the
    message's ``reading`` from :func:`~palimpsest.messages.reading.read_transcript` when the
    whole list is at hand; without it the message is judged on its own
    (:func:`~palimpsest.messages.reading.read_user_turn`), which cannot recognise the task an
    agent framework hands over as the first message when it is typed as an observation.
    """
    if role_of(message) != "user":
        return False
    if _is_blank_content(message.get("content")):
        return False
    if is_compaction_summary_message(message):
        return False
    return (reading or read_user_turn(message)).kind == "request"
