"""Reading an earlier summary body back into sections, so an update can merge into it.

Any summary this library writes (handoff, classic, historical, or the deterministic
fallback) is Markdown with ``## `` / ``### `` headings. Parsing is forgiving: unknown
headings are kept as extra context, ``None.`` means empty, and a body without headings
(a static fallback or free text) survives as one snippet.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["COMPACT_WRITTEN", "PreviousSummary", "is_written_note", "parse_previous"]

_ALIASES = {
    "historical task snapshot": "Active Task",
    "historical in-progress state": "In Progress",
    "historical pending user asks": "Pending User Asks",
    "historical remaining work": "Remaining Work",
    "done": "Completed Actions",
    "next steps": "Remaining Work",
}
_CANONICAL = (
    "Active Task", "Goal", "Constraints & Preferences", "Completed Actions", "Active State",
    "In Progress", "Blocked", "Key Decisions", "Resolved Questions", "Pending User Asks",
    "Relevant Files", "Remaining Work", "Critical Context",
)  # fmt: skip
_BY_LOWER = {name.lower(): name for name in _CANONICAL}
_IGNORED = {"progress", "last dropped turns", "previous summary snapshot"}
_NUMBERED = re.compile(r"^\s*(\d+)[.)]\s+(.*\S)")
_BULLET = re.compile(r"^\s*[-*•]\s+")
_FILE_LINE = re.compile(r"^(.+?) — (\w+)")
_NONE = {"none", "none.", "n/a", "-", "unknown"}
_WRITTEN_NOTES = {"modified", "created", "deleted", "written", "edited"}

SNIPPET_CHARS = 1_500
COMPACT_WRITTEN = "changed: "
"""Starts the one-line list of changed files that the tightest budget level writes."""


@dataclass
class PreviousSummary:
    """The parts of an earlier summary body an update needs."""

    sections: dict[str, list[str]] = field(default_factory=dict)
    actions: list[str] = field(default_factory=list)  # action texts without their numbers
    collapsed: list[str] = field(default_factory=list)  # "… and N more" lines
    files: list[tuple[str, str]] = field(default_factory=list)  # (path, note)
    extra: list[str] = field(default_factory=list)

    def text(self, name: str) -> str | None:
        """A section's text, or ``None`` when missing or ``None.``."""
        lines = [line for line in self.sections.get(name, []) if line.strip()]
        joined = "\n".join(lines).strip()
        return None if joined.lower() in _NONE or not joined else joined

    def items(self, name: str) -> list[str]:
        """A section's lines as items, bullets stripped, ``None.`` dropped."""
        found = []
        for line in self.sections.get(name, []):
            item = _BULLET.sub("", line).strip()
            if item and item.lower() not in _NONE:
                found.append(item)
        return found


def _canonical(heading: str) -> str | None:
    key = heading.strip().rstrip(":").lower()
    if key in _IGNORED:
        return None
    return _ALIASES.get(key) or _BY_LOWER.get(key) or heading.strip()


def parse_previous(body: str | None) -> PreviousSummary:
    """Split ``body`` into sections; numbered actions and file notes are parsed out."""
    parsed = PreviousSummary()
    if not body or not body.strip():
        return parsed
    current: str | None = None
    saw_heading = False
    for raw in body.splitlines():
        line = raw.rstrip()
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
            if heading and line.startswith(("## ", "### ")):
                saw_heading = True
                current = _canonical(heading)
                if current is not None:
                    parsed.sections.setdefault(current, [])
                continue
        if current is None:
            continue
        parsed.sections[current].append(line)
    if not saw_heading:
        parsed.extra.append(body.strip()[:SNIPPET_CHARS])
        return parsed
    for line in parsed.sections.get("Completed Actions", []):
        match = _NUMBERED.match(line)
        if match:
            parsed.actions.append(match.group(2))
        elif line.strip().startswith(("…", "...")):
            parsed.collapsed.append(line.strip())
        elif line.strip() and line.strip().lower() not in _NONE:
            parsed.actions.append(line.strip())
    for item in parsed.items("Relevant Files"):
        if item.startswith(("…", "...")):
            continue  # a "… and N more" line, not a file
        if item.startswith(COMPACT_WRITTEN):  # the tightest layout lists paths on one line
            parsed.files.extend(
                (p.strip(), "modified") for p in item[len(COMPACT_WRITTEN) :].split(", ")
            )
            continue
        match = _FILE_LINE.match(item)
        path, note = (match.group(1), match.group(2).lower()) if match else (item, "noted")
        parsed.files.append((path.strip("`"), note))
    for name, lines in parsed.sections.items():
        if name not in _CANONICAL:
            parsed.extra.extend(f"{name}: {line.strip()}" for line in lines if line.strip())
    return parsed


def is_written_note(note: str) -> bool:
    """True for a file note that records a change (the file must stay listed)."""
    return note.split()[0].rstrip(",") in _WRITTEN_NOTES if note else False
