"""A tool result too large, or too binary, to travel as a string.

A shell command that prints a gigabyte, or a tool that returns a PNG, cannot hand its output
to the loop as ``str`` without holding all of it in memory or losing it. Such a tool returns
a :class:`LargeOutput`: ``shown`` is what may enter the context (already cut to the tool's
own cap), and the complete output lies in a file (``path``) or in ``data`` (bytes). The
output guard (:mod:`.guard`) stores the complete output, streaming from the file, and puts a
preview block into the context instead; a host without a guard uses ``shown`` and should
call :meth:`LargeOutput.discard`.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

__all__ = ["LargeOutput"]


@dataclass(frozen=True)
class LargeOutput:
    """The cut text for the context, and where the whole output is."""

    shown: str
    """What enters the context when nothing spills the output (the tool's own cut)."""
    path: Path | None = None
    """A file holding the complete output (text or bytes)."""
    data: bytes | None = None
    """Or the complete output in memory (small binary results)."""
    owned: bool = True
    """``path`` is a temporary file the consumer removes (moved into the store, or
    deleted by :meth:`discard`)."""

    def __post_init__(self) -> None:
        if (self.path is None) == (self.data is None):
            raise ValueError("LargeOutput needs exactly one of path= and data=")

    @property
    def size_bytes(self) -> int:
        """Bytes of the complete output."""
        if self.data is not None:
            return len(self.data)
        assert self.path is not None
        return self.path.stat().st_size

    def discard(self) -> None:
        """Remove the temporary file, if this output owns one."""
        if self.owned and self.path is not None:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
