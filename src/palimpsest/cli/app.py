"""Assembles the ``palimpsest`` command from one module per noun.

Each command module exposes a Typer app or a command function; :data:`.lazy.COMMANDS`
names them, so the command tree can be read in one place, and a module is imported only
when its command runs (``--help`` and ``--version`` import none of them). :func:`main` restyles the
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
from .common import RUN_ERROR_EXIT, USER_ERROR_EXIT, err_console
from .lazy import LazyGroup, make_lazy

__all__ = ["app", "click_command", "main"]

app = typer.Typer(
    name="palimpsest",
    help="Keep long-running LLM agent conversations inside their token budgets.",
    no_args_is_help=True,
    # --install-completion / --show-completion (bash, zsh, fish, PowerShell).
    add_completion=True,
    pretty_exceptions_enable=False,
    cls=LazyGroup,  # the commands: imported when one runs (.lazy)
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


# The commands (compress, chat, replay, mcp and the nouns sessions, memory, config, eval,
# outputs, trajectories) are listed in .lazy.COMMANDS and imported when one runs.


def click_command() -> Any:
    """The whole command tree as click sees it, restyled (what :func:`main` runs); each
    command's module is imported when the command is first looked up (:mod:`.lazy`)."""
    return make_lazy(typer.main.get_command(app))


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
