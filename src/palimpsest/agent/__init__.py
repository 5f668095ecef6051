"""The agent: a tool loop that compacts before it overflows, recovers when it does,
remembers, and carries its state across compactions (spec agent-loop.md; docs/agent.md)."""

from .commands import CommandResult
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
from .hygiene import GatewayHygiene, HygieneResult
from .ledger import StateLedger
from .loop import Agent
from .registry import ToolRegistry, tool
from .replay_model import ReplayChatModel
from .speculative import SpeculativeCompactor
from .todo import TodoStore
from .tools import Tool, ToolContext, ToolOutcome
from .workspace import workspace_tools

__all__ = [
    "Agent",
    "AgentEvent",
    "CommandResult",
    "CompactionEvent",
    "CompactionPath",
    "GatewayHygiene",
    "HygieneResult",
    "ReplayChatModel",
    "SpeculativeCompactor",
    "StateLedger",
    "TextDelta",
    "TodoStore",
    "Tool",
    "ToolCallEvent",
    "ToolContext",
    "ToolOutcome",
    "ToolRegistry",
    "ToolResultEvent",
    "TurnEnd",
    "UsageEvent",
    "WarningEvent",
    "tool",
    "workspace_tools",
]
