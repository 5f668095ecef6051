"""The batch runner: inputs to outputs through an engine, chunk by chunk, resumably.

``run_batch`` is the one pipeline behind ``palimpsest trajectories compress``:

1. :func:`plan_jobs` pairs each input file with its output (TJ-02 names; a directory maps
   to a ``_compressed`` directory holding the same relative names);
2. each job streams its input in chunks (:mod:`.sources`) through the engine
   (:mod:`.engine_local`, :mod:`.engine_ray`), which returns outcomes in input order;
3. a finished chunk is rendered (:mod:`.sinks`) and committed in the work directory
   (:mod:`.resume`), its per-entry problems reported as one line each;
4. the parts are joined into the output, published atomically, and the aggregate metrics
   (TJ-22) are written.

Standard output (``-o -``) streams JSONL as chunks finish, with nothing to resume.
"""

from __future__ import annotations

import os
import shutil
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal

from ..errors import MissingDependencyError, OutputTargetError, UserError
from ..files import fsync_dir, output_target, replace_file
from .metrics import AggregateMetrics
from .outcome import AsyncEntryFunction, EntryFunction, Item, Outcome
from .resume import ChunkRecord, ResumeError, WorkDir, work_dir_for
from .sinks import (
    AtomicJsonlWriter,
    AtomicParquetWriter,
    jsonl_bytes,
    output_schema,
    parquet_table,
    records_to_write,
)
from .sources import (
    DEFAULT_CHUNK_SIZE,
    Chunk,
    Format,
    count_jsonl_records,
    format_of,
    jsonl_chunks,
    parquet_bounds,
    parquet_chunks,
    parquet_row_groups,
)

__all__ = ["BatchOptions", "Job", "Observer", "plan_jobs", "run_batch", "tally"]

BadInputPolicy = Literal["copy", "skip"]


@dataclass(frozen=True)
class BatchOptions:
    """How to run a batch (the per-entry settings live in the entry function)."""

    engine: Literal["local", "ray"] = "local"
    workers: int = 4
    timeout: float | None = 300.0
    max_concurrent: int = 50
    on_bad_input: BadInputPolicy = "copy"
    chunk_size: int = DEFAULT_CHUNK_SIZE
    overwrite: bool = False


@dataclass(frozen=True)
class Job:
    """One input file and the output file it becomes."""

    source: Path
    target: Path
    key: str
    """The input's name inside the run (its relative path), for the work directory."""

    @property
    def fmt(self) -> Format:
        return format_of(self.source)


class Observer:
    """What the runner tells its caller as it goes; the default says nothing."""

    def start(self, total: int | None) -> None:
        """The run begins; ``total`` records when the inputs say so cheaply."""

    def advance(self, records: int, metrics: AggregateMetrics) -> None:
        """``records`` more records are done; ``metrics`` are the run's so far."""

    def problem(self, line: str) -> None:
        """One entry could not be compressed (bad input, failure, timeout)."""


def output_name(path: Path, suffix: str) -> Path:
    """TJ-02: ``data.jsonl`` -> ``data_compressed.jsonl``; a directory gets the suffix."""
    if path.is_dir():
        return path.with_name(path.name + suffix)
    return path.with_name(path.stem + suffix + path.suffix)


def _inputs_in(directory: Path) -> list[Path]:
    found = [
        p
        for p in directory.rglob("*")
        if p.is_file() and p.suffix.lower() in (".jsonl", ".parquet", ".pq")
    ]
    return sorted(found)


def plan_jobs(source: str, target: str | None, suffix: str) -> tuple[list[Job], Path | None]:
    """The jobs of a run and the output root (``None`` when writing to standard output)."""
    jobs, root = _plan_jobs(source, target, suffix)
    if any(job.fmt == "parquet" for job in jobs):
        try:
            import pyarrow  # type: ignore[import-untyped]  # noqa: F401
        except ImportError as exc:
            raise MissingDependencyError("pyarrow", "trajectories") from exc
    return jobs, root


def _plan_jobs(source: str, target: str | None, suffix: str) -> tuple[list[Job], Path | None]:
    if source != "-" and not Path(source).exists():
        raise UserError(f"{source}: no such file or directory")
    if source == "-":
        if target is None:
            raise UserError("reading standard input needs -o OUT (or -o - for standard output)")
        out = Path(target)
        if target != "-" and (out.exists() or out.is_symlink()):
            output_target(out)
        return [Job(Path("-"), out, "-")], (None if target == "-" else out)
    src = Path(source)
    out = Path(target) if target else output_name(src, suffix)
    if src.is_dir():
        if target == "-":
            raise UserError("a directory input needs an output directory, not -o -")
        files = _inputs_in(src)
        if not files:
            raise UserError(f"{src}: no .jsonl or .parquet files in this directory")
        if (out.exists() or out.is_symlink()) and not (out.is_dir() and not out.is_symlink()):
            # --overwrite removes and replaces a directory: never a file, link or device.
            raise OutputTargetError(out, "is not a directory; a directory input writes one")
        jobs = [Job(f, out / f.relative_to(src), str(f.relative_to(src))) for f in files]
        return jobs, out
    if target == "-" and format_of(src) == "parquet":
        raise UserError("Parquet output cannot go to standard output; name an output file")
    if target != "-" and (out.exists() or out.is_symlink()):
        output_target(out)  # a directory, device or FIFO is refused before any work
    return [Job(src, out, src.name)], (None if target == "-" else out)


def tally(metrics: AggregateMetrics, outcome: Outcome) -> None:
    """Count one outcome in the run's metrics."""
    if outcome.status == "bad_input":
        metrics.add_bad_input()
    elif outcome.status == "failed":
        metrics.add_failed()
    elif outcome.status == "timed_out":
        metrics.add_timed_out()
    elif outcome.metrics is not None:
        metrics.add(outcome.metrics)
        if outcome.entry is None and outcome.line is None:
            metrics.dropped_over_limit += 1
    else:
        metrics.total_trajectories += 1
        metrics.unchanged += 1


@dataclass
class _Pending:
    chunk: Chunk
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def full(self) -> bool:
        return len(self.outcomes) >= len(self.chunk.items)


Engine = Callable[[Iterable[Item]], Iterator[Outcome]]


class _Run:
    def __init__(
        self, options: BatchOptions, observer: Observer, metrics: AggregateMetrics
    ) -> None:
        self.options = options
        self.observer = observer
        self.metrics = metrics
        self.copy = options.on_bad_input == "copy"
        self.defer_parsing = False
        """JSONL records go to pool workers as text: they parse and serialize, not the
        parent (set by :func:`run_batch` for the local pool)."""

    def render(self, job: Job, outcomes: list[Outcome], schema: Any) -> tuple[bytes | Any, int]:
        records = records_to_write(outcomes, copy_bad_input=self.copy)
        if job.fmt == "parquet":
            return parquet_table(records, schema), len(records)
        return jsonl_bytes(records), len(records)

    def account(self, outcomes: list[Outcome], locations: list[str]) -> AggregateMetrics:
        part = AggregateMetrics()
        for outcome, location in zip(outcomes, locations, strict=True):
            tally(part, outcome)
            if outcome.status in ("bad_input", "failed", "timed_out"):
                what = outcome.status.replace("_", " ")
                self.observer.problem(f"{location}: {what}: {outcome.error}")
        self.metrics.merge(part)
        self.observer.advance(len(outcomes), self.metrics)
        return part

    def chunked(self, job: Job, work: WorkDir | None, count: list[int]) -> Iterator[Chunk]:
        size = self.options.chunk_size
        chunks = (
            parquet_chunks(job.source, size)
            if job.fmt == "parquet"
            else jsonl_chunks(
                job.source if str(job.source) != "-" else "-", size, parse=not self.defer_parsing
            )
        )
        for chunk in chunks:
            count[0] = chunk.index + 1
            record = work.record(job.key, chunk.index) if work is not None else None
            if record is None:
                yield chunk
                continue
            if (record.digest, record.start, record.stop) != (
                chunk.digest,
                chunk.start,
                chunk.stop,
            ):
                raise ResumeError(
                    f"{job.source}: records {chunk.start + 1}-{chunk.stop} differ from the "
                    f"interrupted run's input; delete {work.path if work else ''} to start over"
                )
            self.metrics.merge(record.aggregate())
            self.observer.advance(len(chunk.items), self.metrics)

    def local_job(
        self, job: Job, engine: Engine, work: WorkDir | None, sink: BinaryIO | None
    ) -> int:
        """Process one job's uncommitted chunks; returns its number of chunks."""
        schema = _parquet_schema(job)
        pending: deque[_Pending] = deque()
        count = [0]

        def feed() -> Iterator[Item]:
            for chunk in self.chunked(job, work, count):
                pending.append(_Pending(chunk))
                yield from chunk.items

        def finish(done: _Pending) -> None:
            data, records = self.render(job, done.outcomes, schema)
            part = self.account(done.outcomes, [i.location for i in done.chunk.items])
            chunk = done.chunk
            if sink is not None:
                sink.write(data)
                sink.flush()
            elif work is not None:
                blob = data if job.fmt == "jsonl" else _ipc_bytes(data)
                record = ChunkRecord(
                    chunk.index, chunk.start, chunk.stop, chunk.digest, records, asdict(part)
                )
                work.commit(job.key, record, blob)

        def drain() -> None:
            # A chunk is finished once all its items are back; a chunk of blank lines
            # has none, so it finishes as soon as it reaches the head of the queue.
            while pending and pending[0].full:
                finish(pending.popleft())

        for outcome in engine(feed()):
            drain()
            pending[0].outcomes.append(outcome)
            drain()
        drain()
        return count[0]

    def assemble(self, job: Job, work: WorkDir, chunks: int, target: Path) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        if job.fmt == "parquet":
            import pyarrow as pa

            with AtomicParquetWriter(target, _parquet_schema(job)) as writer:
                for index in range(chunks):
                    reader = pa.ipc.open_stream(work.read_part(job.key, index))
                    writer.write(reader.read_all())
                writer.commit()
            return
        with AtomicJsonlWriter(target) as out:
            for index in range(chunks):
                out.write(work.read_part(job.key, index))
            out.commit()

    def ray_job(self, job: Job, fn: EntryFunction, target: Path) -> None:
        from .engine_ray import ray_outcomes
        from .sources import display_name

        size = self.options.chunk_size
        name = display_name(job.source)
        if job.fmt == "parquet":
            bounds = parquet_bounds(parquet_row_groups(job.source), size)
            stops = [stop for _, stop in bounds]
            where = "{name}: row {n}"
        else:
            stops = []
            where = "{name}:{n}"
        schema = _parquet_schema(job)
        target.parent.mkdir(parents=True, exist_ok=True)
        writer: AtomicJsonlWriter | AtomicParquetWriter
        writer = (
            AtomicParquetWriter(target, schema)
            if job.fmt == "parquet"
            else AtomicJsonlWriter(target)
        )
        with writer:
            outcomes: list[Outcome] = []
            locations: list[str] = []
            chunk = 0
            stop = stops[0] if stops else size

            def flush() -> None:
                data, _ = self.render(job, outcomes, schema)
                writer.write(data)
                self.account(outcomes, locations)
                outcomes.clear()
                locations.clear()

            for position, outcome in ray_outcomes(
                job.source, job.fmt, fn, timeout=self.options.timeout
            ):
                while position >= stop:
                    flush()
                    chunk += 1
                    stop = stops[chunk] if stops else stop + size
                if outcome is not None:
                    outcomes.append(outcome)
                    locations.append(where.format(name=name, n=position + 1))
            flush()
            writer.commit()


def _ipc_bytes(table: Any) -> bytes:
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as stream:
        stream.write_table(table)
    return bytes(sink.getvalue().to_pybytes())


def _parquet_schema(job: Job) -> Any:
    if job.fmt != "parquet":
        return None
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    return output_schema(pq.read_schema(job.source))


def _total(jobs: list[Job]) -> int | None:
    total = 0
    for job in jobs:
        if job.fmt == "parquet":
            total += sum(parquet_row_groups(job.source))
        else:
            n = count_jsonl_records(job.source)
            if n is None:
                return None
            total += n
    return total


def run_batch(
    jobs: list[Job],
    root: Path | None,
    *,
    fn: EntryFunction,
    afn: AsyncEntryFunction | None = None,
    options: BatchOptions,
    settings: dict[str, Any],
    metrics_path: Path | None = None,
    observer: Observer | None = None,
    stdout: BinaryIO | None = None,
) -> AggregateMetrics:
    """Run every job; returns the aggregate metrics (also written to ``metrics_path``).

    ``root`` is the output (file or directory) the run publishes, ``None`` for standard
    output; ``settings`` are what the resume fingerprint covers beyond the inputs.
    ``afn``, when given, is the asynchronous per-entry function used by the local engine
    (model summaries); ``fn`` is used otherwise and by Ray.
    """
    observer = observer or Observer()
    metrics = AggregateMetrics()
    run = _Run(options, observer, metrics)
    started = time.monotonic()
    observer.start(_total(jobs))
    engine = _local_engine(fn, afn, options)
    run.defer_parsing = afn is None and options.workers > 1 and options.engine != "ray"
    if root is None:
        if stdout is None:
            raise UserError("no output given")
        for job in jobs:
            run.local_job(job, engine, None, stdout)
    else:
        _check_target(root, options.overwrite)
        if options.engine == "ray":
            _run_ray(run, jobs, root, fn)
        else:
            _run_resumable(run, jobs, root, engine, options, settings)
    metrics.elapsed_seconds = time.monotonic() - started
    if metrics_path is not None:
        metrics_path.parent.mkdir(parents=True, exist_ok=True)
        import json

        text = json.dumps(metrics.to_json(), indent=2) + "\n"
        replace_file(metrics_path, text, temp_prefix=f".{metrics_path.name}.")
    return metrics


def _local_engine(
    fn: EntryFunction, afn: AsyncEntryFunction | None, options: BatchOptions
) -> Engine:
    from .engine_local import map_async, map_in_pool

    if afn is not None:
        return lambda items: map_async(
            afn, items, timeout=options.timeout, max_concurrent=options.max_concurrent
        )
    return lambda items: map_in_pool(fn, items, workers=options.workers, timeout=options.timeout)


def _check_target(root: Path, overwrite: bool) -> None:
    if root.exists() and not overwrite:
        raise UserError(f"{root} already exists; pass --overwrite to replace it")


def _run_resumable(
    run: _Run,
    jobs: list[Job],
    root: Path,
    engine: Engine,
    options: BatchOptions,
    settings: dict[str, Any],
) -> None:
    fingerprint = {
        **settings,
        "inputs": [str(job.source.resolve()) if str(job.source) != "-" else "-" for job in jobs],
        "output": str(root.resolve()),
        "chunk_size": options.chunk_size,
        "on_bad_input": options.on_bad_input,
    }
    work = WorkDir(work_dir_for(root), fingerprint)
    directory = jobs[0].target != root
    staged = work.path / "result" if directory else None
    for job in jobs:
        chunks = run.local_job(job, engine, work, None)
        target = staged / job.key if staged is not None else root
        run.assemble(job, work, chunks, target)
    if staged is not None:
        _publish_directory(staged, root, options.overwrite)
    work.remove()


def _run_ray(run: _Run, jobs: list[Job], root: Path, fn: EntryFunction) -> None:
    directory = jobs[0].target != root
    if not directory:
        run.ray_job(jobs[0], fn, root)
        return
    staged = work_dir_for(root) / "result"
    if staged.exists():
        shutil.rmtree(staged)
    for job in jobs:
        run.ray_job(job, fn, staged / job.key)
    _publish_directory(staged, root, run.options.overwrite)
    shutil.rmtree(staged.parent, ignore_errors=True)


def _publish_directory(staged: Path, root: Path, overwrite: bool) -> None:
    if root.exists() and overwrite:
        shutil.rmtree(root)
    os.replace(staged, root)
    fsync_dir(root.parent)
