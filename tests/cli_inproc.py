"""Run ``palimpsest`` in this process, for tests where a subprocess adds nothing.

:func:`invoke_cli` goes through the same entry point as the console script
(:func:`palimpsest.cli.app.main`: one-line usage errors, exit codes) with stdin, stdout,
stderr and the environment swapped by Typer's test runner, and returns what
:func:`cli_run.run_cli` returns, so a test can move between the two without change.
Keep real-process tests for what a process adds: start-up, imports, signals, terminals.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from typing import Any

from typer.testing import CliRunner

from palimpsest.cli.app import main


def invoke_cli(
    *args: str, stdin: str | None = None, env: Mapping[str, str | None] | None = None
) -> subprocess.CompletedProcess[str]:
    """``palimpsest ARGS...`` in-process; stdout, stderr and the exit status."""
    full_env: dict[str, str | None] = {"COLUMNS": "80", "NO_COLOR": "1", "FORCE_COLOR": None}
    full_env.update(env or {})
    with CliRunner().isolation(input=stdin or "", env=full_env) as (out, err, _):
        try:
            main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        else:
            code = 0
        sys.stdout.flush()  # what a command wrote with sys.stdout.write is still buffered
        sys.stderr.flush()
        return subprocess.CompletedProcess(
            ["palimpsest", *args], code, out.getvalue().decode(), err.getvalue().decode()
        )


def invoke_command(command: Any, *args: str, prog_name: str) -> subprocess.CompletedProcess[str]:
    """``command`` (a click command built once, e.g. ``typer.main.get_command(sessions_app)``)
    run on ``args`` with the streams swapped; stdout, stderr and the exit status.

    ``CliRunner.invoke(typer_app)`` builds the click tree again on every call (every
    command's signature read anew); a test that makes hundreds of calls builds it once."""
    with CliRunner().isolation() as (out, err, _):
        try:
            command.main(list(args), prog_name=prog_name)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        else:
            code = 0
        sys.stdout.flush()
        sys.stderr.flush()
        return subprocess.CompletedProcess(
            [prog_name, *args], code, out.getvalue().decode(), err.getvalue().decode()
        )
