"""``MEMORY.md`` and ``USER.md``: durable writes, a frozen snapshot for the system prompt.

Two states live side by side (MEM-15). :meth:`MemoryStore.load_from_disk` reads both files
into the *live* entries and renders a *frozen snapshot*; :meth:`format_for_system_prompt`
returns that snapshot all session, so the prompt (and the provider's prefix cache) stays
byte-stable while writes land on disk at once and show up in tool results.

Every write follows the same path: strip and validate, threat-scan and refuse secrets
before touching disk, take the ``<file>.lock`` lock, re-read the file under it (so writes
from other sessions are never lost), mutate, check capacity, write atomically, release.
Failures raise a :class:`~palimpsest.errors.MemoryToolError` subclass and change nothing.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import MemoryCapacityError, MemoryMatchError, MemoryThreatError, MemoryToolError
from ..home import home_dir
from ..safety.redact import contains_secret
from ..safety.threats import ScanMode, check_content
from .batch import apply_operations
from .entries import (
    DELIMITER,
    FILE_NAMES,
    TARGETS,
    MemoryWrite,
    Target,
    dedupe,
    find_entry,
    join_entries,
    parse_entries,
    render_block,
    sanitize_entry,
    usage_text,
    validate_target,
)
from .locking import TEMP_PREFIX, TEMP_SUFFIX, atomic_write, file_lock, sweep_dead, sweep_locked

if TYPE_CHECKING:
    from ..config import Settings

__all__ = [
    "DEFAULT_MEMORY_CHAR_LIMIT",
    "DEFAULT_USER_CHAR_LIMIT",
    "MemoryStore",
    "MemoryWrite",
    "WriteResult",
]

log = logging.getLogger(__name__)

DEFAULT_MEMORY_CHAR_LIMIT = 2_200
DEFAULT_USER_CHAR_LIMIT = 1_375
STALE_TEMP_SECONDS = 3_600
"""Temp files of interrupted writes older than this are removed at load."""


@dataclass(frozen=True)
class WriteResult:
    """The outcome of a successful write: the live state after it and what changed."""

    target: Target
    message: str
    entries: list[str]
    usage_chars: int
    limit: int
    writes: list[MemoryWrite] = field(default_factory=list)

    @property
    def usage(self) -> str:
        return usage_text(self.usage_chars, self.limit)

    @property
    def changed(self) -> bool:
        return bool(self.writes)


def refuse_secret(content: str) -> None:
    """Raise :class:`MemoryThreatError` when ``content`` holds a secret of any kind
    :func:`~palimpsest.safety.redact.contains_secret` knows.

    Memory is replayed into every later prompt: a secret must never be stored, and storing
    a redacted stub would silently change what the agent asked to remember. Every memory
    write path (the L1 files, the fact store) calls this.
    """
    if contains_secret(content):
        raise MemoryThreatError(
            "Blocked: content contains a secret value (API key, token, password or "
            "private key). Memory is placed in the system prompt of every later "
            "session; save where the secret lives (for example the variable name), "
            "never the value.",
            category="secret",
            pattern="secret_value",
        )


_SHOWN_LIMIT = 1024
"""Sanitized entries kept per store before the memo starts over (bounded memory)."""


class MemoryStore:
    """The two memory files under ``<home>/memories/``.

    ``home`` defaults to :func:`~palimpsest.config.home_dir`, resolved at every call so a
    changed ``$PALIMPSEST_HOME`` is honoured (MEM-10).
    """

    def __init__(
        self,
        home: str | Path | None = None,
        *,
        memory_char_limit: int = DEFAULT_MEMORY_CHAR_LIMIT,
        user_char_limit: int = DEFAULT_USER_CHAR_LIMIT,
        threat_scan: ScanMode = "standard",
    ) -> None:
        if memory_char_limit <= 0 or user_char_limit <= 0:
            raise ValueError("memory character limits must be positive")
        self._home = Path(home).expanduser() if home is not None else None
        self.limits: dict[Target, int] = {"memory": memory_char_limit, "user": user_char_limit}
        self.threat_scan: ScanMode = threat_scan
        self._live: dict[Target, list[str]] = {"memory": [], "user": []}
        self._snapshot: dict[Target, str] = {"memory": "", "user": ""}
        # Each entry's shown form (threat scan and redaction), kept while the entry lives:
        # every write returns all entries sanitized, so without it n writes scanned n² entries.
        self._shown: dict[tuple[str, ScanMode, str], str] = {}

    @classmethod
    def from_settings(cls, settings: Settings, home: str | Path | None = None) -> MemoryStore:
        """A store with the limits and scan mode of ``settings.memory``."""
        mem = settings.memory
        strict = mem.threat_scan == "strict" or settings.context.profile == "refined"
        return cls(
            home,
            memory_char_limit=mem.memory_char_limit,
            user_char_limit=mem.user_char_limit,
            threat_scan="strict" if strict else "standard",
        )

    # --- where things live ------------------------------------------------------------

    @property
    def directory(self) -> Path:
        return (self._home if self._home is not None else home_dir()) / "memories"

    def path(self, target: str) -> Path:
        return self.directory / FILE_NAMES[validate_target(target)]

    def limit(self, target: str) -> int:
        return self.limits[validate_target(target)]

    # --- reading --------------------------------------------------------------------------

    def _read_text(self, target: Target, *, strict: bool) -> str:
        path = self.path(target)
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return ""
        except (OSError, UnicodeDecodeError) as exc:
            if strict:
                # A write would replace a file we could not read: refuse rather than lose it.
                raise MemoryToolError(
                    f"{path} cannot be read ({exc}); fix or move the file, then retry."
                ) from exc
            log.warning("memory file %s is unreadable, treated as empty: %s", path, exc)
            return ""

    def load_from_disk(self) -> None:
        """Read both files into the live entries and freeze the prompt snapshot (MEM-15)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self._sweep_temp_files()
        for target in TARGETS:
            entries = dedupe(parse_entries(self._read_text(target, strict=False)))
            self._live[target] = entries
            self._snapshot[target] = render_block(
                target, entries, self.sanitized(target, entries), self.limits[target]
            )

    def load_live(self, target: str) -> list[str]:
        """Re-read ``target`` into the live entries only; the snapshot stays frozen."""
        tgt = validate_target(target)
        self._live[tgt] = dedupe(parse_entries(self._read_text(tgt, strict=False)))
        return list(self._live[tgt])

    def _sweep_temp_files(self) -> None:
        # A writer killed between mkstemp and os.replace leaves its temp file behind. Ours
        # carry the writer's pid: a dead writer's file goes now (a live one's never). Files
        # without a pid (older versions) go once older than the grace period.
        sweep_dead(self.directory)
        cutoff = time.time() - STALE_TEMP_SECONDS
        for temp in self.directory.glob(f"{TEMP_PREFIX}*{TEMP_SUFFIX}"):
            with contextlib.suppress(OSError):
                if temp.stat().st_mtime < cutoff:
                    temp.unlink()

    def entries(self, target: str) -> list[str]:
        """The live entries of ``target`` (a copy)."""
        return list(self._live[validate_target(target)])

    @property
    def memory_entries(self) -> list[str]:
        return self.entries("memory")

    @property
    def user_entries(self) -> list[str]:
        return self.entries("user")

    def sanitized(self, target: str, entries: Sequence[str] | None = None) -> list[str]:
        """The entries as they may be shown to a model: blocked notices, secrets redacted."""
        name = FILE_NAMES[validate_target(target)]
        source = self.entries(target) if entries is None else entries
        mode = self.threat_scan
        if len(self._shown) > _SHOWN_LIMIT:
            self._shown.clear()  # entries removed or replaced long ago; refilled on demand
        shown: list[str] = []
        for entry in source:
            key = (name, mode, entry)
            clean = self._shown.get(key)
            if clean is None:
                clean = self._shown[key] = sanitize_entry(entry, name, mode)
            shown.append(clean)
        return shown

    def usage(self, target: str) -> tuple[int, int]:
        """``(characters used, limit)`` of the live entries."""
        return len(join_entries(self.entries(target))), self.limit(target)

    def format_for_system_prompt(self, target: str) -> str | None:
        """The frozen block of ``target`` taken at load, or ``None`` when it is empty."""
        return self._snapshot[validate_target(target)] or None

    def system_prompt_block(self) -> str:
        """The memory block then the user-profile block (MEM-01 item 3, MEM-18)."""
        blocks = (self.format_for_system_prompt(t) for t in TARGETS)
        return "\n\n".join(block for block in blocks if block)

    # --- writing ------------------------------------------------------------------------

    def _check_safe(self, content: str) -> None:
        surrogate = next((i for i, ch in enumerate(content) if "\ud800" <= ch <= "\udfff"), None)
        if surrogate is not None:
            # Bytes that were not UTF-8 (a shell argument, a JSON "\udcff"): the file could
            # not be written as UTF-8, so say so instead of failing in the middle of the write.
            raise MemoryToolError(
                f"Content is not valid UTF-8 text: a lone surrogate "
                f"U+{ord(content[surrogate]):04X} at character {surrogate}; save it as UTF-8."
            )
        if parse_entries(f"x{DELIMITER}{content}{DELIMITER}x") != ["x", content, "x"]:
            # The entry would split (or merge with a neighbour) when the file is re-read.
            raise MemoryToolError(
                "Content cannot contain a line holding only '§' (the entry separator); "
                "save separate entries instead."
            )
        # Checked before the threat scan so a secret is always named as such.
        refuse_secret(content)
        check_content(content, self.threat_scan)

    def _read_for_write(self, target: Target, *, drift_check: bool) -> list[str]:
        # Called first under the target's lock: no other writer of it can be mid-write, so
        # every temp file of it left in the directory is an orphan of a killed writer.
        sweep_locked(self.path(target))
        text = self._read_text(target, strict=True)
        entries = parse_entries(text)
        if drift_check and (
            text.strip() != join_entries(entries)
            or any(len(e) > self.limits[target] for e in entries)
        ):
            raise self._drift_error(target)
        return entries

    def _drift_error(self, target: Target) -> MemoryToolError:
        # MEM-34: rewriting a file we cannot round-trip would destroy whatever made it odd.
        path = self.path(target)
        backup = path.with_name(f"{path.name}.bak.{int(time.time())}")
        shutil.copy2(path, backup)
        return MemoryToolError(
            f"{path.name} was changed outside the memory tool (a shell or patch edit, a "
            f"manual edit or a concurrent session) and no longer matches the entry format "
            f"or holds an entry above the {self.limits[target]:,}-char limit. A backup is "
            f"at {backup}. Nothing was written: tidy the file by hand (entries separated "
            "by a line holding only '§') or use 'add', which is still safe, then retry."
        )

    def _capacity_error(self, target: Target, headline: str, entries: list[str]) -> Exception:
        current = len(join_entries(entries))
        shown = self.sanitized(target, entries)
        listed = "\n".join(f"- {entry}" for entry in shown) or "- (none)"
        return MemoryCapacityError(
            f"{headline}\nCurrent entries:\n{listed}",
            usage=current,
            limit=self.limits[target],
            entries=shown,
        )

    def _commit(
        self, target: Target, entries: list[str], message: str, writes: list[MemoryWrite]
    ) -> WriteResult:
        if writes:
            atomic_write(self.path(target), join_entries(entries))
        self._live[target] = list(entries)
        return WriteResult(
            target=target,
            message=message,
            entries=self.sanitized(target, entries),
            usage_chars=len(join_entries(entries)),
            limit=self.limits[target],
            writes=writes,
        )

    def add(self, target: str, content: str) -> WriteResult:
        """Append ``content`` as a new entry (MEM-21); an exact duplicate is a no-op."""
        tgt = validate_target(target)
        content = content.strip()
        if not content:
            raise MemoryToolError("Content cannot be empty.")
        self._check_safe(content)
        limit = self.limits[tgt]
        with file_lock(self.path(tgt)):
            entries = self._read_for_write(tgt, drift_check=False)
            if content in entries:
                return self._commit(tgt, entries, "Entry already exists (no duplicate added).", [])
            current = len(join_entries(entries))
            if len(content) > limit:
                # Consolidating cannot help: the entry alone is over the whole limit.
                raise self._capacity_error(
                    tgt,
                    f"This entry ({len(content):,} chars) is longer than the whole "
                    f"{limit:,}-char limit. Save a shorter version of it.",
                    entries,
                )
            if len(join_entries([*entries, content])) > limit:
                raise self._capacity_error(
                    tgt,
                    f"Memory at {current:,}/{limit:,} chars. Adding this entry "
                    f"({len(content):,} chars) would exceed the limit. Consolidate now: merge "
                    "overlapping entries into shorter ones with 'replace', or 'remove' stale "
                    "or less important ones, then retry in this turn.",
                    entries,
                )
            entries.append(content)
            return self._commit(tgt, entries, "Entry added.", [MemoryWrite("add", tgt, content)])

    def replace(self, target: str, old_text: str, content: str) -> WriteResult:
        """Replace the whole entry that ``old_text`` picks out with ``content`` (MEM-22)."""
        tgt = validate_target(target)
        old_text, content = old_text.strip(), content.strip()
        if not old_text:
            raise MemoryMatchError("old_text cannot be empty.", old_text="")
        if not content:
            raise MemoryToolError("new_content cannot be empty. Use 'remove' to delete entries.")
        self._check_safe(content)
        limit = self.limits[tgt]
        with file_lock(self.path(tgt)):
            entries = self._read_for_write(tgt, drift_check=True)
            index = find_entry(entries, self.sanitized(tgt, entries), old_text)
            previous = entries[index]
            updated = dedupe([*entries[:index], content, *entries[index + 1 :]])
            total = len(join_entries(updated))
            if total > limit:
                raise self._capacity_error(
                    tgt,
                    f"Replacement would put memory at {total:,}/{limit:,} chars. Use a shorter "
                    "text, or remove other entries first.",
                    entries,
                )
            write = MemoryWrite("replace", tgt, content, old_text, previous)
            return self._commit(tgt, updated, "Entry replaced.", [write])

    def remove(self, target: str, old_text: str) -> WriteResult:
        """Delete the entry that ``old_text`` picks out (MEM-22)."""
        tgt = validate_target(target)
        old_text = old_text.strip()
        if not old_text:
            raise MemoryMatchError("old_text cannot be empty.", old_text="")
        with file_lock(self.path(tgt)):
            entries = self._read_for_write(tgt, drift_check=True)
            index = find_entry(entries, self.sanitized(tgt, entries), old_text)
            previous = entries.pop(index)
            write = MemoryWrite("remove", tgt, previous, old_text, previous)
            return self._commit(tgt, entries, "Entry removed.", [write])

    def apply(self, target: str, operations: Sequence[Mapping[str, Any]]) -> WriteResult:
        """Apply several operations all-or-nothing, checking capacity at the end (MEM-26)."""
        tgt = validate_target(target)
        for i, op in enumerate(operations):
            content = str(op.get("content") or "").strip()
            if op.get("action") in ("add", "replace") and content:
                try:
                    self._check_safe(content)
                except MemoryThreatError as exc:
                    raise MemoryThreatError(
                        f"Operation {i}: {exc}", category=exc.category, pattern=exc.pattern
                    ) from None
        limit = self.limits[tgt]
        with file_lock(self.path(tgt)):
            entries = self._read_for_write(tgt, drift_check=True)
            updated, writes = apply_operations(
                tgt, entries, self.sanitized(tgt, entries), operations
            )
            total = len(join_entries(updated))
            if total > limit:
                raise self._capacity_error(
                    tgt,
                    f"These operations would put memory at {total:,}/{limit:,} chars. No "
                    "operations were applied: shorten or remove more entries in the batch.",
                    entries,
                )
            return self._commit(tgt, updated, f"Applied {len(operations)} operation(s).", writes)
