"""``palimpsest config``: the configuration in effect, and where each value came from.

``config show`` prints every setting with its effective value and its source (the
default, the config file with its path, an environment variable, a ``--config`` flag),
then the locations palimpsest reads and writes (data directory, config file, session
database, saved outputs, memory files), which derive from the data directory unless the
file sets them. ``config path`` prints the config file's path (it may not exist yet).
Both read the sources through :func:`palimpsest.config.explain_settings`, the same code
path every other command loads its settings with.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from ..config import (
    Settings,
    SettingValue,
    ValueSource,
    config_path_source,
    explain_settings,
    home_dir_source,
)
from .common import err_console, handle_errors

__all__ = ["config_app", "locations"]

config_app = typer.Typer(
    help="Show the configuration in effect and where each value came from.",
    no_args_is_help=True,
)

console = Console(highlight=False, soft_wrap=True)

ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config",
        help="Read this config file instead of the default one "
        "($PALIMPSEST_CONFIG, else $PALIMPSEST_HOME/config.yaml).",
    ),
]


def _source_of(values: list[SettingValue], key: str) -> ValueSource | None:
    found = next((v for v in values if v.key == key), None)
    return found.source if found is not None and found.source.kind == "file" else None


def locations(
    settings: Settings, values: list[SettingValue], config: Path | None
) -> list[SettingValue]:
    """Where palimpsest reads and writes, each with the source that decided it."""
    home, home_source = home_dir_source()
    config_file, config_source = config_path_source(config)
    store_source = _source_of(values, "store.path")
    outputs_source = _source_of(values, "outputs.path")
    store_path = Path(settings.store.path).expanduser() if settings.store.path else None
    outputs_path = Path(settings.outputs.path).expanduser() if settings.outputs.path else None
    return [
        SettingValue("paths.home", str(home), home_source),
        SettingValue("paths.config_file", str(config_file), config_source),
        SettingValue(
            "paths.sessions_db",
            str(store_path or home / "state.db"),
            store_source or home_source,
        ),
        SettingValue(
            "paths.outputs", str(outputs_path or home / "outputs"), outputs_source or home_source
        ),
        SettingValue("paths.memories", str(home / "memories"), home_source),
    ]


def _shown(value: Any) -> str:
    if value is None:
        return "(unset)"
    if isinstance(value, dict | list | bool):
        return json.dumps(value, default=str)
    return str(value)


@config_app.command("show")
def show_command(
    config: ConfigOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    changed: Annotated[
        bool, typer.Option("--changed", help="Only the values that are not defaults.")
    ] = False,
) -> None:
    """Every setting's effective value and its source (default, file, environment, flag)."""
    with handle_errors():
        settings, values = explain_settings(config)
        rows = [*values, *locations(settings, values, config)]
    if changed:
        rows = [row for row in rows if row.source.kind != "default"]
    effective = effective_thresholds(settings)
    if as_json:
        payload = [
            {
                "key": row.key,
                "value": row.value,
                "source": row.source.kind,
                "detail": row.source.detail,
            }
            for row in rows
        ]
        payload.append(
            {
                "key": "compression.effective_threshold_tokens",
                "value": {str(w): t for w, t in effective},
                "source": "derived",
                "detail": "tokens at which compaction fires, by context length",
            }
        )
        payload.extend(in_effect(settings))
        sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False, default=str) + "\n")
        return
    if not rows:
        err_console.print("Every setting has its default value.")
        return
    table = Table(box=None, pad_edge=False)
    table.add_column("key", no_wrap=True)
    table.add_column("value", overflow="fold")
    table.add_column("source", overflow="fold")
    for row in rows:
        style = "dim" if row.source.kind == "default" else None
        table.add_row(row.key, _shown(row.value), str(row.source), style=style)
    console.print(table)
    console.print(
        "effective compaction threshold (compression.threshold applied to the window, with "
        "the 64,000-token floor and the small-window rule unless the ratio is set "
        "explicitly): " + ", ".join(f"{w:,} → {t:,} ({t / w:.0%})" for w, t in effective),
        highlight=False,
    )
    for derived in in_effect(settings):
        console.print(
            f"{derived['key']}: {_shown(derived['value'])} ({derived['detail']})", highlight=False
        )


def in_effect(settings: Settings) -> list[dict[str, Any]]:
    """The window commands use and its source, and the trigger for ``model.name`` with
    where its ratio came from (``compression.model_thresholds``, ``compression.threshold``
    or the default): the same resolution the compressor and the agent apply."""
    from ..compaction.compressor import ContextCompressor
    from ..compaction.window import resolve_window, threshold_choice
    from .common import DEFAULT_CONTEXT_LENGTH

    window = resolve_window(
        configured=settings.model.context_length, default=DEFAULT_CONTEXT_LENGTH
    )
    assert window is not None  # the default is positive
    detail = (
        "model.context_length in the config"
        if window.source == "configured"
        else "no model.context_length: the built-in default; a --context-length flag, or "
        "the agent's model, may give another"
    )
    chosen = threshold_choice(settings, settings.model.name or "")
    engine = ContextCompressor.from_settings(settings, context_length=window.tokens)
    model = settings.model.name or "(no model.name)"
    return [
        {
            "key": "model.window_in_effect",
            "value": window.tokens,
            "source": window.source,
            "detail": detail,
        },
        {
            "key": "compression.threshold_in_effect",
            "value": {
                "ratio": chosen.ratio,
                "tokens": engine.threshold_tokens,
                "model": settings.model.name,
            },
            "source": chosen.source,
            "detail": f"for {model} on a {window.tokens:,}-token window, from {chosen.source}",
        },
    ]


THRESHOLD_WINDOWS = (8_000, 32_000, 128_000, 200_000, 1_000_000)
"""Context lengths ``config show`` reports the effective threshold for (plus the configured
``model.context_length``)."""


def effective_thresholds(settings: Settings) -> list[tuple[int, int]]:
    """``(context length, threshold tokens)`` as the compressor computes them from
    ``settings``, for :data:`THRESHOLD_WINDOWS` and the configured window."""
    from ..compaction.compressor import ContextCompressor

    windows = set(THRESHOLD_WINDOWS)
    if settings.model.context_length:
        windows.add(settings.model.context_length)
    return [
        (w, ContextCompressor.from_settings(settings, context_length=w).threshold_tokens)
        for w in sorted(windows)
    ]


@config_app.command("path")
def path_command(config: ConfigOption = None) -> None:
    """Print the config file's path (it may not exist yet)."""
    with handle_errors():
        path, source = config_path_source(config)
    typer.echo(str(path))
    if not path.exists():
        err_console.print(f"(no file there yet; chosen by {source})")
