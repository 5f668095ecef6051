"""Reading a transcript source into a :class:`Document`: one JSON value, JSONL records, or text.

Every reader starts from the same parsed document, so detection can ask each reader whether
the document meets its requirements without parsing twice. The hazards of hostile input
(huge files, devices, deep nesting, giant integers, lone surrogates) are handled here once and
turned into one-line :class:`~palimpsest.errors.TranscriptError` / :class:`ConversionError`.

A JSONL file whose *last* line is cut off (an agent killed mid-write) is read without that line
and says so in :attr:`Document.truncated`; a broken line anywhere else is an error, because
the lines after it would then be read out of context.
"""

from __future__ import annotations

import json
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from ..errors import TranscriptError
from .formats_common import ConversionError, Record

__all__ = ["DEFAULT_MAX_INPUT_BYTES", "Document", "Source", "json_kind", "parse", "read_source"]

DEFAULT_MAX_INPUT_BYTES = 256 * 1024 * 1024
"""Largest transcript the loader reads unless told otherwise (256 MiB)."""

Source = str | Path | IO[str]

Shape = Literal["json", "jsonl", "text"]


@dataclass(frozen=True)
class Document:
    """A parsed transcript file.

    ``shape`` is ``json`` (``value`` is the whole document), ``jsonl`` (``records`` holds one
    :class:`Record` per non-blank line; ``value`` is ``None``) or ``text`` (not JSON at all:
    ``text`` holds it and ``json_error`` says why it is not JSON). ``name`` is the file name
    (it only breaks ties between readers). ``truncated`` describes a dropped last line.
    """

    shape: Shape
    value: Any = None
    records: tuple[Record, ...] = ()
    text: str = ""
    json_error: str = ""
    name: str = ""
    truncated: str | None = None


# -- reading -------------------------------------------------------------------------------


def _too_big(size: int, limit: int) -> str:
    return (
        f"is {size / 1_048_576:,.1f} MiB, over the input limit of {limit / 1_048_576:,.0f} MiB; "
        "raise it with --max-input-mb or compression.max_input_mb"
    )


def _read_file(path: Path, shown: str, max_bytes: int | None) -> bytes:
    try:
        info = path.stat()
    except FileNotFoundError:
        raise TranscriptError("file not found", path=shown) from None
    except OSError as err:
        raise TranscriptError(f"cannot read the file: {err.strerror or err}", path=shown) from None
    if stat.S_ISDIR(info.st_mode):
        raise TranscriptError("is a directory, not a transcript file", path=shown)
    if not (stat.S_ISREG(info.st_mode) or stat.S_ISFIFO(info.st_mode)):
        # /dev/zero and friends never end; a pipe does, and is read under the size limit.
        raise TranscriptError(
            "is not a regular file (a device or socket); pass a file, or pipe it with -",
            path=shown,
        )
    if max_bytes is not None and stat.S_ISREG(info.st_mode) and info.st_size > max_bytes:
        raise TranscriptError(_too_big(info.st_size, max_bytes), path=shown)
    try:
        with path.open("rb") as handle:
            raw = handle.read(max_bytes + 1) if max_bytes is not None else handle.read()
    except OSError as err:
        raise TranscriptError(f"cannot read the file: {err.strerror or err}", path=shown) from None
    if max_bytes is not None and len(raw) > max_bytes:
        raise TranscriptError(_too_big(len(raw), max_bytes), path=shown)
    return raw


def read_source(
    source: Source, path_hint: str | Path | None, max_bytes: int | None = None
) -> tuple[str | None, str]:
    """The source's display path and its text."""
    if isinstance(source, str | Path):
        shown = str(source)
        raw = _read_file(Path(source), shown, max_bytes)
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as err:
            problem = f"not UTF-8 text (byte {err.start}); is this really a transcript?"
            raise TranscriptError(problem, path=shown) from None
    else:
        shown = str(path_hint) if path_hint else str(getattr(source, "name", "<stream>"))
        try:
            text = source.read(max_bytes + 1) if max_bytes is not None else source.read()
        except (OSError, UnicodeDecodeError) as err:
            raise TranscriptError(f"cannot read the input: {err}", path=shown) from None
        if not isinstance(text, str):
            raise TranscriptError("the input stream must be opened in text mode", path=shown)
        if max_bytes is not None and len(text) > max_bytes:
            raise TranscriptError(_too_big(len(text), max_bytes), path=shown)
    if not text.strip():
        raise TranscriptError("the file is empty", path=shown)
    return shown, text


# -- parsing -------------------------------------------------------------------------------

_LONE_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_MAX_INT_DIGITS = 4_300  # Python's default int/str conversion limit (sys.int_info)
_CONTAINER_KEYS = ("history", "messages", "loglines")


def _parse_int(digits: str) -> int:
    if len(digits.lstrip("-")) > _MAX_INT_DIGITS:
        raise ConversionError(
            f"a number with {len(digits):,} digits is longer than palimpsest reads "
            f"({_MAX_INT_DIGITS:,}); is this really a transcript?"
        )
    return int(digits)


def _loads(text: str) -> Any:
    """``json.loads`` with the failures a hostile file can cause turned into one line."""
    try:
        value = json.loads(text, parse_int=_parse_int)
    except RecursionError:
        raise ConversionError(
            "the JSON is nested too deeply to be a transcript (over ~1,000 levels)"
        ) from None
    if _LONE_SURROGATE_ESCAPE.search(text):
        value = _replace_lone_surrogates(value)
    return value


def _clean_text(text: str) -> str:
    # A surrogate escape without its pair cannot be written as UTF-8; U+FFFD takes its place.
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _replace_lone_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate (from a ``\\udXXX`` escape) replaced by U+FFFD."""
    if isinstance(value, str):
        return _clean_text(value)
    if isinstance(value, list):
        return [_replace_lone_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_clean_text(k): _replace_lone_surrogates(v) for k, v in value.items()}
    return value


def parse(text: str, name: str = "") -> Document:
    """The whole text as one JSON value, as JSONL records, or (neither) as text."""
    try:
        value = _loads(text)
    except json.JSONDecodeError as whole_err:
        return _parse_lines(text, name, whole_err)
    if isinstance(value, Mapping) and not any(
        isinstance(value.get(k), list) for k in _CONTAINER_KEYS
    ):
        # A one-line JSONL file parses as a single object: it is one record. (A JSON object
        # that is a whole transcript has its messages in a list under a known key.)
        return Document("jsonl", records=(Record("line 1", value),), name=name)
    return Document("json", value=value, name=name)


def _parse_lines(text: str, name: str, whole_err: json.JSONDecodeError) -> Document:
    json_error = (
        f"invalid JSON at line {whole_err.lineno}, column {whole_err.colno}: {whole_err.msg}"
    )
    # Split on "\n" only: str.splitlines() would also break at U+2028 and other characters
    # that JSON writers leave unescaped inside strings.
    lines = text.split("\n")
    numbered = [(n, line) for n, line in enumerate(lines, start=1) if line.strip()]
    try:
        first = _loads(numbered[0][1]) if numbered else None
    except json.JSONDecodeError:
        return Document("text", text=text, json_error=json_error, name=name)
    if not isinstance(first, Mapping | list):
        return Document("text", text=text, json_error=json_error, name=name)
    records: list[Record] = []
    truncated: str | None = None
    for position, (number, line) in enumerate(numbered):
        try:
            records.append(Record(f"line {number}", _loads(line)))
        except json.JSONDecodeError as err:
            if position == len(numbered) - 1 and records:
                kept = f"{len(records):,} line" + ("" if len(records) == 1 else "s")
                truncated = (
                    f"line {number} (the last line) is cut off ({err.msg}, column "
                    f"{err.colno}); read the {kept} before it"
                )
                break
            raise ConversionError(
                f"line {number}: invalid JSON at column {err.colno}: {err.msg}"
            ) from None
    return Document("jsonl", records=tuple(records), name=name, truncated=truncated)


def json_kind(value: Any) -> str:
    """What a JSON value is, for error messages: ``object with keys a, b``, ``array``, ..."""
    if isinstance(value, Mapping):
        keys = ", ".join(str(k) for k in list(value)[:6])
        more = ", ..." if len(value) > 6 else ""
        return f"object with keys {keys}{more}" if keys else "empty object"
    return {list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), type(value).__name__
    )
