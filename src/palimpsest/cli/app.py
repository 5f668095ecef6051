"""Assembles the ``palimpsest`` command from one module per noun.

Each command module exposes a Typer app or a command function; this module only wires
them together, so the command tree can be read in one place.
"""

from __future__ import annotations

import typer

app = typer.Typer(
    name="palimpsest",
    help="Keep long-running LLM agent conversations inside their token budgets.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def main() -> None:
    """Console-script entry point."""
    app()
