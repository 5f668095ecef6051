"""The object files of the output store: where they live, how one is written, how to list them.

Layout under the store root::

    objects/<first 2 hex>/<sha256>.txt   text (redacted, byte-exact otherwise)
    objects/<first 2 hex>/<sha256>.bin   binary data, stored raw
    tmp/put-*.part                       objects being written
    .lock                                shared while saving, exclusive while collecting

An object is written once: :func:`spool` streams the pieces into a temp file while hashing
them and fsyncs it; :func:`place` then hard-links it to its name. The link fails when the
name exists, so among writers of the same bytes (threads or processes) exactly one reports
a new object; a file system without hard links falls back to ``os.replace``, which is just
as safe for identical bytes. Every failure of the disk (read-only, full, permissions)
becomes one :class:`~palimpsest.errors.StorageError` naming the path and the cause, and no
temp file is left behind.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import sys
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import StorageError, UserError
from ..files import fsync_dir

if sys.platform != "win32":
    import fcntl

__all__ = [
    "LOCK_FILE",
    "MIN_PREFIX",
    "OBJECTS_DIR",
    "OBJECT_NAME",
    "TMP_DIR",
    "ObjectFile",
    "Spooled",
    "flock",
    "object_path",
    "parse_name",
    "place",
    "save_error",
    "scan_objects",
    "spool",
]

OBJECTS_DIR = "objects"
TMP_DIR = "tmp"
LOCK_FILE = ".lock"
#: ``<64 hex>.txt`` or ``<64 hex>.bin``; group 1 is the digest, group 2 the suffix.
OBJECT_NAME = re.compile(r"([0-9a-f]{64})\.(txt|bin)")
#: Fewest hex characters a digest prefix may have (2^32 names: collisions stay rare).
MIN_PREFIX = 8
_HEX = re.compile(r"[0-9a-f]+")
_NO_HARD_LINKS = {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.ENOSYS}


@dataclass(frozen=True)
class ObjectFile:
    """An object file found on disk (what ``gc`` and ``rebuild_index`` work from)."""

    digest: str
    suffix: str
    path: Path
    size_bytes: int
    mtime: float


@dataclass(frozen=True)
class Spooled:
    """A fully written, fsynced temp file and the SHA-256 and size of its bytes."""

    temp: Path
    digest: str
    size_bytes: int


def object_path(root: Path, digest: str, suffix: str) -> Path:
    return root / OBJECTS_DIR / digest[:2] / f"{digest}.{suffix}"


def save_error(path: Path, action: str, exc: OSError) -> StorageError:
    return StorageError(
        f"{path}: cannot save the tool output ({action}): {exc.strerror or exc}", path=path
    )


@contextlib.contextmanager
def flock(root: Path, *, exclusive: bool) -> Iterator[None]:
    """Hold the store-wide lock ``<root>/.lock`` (no lock where ``flock`` does not exist)."""
    fd = os.open(root / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if sys.platform != "win32":
            fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)  # releases the lock


@contextlib.contextmanager
def spool(root: Path, pieces: Iterable[bytes]) -> Iterator[Spooled]:
    """Write ``pieces`` to a temp file under ``<root>/tmp``, hashing them; removed on exit.

    Errors raised while *producing* the pieces (a source that cannot be read) pass through
    unchanged; errors of the store's disk become :class:`StorageError`.
    """
    tmp_dir = root / TMP_DIR
    try:
        tmp_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, name = tempfile.mkstemp(dir=tmp_dir, prefix="put-", suffix=".part")
    except OSError as exc:
        raise save_error(tmp_dir, "create a temporary file", exc) from exc
    temp = Path(name)
    try:
        hasher, size = hashlib.sha256(), 0
        with os.fdopen(fd, "wb") as out:
            for piece in pieces:
                try:
                    out.write(piece)
                except OSError as exc:
                    raise save_error(temp, "write", exc) from exc
                hasher.update(piece)
                size += len(piece)
            try:
                out.flush()
                os.fsync(out.fileno())
            except OSError as exc:
                raise save_error(temp, "flush", exc) from exc
        yield Spooled(temp, hasher.hexdigest(), size)
    finally:
        with contextlib.suppress(OSError):
            temp.unlink()


def place(root: Path, spooled: Spooled, suffix: str) -> tuple[Path, bool]:
    """Give the spooled file its object name; ``(path, False)`` when it already existed.

    An existing file of another size (damaged by hand) is replaced by the sound copy.
    """
    final = object_path(root, spooled.digest, suffix)
    try:
        final.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            os.link(spooled.temp, final)  # atomic "create if absent": one writer wins
        except FileExistsError:
            if final.stat().st_size == spooled.size_bytes:
                return final, False
            os.replace(spooled.temp, final)
        except OSError as exc:
            if exc.errno not in _NO_HARD_LINKS:
                raise
            if final.exists() and final.stat().st_size == spooled.size_bytes:
                return final, False
            os.replace(spooled.temp, final)
        fsync_dir(final.parent)
    except OSError as exc:
        raise save_error(final, "store the object", exc) from exc
    return final, True


def scan_objects(root: Path, prefix: str = "") -> list[ObjectFile]:
    """Object files on disk whose digest starts with ``prefix`` (symlinks are ignored)."""
    objects = root / OBJECTS_DIR
    if len(prefix) >= 2:
        buckets = [objects / prefix[:2]]
    else:
        try:
            buckets = sorted(Path(e.path) for e in os.scandir(objects) if e.is_dir())
        except (FileNotFoundError, NotADirectoryError):
            return []
    found: list[ObjectFile] = []
    for bucket in buckets:
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            for entry in os.scandir(bucket):
                match = OBJECT_NAME.fullmatch(entry.name)
                if not match or match[1][:2] != bucket.name or not match[1].startswith(prefix):
                    continue
                if entry.is_file(follow_symlinks=False):
                    stat = entry.stat(follow_symlinks=False)
                    found.append(
                        ObjectFile(
                            match[1], match[2], Path(entry.path), stat.st_size, stat.st_mtime
                        )
                    )
    return found


def parse_name(root: Path, name: str) -> tuple[str, str | None] | None:
    """``(digest or prefix, suffix or None)`` for a name of an object, or ``None``.

    Accepted: a full digest (any case), a prefix of :data:`MIN_PREFIX`+ hex characters,
    ``<digest>.txt|bin``, or a path (absolute, or relative to ``root``) that resolves,
    symlinks included, to ``objects/<2 hex>/<digest>.<suffix>`` under ``root``. A path that
    resolves outside ``root`` raises ``PermissionError``; a prefix too short, ``UserError``.
    """
    name = name.strip()
    if not name or "\x00" in name:
        return None
    if "/" in name or os.sep in name:
        given = Path(name).expanduser()
        base = root.resolve()
        target = (given if given.is_absolute() else base / given).resolve()
        if not target.is_relative_to(base):
            raise PermissionError(f"{name}: outside the output store {root}")
        parts = target.relative_to(base).parts
        match = OBJECT_NAME.fullmatch(parts[-1]) if len(parts) == 3 else None
        if match is None or parts[0] != OBJECTS_DIR or parts[1] != match[1][:2]:
            return None
        return match[1], match[2]
    lowered = name.lower()
    file_name = OBJECT_NAME.fullmatch(lowered)
    if file_name:
        return file_name[1], file_name[2]
    if not _HEX.fullmatch(lowered) or len(lowered) > 64:
        return None
    if len(lowered) < MIN_PREFIX:
        raise UserError(
            f"output name {name!r} is too short: give at least {MIN_PREFIX} hex "
            "characters of the digest"
        )
    return lowered, None
