"""The Ray engine: the same per-entry function as a Ray Data pipeline.

``read_text`` / ``read_parquet`` -> ``map_batches`` -> results streamed back in input order
(``preserve_order``) to the driver, which writes them with the same renderers and the same
atomic writer as the local engine. The write stays on the driver on purpose: Ray's own
writers produce a directory of files and re-encode JSON through pandas, while this engine's
output must be byte-identical to the local engine's single file. Reading and the per-entry
work, which is where the time goes, run on the cluster.

Each worker row comes back as one pickled :class:`~.outcome.Outcome` (an empty value for a
blank JSONL line, which is not a record but still counts as a line), so types survive the
trip exactly and the driver's code after this point is the local engine's.

There is no chunk-level resume on this engine (Ray retries failed tasks itself; a killed
driver starts over, and its output is still written atomically).

Ray is an optional extra: ``pip install 'palimpsest[ray]'``. :func:`ensure_ray` starts a
local instance when none is running (or joins the cluster named by ``RAY_ADDRESS``).
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import MissingDependencyError, UserError
from .outcome import EntryFunction, Item, Outcome, run_guarded
from .sources import Format, parse_text

__all__ = ["ensure_ray", "ray_outcomes"]

OUTCOME_COLUMN = "outcome"


def ensure_ray(num_cpus: int | None = None) -> Any:
    """Import Ray and initialize it once (a local instance unless ``RAY_ADDRESS`` is set)."""
    try:
        import ray
    except ImportError as exc:
        raise MissingDependencyError("ray", "ray") from exc
    if not ray.is_initialized():
        ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)
    return ray


def _jsonl_batch(batch: Any, *, fn: EntryFunction, timeout: float | None) -> Any:
    import pyarrow as pa  # type: ignore[import-untyped]

    out: list[bytes] = []
    for text in batch.column("text").to_pylist():
        line = text[:-1] if text.endswith("\r") else text
        item = parse_text(line, 0, "")
        out.append(b"" if item is None else pickle.dumps(run_guarded(fn, item, timeout)))
    return pa.table({OUTCOME_COLUMN: pa.array(out, type=pa.binary())})


def _parquet_batch(batch: Any, *, fn: EntryFunction, timeout: float | None) -> Any:
    import pyarrow as pa

    out = [pickle.dumps(run_guarded(fn, Item(0, "", row), timeout)) for row in batch.to_pylist()]
    return pa.table({OUTCOME_COLUMN: pa.array(out, type=pa.binary())})


def ray_outcomes(
    path: Path,
    fmt: Format,
    fn: EntryFunction,
    *,
    timeout: float | None,
    batch_size: int = 256,
) -> Iterator[tuple[int, Outcome | None]]:
    """``(position, outcome)`` for every line or row of ``path``, in input order.

    The outcome is ``None`` for a blank JSONL line. Positions are 0-based line or row numbers.
    """
    if str(path) == "-":
        raise UserError("--engine ray reads files, not standard input; use --engine local")
    ray = ensure_ray()
    context = ray.data.DataContext.get_current()
    context.execution_options.preserve_order = True
    if fmt == "jsonl":
        dataset = ray.data.read_text(str(path), drop_empty_lines=False)
        mapper: Any = _jsonl_batch
    else:
        dataset = ray.data.read_parquet(str(path))
        mapper = _parquet_batch
    mapped = dataset.map_batches(
        mapper,
        batch_format="pyarrow",
        batch_size=batch_size,
        fn_kwargs={"fn": fn, "timeout": timeout},
    )
    position = 0
    for batch in mapped.iter_batches(batch_format="pyarrow", batch_size=None):
        for blob in batch.column(OUTCOME_COLUMN).to_pylist():
            yield position, (pickle.loads(blob) if blob else None)
            position += 1
