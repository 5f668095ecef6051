"""``palimpsest trajectories compress``: shrink a ShareGPT dataset so each entry fits its budget.

A thin layer over :mod:`palimpsest.trajectories.runner`: it reads the job's own config
(``--trajectory-config`` YAML, a different schema from palimpsest's ``config.yaml``, hence a
different flag name) and the flags that override it, builds the per-entry function, runs the batch
with a progress bar on stderr and prints a one-screen summary.

Decisions the spec leaves open:

- ``-o`` defaults to the TJ-02 name (``data.jsonl`` -> ``data_compressed.jsonl``, a directory
  -> ``<dir>_compressed``); ``-o -`` writes JSONL to standard output, ``-`` reads standard input.
- An existing output is refused unless ``--overwrite``; an interrupted run is resumed simply by
  running the same command again (its work directory ``OUT.partial`` is found and checked).
- The metrics file (``metrics.output_file``) is written beside the output when it is a
  relative name (in the current directory for standard output); ``--metrics`` overrides it.
- ``<home>/.env`` is read at start-up (``KEY=value`` lines) for variables not already set,
  so a summary model's API key can live there (TJ-04).

Exit status: 0 when the run finished (problem entries are counted, not fatal), 2 for a user
mistake (missing input, unknown config key, existing output), 1 for a failed run.
"""

from __future__ import annotations

import os
import sys
from functools import partial
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from ..home import home_dir
from .common import err_console, handle_errors

__all__ = ["compress_trajectories_command", "load_dotenv", "trajectories_app"]

trajectories_app = typer.Typer(
    help="Compress ShareGPT training trajectories to a token budget (offline, in batch).",
    no_args_is_help=True,
)

EngineName = Literal["local", "ray"]
BadInput = Literal["copy", "skip"]


def load_dotenv(path: Path) -> None:
    """Set ``KEY=value`` lines of ``path`` that are not already in the environment."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.removeprefix("export ").partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        os.environ.setdefault(key.strip(), value)


def _config(path: Path | None, overrides: dict[str, Any]) -> Any:
    from ..trajectories.config import CompressionConfig

    config = CompressionConfig.from_yaml(path) if path is not None else CompressionConfig()
    changes = {k: v for k, v in overrides.items() if v is not None}
    return config.replace(**changes) if changes else config


def _metrics_path(config: Any, root: Path | None, override: Path | None) -> Path | None:
    if override is not None:
        return override
    if not config.metrics_enabled:
        return None
    named = Path(config.metrics_output_file).expanduser()
    if named.is_absolute():
        return named
    base = root.parent if root is not None else Path.cwd()
    return base / named


def _settings(config: Any) -> dict[str, Any]:
    import dataclasses

    data = dataclasses.asdict(config)
    # Only what decides the output bytes; workers and timeouts may change between runs.
    for name in ("num_workers", "max_concurrent_requests", "per_trajectory_timeout",
                 "metrics_enabled", "metrics_output_file", "api_key_env"):  # fmt: skip
        data.pop(name, None)
    return data


@trajectories_app.command("compress")
def compress_trajectories_command(
    source: Annotated[str, typer.Argument(help="A .jsonl or .parquet file, a directory of them, or - for stdin.")],
    output: Annotated[str | None, typer.Option("-o", "--output", help="Output file or directory (default: the input name with _compressed); - for stdout.")] = None,
    config_file: Annotated[Path | None, typer.Option("--trajectory-config", help="The trajectory job's own YAML (sections tokenizer, compression, protected_turns, summarization, output, processing, metrics); not palimpsest's config.yaml.")] = None,
    model: Annotated[str | None, typer.Option("--model", help="Summary model as PROVIDER:MODEL, e.g. openai:gpt-4o-mini (default: the offline extractive summarizer).")] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="Server of the summary --model (an OpenAI-compatible endpoint ending in /v1; default: summarization.base_url of the trajectory config).")] = None,
    tokenizer: Annotated[str | None, typer.Option("--tokenizer", help="A bpe-openai encoding (o200k_base, cl100k_base) or a path to a tokenizer.json.")] = None,
    engine: Annotated[EngineName, typer.Option("--engine", help="local (process pool) or ray (Ray Data).")] = "local",
    workers: Annotated[int | None, typer.Option("--workers", min=1, help="Worker processes of the local engine (1: this process).")] = None,
    on_bad_input: Annotated[BadInput, typer.Option("--on-bad-input", help="copy: write a malformed entry through unchanged; skip: leave it out.")] = "copy",
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing output.")] = False,
    metrics: Annotated[Path | None, typer.Option("--metrics", help="Where to write the aggregate metrics JSON.")] = None,
    chunk_size: Annotated[int, typer.Option("--chunk-size", min=1, help="Records per committed chunk (how much an interrupted run redoes).")] = 512,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar, no summary.")] = False,
) -> None:  # fmt: skip
    """Compress every trajectory of SOURCE so it fits the token budget (docs/trajectories.md)."""
    load_dotenv(home_dir() / ".env")
    with handle_errors():
        _run(source, output, config_file, model, tokenizer, engine, workers, on_bad_input,
             overwrite, metrics, chunk_size, quiet, base_url)  # fmt: skip


def _run(
    source: str,
    output: str | None,
    config_file: Path | None,
    model: str | None,
    tokenizer: str | None,
    engine: EngineName,
    workers: int | None,
    on_bad_input: BadInput,
    overwrite: bool,
    metrics_override: Path | None,
    chunk_size: int,
    quiet: bool,
    base_url: str | None = None,
) -> None:
    from ..trajectories.counting import make_counter
    from ..trajectories.entry import compress_entry, compress_entry_async
    from ..trajectories.progress import RichObserver, summary_table
    from ..trajectories.runner import BatchOptions, plan_jobs, run_batch

    config = _config(
        config_file,
        {
            "summarization_model": model,
            "tokenizer_name": tokenizer,
            "num_workers": workers,
            "base_url": base_url,
        },
    )
    make_counter(config)  # an unknown tokenizer is one error now, not one per entry
    jobs, root = plan_jobs(source, output, config.output_suffix)
    options = BatchOptions(
        engine=engine,
        workers=config.num_workers,
        timeout=config.per_trajectory_timeout or None,
        max_concurrent=config.max_concurrent_requests,
        on_bad_input=on_bad_input,
        chunk_size=chunk_size,
        overwrite=overwrite,
    )
    fn = partial(compress_entry, config=config)
    afn = None
    if config.summarization_model and engine == "local":
        from ..trajectories.compress import summarizer_from_config

        summarizer = summarizer_from_config(config)  # one client for the whole run
        afn = partial(compress_entry_async, config=config, summarizer=summarizer)
    if engine == "ray":
        from ..trajectories.engine_ray import ensure_ray

        ensure_ray()
    metrics_path = _metrics_path(config, root, metrics_override)
    with RichObserver(err_console, quiet=quiet) as observer:
        result = run_batch(
            jobs,
            root,
            fn=fn,
            afn=afn,
            options=options,
            settings=_settings(config),
            metrics_path=metrics_path,
            observer=observer,
            stdout=sys.stdout.buffer if root is None else None,
        )
    if not quiet:
        outputs = [str(root)] if root is not None else ["<stdout>"]
        shown = str(metrics_path) if metrics_path is not None else None
        err_console.print(summary_table(result, outputs=outputs, metrics_file=shown))
