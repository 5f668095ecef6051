"""Layer 2: a result over its threshold is written where the tools run (TR-05, TR-11..13).

The file must land inside the execution environment (a container, a remote host), because
that is where the model's ``read_file`` will look for it (TR-12). So the write goes through
the environment's own command runner, as one ``mkdir -p <dir> && cat > <path>`` with the
content on standard input: content in the command string once failed with "Argument list
too long" above 128 KB (TR-11). :class:`LocalSandbox` is the environment of tools that run
on this machine. A failed write never fails the tool call; the history then gets the
preview and a note of the loss (TR-13).
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import posixpath
import shlex
import signal
import subprocess
import tempfile
import threading
from typing import BinaryIO, Protocol, runtime_checkable

from palimpsest.outputs.budget import DEFAULT_BUDGET, BudgetConfig, threshold_for
from palimpsest.outputs.preview import (
    generate_preview,
    head_tail_preview,
    persisted_block,
    safe_result_filename,
    truncation_fallback,
)

__all__ = [
    "DEFAULT_TEMP_DIR",
    "RESULTS_DIRNAME",
    "TIMEOUT_EXIT_CODE",
    "WRITE_TIMEOUT",
    "LocalSandbox",
    "SandboxEnvironment",
    "maybe_persist_tool_result",
    "results_dir",
    "write_through_stdin",
]

RESULTS_DIRNAME = "tool-results"
"""Directory under the sandbox temp dir that holds saved results; the library owns it."""
DEFAULT_TEMP_DIR = "/tmp"
"""Temp dir of an environment that does not say (TR-05)."""
WRITE_TIMEOUT = 30.0
"""Seconds a write may take before it counts as failed (TR-11)."""
TIMEOUT_EXIT_CODE = 124
"""What :meth:`LocalSandbox.execute` returns for a killed command (as timeout(1) does)."""

_CHUNK = 1 << 16


@runtime_checkable
class SandboxEnvironment(Protocol):
    """Where tools execute: runs a shell command and names its temp directory."""

    def execute(
        self, command: str, *, stdin: bytes | BinaryIO | None = None, timeout: float = 30.0
    ) -> int:
        """Run ``command`` in a shell, feeding ``stdin``; return its exit code (may raise)."""
        ...

    def get_temp_dir(self) -> str:
        """The environment's temp directory, as a path valid inside the environment."""
        ...


def _real_fileno(stream: BinaryIO) -> int | None:
    try:
        return stream.fileno()
    except (AttributeError, OSError, io.UnsupportedOperation):
        return None


def _pump(source: bytes | BinaryIO, sink: BinaryIO) -> None:
    """Copy ``source`` to the child's stdin in chunks; a child that stops reading ends it."""
    try:
        if isinstance(source, bytes):
            view = memoryview(source)
            for start in range(0, len(view), _CHUNK):
                sink.write(view[start : start + _CHUNK])
        else:
            while chunk := source.read(_CHUNK):
                sink.write(chunk)
    except (BrokenPipeError, ValueError, OSError):
        pass  # the child exited or was killed; its exit code tells the caller
    finally:
        with contextlib.suppress(OSError):
            sink.close()


class LocalSandbox:
    """Runs commands on this machine with ``bash -c``; the tools' environment when local.

    ``temp_dir`` defaults to :func:`tempfile.gettempdir`; ``shell`` is the program run with
    ``-c <command>``.

    ``stdin`` may be bytes or a binary file object. A file object with a real descriptor is
    handed to the child as is (nothing is read into memory, and its position afterwards is
    undefined); other streams and bytes are copied through a pipe in chunks. A command past
    its timeout is killed with its whole process group and reports ``TIMEOUT_EXIT_CODE``.
    """

    def __init__(
        self, temp_dir: str | os.PathLike[str] | None = None, *, shell: str = "bash"
    ) -> None:
        self.temp_dir = os.fspath(temp_dir) if temp_dir is not None else tempfile.gettempdir()
        self.shell = shell

    def __repr__(self) -> str:
        return f"LocalSandbox(temp_dir={self.temp_dir!r}, shell={self.shell!r})"

    def get_temp_dir(self) -> str:
        return self.temp_dir

    def execute(
        self, command: str, *, stdin: bytes | BinaryIO | None = None, timeout: float = 30.0
    ) -> int:
        fd = None
        if stdin is not None and not isinstance(stdin, bytes):
            fd = _real_fileno(stdin)
            if fd is not None and stdin.seekable():
                # A buffered reader may have read ahead: start the child at the logical position.
                os.lseek(fd, stdin.tell(), os.SEEK_SET)
        child_stdin: int | None
        if stdin is None:
            child_stdin = subprocess.DEVNULL
        elif fd is not None:
            child_stdin = fd
        else:
            child_stdin = subprocess.PIPE
        process = subprocess.Popen(
            [self.shell, "-c", command],
            stdin=child_stdin,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # so a timeout can kill the command's children too
        )
        pump = None
        if child_stdin == subprocess.PIPE and process.stdin is not None and stdin is not None:
            pump = threading.Thread(target=_pump, args=(stdin, process.stdin), daemon=True)
            pump.start()
        try:
            code = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            code = TIMEOUT_EXIT_CODE
        if pump is not None:
            # After a kill the pump may be stuck reading a slow source; it is a daemon.
            pump.join(timeout=None if code != TIMEOUT_EXIT_CODE else 1.0)
        return code


def results_dir(env: SandboxEnvironment) -> str:
    """``<env temp dir>/tool-results``: the temp dir without trailing ``/`` (TR-12)."""
    getter = getattr(env, "get_temp_dir", None)
    temp = getter() if callable(getter) else DEFAULT_TEMP_DIR
    temp = str(temp).rstrip("/") or "/"
    return posixpath.join(temp, RESULTS_DIRNAME)


def write_through_stdin(
    env: SandboxEnvironment, path: str, data: bytes | BinaryIO, timeout: float = WRITE_TIMEOUT
) -> bool:
    """Write ``data`` to ``path`` inside ``env`` with one shell command (TR-11).

    The command is ``mkdir -p <dir> && cat > <path>`` with both paths quoted; the bytes
    travel on standard input only. True only when the command exits 0; an exception from
    the environment counts as a failure, never propagates.
    """
    directory = posixpath.dirname(path) or "."
    command = f"mkdir -p {shlex.quote(directory)} && cat > {shlex.quote(path)}"
    try:
        return env.execute(command, stdin=data, timeout=timeout) == 0
    except Exception:  # any environment failure means "not saved" (TR-13)
        return False


def _encode(content: str) -> bytes:
    try:
        # surrogateescape gives back the original bytes of output decoded that way.
        return content.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return content.encode("utf-8", "replace")


def maybe_persist_tool_result(
    content: str,
    tool_name: str,
    tool_use_id: str | None,
    env: SandboxEnvironment | None = None,
    config: BudgetConfig = DEFAULT_BUDGET,
    threshold: float | None = None,
    registry_max: float | None = None,
) -> str:
    """The text to put into the history for one tool result (TR-05, TR-09, TR-13, TR-15).

    Content within ``threshold`` (the TR-04 value of ``tool_name`` unless given; infinite
    for pinned tools), and empty content, comes back unchanged. Larger content is written
    whole, as UTF-8 and verbatim, to ``<results_dir>/<safe id>.txt`` in ``env`` and replaced
    by a persisted block with a preview; when there is no environment or the write fails,
    by the preview and a note that the rest was lost. ``threshold=0`` persists anything
    non-empty.
    """
    if threshold is None:
        threshold = threshold_for(tool_name, config, registry_max)
    elif math.isnan(threshold) or threshold < 0:
        raise ValueError(f"threshold must be >= 0 or math.inf, got {threshold!r}")
    if not content or math.isinf(threshold) or len(content) <= threshold:
        return content
    head_tail = config.preview_mode == "head_tail"
    preview_fn = head_tail_preview if head_tail else generate_preview
    preview, has_more = preview_fn(content, config.preview_size)
    if env is None:
        return truncation_fallback(preview, len(content))
    try:
        path = posixpath.join(results_dir(env), safe_result_filename(tool_use_id))
    except Exception:  # an environment that cannot name its temp dir cannot be written to
        return truncation_fallback(preview, len(content))
    if "\n" in path or "\r" in path:
        # The block's path line could not be parsed back (TR-14); do not save what no one finds.
        return truncation_fallback(preview, len(content))
    if not write_through_stdin(env, path, _encode(content)):
        return truncation_fallback(preview, len(content))
    return persisted_block(
        path=path,
        total_chars=len(content),
        preview=preview,
        has_more=has_more,
        recovery=config.recovery_line,
        preview_mode=config.preview_mode,
    )
