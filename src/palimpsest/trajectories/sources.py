"""Reading trajectories as a stream of fixed chunks: JSONL (a file or stdin) and Parquet.

A source never holds more than one chunk of records. Chunks are the unit of resumption, so
their boundaries depend only on the input and the chunk size, never on the engine or on how
far an earlier run got:

- JSONL: chunk *k* is lines ``[k·size, (k+1)·size)``, blank lines included (they are skipped,
  not records, but they keep the line numbers in error messages true);
- Parquet: each row group is cut into slices of ``size`` rows (:func:`parquet_bounds`), read
  through ``iter_batches`` so a large row group is never loaded whole.

Each chunk carries a SHA-256 digest of its input (the raw line bytes; the Arrow IPC form of
the rows), which lets a resumed run check that the input it skips is the input it did.

A JSONL line that is not UTF-8, not JSON or not a JSON object is still an :class:`Item`,
with ``problem`` saying what is wrong and ``raw`` holding the text, so nothing is lost.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from .outcome import Item

__all__ = [
    "DEFAULT_CHUNK_SIZE",
    "Chunk",
    "Format",
    "count_jsonl_records",
    "format_of",
    "jsonl_chunks",
    "parquet_bounds",
    "parquet_chunks",
    "parse_line",
]

DEFAULT_CHUNK_SIZE = 512
"""Records per chunk: how much work an interrupted run can lose, and how often it commits."""

Format = Literal["jsonl", "parquet"]

PARQUET_SUFFIXES = (".parquet", ".pq")


def format_of(path: str | Path) -> Format:
    """``parquet`` for ``.parquet``/``.pq`` files, ``jsonl`` for anything else (and ``-``)."""
    return "parquet" if str(path).lower().endswith(PARQUET_SUFFIXES) else "jsonl"


@dataclass
class Chunk:
    """Records ``[start, stop)`` of one input (lines for JSONL, rows for Parquet)."""

    index: int
    start: int
    stop: int
    items: list[Item]
    digest: str


def parse_line(raw: bytes, position: int, location: str, *, parse: bool = True) -> Item | None:
    """One JSONL line as an :class:`Item`; ``None`` for a blank line (not a record).

    ``parse=False`` leaves the JSON to whoever runs the record (a pool worker): the item is
    ``deferred``, its text in ``raw``, and :func:`parse_text` makes the real item later.
    """
    body = raw[:-1] if raw.endswith(b"\n") else raw
    if body.endswith(b"\r"):
        body = body[:-1]
    if not body.strip():
        return None
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Item(
            position,
            location,
            None,
            raw=body.decode("utf-8", "replace"),
            problem=f"not UTF-8 (byte {exc.start})",
        )
    if not parse:
        return Item(position, location, None, raw=text, deferred=True)
    return parse_text(text, position, location)


def parse_text(text: str, position: int, location: str) -> Item | None:
    """One decoded JSONL line (no line ending) as an :class:`Item`; ``None`` when blank."""
    if not text.strip():
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        problem = f"not valid JSON ({exc.msg} at column {exc.colno})"
        return Item(position, location, None, raw=text, problem=problem)
    if not isinstance(value, dict):
        problem = f"not a JSON object (a JSON {type(value).__name__.replace('dict', 'object')})"
        return Item(position, location, None, raw=text, problem=problem)
    return Item(position, location, value)


def _open_binary(path: str | Path) -> IO[bytes]:
    if str(path) == "-":
        return sys.stdin.buffer
    return open(path, "rb")


def display_name(path: str | Path) -> str:
    """How error lines name an input: ``<stdin>`` for ``-``, the path as given otherwise."""
    return "<stdin>" if str(path) == "-" else str(path)


def jsonl_chunks(
    path: str | Path, size: int = DEFAULT_CHUNK_SIZE, *, parse: bool = True
) -> Iterator[Chunk]:
    """The chunks of a JSONL file (``-``: standard input), read as bytes line by line
    (``parse=False``: records stay text for the workers, see :func:`parse_line`)."""
    name = display_name(path)
    handle = _open_binary(path)
    try:
        index = 0
        position = 0
        while True:
            start = position
            digest = hashlib.sha256()
            items: list[Item] = []
            for raw in handle:
                digest.update(raw)
                item = parse_line(raw, position, f"{name}:{position + 1}", parse=parse)
                position += 1
                if item is not None:
                    items.append(item)
                if position - start >= size:
                    break
            if position == start:
                return
            yield Chunk(index, start, position, items, digest.hexdigest())
            index += 1
    finally:
        if handle is not sys.stdin.buffer:
            handle.close()


def count_jsonl_records(path: str | Path) -> int | None:
    """Non-blank lines of a JSONL file (the progress bar's total); ``None`` for stdin."""
    if str(path) == "-":
        return None
    with open(path, "rb") as handle:
        return sum(1 for line in handle if line.strip())


def parquet_bounds(row_group_rows: list[int], size: int) -> list[tuple[int, int]]:
    """``[start, stop)`` of every chunk: each row group cut into slices of ``size`` rows."""
    bounds: list[tuple[int, int]] = []
    offset = 0
    for rows in row_group_rows:
        for lo in range(0, rows, size):
            bounds.append((offset + lo, offset + min(lo + size, rows)))
        offset += rows
    return bounds


def parquet_row_groups(path: str | Path) -> list[int]:
    """Rows per row group, from the file's footer (nothing else is read)."""
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    meta = pq.ParquetFile(path).metadata
    return [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]


def parquet_chunks(path: str | Path, size: int = DEFAULT_CHUNK_SIZE) -> Iterator[Chunk]:
    """The chunks of a Parquet file, rows as plain Python values (``to_pylist``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    name = display_name(path)
    parquet = pq.ParquetFile(path)
    index = 0
    offset = 0
    for group in range(parquet.metadata.num_row_groups):
        pending: list[pa.RecordBatch] = []
        held = 0
        for batch in parquet.iter_batches(batch_size=size, row_groups=[group]):
            pending.append(batch)
            held += batch.num_rows
            while held >= size:
                table = pa.Table.from_batches(pending)
                yield _parquet_chunk(index, offset, table.slice(0, size), name)
                index += 1
                offset += size
                rest = table.slice(size)
                pending = rest.to_batches()
                held = rest.num_rows
        if held:
            yield _parquet_chunk(index, offset, pa.Table.from_batches(pending), name)
            index += 1
            offset += held
    parquet.close()


def _parquet_chunk(index: int, offset: int, table: Any, name: str) -> Chunk:
    table = table.combine_chunks()
    digest = hashlib.sha256()
    for batch in table.to_batches():
        digest.update(batch.serialize())
    rows = table.to_pylist()
    items = [Item(offset + i, f"{name}: row {offset + i + 1}", row) for i, row in enumerate(rows)]
    return Chunk(index, offset, offset + len(rows), items, digest.hexdigest())
