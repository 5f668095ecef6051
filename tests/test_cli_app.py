"""The root command: ``--version``, shell completion, colour only where wanted.

Run as a user runs it: a subprocess, or a real terminal through pexpect for colour.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pexpect

import palimpsest
from cli_run import SRC, run_cli
from palimpsest.storage.sessions import SessionStore

COLOUR = re.compile(r"\x1b\[(?:[0-9]+;)*(?:3[0-8]|9[0-7])[;m]")
"""An SGR escape setting a foreground colour (bold alone, ``\\x1b[1m``, is not colour)."""


def test_version() -> None:
    result = run_cli("--version")
    assert result.returncode == 0 and result.stdout == f"palimpsest {palimpsest.__version__}\n"


def test_no_arguments_prints_the_help_and_exits_2() -> None:
    result = run_cli()
    assert result.returncode == 2 and "Usage: palimpsest [OPTIONS] COMMAND" in result.stdout


def test_shell_completion_script_is_offered() -> None:
    result = run_cli("--show-completion", "bash")
    assert result.returncode == 0
    assert "_PALIMPSEST_COMPLETE" in result.stdout and "complete" in result.stdout


def _terminal_output(args: list[str], status: int = 0, **env: str) -> str:
    """What ``palimpsest ARGS`` prints in a real (pseudo-)terminal."""
    full = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    full.update(PYTHONPATH=str(SRC), TERM="xterm-256color", COLUMNS="100", **env)
    child = pexpect.spawn(
        sys.executable,
        ["-m", "palimpsest.cli", *args],
        env=full,
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 100),
    )
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == status, child.before
    return str(child.before)


def test_no_color_is_honoured_in_a_terminal(isolated_home: Path) -> None:
    """Help (Typer's console) and errors (ours) are coloured in a terminal, not with NO_COLOR."""
    with SessionStore() as store:
        store.create_session("20260101_000000_aaaaaa", "cli", title="Colourful")
    for args, status in ((["sessions", "--help"], 0), (["sessions", "show", "nosuch"], 2)):
        coloured = _terminal_output(args, status)
        assert COLOUR.search(coloured), coloured
        plain = _terminal_output(args, status, NO_COLOR="1")
        assert not COLOUR.search(plain) and plain.strip(), plain


def test_a_usage_error_is_one_short_line_even_with_a_huge_argument() -> None:
    done = run_cli("memory", "add", "memory", "x" * 5000)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and len(lines[0]) < 400
    assert lines[0].startswith("error:") and "--help" in lines[0]
