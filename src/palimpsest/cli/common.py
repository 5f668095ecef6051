"""What every command shares: the stderr console and the one-line error exit.

User mistakes print one line naming the fix and exit 2 without a traceback; failures of
the run (a provider, the database: locked, read-only, damaged) exit 1, also one line.
Commands call :func:`fail` or wrap their body in :func:`handle_errors`.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from ..errors import PalimpsestError, UserError
from .terminal_text import for_terminal

__all__ = [
    "CONTEXT_LENGTH_HELP",
    "DEFAULT_CONTEXT_LENGTH",
    "STDOUT",
    "USER_ERROR_EXIT",
    "TranscriptFormat",
    "context_length_of",
    "err_console",
    "fail",
    "handle_errors",
    "is_stdout",
]

DEFAULT_CONTEXT_LENGTH = 200_000
"""The window every command assumes when neither ``--context-length`` nor
``model.context_length`` (the config) gives one: one default, one source."""

CONTEXT_LENGTH_HELP = "Model window in tokens (default: model.context_length, else 200,000)."

STDOUT = "-"
"""``-o -`` means standard output, in every command that takes ``-o``."""


def is_stdout(output: object) -> bool:
    """Is ``output`` (an ``-o`` value) missing or ``-``, i.e. standard output?"""
    return output is None or str(output) == STDOUT


def context_length_of(flag: int | None, configured: int | None) -> int:
    """The window a command uses: ``--context-length``, else ``model.context_length`` from
    the config, else :data:`DEFAULT_CONTEXT_LENGTH`."""
    return flag or configured or DEFAULT_CONTEXT_LENGTH


USER_ERROR_EXIT = 2
RUN_ERROR_EXIT = 1

# Rich reads NO_COLOR (and FORCE_COLOR, TERM=dumb) when a Console is made, so every
# console of the CLI honours them; none of them forces colour.
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


class TranscriptFormat(enum.StrEnum):
    """``--format`` of the commands that read a transcript: ``auto`` or a reader's name
    (:data:`palimpsest.messages.FORMATS`; a test keeps the two lists equal)."""

    auto = "auto"
    openai = "openai"
    swe_agent = "swe-agent"
    mini_swe_agent = "mini-swe-agent"
    claude_code = "claude-code"
    codex = "codex"
    openhands = "openhands"
    aider = "aider"


def fail(message: str, code: int = USER_ERROR_EXIT) -> NoReturn:
    """Print ``error: <message>`` on stderr and exit with ``code``."""
    # A message can quote stored or user text: its control and bidi characters are escaped.
    shown = escape(for_terminal(message))
    err_console.print(f"[bold red]error:[/] {shown}", markup=True, highlight=False)
    raise typer.Exit(code)


@contextmanager
def handle_errors() -> Iterator[None]:
    """Turn palimpsest errors and file errors into one line and an exit code."""
    import apsw  # here, not at the top: `palimpsest --help` imports this module

    try:
        yield
    except UserError as exc:
        fail(str(exc), USER_ERROR_EXIT)
    except PalimpsestError as exc:
        fail(str(exc), RUN_ERROR_EXIT)
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        fail(f"{where}{exc.strerror or exc}", USER_ERROR_EXIT)
    except apsw.Error as exc:
        # The store translates SQLite's errors; one that slips through (a damaged
        # schema, say) is still one line, not a traceback.
        fail(f"database error: {exc}", RUN_ERROR_EXIT)
