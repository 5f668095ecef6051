"""Run one shell command for the agent: bounded in time and in output, never left running.

The command runs as ``bash -lc`` in its own process group, so a timeout kills it and
everything it started (a test runner's workers, a forgotten server), not just the shell.
stdout and stderr are merged in the order they were written, into a spool file rather than
memory, so a command that prints a gigabyte costs disk, not RAM. An output over the cap
shows its head and its tail (where the summary line of a build or a test run is) around a
``[... N chars omitted ...]`` marker, and the whole output travels on as a
:class:`~palimpsest.outputs.body.LargeOutput` for the output guard to save. The last line is always ``exit code: N``: a failing
command is ordinary content for the model, and the state ledger reads the code from there.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import signal
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import IO

from ..files import pid_alive
from ..outputs.body import LargeOutput
from ..safety.redact import redact
from .waiting import join_for

__all__ = ["SPOOL_PREFIX", "cap_output", "run_command", "sweep_spools"]

_DRAIN_SECONDS = 5.0
"""After a kill, how long to wait for the pipe to close (a process that left the group may
still hold it)."""
_POLL_SECONDS = 0.2
_CHUNK_BYTES = 1 << 16


def run_command(
    command: str,
    cwd: Path,
    *,
    timeout: float,
    output_cap: int,
    spool_dir: Path | None = None,
    cancel: threading.Event | None = None,
) -> str | LargeOutput:
    """Run ``command``; the merged output (redacted, capped) followed by ``exit code: N``.

    The output is written to a spool file as it arrives, never gathered in memory. When it
    fits in ``output_cap`` characters the result is a string; otherwise a
    :class:`~palimpsest.outputs.body.LargeOutput` whose ``shown`` text is the capped head
    and tail and whose file (in ``spool_dir``, default the system temp directory) holds all
    of it, for the output guard to save. Once ``cancel`` is set (the caller gave up on the
    call) the command and its children are killed as at a timeout.
    """
    env = {**os.environ, "PAGER": "cat", "GIT_PAGER": "cat"}  # never wait on a pager
    sweep_spools(Path(spool_dir or tempfile.gettempdir()))
    spool = tempfile.NamedTemporaryFile(  # noqa: SIM115 - handed on to the caller or removed
        mode="w+b",
        dir=spool_dir,
        prefix=f"{SPOOL_PREFIX}{os.getpid()}-",
        suffix=SPOOL_SUFFIX,
        delete=False,
    )
    try:
        process = subprocess.Popen(
            ["bash", "-lc", command],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=env,
        )
        note = _copy_until_done(process, spool, timeout, cancel)
        trailer = ([note] if note else []) + [f"exit code: {process.returncode}"]
        return _result(spool, trailer, output_cap)
    except BaseException:
        spool.close()
        Path(spool.name).unlink(missing_ok=True)
        raise


SPOOL_PREFIX = "palimpsest-shell-"
SPOOL_SUFFIX = ".out"
_SPOOL_NAME = re.compile(rf"{re.escape(SPOOL_PREFIX)}(\d+)-\w+{re.escape(SPOOL_SUFFIX)}")
_SWEPT: set[Path] = set()


def sweep_spools(directory: Path) -> int:
    """Remove spool files in ``directory`` whose process is gone; once per directory and
    process. A killed agent (SIGKILL, out of memory) cannot remove its spool, and a spool
    can be as large as the output it caught. Returns how many were removed."""
    if directory in _SWEPT:
        return 0
    _SWEPT.add(directory)
    removed = 0
    with contextlib.suppress(OSError):
        for path in directory.glob(f"{SPOOL_PREFIX}*{SPOOL_SUFFIX}"):
            found = _SPOOL_NAME.fullmatch(path.name)
            if found is not None and not pid_alive(int(found.group(1))):
                with contextlib.suppress(OSError):
                    path.unlink()
                    removed += 1
    return removed


def _copy_until_done(
    process: subprocess.Popen[bytes],
    spool: IO[bytes],
    timeout: float,
    cancel: threading.Event | None = None,
) -> str:
    """Copy the output to ``spool`` until the pipe closes; kill the group past ``timeout``
    or once ``cancel`` is set.

    Returns the note to add when something had to be killed (``""`` otherwise).
    """
    assert process.stdout is not None
    stop = threading.Event()
    copier = threading.Thread(
        target=_copy, args=(process.stdout, spool, stop), name="palimpsest-shell-copy", daemon=True
    )
    copier.start()
    note = ""
    try:
        join_for(copier, timeout, stop=cancel, slice_seconds=_POLL_SECONDS)
        if copier.is_alive():
            exited = process.poll() is not None
            _kill_group(process.pid)
            if cancel is not None and cancel.is_set():
                note = "[stopped by the user; the command and its child processes were killed]"
            elif exited:
                note = (
                    "[the command finished, but processes it started kept running past "
                    f"{timeout:g} s; they were killed]"
                )
            else:
                note = (
                    f"[command timed out after {timeout:g} s; it and its child processes were "
                    "killed]"
                )
            copier.join(_DRAIN_SECONDS)
            if copier.is_alive():  # something outside the group still holds the pipe
                process.kill()
                stop.set()
                copier.join()
        process.wait()
    except BaseException:
        _kill_group(process.pid)
        stop.set()
        process.wait()
        raise
    finally:
        stop.set()
        copier.join()
        process.stdout.close()
    return note


def _copy(pipe: IO[bytes], spool: IO[bytes], stop: threading.Event) -> None:
    """Pipe to file in chunks; polls so that ``stop`` ends it even if the pipe stays open."""
    fd = pipe.fileno()
    while not stop.is_set():
        ready, _, _ = select.select([fd], [], [], _POLL_SECONDS)
        if not ready:
            continue
        chunk = os.read(fd, _CHUNK_BYTES)
        if not chunk:
            return
        spool.write(chunk)


def _result(spool: IO[bytes], trailer: list[str], output_cap: int) -> str | LargeOutput:
    """The string when it fits, else the cut text with the spool file holding everything."""
    size = spool.tell()
    path = Path(spool.name)
    if size <= output_cap * 4:  # no more characters than the cap allows: read it whole
        spool.seek(0)
        text = redact(spool.read().decode("utf-8", errors="replace")).rstrip("\n")
        if len(text) <= output_cap:
            spool.close()
            path.unlink(missing_ok=True)
            return "\n".join([text or "(no output)", *trailer])
        shown = cap_output(text, output_cap)
    else:
        shown = _cut_from_file(spool, size, output_cap)
    spool.seek(size - 1)
    joint = "" if spool.read(1) == b"\n" else "\n"
    spool.seek(0, os.SEEK_END)
    spool.write((joint + "\n".join(trailer) + "\n").encode())
    spool.close()
    return LargeOutput(shown="\n".join([shown, *trailer]), path=path)


def _cut_from_file(spool: IO[bytes], size: int, cap: int) -> str:
    """Head and tail of a spool too large to read: ``cap`` characters at most, redacted."""
    head_bytes = cap // 2
    tail_bytes = cap - head_bytes
    spool.seek(0)
    head = spool.read(head_bytes).decode("utf-8", errors="ignore")
    spool.seek(size - tail_bytes)
    tail = spool.read(tail_bytes).decode("utf-8", errors="ignore")
    omitted = size - head_bytes - tail_bytes
    return redact(f"{head}\n[... {omitted:,} bytes omitted ...]\n{tail.rstrip(chr(10))}")


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
