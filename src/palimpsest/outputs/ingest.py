"""From raw output bytes to the bytes the store keeps: sniffing, redaction, counting.

:class:`Ingest` is fed chunks of any size and hands back the chunks to write; it holds at
most about one chunk plus a partial character in memory, so a gigabyte streams through with
flat memory. It does no I/O and keeps no clock, so it is tested on its own.

What it decides:

* **Binary or text.** The first :data:`SNIFF_BYTES` bytes are looked at once: a known magic
  number (PNG, gzip, ...) names the kind; any NUL byte means ``"binary data"``. Binary data
  is passed through untouched (never redacted).
* **Text is kept byte for byte.** It is decoded incrementally as UTF-8 with
  ``errors="surrogateescape"`` and encoded back the same way, so an undecodable byte comes
  out exactly as it went in; if any occurred the kind is ``"text (not valid UTF-8)"``.
* **Redaction never splits a line.** With ``redact=True`` each piece handed to
  :func:`~palimpsest.safety.redact.redact` ends at a newline, so a secret on one line
  is seen whole. A single line longer than the chunk size has to be cut: at its last space
  or tab inside the chunk when there is one, otherwise at the chunk size; a secret that
  straddles such a cut may escape redaction (with the default 1 MiB chunk, only in a line
  over a mebibyte). A private-key block that began in a piece but did not end there is
  moved whole to the next piece, so its armour lines and body are redacted together
  (unless the block alone is longer than a chunk).
* **Characters are counted** on the text as stored (after redaction), one per escaped byte.
"""

from __future__ import annotations

import codecs
import re
from pathlib import Path

from ..safety.redact import redact as redact_text

__all__ = [
    "BINARY_KIND",
    "MAGIC_NUMBERS",
    "SNIFF_BYTES",
    "TEXT_KIND",
    "TEXT_NOT_UTF8_KIND",
    "Ingest",
    "encode_text",
    "measure_file",
    "sniff_binary",
]

SNIFF_BYTES = 8 * 1024
TEXT_KIND = "text"
TEXT_NOT_UTF8_KIND = "text (not valid UTF-8)"
BINARY_KIND = "binary data"

#: Leading bytes that name a binary format. Checked before the NUL test, so a PNG is a
#: "PNG image" and not just binary data.
MAGIC_NUMBERS: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "PNG image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"GIF87a", "GIF image"),
    (b"GIF89a", "GIF image"),
    (b"%PDF-", "PDF document"),
    (b"PK\x03\x04", "ZIP archive"),
    (b"\x1f\x8b", "gzip archive"),
    *((b"BZh" + str(level).encode() + b"1AY&SY", "bzip2 archive") for level in range(1, 10)),
    (b"\xfd7zXZ\x00", "xz archive"),
    (b"(\xb5/\xfd", "zstd archive"),
    (b"7z\xbc\xaf\x27\x1c", "7-Zip archive"),
    (b"\x7fELF", "ELF executable"),
    (b"SQLite format 3\x00", "SQLite database"),
    (b"\x00asm", "WebAssembly module"),
)

_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")
_KEY_BEGIN = "-----BEGIN "
_KEY_END = "-----END "


def sniff_binary(head: bytes) -> str | None:
    """The kind of binary data ``head`` starts, or ``None`` when it looks like text."""
    for magic, kind in MAGIC_NUMBERS:
        if head.startswith(magic):
            return kind
    if b"\x00" in head[:SNIFF_BYTES]:
        return BINARY_KIND
    return None


def encode_text(text: str) -> bytes:
    """``text`` as UTF-8, undecodable bytes (``surrogateescape``) restored as they were.

    A lone surrogate that no decoder produced (``"\\ud800"``) cannot be escaped back; it is
    written with ``surrogatepass`` (three bytes that are not valid UTF-8) rather than lost.
    """
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


class Ingest:
    """Turns fed chunks into stored chunks (see the module docstring).

    ``chunk_size`` bounds a redaction piece in characters; the caller reads its source in
    chunks of the same size in bytes.
    """

    def __init__(self, *, redact: bool = True, chunk_size: int = 1024 * 1024) -> None:
        if chunk_size < 1:
            raise ValueError("chunk_size must be at least 1")
        self.redact = redact
        self.chunk_size = chunk_size
        self.binary_kind: str | None = None
        self.chars: int | None = None
        self.invalid_utf8 = False
        self._sniffing = True
        self._head = bytearray()
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="surrogateescape")
        self._pending = ""

    @property
    def kind(self) -> str:
        if self.binary_kind is not None:
            return self.binary_kind
        return TEXT_NOT_UTF8_KIND if self.invalid_utf8 else TEXT_KIND

    @property
    def is_binary(self) -> bool:
        return self.binary_kind is not None

    def feed(self, data: bytes) -> list[bytes]:
        """The bytes to store for ``data`` so far (possibly none until more arrives)."""
        if self._sniffing:
            self._head += data
            if len(self._head) < SNIFF_BYTES:
                return []
            data = self._decide()
        if self.binary_kind is not None:
            return [data] if data else []
        return self._text(self._decoder.decode(data), final=False)

    def finish(self) -> list[bytes]:
        """The remaining bytes to store; call once, after the last :meth:`feed`."""
        data = self._decide() if self._sniffing else b""
        if self.binary_kind is not None:
            return [data] if data else []
        return self._text(self._decoder.decode(data, final=True), final=True)

    def _decide(self) -> bytes:
        self._sniffing = False
        head, self._head = bytes(self._head), bytearray()
        self.binary_kind = sniff_binary(head)
        if self.binary_kind is None:
            self.chars = 0
        return head

    def _text(self, decoded: str, *, final: bool) -> list[bytes]:
        self._pending += decoded
        out: list[bytes] = []
        while len(self._pending) >= self.chunk_size:
            cut = self._cut_point(self._pending)
            out.append(self._emit(self._pending[:cut]))
            self._pending = self._pending[cut:]
        if final and self._pending:
            out.append(self._emit(self._pending))
            self._pending = ""
        return [piece for piece in out if piece]

    def _cut_point(self, text: str) -> int:
        """Where to end the next piece: after a newline, else a space, else the chunk size."""
        limit = self.chunk_size
        newline = text.rfind("\n", 0, limit)
        if newline >= 0:
            cut = newline + 1
        else:
            blank = max(text.rfind(" ", 0, limit), text.rfind("\t", 0, limit))
            cut = blank + 1 if blank >= 0 else limit
        begin = text.rfind(_KEY_BEGIN, 0, cut)
        if (
            begin >= 0
            and "PRIVATE KEY" in text[begin : begin + 64]
            and text.find(_KEY_END, begin, cut) < 0
        ):
            line_start = text.rfind("\n", 0, begin) + 1
            if line_start > 0:
                cut = line_start
        return cut

    def _emit(self, piece: str) -> bytes:
        if self.redact:
            piece = redact_text(piece)
        if self.chars is not None:
            self.chars += len(piece)
        if not self.invalid_utf8 and _ESCAPED_BYTE.search(piece):
            self.invalid_utf8 = True
        return encode_text(piece)


def measure_file(path: Path, chunk_size: int = 1024 * 1024) -> tuple[str, int | None]:
    """``(kind, chars)`` of a stored object file, read in chunks (``chars`` is None for binary).

    Used when the index must be rebuilt: a ``.bin`` file is sniffed, a ``.txt`` file is
    decoded to count its characters and to see whether it is valid UTF-8.
    """
    with path.open("rb") as handle:
        if path.suffix == ".bin":
            return sniff_binary(handle.read(SNIFF_BYTES)) or BINARY_KIND, None
        decoder = codecs.getincrementaldecoder("utf-8")(errors="surrogateescape")
        chars, invalid = 0, False
        while True:
            chunk = handle.read(chunk_size)
            text = decoder.decode(chunk, final=not chunk)
            chars += len(text)
            invalid = invalid or _ESCAPED_BYTE.search(text) is not None
            if not chunk:
                return (TEXT_NOT_UTF8_KIND if invalid else TEXT_KIND), chars
