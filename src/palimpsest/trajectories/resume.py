"""Resumable runs: committed chunk parts in a work directory beside the output.

Design (chosen over an append-only output with an offsets journal because it works the
same for JSONL and Parquet, whose footer makes appending impossible):

- A run writing ``OUT`` works in ``OUT.partial/``. Its ``run.json`` holds a fingerprint of
  everything that decides the output bytes (input paths, format, settings, chunk size,
  bad-input policy). A run that finds a work directory with another fingerprint refuses to
  mix the two and says which directory to delete.
- Each finished chunk is committed as two files, each written atomically: the rendered part
  (``<input>/<index>.part``) and then its record (``<input>/<index>.json``: the input digest,
  the record counts and the chunk's partial metrics). A chunk counts as done only when its
  record exists, so a run killed at any instant leaves at worst an orphan part that the next
  run overwrites.
- A resumed run re-reads the input chunk by chunk (cheap: no compression), and for every
  chunk with a record compares the digest: equal means skip it, different means the input
  changed and the run stops with a clear message instead of mixing old and new results.
- When every chunk is done, the parts are concatenated in order into the output (written to
  a temporary name and renamed), the metrics are written, and the work directory is removed.

Output bytes therefore equal an uninterrupted run's: both are the same parts, rendered by the
same functions, joined in the same order.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..files import replace_bytes, replace_file
from .metrics import AggregateMetrics

__all__ = ["ChunkRecord", "ResumeError", "WorkDir", "fingerprint", "work_dir_for"]

RUN_FILE = "run.json"


class ResumeError(UserError):
    """A work directory left by an earlier run does not match this run."""


def fingerprint(settings: dict[str, Any]) -> str:
    """A stable digest of the settings that decide the output bytes."""
    text = json.dumps(settings, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def work_dir_for(output: Path) -> Path:
    """``OUT.partial`` beside ``OUT`` (same file system, so the final rename is atomic)."""
    return output.with_name(output.name + ".partial")


@dataclass(frozen=True)
class ChunkRecord:
    """A committed chunk: what input it covered and what it produced."""

    index: int
    start: int
    stop: int
    digest: str
    records: int
    metrics: dict[str, Any]

    def aggregate(self) -> AggregateMetrics:
        """The chunk's partial metrics, ready to merge into the run's."""
        return AggregateMetrics(**self.metrics)


class WorkDir:
    """The ``OUT.partial`` directory of one run, created or reopened."""

    def __init__(self, path: Path, settings: dict[str, Any]) -> None:
        self.path = path
        self.resumed = False
        digest = fingerprint(settings)
        run_file = path / RUN_FILE
        if run_file.exists():
            try:
                earlier = json.loads(run_file.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise ResumeError(
                    f"{run_file}: unreadable ({exc}); delete {path} to start over"
                ) from exc
            if earlier.get("fingerprint") != digest:
                changed = _changed_keys(earlier.get("settings", {}), settings)
                raise ResumeError(
                    f"{path} holds an interrupted run with different settings "
                    f"({', '.join(changed) or 'fingerprint'} changed); rerun with the same "
                    f"input and settings to resume it, or delete {path} to start over"
                )
            self.resumed = True
        else:
            path.mkdir(parents=True, exist_ok=True)
            payload = {
                "fingerprint": digest,
                "settings": json.loads(json.dumps(settings, default=str)),
            }
            replace_file(run_file, json.dumps(payload, indent=2) + "\n", temp_prefix=".run.")

    def _dir(self, job: str) -> Path:
        name = hashlib.sha256(job.encode("utf-8")).hexdigest()[:16]
        return self.path / name

    def part_path(self, job: str, index: int) -> Path:
        """Where chunk ``index`` of input ``job`` keeps its rendered output."""
        return self._dir(job) / f"{index:08d}.part"

    def record(self, job: str, index: int) -> ChunkRecord | None:
        """The commit record of a chunk, or ``None`` when it is not done."""
        path = self._dir(job) / f"{index:08d}.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return None  # a torn record cannot exist (atomic writes); be safe and redo it
        return ChunkRecord(**data)

    def commit(self, job: str, record: ChunkRecord, part: bytes) -> None:
        """Publish a chunk: its part first, then its record (which marks it done)."""
        directory = self._dir(job)
        directory.mkdir(parents=True, exist_ok=True)
        replace_bytes(self.part_path(job, record.index), part, temp_prefix=".part.")
        replace_file(
            directory / f"{record.index:08d}.json",
            json.dumps(asdict(record)) + "\n",
            temp_prefix=".rec.",
        )

    def read_part(self, job: str, index: int) -> bytes:
        """The rendered bytes of a committed chunk."""
        return self.part_path(job, index).read_bytes()

    def remove(self) -> None:
        """Delete the work directory (after the output is published)."""
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(self.path)


def _changed_keys(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    fresh = json.loads(json.dumps(new, default=str))
    return sorted(key for key in set(old) | set(fresh) if old.get(key) != fresh.get(key))
