"""Assembles the ``palimpsest`` command from one module per noun.

Each command module exposes a Typer app or a command function; this module only wires
them together, so the command tree can be read in one place.
"""

from __future__ import annotations

import typer

from . import sessions_search  # noqa: F401  (registers `sessions search`)
from .chat import chat_command
from .compress import compress_command
from .eval import eval_app
from .memory import memory_app
from .outputs import outputs_app
from .replay import replay_command
from .sessions import sessions_app
from .trajectories import trajectories_app

app = typer.Typer(
    name="palimpsest",
    help="Keep long-running LLM agent conversations inside their token budgets.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

app.command("compress")(compress_command)
app.command("chat")(chat_command)
app.command("replay")(replay_command)
app.add_typer(sessions_app, name="sessions")
app.add_typer(memory_app, name="memory")
app.add_typer(eval_app, name="eval")
app.add_typer(outputs_app, name="outputs")
app.add_typer(trajectories_app, name="trajectories")


def main() -> None:
    """Console-script entry point."""
    app()
