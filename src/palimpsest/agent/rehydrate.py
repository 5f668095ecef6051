"""File rehydration: after a compaction, the files the agent just wrote come back whole.

The state ledger keeps the paths (and hashes) of the files the agent changed, not their
content, so after a compaction the agent used to spend its first calls re-reading files
it had written minutes before. :func:`rehydration_message` re-attaches the newest of them
to the post-compaction injection, beside the ledger:

* only files the agent itself **wrote or edited** (the ledger's modified files, never the
  ones it merely read), newest change first, at most ``files`` of them;
* only files that **still exist**, inside the **workspace the agent wrote them in** (the
  ledger's ``workdir``; symlinks are resolved and a path that leaves the workspace is
  skipped, as the workspace tools refuse it): a deleted file is not attached;
* the **current content**: a file changed outside the agent since its last write (its
  hash differs from the ledger's) is attached as it is now, and says so;
* **redacted** (:func:`palimpsest.safety.redact.redact`), like everything the agent
  injects;
* within a budget: a file over ``file_tokens`` (or not text) is named by its path only,
  and contents stop at ``total_tokens`` (the rest by path only).

The budget comes from ``compression.rehydrate_*`` and is further capped at
:data:`WINDOW_SHARE` of the window and at what the caller says it has room for, so a
small window is not filled with files the summary just made room in.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..messages.markers import REHYDRATION_HEADER
from ..safety.redact import redact
from ..tokens import CHARS_PER_TOKEN, estimate_tokens_rough
from .workspace import confine

if TYPE_CHECKING:
    from ..config import CompressionSettings
    from .ledger import FileRecord, StateLedger

__all__ = [
    "REHYDRATION_HEADER",
    "REHYDRATION_MARKER",
    "WINDOW_SHARE",
    "Rehydrated",
    "RehydrationBudget",
    "choose_files",
    "rehydration_message",
    "render_rehydration",
]

REHYDRATION_MARKER = "_agent_rehydrated"
"""Key marking the re-attached files message (stripped before a request, and replaced at
the next compaction like the ledger)."""

WINDOW_SHARE = 0.10
"""Of the window, the most all re-attached contents may take together."""

_BYTES_PER_TOKEN_CEILING = CHARS_PER_TOKEN * 4
"""A file with more bytes than ``file_tokens`` times this is over its limit unread."""


@dataclass(frozen=True)
class RehydrationBudget:
    """How many files, and how many tokens each and together (module docstring)."""

    files: int = 5
    file_tokens: int = 5_000
    total_tokens: int = 20_000

    @classmethod
    def from_settings(
        cls, compression: CompressionSettings, window: int | None = None
    ) -> RehydrationBudget:
        total = compression.rehydrate_total_tokens
        if window is not None and window > 0:
            total = min(total, int(window * WINDOW_SHARE))
        return cls(compression.rehydrate_files, compression.rehydrate_file_tokens, total)

    def within(self, room: int | None) -> RehydrationBudget:
        """This budget with the total capped at ``room`` tokens (``None``: no cap)."""
        if room is None:
            return self
        return RehydrationBudget(self.files, self.file_tokens, max(0, min(self.total_tokens, room)))


@dataclass(frozen=True)
class Rehydrated:
    """One file chosen: its content (redacted), or ``None`` with the reason for path only."""

    path: str
    edits: int
    turn: int
    content: str | None
    tokens: int
    why_path_only: str | None = None
    changed_outside: bool = False


def _located(root: Path, record: FileRecord) -> Path | None:
    """The file inside ``root`` as it is now, or ``None`` (gone, outside, not a file)."""
    try:
        path = confine(root, record.path)
    except (PermissionError, ValueError, OSError):
        return None
    return path if path.is_file() else None


def _read(path: Path, budget: RehydrationBudget) -> tuple[bytes | None, str | None]:
    """The file's bytes, or ``None`` with why not (too large to read, unreadable)."""
    try:
        size = path.stat().st_size
        if size > budget.file_tokens * _BYTES_PER_TOKEN_CEILING:
            return None, f"{size:,} bytes, over the {budget.file_tokens:,}-token limit per file"
        return path.read_bytes(), None
    except OSError as exc:
        return None, f"could not be read ({type(exc).__name__})"


def choose_files(ledger: StateLedger, budget: RehydrationBudget) -> list[Rehydrated]:
    """The files to re-attach, newest change first (module docstring for the rules)."""
    root = ledger.workdir
    if root is None or budget.files <= 0:
        return []
    root = root.resolve()
    chosen: list[Rehydrated] = []
    left = budget.total_tokens
    for record in reversed(ledger.modified_records()):
        if len(chosen) >= budget.files:
            break
        path = _located(root, record)
        if path is None:
            continue  # deleted, or outside the workspace: nothing to attach
        item = _attach(path, record, budget, left)
        if item.content is not None:
            left -= item.tokens
        chosen.append(item)
    return chosen


def _attach(path: Path, record: FileRecord, budget: RehydrationBudget, left: int) -> Rehydrated:
    """One existing file: its redacted content if it fits, else its path and why."""

    def path_only(why: str, tokens: int = 0, changed: bool = False) -> Rehydrated:
        return Rehydrated(record.path, record.edits, record.turn, None, tokens, why, changed)

    data, why = _read(path, budget)
    if data is None:
        return path_only(why or "could not be read")
    changed = record.sha256 is not None and hashlib.sha256(data).hexdigest() != record.sha256
    if b"\x00" in data[:8192]:
        return path_only("not a text file", changed=changed)
    text = redact(data.decode("utf-8", errors="replace"))
    tokens = estimate_tokens_rough(text)
    if tokens > budget.file_tokens:
        why = f"~{tokens:,} tokens, over the {budget.file_tokens:,}-token limit per file"
        return path_only(why, tokens, changed)
    if tokens > left:
        return path_only(
            f"~{tokens:,} tokens, over what the total budget had left", tokens, changed
        )
    return Rehydrated(record.path, record.edits, record.turn, text, tokens, None, changed)


def _fence(text: str) -> str:
    """A backtick fence longer than any run of backticks in ``text``."""
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def render_rehydration(files: list[Rehydrated]) -> str | None:
    """The injection text for ``files``; ``None`` when there is none to attach."""
    if not any(f.content is not None for f in files):
        return None
    parts = [
        REHYDRATION_HEADER,
        "The files you changed most recently, newest first, as they are on disk now (secrets "
        "redacted). Do not read them again just to see them; files shown by path only are "
        "too large to attach.",
    ]
    for item in files:
        times = "1 edit" if item.edits == 1 else f"{item.edits} edits"
        where = f"{item.path} ({times}, last turn {item.turn})"
        if item.changed_outside:
            where += (
                " — changed outside the agent since its last write; this is the current content"
            )
        if item.content is None:
            parts.append(f"- {where}: path only, {item.why_path_only}")
            continue
        fence = _fence(item.content)
        body = item.content if item.content.endswith("\n") else item.content + "\n"
        parts.append(f"### {where}\n{fence}\n{body}{fence}")
    return "\n\n".join(parts)


def rehydration_message(
    ledger: StateLedger, budget: RehydrationBudget, room: int | None = None
) -> dict[str, Any] | None:
    """The user message that re-attaches the files, or ``None`` when there is nothing to.

    ``room`` caps the total further (tokens the caller can spare after the compaction)."""
    text = render_rehydration(choose_files(ledger, budget.within(room)))
    if text is None:
        return None
    return {"role": "user", "content": text, REHYDRATION_MARKER: True}
