"""Replacing a file so that a reader sees the old text or the new one, never a part.

Memory files and the CLI's output and report files are all rewritten this way: the text goes
to a temporary file in the same directory (so ``os.replace`` stays on one file system), is
flushed and fsynced, then renamed over the target, and the directory is fsynced so the
rename itself survives a crash. A failure removes the temporary file and leaves the target
as it was.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["fsync_dir", "pid_alive", "replace_bytes", "replace_file"]


def fsync_dir(directory: Path) -> None:
    """Make a rename in ``directory`` durable (a no-op where directories cannot be opened)."""
    if os.name != "posix":  # pragma: no cover - Windows
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_file(path: Path, text: str, *, temp_prefix: str, temp_suffix: str = ".tmp") -> None:
    """Replace ``path`` with ``text`` atomically; raises ``OSError`` with the target intact.

    The temporary file is ``<temp_prefix>…<temp_suffix>`` beside ``path``, so a caller that
    sweeps leftovers of killed writers can find its own.
    """
    replace_bytes(path, text.encode("utf-8"), temp_prefix=temp_prefix, temp_suffix=temp_suffix)


def replace_bytes(path: Path, data: bytes, *, temp_prefix: str, temp_suffix: str = ".tmp") -> None:
    """:func:`replace_file` for bytes: write a temporary file beside ``path``, fsync it,
    rename it over ``path`` and fsync the directory; on any failure the temporary file goes
    and ``path`` is as it was."""
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=temp_prefix, suffix=temp_suffix)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
        fsync_dir(path.parent)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` may still be running (True when it cannot be told).

    Used to sweep temporary files that carry their writer's pid: a file whose writer is
    gone is an orphan of a killed process. A pid reused by an unrelated process counts as
    alive, which only delays a sweep.
    """
    if pid == os.getpid():
        return True
    if os.name != "posix":  # pragma: no cover - no cheap liveness test: assume alive
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists, owned by someone else
        return True
    return True
