"""What a reader requires of a file, and how well a parsed file meets it.

Each transcript reader states its requirements as a check over the parsed
:class:`~.formats_parse.Document` that answers with a :class:`Fit`: ``full`` (every
requirement met: the reader can convert the file without guessing), ``partial`` (the file has
the reader's marks but falls short somewhere, said in ``found``), or ``none``. Detection picks
a reader whose requirements are fully met and refuses everything else with one line naming
what was expected and what was found; no reader is ever run on a file it only half-matches.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .content import Message
from .formats_common import Notes, Record
from .formats_parse import Document, json_kind

__all__ = ["FULL", "NONE", "Fit", "Reader", "first_failure", "partial", "records_of"]


@dataclass(frozen=True)
class Fit:
    """How well a document meets one reader's requirements; ``found`` says where it falls short."""

    level: Literal["full", "partial", "none"]
    found: str = ""


FULL = Fit("full")
NONE = Fit("none")


def partial(found: str) -> Fit:
    return Fit("partial", found)


@dataclass(frozen=True)
class Reader:
    """One transcript format: its name (``--format``), what it requires, and its converter.

    ``title`` names the format in errors ("a Claude Code session log"); ``expects`` says in a
    phrase what the file must hold. ``check`` never raises; ``convert`` is only called on a
    document whose check was ``full``.
    """

    name: str
    title: str
    expects: str
    check: Callable[[Document], Fit]
    convert: Callable[[Document, Notes], list[Message]]


def records_of(doc: Document, key: str | None) -> list[Record] | None:
    """Located records of a JSONL file, a JSON list, or the list under ``key``; else ``None``."""
    if doc.shape == "jsonl":
        return list(doc.records)
    if doc.shape != "json":
        return None
    value = doc.value
    if isinstance(value, list):
        return [Record(f"item {i}", v) for i, v in enumerate(value)]
    if key is not None and isinstance(value, Mapping) and isinstance(value.get(key), list):
        return [Record(f"{key}[{i}]", v) for i, v in enumerate(value[key])]
    return None


def first_failure(records: list[Record], test: Callable[[Any], bool], what: str) -> str | None:
    """``"<where>: <what> (found <kind>)"`` for the first record failing ``test``; else ``None``."""
    for record in records:
        if not test(record.value):
            return f"{record.where}: {what} (found {_found(record.value)})"
    return None


def _found(value: Any) -> str:
    kind = json_kind(value)
    return kind if kind.startswith(("object", "empty")) else f"a JSON {kind}"
