"""The I/O-free rules of the memory files: parsing, usage, matching and prompt rendering.

A memory file is its entries joined by :data:`DELIMITER` (``"\\n§\\n"``) with no trailing
newline (MEM-11). Capacity counts characters including delimiters (MEM-13). The snapshot
shown in the system prompt is a *rendering* of the entries: entries that fail the threat
scan are replaced by a ``[BLOCKED: ...]`` notice, secrets are redacted, and an oversized
file is cut in the middle (MEM-16..18). The entries themselves are never changed here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from ..errors import MemoryMatchError, MemoryToolError
from ..safety.redact import redact
from ..safety.threats import MAX_SCAN_CHARS, ScanMode, find_threats

__all__ = [
    "BLOCKED_PREFIX",
    "DELIMITER",
    "FILE_NAMES",
    "MIN_MATCH_CHARS",
    "RULE",
    "TARGETS",
    "MemoryWrite",
    "Target",
    "dedupe",
    "find_entry",
    "join_entries",
    "parse_entries",
    "preview",
    "render_block",
    "sanitize_entry",
    "usage_text",
    "validate_target",
]

Target = Literal["memory", "user"]
TARGETS: tuple[Target, ...] = ("memory", "user")
FILE_NAMES: dict[Target, str] = {"memory": "MEMORY.md", "user": "USER.md"}
DELIMITER = "\n§\n"
RULE = "═" * 46
BLOCKED_PREFIX = "[BLOCKED:"
_HEADERS: dict[Target, str] = {
    "memory": "MEMORY (your personal notes)",
    "user": "USER PROFILE (who the user is)",
}
_PREVIEW_CHARS = 80
_BLOCKED_TAIL = (
    " It was kept out of the system prompt; delete it with memory(action=remove) "
    "or fix the file by hand.]"
)


@dataclass(frozen=True)
class MemoryWrite:
    """One applied change, as mirrored to external providers (MEM-47, MEM-52)."""

    action: str
    target: Target
    content: str
    old_text: str | None = None
    previous_content: str | None = None


def validate_target(target: str) -> Target:
    """``target`` as a :data:`Target`, or the tool's error for anything else (MEM-27)."""
    if target in TARGETS:
        return target
    raise MemoryToolError(f"Invalid target '{target}'. Use 'memory' or 'user'.")


def parse_entries(text: str | None) -> list[str]:
    """Entries of a file's text: split on the exact delimiter, strip, drop empties (MEM-12)."""
    if not text or not text.strip():
        return []
    return [part.strip() for part in text.split(DELIMITER) if part.strip()]


def join_entries(entries: Sequence[str]) -> str:
    """The file text for ``entries``; its length is the usage (MEM-11, MEM-13)."""
    return DELIMITER.join(entries)


def dedupe(entries: Iterable[str]) -> list[str]:
    """Exact duplicates removed, first occurrence and order kept (MEM-14)."""
    return list(dict.fromkeys(entries))


def usage_text(current: int, limit: int) -> str:
    """``"<pct>% — <current:,>/<limit:,> chars"`` as the tool reports it (MEM-24)."""
    return f"{_percent(current, limit)}% — {current:,}/{limit:,} chars"


def _percent(current: int, limit: int) -> int:
    return min(100, int(current / limit * 100)) if limit > 0 else 100


def preview(entry: str) -> str:
    """The first 80 characters of an entry, with ``...`` when it is longer (MEM-22)."""
    return entry if len(entry) <= _PREVIEW_CHARS else entry[:_PREVIEW_CHARS] + "..."


def sanitize_entry(entry: str, file_name: str, mode: ScanMode = "standard") -> str:
    """The form of ``entry`` that may enter the system prompt (MEM-16).

    Oversized or threatening entries become a ``[BLOCKED: ...]`` notice; anything else is
    returned with secrets redacted.
    """
    if entry.startswith(BLOCKED_PREFIX):
        return entry
    if len(entry) > MAX_SCAN_CHARS:
        return (
            f"{BLOCKED_PREFIX} {file_name} entry too large to scan ({len(entry):,} chars)."
            + _BLOCKED_TAIL
        )
    hits = find_threats(entry, mode)
    if hits:
        ids = ", ".join(hit.pattern_id for hit in hits)
        return f"{BLOCKED_PREFIX} {file_name} entry contained threat pattern(s): {ids}." + (
            _BLOCKED_TAIL
        )
    return redact(entry)


def render_block(target: Target, entries: Sequence[str], shown: Sequence[str], limit: int) -> str:
    """The system-prompt block for ``target`` (MEM-17, MEM-18); ``""`` when empty.

    ``entries`` are the raw entries (their usage goes in the header); ``shown`` are the
    sanitized ones that form the body.
    """
    if not entries:
        return ""
    current = len(join_entries(entries))
    over = " ⚠ OVER BUDGET" if current > limit else ""
    header = f"{_HEADERS[target]} [{_percent(current, limit)}% — {current:,}/{limit:,} chars{over}]"
    body = join_entries(shown)
    cap = max(2 * limit, 4_000)
    if len(body) > cap:
        head, tail = body[: int(cap * 0.7)], body[len(body) - int(cap * 0.2) :]
        omitted = len(body) - len(head) - len(tail)
        body = (
            f"{head}\n\n[... {omitted:,} chars truncated — memory over budget "
            f"({current:,}/{limit:,}); consolidate via memory(action=remove/replace) ...]\n\n"
            f"{tail}"
        )
    return f"{RULE}\n{header}\n{RULE}\n{body}"


MIN_MATCH_CHARS = 4
"""``old_text`` shorter than this must be a whole entry: one letter picks out whichever
entry happens to contain it, and the write replaces or removes all of that entry."""


def find_entry(entries: Sequence[str], shown: Sequence[str], old_text: str) -> int:
    """Index of the entry ``old_text`` picks out (MEM-22).

    Matching is a case-sensitive substring test against the raw entry or its sanitized
    form, so a ``[BLOCKED: ...]`` notice can be removed by quoting it. Several candidates
    are fine when their texts are identical; the first is used. A match shorter than
    :data:`MIN_MATCH_CHARS` is refused unless it is a whole entry.
    """
    candidates = [
        i
        for i, entry in enumerate(entries)
        if old_text in entry or (i < len(shown) and old_text in shown[i])
    ]
    if not candidates:
        raise MemoryMatchError(f"No entry matched '{old_text}'.", old_text=old_text)
    whole = [i for i in candidates if old_text in (entries[i], shown[i] if i < len(shown) else "")]
    if len(old_text) < MIN_MATCH_CHARS:
        if whole:
            return whole[0]
        raise MemoryMatchError(
            f"'{old_text}' is too short to pick out an entry ({len(old_text)} chars): quote "
            f"at least {MIN_MATCH_CHARS} characters of the entry, or all of it.",
            old_text=old_text,
            matches=[preview(shown[i] if i < len(shown) else entries[i]) for i in candidates],
        )
    distinct = dedupe(entries[i] for i in candidates)
    if len(distinct) > 1:
        raise MemoryMatchError(
            f"Multiple entries matched '{old_text}'. Be more specific.",
            old_text=old_text,
            matches=[preview(shown[i] if i < len(shown) else entries[i]) for i in candidates],
        )
    return candidates[0]
