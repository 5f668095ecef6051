"""Writing a file the user named, so that a reader sees the old text or the new one.

Memory files, the CLI's output and report files, exported sessions, the agent's
``write_file`` and the trajectory writers all go through this module: the text goes to a
temporary file in the target's directory (so ``os.replace`` stays on one file system), is
flushed and fsynced, then renamed over the target, and the directory is fsynced so the
rename itself survives a crash. A failure removes the temporary file and leaves the target
as it was.

Before anything is written, :func:`output_target` looks at what the path names:

- a symlink is followed: the file it points to is replaced (atomically, in *its*
  directory) and the link stays a link; a dangling link creates the file it points to,
  as a shell's ``>`` would;
- a directory, a character or block device (``/dev/null``, ``/dev/full``), a FIFO, a
  socket, a standard stream (``/dev/stdout``, ``/dev/fd/N``, ``/proc/self/fd/N``) or a
  file that cannot be written is refused with :class:`~palimpsest.errors.OutputTargetError`
  naming the path, so a command can refuse before doing any work (root included: a rename
  would otherwise replace ``/dev/null`` with a regular file);
- an existing file keeps its permission bits (and, where allowed, its owner); a new file
  gets the usual ``0666`` minus the umask, not ``mkstemp``'s ``0600``.

Errors while writing are ``OSError`` carrying the target's path, never the temporary
file's.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
from pathlib import Path

from .errors import OutputTargetError

__all__ = [
    "create_temp_beside",
    "fsync_dir",
    "naming_target",
    "output_target",
    "pid_alive",
    "publish_temp",
    "replace_bytes",
    "replace_file",
]

_STREAM_PATH = re.compile(
    r"^/(dev/(std(in|out|err)|fd(/.*)?)|proc/(self|thread-self|\d+)/fd(/.*)?)$"
)
"""Paths that name an open descriptor rather than a file: replacing what they resolve to
would swap a file out from under the shell that opened it."""

_KINDS = (
    (stat.S_ISDIR, "is a directory"),
    (stat.S_ISCHR, "is a character device"),
    (stat.S_ISBLK, "is a block device"),
    (stat.S_ISFIFO, "is a named pipe (FIFO)"),
    (stat.S_ISSOCK, "is a socket"),
)


def fsync_dir(directory: Path) -> None:
    """Make a rename in ``directory`` durable (a no-op where directories cannot be opened)."""
    if os.name != "posix":  # pragma: no cover - Windows
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def output_target(path: str | os.PathLike[str]) -> Path:
    """The regular file a write to ``path`` replaces: ``path`` with symlinks resolved.

    Raises :class:`~palimpsest.errors.OutputTargetError` (naming ``path``) when it is not,
    and cannot become, a regular file this process may replace. Nothing is created.
    """
    given = os.fspath(path)
    if not given:
        raise OutputTargetError(given, "an empty path is not a file")
    if _names_a_stream(given):
        raise OutputTargetError(
            given,
            "names a standard stream or file descriptor, not a file; "
            "write to standard output instead",
        )
    resolved = Path(os.path.realpath(given))
    try:
        info = os.stat(resolved)
    except FileNotFoundError:
        _check_directory(given, resolved.parent)
        return resolved
    except OSError as exc:  # a symlink loop, a component that is not a directory, EACCES
        raise OutputTargetError(given, exc.strerror or str(exc)) from None
    for test, problem in _KINDS:
        if test(info.st_mode):
            raise OutputTargetError(given, f"{problem}; give a regular file")
    if not stat.S_ISREG(info.st_mode):
        raise OutputTargetError(given, "is not a regular file")
    if not os.access(resolved, os.W_OK):
        raise OutputTargetError(given, "is not writable (permission denied)")
    _check_directory(given, resolved.parent)
    return resolved


def _names_a_stream(given: str) -> bool:
    """Whether ``given``, or a symlink on the way from it to its file, names a descriptor."""
    current = os.path.normpath(os.path.abspath(given))
    for _ in range(40):  # the kernel's own limit on a chain of links
        if _STREAM_PATH.match(current):
            return True
        try:
            link = os.readlink(current)
        except OSError:  # not a link (or not there): the chain ends here
            return False
        current = os.path.normpath(os.path.join(os.path.dirname(current), link))
    return False


def _check_directory(given: str, directory: Path) -> None:
    try:
        info = os.stat(directory)
    except OSError:
        raise OutputTargetError(given, f"directory {directory} does not exist") from None
    if not stat.S_ISDIR(info.st_mode):
        raise OutputTargetError(given, f"{directory} is not a directory")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise OutputTargetError(given, f"cannot create files in {directory} (permission denied)")


def create_temp_beside(target: Path, *, prefix: str, suffix: str = ".tmp") -> tuple[int, Path]:
    """Open a new temporary file in ``target``'s directory for writing: ``(fd, path)``.

    ``target`` is what :func:`output_target` returned. The file already carries the mode
    (and, where this process may set it, the owner) the target should end with: the
    existing file's, else ``0666`` minus the umask.
    """
    try:
        existing: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        existing = None
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    flags |= getattr(os, "O_NOFOLLOW", 0)
    for _ in range(100):
        temp = target.parent / f"{prefix}{secrets.token_hex(6)}{suffix}"
        try:
            # 0o666 lets the umask decide a new file's mode, as open(..., "w") would;
            # an existing file's bits replace it below.
            fd = os.open(temp, flags, 0o600 if existing is not None else 0o666)
        except FileExistsError:
            continue
        if existing is not None:
            try:
                if os.name == "posix":
                    with contextlib.suppress(OSError):  # chown first: it clears set-id bits
                        os.fchown(fd, existing.st_uid, existing.st_gid)
                os.chmod(fd, stat.S_IMODE(existing.st_mode))
            except BaseException:
                os.close(fd)
                with contextlib.suppress(OSError):
                    os.unlink(temp)
                raise
        return fd, temp
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(target))  # pragma: no cover


def publish_temp(temp: Path, target: Path) -> None:
    """Rename the (fsynced, closed) ``temp`` over ``target`` and fsync the directory."""
    os.replace(temp, target)
    fsync_dir(target.parent)


def replace_file(
    path: str | os.PathLike[str], text: str, *, temp_prefix: str, temp_suffix: str = ".tmp"
) -> None:
    """Replace ``path`` with ``text`` atomically; see :func:`replace_bytes`."""
    replace_bytes(path, text.encode("utf-8"), temp_prefix=temp_prefix, temp_suffix=temp_suffix)


def replace_bytes(
    path: str | os.PathLike[str], data: bytes, *, temp_prefix: str, temp_suffix: str = ".tmp"
) -> None:
    """Write ``data`` to a temporary file beside ``path``'s target, fsync it, rename it over
    the target and fsync the directory.

    :class:`~palimpsest.errors.OutputTargetError` when ``path`` cannot be a regular file
    (:func:`output_target`); ``OSError`` naming ``path`` when writing fails, with the
    target as it was and the temporary file gone. The temporary file is
    ``<temp_prefix>…<temp_suffix>``, so a caller that sweeps leftovers of killed writers
    can find its own.
    """
    target = output_target(path)
    fd, temp = create_temp_beside(target, prefix=temp_prefix, suffix=temp_suffix)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        publish_temp(temp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise naming_target(exc, path) from exc
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def naming_target(exc: OSError, path: str | os.PathLike[str]) -> OSError:
    """``exc`` as an ``OSError`` whose ``filename`` is ``path`` (not a temporary file)."""
    return OSError(exc.errno, exc.strerror or str(exc), os.fspath(path))


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
