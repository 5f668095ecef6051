"""File locks and atomic replacement for the memory files.

Two guarantees the store builds on:

* :func:`file_lock` holds an exclusive lock on ``<file>.lock``, a *separate* file, because
  the data file itself is swapped by :func:`atomic_write` and a lock on the old inode would
  protect nothing. ``fcntl.flock`` on POSIX, ``msvcrt.locking`` on Windows, no lock where
  neither exists.
* :func:`atomic_write` never lets a reader see a partial file: the text goes to a temp file
  in the same directory (so ``os.replace`` stays on one file system), is flushed and
  fsynced, then renamed over the target; the directory is fsynced so the rename itself
  survives a crash.

A writer killed between creating its temp file and the rename leaves the temp file behind.
Temp files are named ``.mem_<target>.<pid>.<random>.tmp`` so they can be cleaned safely:

* :func:`sweep_locked` runs under the target's lock, when nobody else can be writing that
  target, and removes every temp file of it;
* :func:`sweep_dead` runs without a lock and removes only temp files whose writer process
  no longer exists. A live writer's file is never touched by either.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

from ..errors import StorageError
from ..files import pid_alive, replace_file

log = logging.getLogger(__name__)

__all__ = [
    "TEMP_PREFIX",
    "TEMP_SUFFIX",
    "atomic_write",
    "file_lock",
    "lock_path",
    "sweep_dead",
    "sweep_locked",
    "temp_prefix",
]

TEMP_PREFIX = ".mem_"
TEMP_SUFFIX = ".tmp"


def temp_prefix(path: Path, pid: int | None = None) -> str:
    """The temp-file prefix of a write to ``path`` by ``pid``: ``.mem_MEMORY.md.4242.``."""
    return f"{TEMP_PREFIX}{path.name}.{os.getpid() if pid is None else pid}."


def lock_path(path: Path) -> Path:
    """The lock file that guards ``path``: ``MEMORY.md`` -> ``MEMORY.md.lock``."""
    return path.with_name(path.name + ".lock")


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``<path>.lock`` for the duration of the block.

    The lock is released when the descriptor closes, so a process killed while holding it
    does not leave the store locked.
    """
    target = lock_path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(target, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        _acquire(fd)
        yield
    finally:
        _release(fd)
        os.close(fd)


if sys.platform == "win32":  # pragma: no cover - Windows
    import msvcrt

    def _acquire(fd: int) -> None:
        # LK_LOCK retries for ~10 s then raises; loop so the wait is unbounded like flock.
        while True:
            try:
                msvcrt.locking(fd, msvcrt.LK_LOCK, 1)
                return
            except OSError:
                continue

    def _release(fd: int) -> None:
        with contextlib.suppress(OSError):
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - neither flock nor msvcrt: no lock (MEM-31)
        fcntl = None  # type: ignore[assignment]

    def _acquire(fd: int) -> None:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)

    def _release(fd: int) -> None:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)


def atomic_write(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` so readers see either the old or the new file.

    Raises :class:`~palimpsest.errors.StorageError` naming the file when the write fails;
    the temp file is removed in that case.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        replace_file(path, text, temp_prefix=temp_prefix(path), temp_suffix=TEMP_SUFFIX)
    except OSError as exc:
        raise StorageError(f"Failed to write memory file {path}: {exc}", path=path) from exc


_TEMP_NAME = re.compile(
    rf"^{re.escape(TEMP_PREFIX)}(?P<target>.+)\.(?P<pid>[0-9]+)\.[^.]+{re.escape(TEMP_SUFFIX)}$"
)


def _writer(temp: Path) -> tuple[str, int] | None:
    """``(target file name, writer pid)`` of a temp file, or ``None`` for another name."""
    match = _TEMP_NAME.match(temp.name)
    return (match["target"], int(match["pid"])) if match else None


def _temp_files(directory: Path) -> list[Path]:
    try:
        return list(directory.glob(f"{TEMP_PREFIX}*{TEMP_SUFFIX}"))
    except OSError:
        return []


def _remove(temp: Path) -> bool:
    try:
        temp.unlink()
    except FileNotFoundError:
        return False
    except OSError as exc:
        log.warning("could not remove leftover temp file %s: %s", temp, exc)
        return False
    return True


def sweep_locked(path: Path) -> int:
    """Remove every leftover temp file of ``path``; call only while holding its lock.

    Every writer of ``path`` holds the same lock while its temp file exists, so under the
    lock any temp file of ``path`` belongs to a writer that died. Returns the count removed.
    """
    removed = 0
    for temp in _temp_files(path.parent):
        writer = _writer(temp)
        if writer is not None and writer[0] == path.name:
            removed += _remove(temp)
    return removed


def sweep_dead(directory: Path) -> int:
    """Remove temp files in ``directory`` whose writer process has exited (no lock needed).

    A file whose pid is alive is kept, even if the pid was reused by an unrelated process:
    the next write under the lock (:func:`sweep_locked`) removes it then.
    """
    removed = 0
    for temp in _temp_files(directory):
        writer = _writer(temp)
        if writer is not None and not pid_alive(writer[1]):
            removed += _remove(temp)
    return removed
