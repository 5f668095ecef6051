"""Loading agent transcripts from files into chat-completions messages, and writing them out.

Users bring transcripts from many agents. :func:`load_transcript` reads a file or text stream,
works out which agent wrote it and converts it faithfully: it drops only keys a provider
would reject and records that are not messages (metadata lines, reasoning items, state
changes). It does not validate the result as a provider sequence: what the file says is what
comes back, and :func:`~palimpsest.messages.validate_transcript` tells whether a provider
would accept it. Every failure is a :class:`TranscriptError` naming the file and, where known,
the line or message.

Each format is a :class:`~.formats_spec.Reader` that states what it requires of a file.
Detection picks the reader whose requirements the file meets in full; a file that meets no
reader's, or one reader's only in part (a ``history`` whose items are not SWE-agent
messages), is refused with one line naming what was expected and what was found. ``format=``
(the CLI's ``--format``) forces a reader, which still refuses a file that does not meet its
requirements. Whatever a reader returns passes one exit check: every message is an object
with a known role.

Formats (the names the CLI's ``--format`` accepts; docs/transcripts.md describes each):
``openai``, ``swe-agent``, ``mini-swe-agent``, ``claude-code``, ``codex``, ``openhands``,
``aider``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import TranscriptError
from .content import ROLES, Message
from .formats_aider import AIDER
from .formats_chat import MINI_SWE_AGENT, OPENAI, SWE_AGENT
from .formats_claude import CLAUDE_CODE
from .formats_codex import CODEX
from .formats_common import ConversionError, Notes
from .formats_openhands import OPENHANDS
from .formats_parse import DEFAULT_MAX_INPUT_BYTES, Document, Source, json_kind, parse, read_source
from .formats_spec import Fit, Reader
from .native import for_request

__all__ = [
    "DEFAULT_MAX_INPUT_BYTES",
    "FORMATS",
    "READERS",
    "LoadedTranscript",
    "detect_format",
    "detect_format_of",
    "dump_transcript",
    "load_transcript",
    "read_transcript_file",
]

READERS: dict[str, Reader] = {
    r.name: r for r in (OPENAI, SWE_AGENT, MINI_SWE_AGENT, CLAUDE_CODE, CODEX, OPENHANDS, AIDER)
}
"""Every transcript reader, by the name the CLI's ``--format`` uses."""

FORMATS = tuple(READERS)
"""Transcript formats :func:`load_transcript` reads, by the names the CLI uses."""

_PREFERENCE = (
    "mini-swe-agent",
    "openai",
    "swe-agent",
    "claude-code",
    "codex",
    "openhands",
    "aider",
)
"""When a file meets several readers' requirements, the more specific reader reads it
(a mini-swe-agent trajectory is also a list of chat messages)."""

_FORMAT_LIST = ", ".join(FORMATS)


@dataclass(frozen=True)
class LoadedTranscript:
    """A loaded transcript: its messages, the format that read it, and what was passed over.

    ``notes`` are sentences for the user: a cut-off last line that was left out, records of
    unknown types that were skipped (with counts). Empty when the file was read whole.
    """

    messages: list[Message]
    format: str
    notes: tuple[str, ...] = ()


def read_transcript_file(
    source: Source,
    format: str = "auto",
    *,
    path_hint: str | Path | None = None,
    max_bytes: int | None = DEFAULT_MAX_INPUT_BYTES,
) -> LoadedTranscript:
    """Read a transcript and say how: :func:`load_transcript` with the format and notes."""
    if format != "auto" and format not in READERS:
        shown = path_hint if path_hint is not None else source
        raise TranscriptError(
            f"unknown transcript format {format!r}; use one of: auto, {_FORMAT_LIST}",
            path=shown if isinstance(shown, str | Path) else None,
        )
    path, text = read_source(source, path_hint, max_bytes)
    name = str(path_hint or path or "")
    notes = Notes()
    try:
        doc = parse(text, name)
        _refuse_empty(doc)
        reader = _detect(doc) if format == "auto" else _forced(READERS[format], doc)
        messages = reader.convert(doc, notes)
    except ConversionError as err:
        raise err.to_transcript_error(path) from None
    if not messages:
        raise TranscriptError(f"the {reader.name} transcript contains no messages", path=path)
    _require_roles(messages, path)
    notes.truncated = doc.truncated
    return LoadedTranscript(messages, reader.name, tuple(notes.lines()))


def load_transcript(
    source: Source,
    format: str = "auto",
    *,
    path_hint: str | Path | None = None,
    max_bytes: int | None = DEFAULT_MAX_INPUT_BYTES,
) -> list[Message]:
    """Read a transcript file (or text stream) and return its messages.

    ``format`` is ``"auto"`` or one of :data:`FORMATS`. ``path_hint`` names a stream in error
    messages and lends its extension to format detection. A source larger than
    ``max_bytes`` (``None``: no limit) is refused before it is read; so are character
    devices, sockets and other files that are neither regular files nor pipes.
    :func:`read_transcript_file` returns the same messages with the format and the notes.
    """
    return read_transcript_file(source, format, path_hint=path_hint, max_bytes=max_bytes).messages


def detect_format(source: Source, *, path_hint: str | Path | None = None) -> str:
    """The format :func:`load_transcript` with ``format="auto"`` would use for ``source``."""
    path, text = read_source(source, path_hint, DEFAULT_MAX_INPUT_BYTES)
    try:
        doc = parse(text, str(path_hint or path or ""))
        _refuse_empty(doc)
        return _detect(doc).name
    except ConversionError as err:
        raise err.to_transcript_error(path) from None


def detect_format_of(data: Any, name: str = "") -> str:
    """The format of an already-parsed JSON value (a document, or a list of JSONL records)."""
    return _detect(Document("json", value=data, name=name)).name


def dump_transcript(messages: list[Message]) -> str:
    """Messages as a pretty JSON list, loadable as ``openai``: internal ``_`` keys removed
    except the opaque provider items a native compaction left (:data:`.native.CARRIED_KEYS`),
    so an exported session imports with them and a resumed one continues from them."""
    clean = [for_request([m])[0] if isinstance(m, Mapping) else m for m in messages]
    return json.dumps(clean, indent=2, ensure_ascii=False, default=_jsonable)


def _jsonable(obj: Any) -> Any:
    """SDK tool-call objects (pydantic models, plain objects) as dicts for JSON output."""
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        return dump(exclude_none=True)
    if hasattr(obj, "__dict__"):
        return {k: v for k, v in vars(obj).items() if not k.startswith("_")}
    raise TypeError(f"cannot write a {type(obj).__name__} as JSON")


# -- detection -----------------------------------------------------------------------------


def _refuse_empty(doc: Document) -> None:
    if doc.shape == "json" and isinstance(doc.value, list) and not doc.value:
        raise ConversionError("the transcript is an empty list: it contains no messages")


def _detect(doc: Document) -> Reader:
    fits: list[tuple[Reader, Fit]] = []
    for name in _PREFERENCE:  # the first full fit wins: later readers are not asked
        reader = READERS[name]
        fit = reader.check(doc)
        if fit.level == "full":
            return reader
        fits.append((reader, fit))
    partial = [(r, f) for r, f in fits if f.level == "partial"]
    if partial:
        reasons = "; ".join(
            f"it looks like {r.title}, but {f.found} (expected {r.expects})" for r, f in partial
        )
        raise ConversionError(
            f"cannot read this transcript: {reasons}. Pass --format with one of: {_FORMAT_LIST}"
        )
    if doc.shape == "text":
        if doc.text.lstrip()[:1] in ("[", "{"):
            raise ConversionError(doc.json_error)
        raise ConversionError(
            f"{doc.json_error}; not JSON, JSONL, or an Aider chat history "
            "(no '# aider chat started at' line)"
        )
    raise ConversionError(
        f"cannot tell the transcript format: found {_found(doc)}; expected a JSON list of "
        "messages, a JSONL file, or a known agent log. "
        f"Pass --format with one of: {_FORMAT_LIST}"
    )


def _forced(reader: Reader, doc: Document) -> Reader:
    fit = reader.check(doc)
    if fit.level == "full":
        return reader
    found = fit.found or _found(doc)
    raise ConversionError(f"not {reader.title}: found {found}; expected {reader.expects}")


def _found(doc: Document) -> str:
    if doc.shape == "text":
        return f"text that is not JSON ({doc.json_error})"
    if doc.shape == "jsonl":
        first = doc.records[0]
        return f"JSONL whose {first.where} is {_article(json_kind(first.value))}"
    return _article(json_kind(doc.value))


def _article(kind: str) -> str:
    return f"an {kind}" if kind[:1] in "aeiou" else f"a JSON {kind}"


def _require_roles(messages: list[Message], path: str | None) -> None:
    """The one exit check: every message an object with a known role, whatever read it."""
    allowed = ", ".join(sorted(ROLES))
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise TranscriptError("a message must be a JSON object", path=path, index=index)
        role = message.get("role")
        if role is None:
            raise TranscriptError("message has no 'role'", path=path, index=index)
        if not isinstance(role, str) or role not in ROLES:
            raise TranscriptError(
                f"unknown role {role!r} (allowed: {allowed})", path=path, index=index
            )
