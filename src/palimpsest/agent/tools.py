"""What a tool is to the agent: a plain Python callable with a JSON schema.

These types are the contract between the loop (:mod:`.registry` dispatches calls), the
built-in tools (:mod:`.builtin_tools`, :mod:`.todo`, :mod:`.workspace`) and user code. A
tool function takes keyword arguments matching its ``parameters`` schema; when its
signature has a parameter named ``context`` it also receives the :class:`ToolContext` of
the call. It returns a string, or anything the registry can render (bytes, a mapping or
list as JSON, ``None``), or a :class:`~palimpsest.outputs.body.LargeOutput` when the
whole output is too large or too binary for a string.

Two optional declarations feed the output budgets (docs/tool-output.md): ``max_result_chars``
is the registry's size limit for the tool (spec tool-results.md TR-04), and ``repeatable``
says whether an output can be had again cheaply, so that an output too large for the context
becomes a pointer to re-run it instead of a saved copy.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..outputs.body import LargeOutput
from ..outputs.rerun import Rerun

__all__ = ["DEFAULT_TOOL_TIMEOUT", "RerunPolicy", "Tool", "ToolContext", "ToolOutcome"]

RerunPolicy = Callable[[dict[str, Any], str], Rerun]
"""``(arguments, output) -> Rerun``: whether this call's output can be had again now."""

DEFAULT_TOOL_TIMEOUT = 120.0
"""Seconds a tool may run before its call is reported as timed out."""


@dataclass(frozen=True)
class ToolContext:
    """What a tool may want to know about the call it serves."""

    session_id: str | None = None
    turn: int = 0
    call_id: str | None = None
    workdir: Path | None = None
    extras: dict[str, Any] = field(default_factory=dict)
    cancelled: threading.Event = field(default_factory=threading.Event, compare=False)
    """Set when the caller stops waiting for the call (the user's second Ctrl-C): the
    registry then abandons the call's thread, and a tool that runs something outside the
    process (a shell command, a server) should stop it and return."""


@dataclass(frozen=True)
class ToolOutcome:
    """A tool call's result as it enters the history: always a string, never an exception."""

    content: str
    is_error: bool = False
    seconds: float = 0.0
    body: LargeOutput | None = None
    """The complete output when ``content`` is only a cut of it (or a note about binary
    data): the output guard saves it instead of losing it."""


@dataclass
class Tool:
    """One tool: its name, what it is for, its JSON-schema parameters and the callable."""

    name: str
    description: str
    parameters: dict[str, Any]
    function: Callable[..., Any]
    timeout: float | None = None
    """Seconds before the call is reported as timed out; ``None`` is
    :data:`DEFAULT_TOOL_TIMEOUT`."""
    max_result_chars: float | None = None
    """The registry's size limit for a result (``math.inf``: never spilled by size); the
    spill threshold is the smaller of this and ``tool_budget.default_result_size_chars``."""
    repeatable: bool | RerunPolicy = False
    """``True``: any output can be had again by repeating the call; a callable decides per
    call; ``False``: outputs that leave the context are saved."""

    def schema(self) -> dict[str, Any]:
        """The OpenAI ``tools`` entry for this tool."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }
