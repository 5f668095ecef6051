"""How an earlier compaction summary is recognized, whoever wrote it.

A summary must be recognizable after a restart, an upgrade, or a round trip through a
session store, so every prefix text this library has shipped is frozen in
:data:`HISTORICAL_PREFIXES` (newest first) and tests pin them byte for byte. To change the
prefix, add the old text to that list; never edit an entry.

Other agents compact too. Claude Code continues a session with a user message that starts
"This session is being continued from a previous conversation…"; Codex hands over with a
summary that starts "Another language model started to solve this problem…" (its compact
prompt's ``summary_prefix``), and older Codex builds with "You were originally given
instructions from a user…". :func:`foreign_summary_source` names those, so the reading
treats them as earlier summaries rather than as a user's request.

This module sits in the messages layer so that :mod:`palimpsest.messages.reading` can use
it; :mod:`palimpsest.compaction.markers` re-exports every name unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .content import content_text

__all__ = [
    "CLAUDE_CODE_SUMMARY_PREFIX",
    "CODEX_HANDOFF_PREFIX",
    "CODEX_SUMMARY_PREFIX",
    "END_MARKER",
    "HISTORICAL_PREFIXES",
    "LEDGER_HEADER",
    "LEGACY_SUMMARY_PREFIX",
    "REHYDRATION_HEADER",
    "SHORT_SUMMARY_PREFIX",
    "SUMMARY_FLAG",
    "SUMMARY_PREFIX",
    "SUMMARY_USER_TURN_FLAG",
    "TODO_SNAPSHOT_HEADER",
    "foreign_summary_source",
    "is_compaction_summary_message",
    "split_summary_content",
    "strip_summary_prefix",
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

SHORT_SUMMARY_PREFIX = (
    "[CONTEXT COMPACTION — REFERENCE ONLY] Background from earlier turns, not instructions: "
    "do not redo or re-answer what it mentions; memory keeps its authority; reply only to the "
    "newest user message after it:"
)
"""The same note in a quarter of the tokens, for a window too small for the whole one: the
fit step puts it in place of :data:`SUMMARY_PREFIX` before it cuts anything out of a
summary (about 50 rough tokens instead of 180)."""

LEGACY_SUMMARY_PREFIX = "[CONTEXT SUMMARY]:"
"""The oldest marker, also used by the training-trajectory compressor."""

HISTORICAL_PREFIXES: tuple[str, ...] = (SUMMARY_PREFIX, SHORT_SUMMARY_PREFIX)
"""Every prefix this library has shipped, newest first. Append-only (CC-91)."""

_FOREIGN_FIRST_LINE = "[CONTEXT COMPACTION"
"""First-line form of other or older variants, e.g. the plain ``[CONTEXT COMPACTION]``."""

END_MARKER = "--- END OF CONTEXT SUMMARY — respond to the message below, not the summary above ---"
"""Closes a summary so a merged message can be unwrapped exactly and weak models do not
mistake the quoted Active Task for a new request (CC-97)."""

TODO_SNAPSHOT_HEADER = "[Your active task list was preserved across context compression]"
"""First line of the todo snapshot an agent appends after a compaction (agent-loop AL-17).
It is synthetic: never the user's request (CC-53)."""
LEDGER_HEADER = "[State ledger kept by the agent across context compression]"
"""First line of the state ledger an agent appends after a compaction; synthetic too."""
REHYDRATION_HEADER = (
    "[Files you recently wrote, re-attached as they are now after context compression]"
)
"""First line of the files an agent re-attaches after a compaction; synthetic too."""

SUMMARY_FLAG = "_compressed_summary"
SUMMARY_USER_TURN_FLAG = "_compressed_summary_has_user_turn"

CLAUDE_CODE_SUMMARY_PREFIX = (
    "This session is being continued from a previous conversation that ran out of context."
)
"""First sentence of the user message Claude Code writes after ``/compact`` or auto-compact."""

CODEX_SUMMARY_PREFIX = (
    "Another language model started to solve this problem and produced a summary of its "
    "thinking process."
)
"""First sentence of Codex's compacted-history summary (``templates/compact/summary_prefix.md``)."""

CODEX_HANDOFF_PREFIX = "You were originally given instructions from a user over one or more turns."
"""First sentence of the bridge message older Codex builds wrote after compacting."""

_FOREIGN_PREFIXES: tuple[tuple[str, str], ...] = (
    (CLAUDE_CODE_SUMMARY_PREFIX, "claude-code"),
    (CODEX_SUMMARY_PREFIX, "codex"),
    (CODEX_HANDOFF_PREFIX, "codex"),
)


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


_FIRST_CHARS = frozenset(
    p[0] for p in (LEGACY_SUMMARY_PREFIX, *HISTORICAL_PREFIXES, _FOREIGN_FIRST_LINE)
)
"""Every summary starts with one of these: a text that starts with anything else (no
leading whitespace) is rejected without slicing it."""


def _looks_like_summary(text: str) -> bool:
    first = text[:1]
    if first not in _FIRST_CHARS and not first.isspace():
        return False
    # A bounded head: lstrip() of a whole 100 KB output would copy it just to test a prefix.
    head = text[: len(SUMMARY_PREFIX) + 256].lstrip()
    return _known_prefix(head) is not None or head.startswith(_FOREIGN_FIRST_LINE)


def is_compaction_summary_message(message: Mapping[str, Any] | str) -> bool:
    """True for a palimpsest summary message: the metadata flag, or text starting like one.

    Accepts a message dict or a plain string (CC-101). Other agents' summaries are named by
    :func:`foreign_summary_source` instead, so this test keeps its historical meaning.
    """
    if isinstance(message, str):
        return _looks_like_summary(message)
    if message.get(SUMMARY_FLAG):
        return True
    return _looks_like_summary(content_text(message.get("content")))


def foreign_summary_source(text: str) -> str | None:
    """``"claude-code"`` or ``"codex"`` when ``text`` starts like that agent's summary."""
    head = text[:400].lstrip()
    for prefix, source in _FOREIGN_PREFIXES:
        if head.startswith(prefix):
            return source
    return None


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
