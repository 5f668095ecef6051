"""Assembles the ``palimpsest`` command from one module per noun.

Each command module exposes a Typer app or a command function; this module only wires
them together, so the command tree can be read in one place. :func:`main` restyles the
finished tree (:mod:`.style`) before running it, so every command's help reads the same.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer
from rich.markup import escape
from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError
from typer.exceptions import Abort

from .. import __version__
from . import sessions_search  # noqa: F401  (registers `sessions search`)
from .chat import chat_command
from .common import RUN_ERROR_EXIT, USER_ERROR_EXIT, err_console
from .compress import compress_command
from .config import config_app
from .eval import eval_app
from .mcp import mcp_command
from .memory import memory_app
from .outputs import outputs_app
from .replay import replay_command
from .sessions import sessions_app
from .style import style_tree
from .trajectories import trajectories_app

__all__ = ["app", "click_command", "main"]

app = typer.Typer(
    name="palimpsest",
    help="Keep long-running LLM agent conversations inside their token budgets.",
    no_args_is_help=True,
    # --install-completion / --show-completion (bash, zsh, fish, PowerShell).
    add_completion=True,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"palimpsest {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            help="Print the version and exit.",
        ),
    ] = False,
) -> None:
    """Keep long-running LLM agent conversations inside their token budgets."""


app.command("compress")(compress_command)
app.command("chat")(chat_command)
app.command("replay")(replay_command)
app.command("mcp")(mcp_command)
app.add_typer(sessions_app, name="sessions")
app.add_typer(memory_app, name="memory")
app.add_typer(config_app, name="config")
app.add_typer(eval_app, name="eval")
app.add_typer(outputs_app, name="outputs")
app.add_typer(trajectories_app, name="trajectories")


def click_command() -> Any:
    """The whole command tree as click sees it, restyled (what :func:`main` runs)."""
    return style_tree(typer.main.get_command(app))


_USAGE_MESSAGE_CHARS = 300


def _usage_line(exc: UsageError) -> str:
    """A usage error as one line with the help command to run (Typer boxes it in a panel)."""
    # Typer's enum and value checks prefix their text with pydantic's "Value error, ".
    message = " ".join(exc.format_message().replace("Value error, ", "").split())
    if len(message) > _USAGE_MESSAGE_CHARS:  # an echoed argument can be a whole file
        message = message[: _USAGE_MESSAGE_CHARS - 1] + "…"
    ctx = exc.ctx
    hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    return message + hint


def main(args: list[str] | None = None) -> None:
    """Console-script entry point: run the styled tree; usage errors are one line, exit 2."""
    command = click_command()
    try:
        result = command.main(args=args, prog_name="palimpsest", standalone_mode=False)
    except NoArgsIsHelpError:
        sys.exit(USER_ERROR_EXIT)  # the help was printed when the error was made
    except UsageError as exc:
        err_console.print(f"[bold red]error:[/] {escape(_usage_line(exc))}")
        sys.exit(USER_ERROR_EXIT)
    except ClickException as exc:
        err_console.print(f"[bold red]error:[/] {escape(exc.format_message())}")
        sys.exit(exc.exit_code)
    except Abort:
        err_console.print("aborted")
        sys.exit(RUN_ERROR_EXIT)
    # Without standalone mode a typer.Exit comes back as its exit code.
    sys.exit(result if isinstance(result, int) else 0)
