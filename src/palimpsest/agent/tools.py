"""What a tool is to the agent: a plain Python callable with a JSON schema.

These types are the contract between the loop (:mod:`.registry` dispatches calls), the
built-in tools (:mod:`.builtin_tools`, :mod:`.todo`, :mod:`.workspace`) and user code. A
tool function takes keyword arguments matching its ``parameters`` schema; when its
signature has a parameter named ``context`` it also receives the :class:`ToolContext` of
the call. It returns a string, or anything the registry can render (bytes, a mapping or
list as JSON, ``None``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_TOOL_TIMEOUT", "Tool", "ToolContext", "ToolOutcome"]

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


@dataclass(frozen=True)
class ToolOutcome:
    """A tool call's result as it enters the history: always a string, never an exception."""

    content: str
    is_error: bool = False
    seconds: float = 0.0


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
