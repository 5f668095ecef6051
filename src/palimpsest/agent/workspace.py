"""File and shell tools confined to one workspace directory.

The agent edits a project through four tools: ``read_file`` (numbered lines, a window at a
time), ``write_file`` (atomic, via :func:`palimpsest.files.replace_file`), ``edit_file``
(exactly one match of the old text, or an error saying how many) and ``run_shell`` (see
:mod:`.shell_run`). Every path is resolved, symlinks included, and must stay inside the
root: ``..``, absolute paths elsewhere and symlinks pointing out are refused with a
``PermissionError`` that says why. The shell itself is not a sandbox: it runs in the root,
but a command can reach anything the user can.

File contents are shown as they are (an edit needs the exact text); shell output, which
is where environment dumps and logs land, is redacted.
"""

from __future__ import annotations

import hashlib
import mimetypes
import os
from pathlib import Path
from typing import Any

from ..files import replace_file
from ..outputs.body import LargeOutput
from ..outputs.rerun import Rerun, classify_command, repeatable_call
from .registry import tool
from .shell_run import run_command
from .tools import Tool, ToolContext

__all__ = ["MAX_LINE_CHARS", "confine", "workspace_tools"]

READ_RESULT_CHARS = 100_000
"""Registry size limit of ``read_file`` (TR-02: declared, never infinite; the read's own
``output_cap`` is the cap that applies first)."""
SHELL_RESULT_CHARS = 100_000
"""Registry size limit of ``run_shell`` (TR-04: terminals declare 100,000)."""
MAX_LINE_CHARS = 2_000
"""A longer line is cut in ``read_file`` output (minified files would flood the context)."""

_SNIFF_BYTES = 8_192
_TEMP_PREFIX = ".palimpsest-write-"
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "PNG image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"GIF8", "GIF image"),
    (b"%PDF", "PDF document"),
    (b"PK\x03\x04", "ZIP archive"),
    (b"\x7fELF", "ELF executable"),
    (b"\x1f\x8b", "gzip archive"),
    (b"SQLite format 3\x00", "SQLite database"),
)


def confine(root: Path, path: str) -> Path:
    """``path`` (relative to ``root`` or absolute) resolved, symlinks too, inside ``root``.

    ``root`` must already be resolved. Raises ``PermissionError`` for a path that leaves it.
    """
    if not path or not path.strip():
        raise ValueError("path is empty: give a file path relative to the workspace root")
    if "\x00" in path:
        raise ValueError("path contains a NUL character")
    candidate = Path(path)
    joined = candidate if candidate.is_absolute() else root / candidate
    resolved = joined.resolve()
    if resolved == root or resolved.is_relative_to(root):
        return resolved
    lexical = Path(os.path.normpath(joined))
    if lexical == root or lexical.is_relative_to(root):
        raise PermissionError(
            f"path {path!r} goes through a symlink that points outside the workspace "
            f"(to {resolved}); only files under {root} can be used"
        )
    raise PermissionError(
        f"path {path!r} is outside the workspace {root}; use a path inside it "
        "(relative paths are relative to the workspace root)"
    )


def workspace_tools(
    root: Path, *, shell_timeout: float = 60.0, output_cap: int = 30_000
) -> list[Tool]:
    """``read_file``, ``write_file``, ``edit_file`` and ``run_shell``, all rooted at ``root``."""
    if not root.is_dir():
        raise ValueError(f"workspace root {root} is not a directory")
    if not shell_timeout > 0:
        raise ValueError("shell_timeout must be a positive number of seconds")
    if output_cap < 200:
        raise ValueError("output_cap must be at least 200 characters")
    base = root.resolve()
    max_timeout = max(shell_timeout, 600.0)

    def read_file(path: str, offset: int = 1, limit: int = 2000) -> str:
        """Read a text file as numbered lines, a window at a time.

        path: file path relative to the workspace root
        offset: first line to show (1-based)
        limit: how many lines to show at most
        """
        if offset < 1 or limit < 1:
            raise ValueError("offset and limit must be at least 1")
        target = _existing_file(base, path)
        kind = _binary_kind(target)
        if kind is not None:
            size = target.stat().st_size
            return f"{path} is a binary file ({kind}, {size:,} bytes); it is not shown as text."
        return _numbered(target, path, offset, limit, output_cap)

    def write_file(path: str, content: str) -> str:
        """Create or overwrite a file with the given content (parent folders are created).

        path: file path relative to the workspace root
        content: the complete new content of the file
        """
        target = confine(base, path)
        if target.is_dir():
            raise IsADirectoryError(f"{path} is a directory; give a file path")
        existed = target.exists()
        target.parent.mkdir(parents=True, exist_ok=True)
        _replace(target, content)
        lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
        verb = "Overwrote" if existed else "Created"
        return f"{verb} {path} ({len(content):,} chars, {lines:,} lines)."

    def edit_file(path: str, old_text: str, new_text: str) -> str:
        """Replace one exact occurrence of old_text with new_text in a file.

        path: file path relative to the workspace root
        old_text: the exact text to replace; it must occur exactly once
        new_text: the replacement text
        """
        if not old_text:
            raise ValueError("old_text is empty: copy the exact text to replace from the file")
        target = _existing_file(base, path)
        if _binary_kind(target) is not None:
            raise ValueError(f"{path} is a binary file; edit_file only edits text")
        text = _read_text(target, path)
        matches = text.count(old_text)
        if matches == 0:
            raise ValueError(
                f"old_text was not found in {path} (0 matches); read the file and copy the "
                "exact text, including whitespace and indentation"
            )
        if matches > 1:
            raise ValueError(
                f"old_text occurs {matches} times in {path}; include more surrounding lines "
                "so that it matches exactly once"
            )
        start = text.index(old_text)
        _replace(target, text[:start] + new_text + text[start + len(old_text) :])
        first = text.count("\n", 0, start) + 1
        last = first + new_text.count("\n")
        return f"Edited {path}: replaced 1 occurrence (now lines {first}-{last})."

    def run_shell(
        command: str, timeout: float | None = None, context: ToolContext | None = None
    ) -> str | LargeOutput:
        """Run a bash command in the workspace root; output is stdout and stderr merged.

        command: the shell command line (run with bash -lc)
        timeout: seconds before the command is killed (default: the workspace's limit)
        """
        if not command.strip():
            raise ValueError("command is empty")
        seconds = shell_timeout if timeout is None else float(timeout)
        if not 0 < seconds <= max_timeout:
            raise ValueError(f"timeout must be between 0 and {max_timeout:g} seconds")
        cancel = context.cancelled if context is not None else None
        return run_command(command, base, timeout=seconds, output_cap=output_cap, cancel=cancel)

    def read_again(arguments: dict[str, Any], output: str) -> Rerun:
        """A read is repeatable while reading again gives the same text (file unchanged)."""
        try:
            again = read_file(**arguments)
        except (OSError, ValueError, TypeError) as exc:
            return Rerun(False, f"the file cannot be read again ({type(exc).__name__})")
        if again != output:
            return Rerun(False, "the file changed since it was read")
        digest = hashlib.sha256(_existing_file(base, arguments["path"]).read_bytes()).hexdigest()
        return repeatable_call("read_file", arguments, f"file unchanged (sha256 {digest[:12]})")

    def shell_verdict(arguments: dict[str, Any], output: str) -> Rerun:
        return classify_command(str(arguments.get("command", "")))

    return [
        tool(max_result_chars=READ_RESULT_CHARS, repeatable=read_again)(read_file),
        tool(write_file),
        tool(edit_file),
        # the shell kills first, then reports
        tool(
            timeout=max_timeout + 15.0,
            max_result_chars=SHELL_RESULT_CHARS,
            repeatable=shell_verdict,
        )(run_shell),
    ]


def _existing_file(root: Path, path: str) -> Path:
    target = confine(root, path)
    if target.is_dir():
        raise IsADirectoryError(f"{path} is a directory, not a file; list it with run_shell")
    if not target.exists():
        raise FileNotFoundError(f"no such file: {path} (paths are relative to the workspace root)")
    return target


def _binary_kind(target: Path) -> str | None:
    """A short type name when the file is not UTF-8 text, else ``None``."""
    with target.open("rb") as handle:
        head = handle.read(_SNIFF_BYTES)
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    if b"\x00" in head:
        return mimetypes.guess_type(target.name)[0] or "binary data"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not just a character cut at the sniff boundary
            return mimetypes.guess_type(target.name)[0] or "non-UTF-8 data"
    return None


def _read_text(target: Path, path: str) -> str:
    try:
        with target.open(encoding="utf-8", newline="") as handle:
            return handle.read()
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not valid UTF-8 text (byte {exc.start})") from exc


def _numbered(target: Path, path: str, offset: int, limit: int, cap: int) -> str:
    """Lines ``offset``.. of the file, numbered, within ``limit`` lines and ``cap`` chars."""
    out: list[str] = []
    used = 0
    total = 0
    last_shown = offset - 1
    full = False
    try:
        with target.open(encoding="utf-8", errors="replace", newline=None) as handle:
            for number, line in enumerate(handle, 1):
                total = number
                if number < offset or full:
                    continue
                text = line.rstrip("\n")
                if len(text) > MAX_LINE_CHARS:
                    cut = len(text) - MAX_LINE_CHARS
                    text = f"{text[:MAX_LINE_CHARS]}… [line cut, {cut:,} more chars]"
                entry = f"{number:>6}\t{text}"
                if out and (used + len(entry) + 1 > cap or number >= offset + limit):
                    full = True
                    continue
                out.append(entry)
                used += len(entry) + 1
                last_shown = number
    except OSError as exc:
        raise OSError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if total == 0:
        return f"{path} is empty."
    if offset > total:
        raise ValueError(f"offset {offset} is past the end of {path} ({total:,} lines)")
    if last_shown < total:
        out.append(
            f"[lines {offset}-{last_shown} of {total:,}; read on with offset={last_shown + 1}]"
        )
    return "\n".join(out)


def _replace(target: Path, text: str) -> None:
    """Atomic replacement; :func:`palimpsest.files.replace_file` keeps an existing file's
    permission bits and gives a new one the umask default, and refuses a device or FIFO."""
    replace_file(target, text, temp_prefix=_TEMP_PREFIX)
