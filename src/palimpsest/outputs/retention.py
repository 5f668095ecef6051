"""Keeping the output store bounded without collecting what an open session points at.

``gc`` removes, in order: objects not used for ``max_age_seconds``, then the least recently
used until the store is within ``max_total_bytes``. It never removes a digest in ``live``;
when the live objects alone exceed the budget it keeps them and says so
(``over_budget_live``). It also clears temp files of writers that died (untouched for an
hour: a writer still streaming keeps bumping its file's mtime), drops index rows whose file
is gone, and adopts object files the index does not know (a writer killed between linking
the file and recording it), dating them by their mtime.

:func:`live_digests` decides what is live from the session store: an output is live when
an **open** session (``ended_at IS NULL``) has a reference row to it, or when any message of
an open session mentions its digest. Every saved path contains the full digest
(``objects/ab/<digest>.txt``), so the digest scan finds paths too. A compaction ends the
parent session and copies the kept tail into an open continuation; the scan finds an output
mentioned there, while a reference held only by an ended session keeps nothing alive.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import OutputsSettings, Settings

if TYPE_CHECKING:
    from ..storage.contract import Store
    from .objects import ObjectFile
    from .store import OutputStore

__all__ = [
    "TMP_MAX_AGE_SECONDS",
    "GcReport",
    "RetentionPolicy",
    "collect",
    "live_digests",
    "open_messages_sql",
]

TMP_MAX_AGE_SECONDS = 3600.0
_MB = 1024 * 1024
_DAY = 86_400.0
_DIGEST = re.compile(r"(?<![0-9a-fA-F])[0-9a-fA-F]{64}(?![0-9a-fA-F])")
# A cheap SQL prefilter: rows without a run of 16 hex digits cannot mention a digest.
_HEX_RUN_GLOB = "*" + "[0-9a-fA-F]" * 16 + "*"


@dataclass(frozen=True)
class RetentionPolicy:
    """How much the store may hold: a total size in bytes and an age since last use."""

    max_total_bytes: int
    max_age_seconds: float

    def __post_init__(self) -> None:
        if self.max_total_bytes <= 0:
            raise ValueError("RetentionPolicy.max_total_bytes must be positive")
        if self.max_age_seconds <= 0:
            raise ValueError("RetentionPolicy.max_age_seconds must be positive")

    @classmethod
    def from_settings(
        cls,
        settings: Settings | OutputsSettings | None = None,
        *,
        max_total_mb: float | None = None,
        max_age_days: float | None = None,
    ) -> RetentionPolicy:
        """``outputs.max_total_mb`` and ``outputs.max_age_days``, each overridable."""
        if settings is None:
            settings = OutputsSettings()
        section = settings.outputs if isinstance(settings, Settings) else settings
        size = section.max_total_mb if max_total_mb is None else max_total_mb
        age = section.max_age_days if max_age_days is None else max_age_days
        return cls(max_total_bytes=int(size * _MB), max_age_seconds=age * _DAY)


@dataclass(frozen=True)
class GcReport:
    """What a ``gc`` run removed (or, with ``dry_run``, would remove) and what is left."""

    removed_count: int = 0
    removed_bytes: int = 0
    kept_live_count: int = 0
    kept_live_bytes: int = 0
    remaining_count: int = 0
    remaining_bytes: int = 0
    over_budget_live: bool = False
    temp_files_removed: int = 0
    missing_rows_removed: int = 0
    adopted: int = 0
    dry_run: bool = False
    removed: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["removed"] = list(self.removed)
        return data


def collect(
    store: OutputStore,
    policy: RetentionPolicy,
    *,
    live: frozenset[str] = frozenset(),
    now: float | None = None,
    dry_run: bool = False,
) -> GcReport:
    """Apply ``policy`` to ``store`` (see the module docstring); ``OutputStore.gc`` calls this."""
    now = time.time() if now is None else now
    if not store.root.is_dir():
        return GcReport(dry_run=dry_run)  # never written to: create nothing
    lock = contextlib.nullcontext() if dry_run else store.lock(exclusive=True)
    with lock:
        temps = _stale_temps(store.root / "tmp", now)
        files = {f.digest: f for f in store.scan_objects()}
        rows = {row["digest"]: row for row in store.index.objects()}
        missing = sorted(set(rows) - set(files))
        orphans = [files[d] for d in sorted(set(files) - set(rows))]
        last_used = {d: rows[d]["last_used"] if d in rows else f.mtime for d, f in files.items()}
        doomed = _choose(files, last_used, policy, live, now)
        live_files = [f for d, f in files.items() if d in live]
        live_bytes = sum(f.size_bytes for f in live_files)
        if not dry_run:
            _apply(store, temps, missing, orphans, [files[d] for d in doomed])
    removed_bytes = sum(files[d].size_bytes for d in doomed)
    total = sum(f.size_bytes for f in files.values())
    return GcReport(
        removed_count=len(doomed),
        removed_bytes=removed_bytes,
        kept_live_count=len(live_files),
        kept_live_bytes=live_bytes,
        remaining_count=len(files) - len(doomed),
        remaining_bytes=total - removed_bytes,
        over_budget_live=live_bytes > policy.max_total_bytes,
        temp_files_removed=len(temps),
        missing_rows_removed=len(missing),
        adopted=len(orphans),
        dry_run=dry_run,
        removed=tuple(doomed),
    )


def _choose(
    files: dict[str, ObjectFile],
    last_used: dict[str, float],
    policy: RetentionPolicy,
    live: frozenset[str],
    now: float,
) -> list[str]:
    """The digests to remove: too old first, then least recently used past the budget."""
    candidates = sorted((d for d in files if d not in live), key=lambda d: (last_used[d], d))
    cutoff = now - policy.max_age_seconds
    doomed = [d for d in candidates if last_used[d] < cutoff]
    total = sum(f.size_bytes for d, f in files.items() if d not in doomed)
    for digest in candidates:
        if total <= policy.max_total_bytes:
            break
        if digest not in doomed:
            doomed.append(digest)
            total -= files[digest].size_bytes
    return doomed


def _stale_temps(tmp_dir: Path, now: float) -> list[Path]:
    stale: list[Path] = []
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        for entry in os.scandir(tmp_dir):
            with contextlib.suppress(OSError):
                if entry.is_file(follow_symlinks=False) and (
                    entry.stat(follow_symlinks=False).st_mtime < now - TMP_MAX_AGE_SECONDS
                ):
                    stale.append(Path(entry.path))
    return stale


def _apply(
    store: OutputStore,
    temps: list[Path],
    missing: list[str],
    orphans: list[ObjectFile],
    doomed: list[ObjectFile],
) -> None:
    for path in temps:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    gone = {f.digest for f in doomed}
    adopted = [store.resolve(o.digest) for o in orphans if o.digest not in gone]

    def update(con: Any) -> None:
        store.index.delete(con, [*missing, *gone])
        for found in adopted:
            if found is not None:
                store.index.record_object(con, found, now=found.last_used)

    if missing or gone or orphans:
        store.index.write(update)
    # Rows go first: a reader that finds no row still finds the file until it is unlinked,
    # and under the exclusive lock no writer can re-create either in between.
    for victim in doomed:
        with contextlib.suppress(FileNotFoundError):
            victim.path.unlink()


def open_messages_sql() -> str:
    """The query over messages of open sessions that may mention a digest (``:hex`` = glob)."""
    return (
        "SELECT m.content, m.tool_calls FROM messages AS m"
        " JOIN sessions AS s ON s.id = m.session_id"
        " WHERE s.ended_at IS NULL AND (m.content GLOB :hex OR m.tool_calls GLOB :hex)"
    )


def _mentioned(sessions: Store) -> Iterator[str]:
    with sessions.database.reader() as con:
        for content, tool_calls in con.execute(open_messages_sql(), {"hex": _HEX_RUN_GLOB}):
            for text in (content, tool_calls):
                if text:
                    for match in _DIGEST.finditer(text):
                        yield match[0].lower()


def live_digests(sessions: Store, store: OutputStore) -> set[str]:
    """Digests of ``store`` that an open session of ``sessions`` refers to or mentions."""
    open_ids = {
        row["id"]
        for row in sessions.database.query("SELECT id FROM sessions WHERE ended_at IS NULL")
    }
    if not open_ids:
        return set()
    known = {f.digest for f in store.scan_objects()}
    referenced = store.index.referenced_by(open_ids)
    return (referenced | set(_mentioned(sessions))) & known
