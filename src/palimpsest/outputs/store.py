"""Tool outputs too large for the context, kept on disk once each, readable in windows.

When an output must leave the context and cannot simply be re-run, the agent saves it here
and puts a short preview with the saved path into the conversation; the model reads it back
in byte windows or greps it. The store guarantees:

* **Content-addressed.** An object is ``<root>/objects/<2 hex>/<sha256>.txt`` (text) or
  ``.bin`` (binary), named by the SHA-256 of the stored bytes, so identical outputs are
  stored once. A second save of the same bytes writes nothing and says so (``new=False``).
* **Streamed, never whole in memory.** Every ``put_*`` feeds one path: chunks of
  :data:`CHUNK_SIZE` go through :class:`~.ingest.Ingest` (sniff, redact line-aligned, count)
  and are hashed while written to a temp file in ``<root>/tmp``, which is fsynced and then
  hard-linked into place. The link fails when the object exists, so of several writers of
  the same content, across threads or processes, exactly one reports ``new=True``; on a
  file system without hard links ``os.replace`` is used instead.
* **Nothing half-written is visible**, and a read-only or full disk raises
  :class:`~palimpsest.errors.StorageError` naming the path and the cause, leaving no temp
  file behind; the caller then falls back to truncation (spec TR-13).
* **Reads stay inside the root.** Names are digests, unique prefixes of 8+ hex characters,
  file names, or paths that must resolve (symlinks too) under the root.
* **Retention can run beside writers.** Saving takes a shared lock on ``<root>/.lock`` only
  while it links the object and records it; ``gc`` (:mod:`.retention`) holds it exclusively.

The index of kinds, sizes, times and session references is :mod:`.index`. A store that
was only read or listed creates nothing on disk.
"""

from __future__ import annotations

import builtins
import contextlib
import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG
from typing import IO, TYPE_CHECKING, Any, BinaryIO, NamedTuple

from ..config import OutputsSettings, Settings, home_dir
from ..errors import StorageError, UserError
from .index import INDEX_FILENAME, OutputIndex
from .ingest import Ingest, encode_text, sniff_binary
from .objects import (
    ObjectFile,
    flock,
    object_path,
    parse_name,
    place,
    scan_objects,
    spool,
)
from .reading import Match, Window, grep_file, read_window
from .retention import GcReport, RetentionPolicy, collect

if TYPE_CHECKING:
    from typing import Self

__all__ = ["CHUNK_SIZE", "OutputStore", "Ref", "StoredOutput", "default_root"]

CHUNK_SIZE = 1024 * 1024


def default_root() -> Path:
    """``$PALIMPSEST_HOME/outputs``."""
    return home_dir() / "outputs"


@dataclass(frozen=True)
class StoredOutput:
    """One saved object. ``new`` is False when the bytes were already stored."""

    digest: str
    path: Path
    size_bytes: int
    chars: int | None
    kind: str
    created: float
    last_used: float
    new: bool = False
    tool_name: str = ""

    @property
    def is_text(self) -> bool:
        return self.path.suffix == ".txt"


@dataclass(frozen=True)
class Ref:
    """A session (and optionally one tool call in it) that points at an object."""

    digest: str
    session_id: str
    call_id: str | None
    created: float


class _Options(NamedTuple):
    tool_name: str
    session_id: str | None
    call_id: str | None
    redact: bool


class OutputStore:
    """The store rooted at ``root`` (default :func:`default_root`); see the module docstring.

    ``chunk_size`` is the streaming unit in bytes (and the redaction piece in characters).
    """

    def __init__(self, root: str | Path | None = None, *, chunk_size: int = CHUNK_SIZE) -> None:
        if chunk_size < 1:
            raise ValueError("chunk_size must be at least 1")
        self.root = Path(root).expanduser() if root is not None else default_root()
        self.chunk_size = chunk_size
        self.index = OutputIndex(self.root / INDEX_FILENAME)

    @classmethod
    def from_settings(
        cls, settings: Settings | OutputsSettings, *, chunk_size: int = CHUNK_SIZE
    ) -> OutputStore:
        """The store at ``outputs.path`` (default ``$PALIMPSEST_HOME/outputs``)."""
        section = settings.outputs if isinstance(settings, Settings) else settings
        return cls(section.path, chunk_size=chunk_size)

    def close(self) -> None:
        self.index.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def object_path(self, digest: str, suffix: str) -> Path:
        return object_path(self.root, digest, suffix)

    def lock(self, *, exclusive: bool) -> contextlib.AbstractContextManager[None]:
        """The store-wide lock: shared while saving, exclusive while collecting."""
        return flock(self.root, exclusive=exclusive)

    # -- saving ------------------------------------------------------------------------

    def put_text(
        self,
        text: str,
        *,
        tool_name: str = "",
        session_id: str | None = None,
        call_id: str | None = None,
        redact: bool = True,
    ) -> StoredOutput:
        """Save ``text``; ``session_id`` (and ``call_id``) also records a reference.

        ``redact`` runs the secret redaction over text (never over binary data).
        """
        step = self.chunk_size
        pieces = (encode_text(text[i : i + step]) for i in range(0, len(text), step))
        return self._put(pieces, _Options(tool_name, session_id, call_id, redact))

    def put_bytes(
        self,
        data: bytes | bytearray | memoryview,
        *,
        tool_name: str = "",
        session_id: str | None = None,
        call_id: str | None = None,
        redact: bool = True,
    ) -> StoredOutput:
        """Save ``data``; the options are those of :meth:`put_text`."""
        view, step = memoryview(data).cast("B"), self.chunk_size
        pieces = (bytes(view[i : i + step]) for i in range(0, len(view), step))
        return self._put(pieces, _Options(tool_name, session_id, call_id, redact))

    def put_stream(
        self,
        stream: BinaryIO | IO[bytes],
        *,
        tool_name: str = "",
        session_id: str | None = None,
        call_id: str | None = None,
        redact: bool = True,
    ) -> StoredOutput:
        """Save what ``stream`` yields until EOF, :attr:`chunk_size` bytes at a time."""
        return self._put(self._chunks(stream), _Options(tool_name, session_id, call_id, redact))

    def put_file(
        self,
        path: str | Path,
        *,
        move: bool = False,
        tool_name: str = "",
        session_id: str | None = None,
        call_id: str | None = None,
        redact: bool = True,
    ) -> StoredOutput:
        """Save a file's content; with ``move`` the file is removed once the object is safe.

        The bytes are copied (redaction may change them); a source that cannot be removed
        (its directory is read-only) is left where it was.
        """
        source = Path(path)
        with source.open("rb") as stream:
            stored = self._put(
                self._chunks(stream), _Options(tool_name, session_id, call_id, redact)
            )
        if move:
            with contextlib.suppress(OSError):
                source.unlink()
        return stored

    def _chunks(self, stream: BinaryIO | IO[bytes]) -> Iterator[bytes]:
        while True:
            chunk = stream.read(self.chunk_size)
            if not isinstance(chunk, bytes | bytearray | memoryview | None):
                raise TypeError("put_stream needs a binary stream (open the file with 'rb')")
            if not chunk:
                return
            yield chunk

    def _put(self, chunks: Iterable[bytes], options: _Options) -> StoredOutput:
        tool_name, session_id, call_id, redact = options
        ingest = Ingest(redact=redact, chunk_size=self.chunk_size)
        with spool(self.root, _pieces(ingest, chunks)) as spooled:
            digest, suffix = spooled.digest, "bin" if ingest.is_binary else "txt"
            now = time.time()
            with self.lock(exclusive=False):
                path, new = place(self.root, spooled, suffix)

                def save(con: Any) -> dict[str, Any]:
                    self.index.record(
                        con,
                        digest=digest,
                        suffix=suffix,
                        size_bytes=spooled.size_bytes,
                        chars=ingest.chars,
                        kind=ingest.kind,
                        tool_name=tool_name,
                        now=now,
                    )
                    if session_id:
                        self.index.add_ref(con, digest, session_id, call_id, now)
                    return self.index.row(con, digest)

                row = self.index.write(save)
        return self._from_row(row, path=path, new=new)

    # -- references --------------------------------------------------------------------

    def add_ref(self, digest: str, session_id: str, call_id: str | None = None) -> None:
        """Record that ``session_id`` (and ``call_id``) points at the object ``digest``."""
        found = self._lookup(digest)
        if found is None:
            raise _not_found(digest)
        self._record(found, now=found.last_used, ref=(session_id, call_id))

    def refs(self, digest: str) -> builtins.list[Ref]:
        return [
            Ref(r["digest"], r["session_id"], r["call_id"] or None, r["created"])
            for r in self.index.refs(digest)
        ]

    # -- finding -----------------------------------------------------------------------

    def resolve(self, name: str) -> StoredOutput | None:
        """The object ``name`` means: a digest, a unique 8+ hex prefix, a file name or a path.

        Returns ``None`` when nothing matches. A path outside the root raises
        ``PermissionError``; an ambiguous prefix raises ``UserError`` listing candidates.
        """
        parsed = parse_name(self.root, name)
        if parsed is None:
            return None
        digest, suffix = parsed
        if len(digest) == 64:
            return self._lookup(digest, suffix)
        candidates = sorted({f.digest for f in scan_objects(self.root, digest)})
        if len(candidates) > 1:
            listed = ", ".join(c[:16] for c in candidates[:5])
            more = f" and {len(candidates) - 5} more" if len(candidates) > 5 else ""
            raise UserError(
                f"output prefix {name.strip()!r} is ambiguous: it matches {listed}{more}; "
                "give more characters"
            )
        return self._lookup(candidates[0]) if candidates else None

    def _lookup(self, digest: str, suffix: str | None = None) -> StoredOutput | None:
        for ext in (suffix,) if suffix else ("txt", "bin"):
            path = self.object_path(digest, ext)
            try:
                stat = path.lstat()
            except OSError:
                continue
            # A planted symlink (file or bucket) must not lead out of the root.
            if not S_ISREG(stat.st_mode) or not path.resolve().is_relative_to(self.root.resolve()):
                continue
            row = self.index.get(digest)
            if row is not None and row["suffix"] == ext:
                return self._from_row(row, path=path)
            kind = "text"
            if ext == "bin":
                with path.open("rb") as handle:
                    kind = sniff_binary(handle.read(8192)) or "binary data"
            return StoredOutput(
                digest, path, stat.st_size, None, kind, stat.st_mtime, stat.st_mtime
            )
        return None

    def _from_row(self, row: dict[str, Any], *, path: Path, new: bool = False) -> StoredOutput:
        fields = ("digest", "size_bytes", "chars", "kind", "created", "last_used", "tool_name")
        return StoredOutput(path=path, new=new, **{name: row[name] for name in fields})

    def touch(self, digest: str, *, now: float | None = None) -> None:
        """Mark the object as used now (reads do this); its file's mtime follows."""
        found = self._lookup(digest)
        if found is None:
            raise _not_found(digest)
        when = time.time() if now is None else now
        self._record(found, now=when)
        with contextlib.suppress(OSError):
            os.utime(found.path, (when, when))

    def _record(
        self, found: StoredOutput, *, now: float, ref: tuple[str, str | None] | None = None
    ) -> None:
        """Make sure ``found`` has an index row used at ``now`` or later (and the reference)."""

        def save(con: Any) -> None:
            self.index.record_object(con, found, now=now, created=found.created)
            if ref is not None:
                self.index.add_ref(con, found.digest, ref[0], ref[1], time.time())

        self.index.write(save)

    def _touch_quietly(self, digest: str) -> None:
        # A read must work on a read-only store; the usage time is then not updated.
        with contextlib.suppress(StorageError, OSError):
            self.touch(digest)

    # -- reading -----------------------------------------------------------------------

    def _require_text(self, name: str) -> StoredOutput:
        found = self.resolve(name)
        if found is None:
            raise _not_found(name)
        if not found.is_text:
            raise UserError(
                f"output {found.digest[:12]} is {found.kind} ({found.size_bytes:,} bytes); "
                "binary data cannot be shown as text"
            )
        return found

    def read_window(self, name: str, offset: int = 0, limit: int = 20_000) -> Window:
        """Bytes ``offset``..``offset + limit`` of a text object, cut on character bounds."""
        found = self._require_text(name)
        window = read_window(found.path, offset, limit, digest=found.digest, kind=found.kind)
        self._touch_quietly(found.digest)
        return window

    def grep(
        self,
        name: str,
        pattern: str,
        *,
        max_matches: int = 50,
        regex: bool = False,
        ignore_case: bool = False,
    ) -> builtins.list[Match]:
        """Lines of a text object that contain ``pattern`` (a regular expression with ``regex``)."""
        found = self._require_text(name)
        matches = grep_file(
            found.path,
            pattern,
            max_matches=max_matches,
            regex=regex,
            ignore_case=ignore_case,
            chunk_size=self.chunk_size,
        )
        self._touch_quietly(found.digest)
        return matches

    # -- listing and retention ---------------------------------------------------------

    def list(self, session_id: str | None = None) -> builtins.list[StoredOutput]:
        """Indexed objects, newest first; only those ``session_id`` refers to when given."""
        return [
            self._from_row(row, path=self.object_path(row["digest"], row["suffix"]))
            for row in self.index.objects(session_id)
        ]

    def total_bytes(self) -> int:
        return self.index.total_bytes()

    def scan_objects(self) -> builtins.list[ObjectFile]:
        """Every object file on disk (the index may lag behind after a crash)."""
        return scan_objects(self.root)

    def rebuild_index(self) -> int:
        """Recreate ``index.db`` from the object files; returns how many objects it indexed.

        Rows and references still readable from the old index are kept. A damaged index
        is moved aside (``index.db.damaged-<time>``) and its references are lost, so until
        sessions touch them again outputs are kept alive only by the message scan.
        """
        with self.lock(exclusive=True):
            return self.index.rebuild(self.scan_objects(), chunk_size=self.chunk_size)

    def gc(
        self,
        policy: RetentionPolicy,
        *,
        live: Iterable[str] = frozenset(),
        now: float | None = None,
        dry_run: bool = False,
    ) -> GcReport:
        """Apply ``policy``, never removing a digest in ``live`` (see :mod:`.retention`)."""
        return collect(self, policy, live=frozenset(live), now=now, dry_run=dry_run)


def _pieces(ingest: Ingest, chunks: Iterable[bytes]) -> Iterator[bytes]:
    for chunk in chunks:
        yield from ingest.feed(chunk)
    yield from ingest.finish()


def _not_found(name: str) -> UserError:
    return UserError(f"no saved output matches {name!r}; run 'palimpsest outputs list' to see them")
