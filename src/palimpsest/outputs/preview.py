"""What the model sees of a spilled tool result: previews and the persisted block (TR-06..14).

Everything here is text in, text out, except :func:`preview_from_file`, which computes the
same previews from a saved file by reading only its first and last few kilobytes, so a 1 GB
output costs the same as a 10 KB one. The tags and the ``Full output saved to:`` prefix are
parsed back by :func:`extract_persisted_path` and by other code; they are exact constants.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import re
from pathlib import Path
from typing import Literal

__all__ = [
    "DEFAULT_READ_HINT",
    "HEAD_SHARE",
    "PERSISTED_CLOSE",
    "PERSISTED_OPEN",
    "RECOVERY_LINE",
    "SAVED_PREFIX",
    "extract_persisted_path",
    "format_size",
    "generate_preview",
    "head_tail_preview",
    "omission_line",
    "persisted_block",
    "preview_from_file",
    "safe_result_filename",
    "truncation_fallback",
]

PERSISTED_OPEN = "<persisted-output>"
PERSISTED_CLOSE = "</persisted-output>"
SAVED_PREFIX = "Full output saved to: "

DEFAULT_READ_HINT = (
    "Use the read_file tool with offset and limit to read specific sections of the full output."
)
RECOVERY_LINE = (
    "Recovery: the full result is already on disk. Page through the saved file with read_file "
    "(offset and limit) or process it with code execution; do not request the same data from "
    "the remote API again."
)

HEAD_SHARE = 0.6
"""Share of a head-and-tail preview's budget given to the head; the tail gets the rest."""

_STEM_LIMIT = 120
_HASH_CHARS = 12
_UNSAFE_RUN = re.compile(r"[^A-Za-z0-9_.-]+")
_STRIP = "._-"
# A character is at most 4 bytes in UTF-8 (and in UTF-16/32, GB 18030), so N characters
# always fit in 4 * N bytes; reading that much is enough to see N characters.
_MAX_BYTES_PER_CHAR = 4


def _check_max_chars(max_chars: int) -> None:
    if max_chars < 1:
        raise ValueError(f"max_chars must be at least 1, got {max_chars!r}")


def generate_preview(content: str, max_chars: int = 1500) -> tuple[str, bool]:
    """The start of ``content`` and whether anything follows it (TR-07).

    Content that fits is returned whole with ``False``. Otherwise the cut is just after the
    last newline before ``max_chars`` when that newline lies past ``max_chars // 2`` (a
    whole last line beats a cut one), else at ``max_chars``.
    """
    _check_max_chars(max_chars)
    if len(content) <= max_chars:
        return content, False
    newline = content.rfind("\n", 0, max_chars)
    if newline > max_chars // 2:
        return content[: newline + 1], True
    return content[:max_chars], True


def _split_budget(max_chars: int) -> tuple[int, int]:
    head = max(1, int(max_chars * HEAD_SHARE))
    return head, max(1, max_chars - head)


def omission_line(count: int, unit: str = "characters") -> str:
    """The line between head and tail: ``... [12,345 characters omitted] ...`` (TR-08)."""
    return f"... [{count:,} {unit} omitted] ..."


def _aligned_tail(window: str, tail_budget: int) -> str:
    """The last ``tail_budget`` characters, starting at a line start when one is near.

    ``window`` holds one character more than the tail so that a tail already starting
    right after a newline is recognised as aligned.
    """
    if window[:1] == "\n" or len(window) <= tail_budget:
        return window[-tail_budget:]
    newline = window.find("\n", 1, 1 + tail_budget // 2)
    return window[newline + 1 :] if newline >= 0 else window[1:]


def _join_head_tail(head: str, tail: str, omitted: int, unit: str = "characters") -> str:
    separator = "" if head.endswith("\n") else "\n"
    return f"{head}{separator}{omission_line(omitted, unit)}\n{tail}"


def head_tail_preview(content: str, max_chars: int = 1500) -> tuple[str, bool]:
    """The start and the end of ``content`` with one omission line between (TR-08).

    The head gets 60 % of ``max_chars`` and is cut like :func:`generate_preview`; the tail
    gets the rest and starts after a newline when one lies in its first half. The result is
    at most ``max_chars`` plus the omission line (under 50 characters). Content that fits is
    returned whole with ``False``.
    """
    _check_max_chars(max_chars)
    if len(content) <= max_chars:
        return content, False
    head_budget, tail_budget = _split_budget(max_chars)
    head, _ = generate_preview(content, head_budget)
    tail = _aligned_tail(content[-(tail_budget + 1) :], tail_budget)
    omitted = len(content) - len(head) - len(tail)
    return _join_head_tail(head, tail, omitted), True


def _is_utf8(encoding: str) -> bool:
    return codecs.lookup(encoding).name == "utf-8"


def _decode_head(data: bytes, encoding: str, complete: bool) -> str:
    # The incremental decoder holds back a character cut at the end of the chunk instead
    # of turning its first bytes into U+FFFD.
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    return decoder.decode(data, final=complete)


def _decode_tail(data: bytes, encoding: str) -> str:
    if _is_utf8(encoding):
        # Skip the continuation bytes (10xxxxxx) of a character that began before the chunk.
        skip = 0
        while skip < min(3, len(data)) and data[skip] & 0xC0 == 0x80:
            skip += 1
        data = data[skip:]
    return data.decode(encoding, errors="replace")


def preview_from_file(
    path: Path | str,
    max_chars: int,
    mode: Literal["head", "head_tail"] = "head",
    total_chars: int | None = None,
    encoding: str = "utf-8",
) -> tuple[str, bool]:
    """The preview of a saved file's text, reading only its first and last few kilobytes.

    For a file of at most about ``4 * max_chars`` bytes the whole file is decoded and the
    result equals :func:`generate_preview` / :func:`head_tail_preview` of its text. A
    larger file is never read whole: the head comes from its first ``4 * (max_chars + 1)``
    bytes and, in ``head_tail`` mode, the tail from its last bytes. Characters cut at a read
    boundary are dropped, not shown as replacement characters. The omission line counts
    characters when ``total_chars`` (the length of the text) is given; without it counting
    them would mean reading the whole file, so it counts bytes instead.
    """
    _check_max_chars(max_chars)
    if mode not in ("head", "head_tail"):
        raise ValueError(f"mode must be 'head' or 'head_tail', got {mode!r}")
    head_bytes = _MAX_BYTES_PER_CHAR * (max_chars + 1)
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        data = handle.read(head_bytes)
        complete = len(data) < head_bytes or size <= head_bytes
        if complete:
            data += handle.read()  # the file may have grown since fstat; take what is there
        head_text = _decode_head(data, encoding, complete)
        if complete:
            preview = head_tail_preview if mode == "head_tail" else generate_preview
            return preview(head_text, max_chars)
        if mode == "head":
            return generate_preview(head_text, max_chars)[0], True
        head_budget, tail_budget = _split_budget(max_chars)
        tail_bytes = _MAX_BYTES_PER_CHAR * (tail_budget + 1) + 3
        handle.seek(max(0, size - tail_bytes))
        tail_text = _decode_tail(handle.read(tail_bytes), encoding)
    head, _ = generate_preview(head_text, head_budget)
    tail = _aligned_tail(tail_text[-(tail_budget + 1) :], tail_budget)
    if total_chars is not None:
        omitted, unit = max(0, total_chars - len(head) - len(tail)), "characters"
    else:
        shown = len(head.encode(encoding, "replace")) + len(tail.encode(encoding, "replace"))
        omitted, unit = max(0, size - shown), "bytes"
    return _join_head_tail(head, tail, omitted, unit), True


def format_size(chars: int) -> str:
    """A size in characters as KB or MB with one decimal (TR-10): ``146.5 KB``, ``1.9 MB``."""
    kb = chars / 1024
    if kb >= 1024:
        return f"{kb / 1024:.1f} MB"
    return f"{kb:.1f} KB"


def _one_line(name: str, value: str) -> None:
    if "\n" in value or "\r" in value:
        raise ValueError(f"{name} must be a single line, got {value!r}")


def persisted_block(
    *,
    path: str,
    total_chars: int,
    preview: str,
    has_more: bool,
    read_hint: str = DEFAULT_READ_HINT,
    recovery: bool = False,
    note: str | None = None,
    preview_mode: Literal["head", "head_tail"] = "head",
) -> str:
    """The text that replaces a spilled result in the history (TR-09, TR-15).

    The tags and the ``Full output saved to:`` line are machine-parsed and exact. With a
    ``head_tail`` preview that was cut the heading says the preview holds the start and the
    end, and no trailing ``...`` is added: the omission line inside the preview marks the
    gap, and the preview already ends where the output ends.
    """
    _one_line("path", path)
    _one_line("read_hint", read_hint)
    if note is not None:
        _one_line("note", note)
    lines = [
        PERSISTED_OPEN,
        f"This tool result was too large for the context "
        f"({total_chars:,} characters, {format_size(total_chars)}).",
        f"{SAVED_PREFIX}{path}",
        read_hint,
    ]
    if recovery:
        lines.append(RECOVERY_LINE)
    if note:
        lines.append(note)
    head_and_tail = preview_mode == "head_tail" and has_more
    if head_and_tail:
        heading = f"Preview (first and last parts, {len(preview)} chars):"
    else:
        heading = f"Preview (first {len(preview)} chars):"
    lines += ["", heading]
    body = "\n".join(lines) + "\n" + preview
    if not body.endswith("\n"):
        body += "\n"
    if has_more and not head_and_tail:
        body += "...\n"
    return body + PERSISTED_CLOSE


def truncation_fallback(preview: str, total_chars: int) -> str:
    """What replaces a result that could not be saved (TR-13): the preview and the loss."""
    return (
        f"{preview}\n\n[Truncated: tool response was {total_chars:,} chars. "
        "Full output could not be saved to sandbox.]"
    )


def extract_persisted_path(content: str) -> str | None:
    """The saved path of the first persisted block in ``content``, else ``None`` (TR-14).

    Only the block's header (the lines before its blank line) is searched, so a preview
    that itself quotes ``Full output saved to:`` cannot redirect the reader.
    """
    start = content.find(PERSISTED_OPEN)
    while start >= 0:
        end = content.find(PERSISTED_CLOSE, start)
        if end < 0:
            return None
        header = content[start + len(PERSISTED_OPEN) : end].split("\n\n", 1)[0]
        for line in header.split("\n"):
            if line.startswith(SAVED_PREFIX):
                return line[len(SAVED_PREFIX) :].rstrip("\r")
        start = content.find(PERSISTED_OPEN, end)
    return None


def safe_result_filename(tool_use_id: object) -> str:
    """A file name for a result that no id can turn into a path or shell syntax (TR-06).

    Runs of characters outside ``[A-Za-z0-9_.-]`` become ``_``, leading and trailing
    ``._-`` go; a changed or over-long stem is cut to 120 characters and gets ``_`` plus
    12 hex digits of the SHA-256 of the original id, so two different ids cannot collide.

    >>> safe_result_filename("tc_456")
    'tc_456.txt'
    """
    raw = str(tool_use_id or "tool_result")
    stem = _UNSAFE_RUN.sub("_", raw).strip(_STRIP) or "tool_result"
    if stem != raw or len(stem) > _STEM_LIMIT:
        digest = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()
        stem = f"{stem[:_STEM_LIMIT].strip(_STRIP)}_{digest[:_HASH_CHARS]}"
    return f"{stem}.txt"
