"""The typed events an :class:`~palimpsest.agent.loop.Agent` turn yields.

A front end (``palimpsest chat``, a web UI, a test) renders these; the loop itself never
prints. Every event is a small frozen dataclass with a ``kind`` tag, so a consumer can
dispatch on type or on the tag (``json.dumps(dataclasses.asdict(event))`` works for logs).

Nothing here is written into the model's context: warnings and context pressure go to the
host only (spec agent-loop.md AL-24, compaction.md CC-119).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..usage import CanonicalUsage
from .compaction_cost import CompactionCost

__all__ = [
    "AgentEvent",
    "CompactionEvent",
    "CompactionMode",
    "CompactionPath",
    "TextDelta",
    "ToolCallEvent",
    "ToolResultEvent",
    "TurnEnd",
    "UsageEvent",
    "WarningEvent",
]

CompactionPath = Literal["preflight", "after_round", "reactive", "manual", "hygiene", "idle"]
"""Where a compaction came from; the memory flush runs on every one of them (MEM-61)."""

CompactionMode = Literal["rotation", "in_place"]
"""How the store recorded a compaction: a continuation session (``rotation``) or the old
rows archived under the same id (``in_place``, ``compression.in_place``)."""


@dataclass(frozen=True)
class TextDelta:
    """Assistant text as it arrives (the whole reply at once when the model does not stream)."""

    text: str
    kind: Literal["text"] = "text"


@dataclass(frozen=True)
class ToolCallEvent:
    """The model asked for a tool; ``arguments`` is the raw JSON string it sent."""

    call_id: str
    name: str
    arguments: str
    kind: Literal["tool_call"] = "tool_call"


@dataclass(frozen=True)
class ToolResultEvent:
    """A tool's result as it enters the history; ``is_error`` when the call failed."""

    call_id: str
    name: str
    content: str
    is_error: bool = False
    seconds: float = 0.0
    kind: Literal["tool_result"] = "tool_result"


@dataclass(frozen=True)
class CompactionEvent:
    """A compaction finished (or was tried) on one of the paths."""

    path: CompactionPath
    before_messages: int
    after_messages: int
    before_tokens: int
    after_tokens: int
    compacted: bool
    session_id: str | None = None
    """The session the conversation continues in (the continuation when one was started)."""
    parent_session_id: str | None = None
    reason: str | None = None
    """Why nothing was compacted, or the summary failure shown to the user."""
    fallback_used: bool = False
    seconds: float = 0.0
    cost: CompactionCost | None = None
    """What the compaction's request cost (tokens, dollars, running saving so far); the
    comparison with the next call is settled in ``agent.usage.compactions`` when it comes
    back (:mod:`.compaction_cost`)."""
    kind: Literal["compaction"] = "compaction"
    mode: CompactionMode | None = None
    """How the store recorded it; ``None`` when it did not (no store, a store failure, or
    nothing compacted)."""


@dataclass(frozen=True)
class WarningEvent:
    """Something the user should know; never part of the model's context."""

    code: str
    message: str
    kind: Literal["warning"] = "warning"


@dataclass(frozen=True)
class UsageEvent:
    """Usage of one model call.

    ``usage`` is what the provider reported, ``None`` when it sent nothing (unknown, never
    zero). Then ``estimated`` is set and ``estimate`` holds the calibrated estimate the
    context engine was given instead; :attr:`prompt_tokens` reads whichever is there.
    """

    usage: CanonicalUsage | None
    estimated: bool = False
    cost_usd: float | None = None
    estimate: CanonicalUsage | None = None
    kind: Literal["usage"] = "usage"

    @property
    def prompt_tokens(self) -> int | None:
        """The request's size: reported, else estimated, else ``None``."""
        figure = self.usage if self.usage is not None else self.estimate
        return None if figure is None else figure.prompt_tokens


@dataclass(frozen=True)
class TurnEnd:
    """The turn is over: ``completed`` when the model answered without tool calls."""

    completed: bool
    text: str = ""
    partial: bool = False
    error: str | None = None
    interrupted: bool = False
    details: dict[str, Any] = field(default_factory=dict)
    kind: Literal["turn_end"] = "turn_end"


AgentEvent = (
    TextDelta
    | ToolCallEvent
    | ToolResultEvent
    | CompactionEvent
    | WarningEvent
    | UsageEvent
    | TurnEnd
)
"""Everything a turn can yield."""
