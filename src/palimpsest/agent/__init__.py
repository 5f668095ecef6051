"""The agent: a tool loop that compacts before it overflows, recovers when it does,
remembers, and carries its state across compactions (spec agent-loop.md)."""

from .events import (
    AgentEvent,
    CompactionEvent,
    CompactionPath,
    TextDelta,
    ToolCallEvent,
    ToolResultEvent,
    TurnEnd,
    UsageEvent,
    WarningEvent,
)

__all__ = [
    "AgentEvent",
    "CompactionEvent",
    "CompactionPath",
    "TextDelta",
    "ToolCallEvent",
    "ToolResultEvent",
    "TurnEnd",
    "UsageEvent",
    "WarningEvent",
]
