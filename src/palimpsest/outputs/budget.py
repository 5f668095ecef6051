"""How many characters a tool result may bring into the context (spec tool-results.md §2, §3).

One immutable value, :class:`BudgetConfig`, holds every limit of layers 2 and 3; the pure
function :func:`threshold_for` turns it into the persistence threshold of one tool (TR-04),
and :func:`budget_for_context_window` shrinks it for small model windows (TR-19). Nothing
here does I/O: the tool registry's declared maximum comes in as an argument, so there is no
global registry to keep in sync.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from palimpsest.config import ToolBudgetSettings

__all__ = [
    "CHARS_PER_TOKEN",
    "DEFAULT_BUDGET",
    "DEFAULT_MCP_RESULT_SIZE",
    "DEFAULT_PREVIEW_SIZE",
    "DEFAULT_RESULT_SIZE",
    "DEFAULT_TURN_BUDGET",
    "MCP_PREFIX",
    "PINNED_TOOLS",
    "BudgetConfig",
    "PreviewMode",
    "budget_for_context_window",
    "threshold_for",
]

PreviewMode = Literal["head", "head_tail"]

DEFAULT_RESULT_SIZE = 100_000
"""Characters of one result before it is spilled to a file (TR-03)."""
DEFAULT_TURN_BUDGET = 200_000
"""Characters of all results of one assistant turn together (TR-03, TR-17)."""
DEFAULT_PREVIEW_SIZE = 1_500
"""Characters of a spilled result kept in the context (TR-03, TR-07)."""
DEFAULT_MCP_RESULT_SIZE = 50_000
"""Threshold of ``mcp_*`` tools, which tend to return whole API payloads (TR-03)."""
MCP_PREFIX = "mcp_"

PINNED_TOOLS = frozenset({"read_file", "read_output"})
"""Tools whose results are never persisted by layer 2 (TR-02): persisting the reader of
saved files would make the model read the file again, which would be persisted again, and
so on. ``read_output`` is the agent's reader of saved outputs and has the same loop."""

CHARS_PER_TOKEN = 4
"""TR-19's conversion from a window in tokens to characters."""
_RESULT_WINDOW_SHARE = 0.15
_TURN_WINDOW_SHARE = 0.30
# Below these a scaled budget would spill nearly every result, even of a tiny window.
_RESULT_FLOOR = 8_000
_TURN_FLOOR = 16_000

_SIZE_FIELDS = ("default_result_size", "turn_budget", "preview_size", "mcp_result_size")
_PREVIEW_MODES: frozenset[str] = frozenset({"head", "head_tail"})


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _frozen_overrides(value: Mapping[str, int] | Iterable[tuple[str, int]]) -> Mapping[str, int]:
    """A read-only copy of the overrides, checked (names are strings, limits ints >= 0)."""
    try:
        items = dict(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"tool_overrides must be a mapping of tool name to int: {exc}") from None
    for name, limit in items.items():
        if not isinstance(name, str):
            raise ValueError(f"tool_overrides keys must be tool names (str), got {name!r}")
        if not _is_int(limit) or limit < 0:
            raise ValueError(f"tool_overrides[{name!r}] must be an int >= 0, got {limit!r}")
    return MappingProxyType(dict(sorted(items.items())))


@dataclass(frozen=True)
class BudgetConfig:
    """Every limit of layers 2 and 3, immutable and hashable (TR-03).

    ``tool_overrides`` accepts any mapping (or pairs) and is kept as a read-only copy, so a
    config shared between threads or agents cannot be changed behind their back. Invalid
    values raise ``ValueError`` naming the field.
    """

    default_result_size: int = DEFAULT_RESULT_SIZE
    turn_budget: int = DEFAULT_TURN_BUDGET
    preview_size: int = DEFAULT_PREVIEW_SIZE
    mcp_result_size: int = DEFAULT_MCP_RESULT_SIZE
    tool_overrides: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    preview_mode: PreviewMode = "head"
    pinned_tools: frozenset[str] = PINNED_TOOLS
    recovery_line: bool = False
    """Add TR-15's "Recovery" line to persisted blocks (profile ``refined``)."""

    def __post_init__(self) -> None:
        for name in _SIZE_FIELDS:
            value = getattr(self, name)
            if not _is_int(value) or value <= 0:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        object.__setattr__(self, "tool_overrides", _frozen_overrides(self.tool_overrides))
        if self.preview_mode not in _PREVIEW_MODES:
            raise ValueError(
                f"preview_mode must be 'head' or 'head_tail', got {self.preview_mode!r}"
            )
        pinned: Any = self.pinned_tools
        if isinstance(pinned, str) or not all(isinstance(n, str) for n in pinned):
            raise ValueError(f"pinned_tools must be a set of tool names, got {pinned!r}")
        object.__setattr__(self, "pinned_tools", frozenset(pinned))
        if not isinstance(self.recovery_line, bool):
            raise ValueError(f"recovery_line must be a bool, got {self.recovery_line!r}")

    def __hash__(self) -> int:
        # The dataclass hash would fail on the mapping proxy; equal configs hash equally.
        return hash(
            (
                self.default_result_size,
                self.turn_budget,
                self.preview_size,
                self.mcp_result_size,
                tuple(sorted(self.tool_overrides.items())),
                self.preview_mode,
                self.pinned_tools,
                self.recovery_line,
            )
        )

    @classmethod
    def from_settings(
        cls, settings: ToolBudgetSettings, context_length: int | None = None
    ) -> BudgetConfig:
        """The config of the ``tool_budget`` section, scaled to the window when it says so.

        With ``scale_to_context`` (TR-19) the configured sizes are ceilings: a small
        ``context_length`` lowers them, an unknown one leaves them as configured.
        """
        base = cls(
            default_result_size=settings.default_result_size_chars,
            turn_budget=settings.turn_budget_chars,
            preview_size=settings.preview_size_chars,
            mcp_result_size=settings.mcp_result_size_chars,
            tool_overrides=settings.tool_overrides,
            preview_mode=settings.preview_mode,
        )
        if settings.scale_to_context:
            return budget_for_context_window(context_length, base)
        return base


DEFAULT_BUDGET = BudgetConfig()
"""The seed budget: 100,000 / 200,000 / 1,500 / 50,000 characters, head previews."""


def threshold_for(
    tool_name: str, config: BudgetConfig = DEFAULT_BUDGET, registry_max: float | None = None
) -> float:
    """The size above which ``tool_name``'s result is persisted (TR-04; first rule wins).

    Pinned tools never are (``math.inf``); then the per-tool override; then ``mcp_*`` tools
    at ``min(mcp_result_size, default_result_size)``; then the registry's declared maximum
    (infinite stays infinite, otherwise capped at the default); then the default.
    """
    if tool_name in config.pinned_tools:
        return math.inf
    if tool_name in config.tool_overrides:
        return float(config.tool_overrides[tool_name])
    if tool_name.startswith(MCP_PREFIX):
        return float(min(config.mcp_result_size, config.default_result_size))
    if registry_max is not None:
        if math.isnan(registry_max) or registry_max < 0:
            raise ValueError(f"registry_max must be >= 0 or math.inf, got {registry_max!r}")
        if math.isinf(registry_max):
            return math.inf
        return float(min(registry_max, config.default_result_size))
    return float(config.default_result_size)


def _scaled(window_chars: int, share: float, floor: int, ceiling: int) -> int:
    # The ceiling is the base value, so scaling only ever lowers a configured size; a base
    # below the floor stays as configured rather than being raised to the floor.
    return min(ceiling, max(floor, int(window_chars * share)))


def budget_for_context_window(
    context_length: int | None, base: BudgetConfig = DEFAULT_BUDGET
) -> BudgetConfig:
    """``base`` with the result size and turn budget scaled to a window of tokens (TR-19).

    ``window_chars = context_length * 4``; the result size is 15 % of it and the turn budget
    30 %, never below 8,000 / 16,000 characters and never above ``base``'s values (with the
    seed base these are TR-19's caps of 100,000 / 200,000). The preview size, MCP size and
    overrides are kept. An unknown or non-positive window returns ``base`` unchanged.

    >>> budget_for_context_window(65_536).default_result_size
    39321
    """
    if context_length is None or context_length <= 0:
        return base
    window_chars = context_length * CHARS_PER_TOKEN
    return replace(
        base,
        default_result_size=_scaled(
            window_chars, _RESULT_WINDOW_SHARE, _RESULT_FLOOR, base.default_result_size
        ),
        turn_budget=_scaled(window_chars, _TURN_WINDOW_SHARE, _TURN_FLOOR, base.turn_budget),
    )
