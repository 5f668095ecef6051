"""Writing results: one rendering per format, and writers that publish a file atomically.

Every engine renders a chunk of outcomes with the same two functions, so the bytes of an
output do not depend on which engine (or how many resumed runs) produced it:

- JSONL: :func:`jsonl_bytes`, one ``json.dumps(entry, ensure_ascii=False)`` line per entry;
  an unparsable input line kept under ``--on-bad-input copy`` is written back as it was read.
  Keys other than ``conversations`` keep their JSON value and type; key order is kept.
- Parquet: :func:`parquet_table`, the rows under the input's own Arrow schema (nested types
  and schema metadata included) plus ``compression_metrics`` as a struct column when the
  input has none. One row group per non-empty chunk.

:class:`AtomicJsonlWriter` and :class:`AtomicParquetWriter` write into a temporary file beside
the target (checked and given its mode by :mod:`palimpsest.files`: a symlink is written
through, a device, FIFO or directory refused) and ``os.replace`` it only on :meth:`commit`,
after an fsync; :meth:`abort` (or an
exception in the ``with`` block) removes the temporary file and leaves the target alone.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import fields
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Self

from ..files import create_temp_beside, naming_target, output_target, publish_temp
from .metrics import TrajectoryMetrics
from .outcome import Outcome

__all__ = [
    "METRICS_COLUMN",
    "AtomicJsonlWriter",
    "AtomicParquetWriter",
    "dump_entry",
    "jsonl_bytes",
    "metrics_arrow_type",
    "output_schema",
    "parquet_table",
    "records_to_write",
]

METRICS_COLUMN = "compression_metrics"


def dump_entry(entry: dict[str, Any]) -> str:
    """One output line (without its newline)."""
    return json.dumps(entry, ensure_ascii=False)


def records_to_write(outcomes: Iterable[Outcome], *, copy_bad_input: bool) -> list[Outcome]:
    """The outcomes that produce an output record, in order.

    Dropped entries (timed out, over the limit with ``save_over_limit`` off) have no entry;
    bad input is kept only when copying it through.
    """
    kept: list[Outcome] = []
    for outcome in outcomes:
        if outcome.status == "bad_input" and not copy_bad_input:
            continue
        if outcome.entry is None and outcome.raw is None and outcome.line is None:
            continue
        kept.append(outcome)
    return kept


def jsonl_bytes(records: Sequence[Outcome]) -> bytes:
    """The JSONL text of ``records`` (from :func:`records_to_write`)."""
    lines = [
        record.line
        if record.line is not None
        else (record.raw if record.entry is None else dump_entry(record.entry)) or ""
        for record in records
    ]
    return "".join(line + "\n" for line in lines).encode("utf-8")


def metrics_arrow_type() -> Any:
    """The Arrow struct for ``compression_metrics``, from :class:`TrajectoryMetrics`' fields."""
    import pyarrow as pa  # type: ignore[import-untyped]

    kinds = {"int": pa.int64(), "float": pa.float64(), "bool": pa.bool_()}
    return pa.struct([pa.field(f.name, kinds[str(f.type)]) for f in fields(TrajectoryMetrics)])


def output_schema(input_schema: Any) -> Any:
    """The input schema, plus ``compression_metrics`` at the end when it lacks one."""
    if METRICS_COLUMN in input_schema.names:
        return input_schema
    return input_schema.append(_metrics_field())


def _metrics_field() -> Any:
    import pyarrow as pa

    return pa.field(METRICS_COLUMN, metrics_arrow_type(), nullable=True)


def parquet_table(records: Sequence[Outcome], schema: Any) -> Any:
    """``records`` as an Arrow table under ``schema`` (bad input has a row: its own)."""
    import pyarrow as pa

    rows = [record.entry for record in records if record.entry is not None]
    return pa.Table.from_pylist(rows, schema=schema)


class _AtomicFile:
    def __init__(self, target: Path, *, binary_prefix: str) -> None:
        self.given = target
        # A symlink is written through, a device / FIFO / directory refused (files.py).
        self.target = output_target(target)
        fd, self.temp = create_temp_beside(self.target, prefix=binary_prefix)
        os.close(fd)
        self.done = False

    @contextlib.contextmanager
    def _naming_target(self) -> Iterator[None]:
        """A write error names the output, not the temporary file (or nothing)."""
        try:
            yield
        except OSError as exc:
            raise naming_target(exc, self.given) from exc

    def _publish(self) -> None:
        with self._naming_target():
            with open(self.temp, "rb+") as handle:
                os.fsync(handle.fileno())
            publish_temp(self.temp, self.target)
        self.done = True

    def _discard(self) -> None:
        with contextlib.suppress(OSError):
            self.temp.unlink()

    def abort(self) -> None:
        """Close and remove the temporary file; the target is left as it was."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if not self.done:
            self.abort()


class AtomicJsonlWriter(_AtomicFile):
    """Appends rendered chunks to a temporary file; :meth:`commit` publishes it."""

    def __init__(self, target: Path) -> None:
        super().__init__(target, binary_prefix=f".{target.name}.")
        self.handle: IO[bytes] = open(self.temp, "wb")  # noqa: SIM115 - closed in commit/abort

    def write(self, data: bytes) -> None:
        with self._naming_target():
            self.handle.write(data)

    def commit(self) -> None:
        with self._naming_target():
            self.handle.close()
        self._publish()

    def abort(self) -> None:
        with contextlib.suppress(OSError):  # a flush that fails again; the file closes anyway
            self.handle.close()
        self._discard()


class AtomicParquetWriter(_AtomicFile):
    """A ``ParquetWriter`` on a temporary file, one row group per written table."""

    def __init__(self, target: Path, schema: Any) -> None:
        import pyarrow.parquet as pq  # type: ignore[import-untyped]

        super().__init__(target, binary_prefix=f".{target.name}.")
        self.writer = pq.ParquetWriter(str(self.temp), schema)

    def write(self, table: Any) -> None:
        if table.num_rows:
            with self._naming_target():
                self.writer.write_table(table, row_group_size=max(table.num_rows, 1))

    def commit(self) -> None:
        with self._naming_target():
            self.writer.close()
        self._publish()

    def abort(self) -> None:
        with contextlib.suppress(Exception):
            self.writer.close()
        self._discard()
