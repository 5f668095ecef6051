"""Run one shell command for the agent: bounded in time and in output, never left running.

The command runs as ``bash -lc`` in its own process group, so a timeout kills it and
everything it started (a test runner's workers, a forgotten server), not just the shell.
stdout and stderr are merged in the order they were written. An output over the cap keeps
its head and its tail (where the summary line of a build or a test run is) around a
``[... N chars omitted ...]`` marker. The last line is always ``exit code: N``: a failing
command is ordinary content for the model, and the state ledger reads the code from there.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path

from ..compaction.redact import redact

__all__ = ["cap_output", "run_command"]

_DRAIN_SECONDS = 5.0
"""After a kill, how long to wait for the pipe to close (a process that left the group may
still hold it)."""


def run_command(command: str, cwd: Path, *, timeout: float, output_cap: int) -> str:
    """Run ``command``; the merged output (redacted, capped) followed by ``exit code: N``."""
    env = {**os.environ, "PAGER": "cat", "GIT_PAGER": "cat"}  # never wait on a pager
    process = subprocess.Popen(
        ["bash", "-lc", command],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env=env,
    )
    note = None
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        exited = process.poll() is not None
        _kill_group(process.pid)
        note = (
            f"[the command finished, but processes it started kept running past {timeout:g} s; "
            "they were killed]"
            if exited
            else f"[command timed out after {timeout:g} s; it and its child processes were killed]"
        )
        try:
            output, _ = process.communicate(timeout=_DRAIN_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate()
    except BaseException:
        _kill_group(process.pid)
        process.wait()
        raise
    text = redact(output.decode("utf-8", errors="replace")).rstrip("\n")
    parts = [cap_output(text, output_cap) if text else "(no output)"]
    if note:
        parts.append(note)
    parts.append(f"exit code: {process.returncode}")
    return "\n".join(parts)


def cap_output(text: str, cap: int) -> str:
    """``text`` when it fits in ``cap`` characters, else its head and tail around a marker."""
    if len(text) <= cap:
        return text
    head = cap // 2
    tail = cap - head
    omitted = len(text) - head - tail
    return f"{text[:head]}\n[... {omitted:,} chars omitted ...]\n{text[-tail:]}"


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # already gone
        os.killpg(pid, signal.SIGKILL)
