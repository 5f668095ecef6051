"""The tools the agent brings along: memory, session recall, persisted outputs, context status.

Each factory wraps an existing part of the package as a :class:`~.tools.Tool`, so the loop
registers them like user tools (same dispatch, same validation, same error reporting):

* ``memory``: the MEMORY.md / USER.md tool of :mod:`palimpsest.memory.tool`, through a
  :class:`~palimpsest.memory.MemoryManager` (writes are mirrored to an external provider)
  or straight on a :class:`~palimpsest.memory.MemoryStore`;
* ``session_search``: :class:`~palimpsest.storage.SessionSearch` over past sessions, with
  the current session's lineage excluded;
* ``read_output``: a window of, or a search in, a tool output that was too large for the
  history and was saved in the :class:`~palimpsest.outputs.store.OutputStore` instead
  (pinned: its own results are never spilled again, spec TR-02);
* ``context_status``: context pressure, pulled by the model when it wants it. Nothing about
  pressure is pushed into the prompt (spec agent-loop.md AL-24, compaction.md CC-119).
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable, Mapping
from typing import Any

from ..memory.manager import MemoryManager
from ..memory.store import MemoryStore
from ..memory.tool import MEMORY_TOOL_NAME, MEMORY_TOOL_SCHEMA, MemoryTool
from ..outputs.read_answer import DEFAULT_READ_LIMIT, read_output_text
from ..outputs.store import OutputStore
from ..storage.search import SESSION_SEARCH_SCHEMA, SessionSearch
from .registry import tool
from .tools import Tool, ToolContext

__all__ = [
    "DEFAULT_READ_LIMIT",
    "context_status_tool",
    "memory_tool",
    "read_output_tool",
    "session_search_tool",
]


def memory_tool(memory: MemoryManager | MemoryStore) -> Tool:
    """The ``memory`` tool on a manager (preferred: it mirrors writes) or a bare store.

    With a bare store the tool keeps its own failure breaker (MEM-29) and resets it when
    the call's ``ToolContext.turn`` changes; with a manager the loop's
    ``on_turn_start`` does that.
    """
    if isinstance(memory, MemoryManager):
        manager = memory

        def handle(arguments: Mapping[str, Any], turn: int) -> str:
            return manager.handle_tool_call(MEMORY_TOOL_NAME, arguments)

    elif isinstance(memory, MemoryStore):
        handler = MemoryTool(memory)
        last_turn: list[int | None] = [None]

        def handle(arguments: Mapping[str, Any], turn: int) -> str:
            if last_turn[0] != turn:
                handler.start_turn()
                last_turn[0] = turn
            return handler(arguments)

    else:
        raise TypeError(f"memory_tool needs a MemoryManager or MemoryStore, got {memory!r}")

    def run(context: ToolContext, **arguments: Any) -> str:
        return handle(arguments, context.turn)

    return tool(
        name=MEMORY_TOOL_NAME,
        description=str(MEMORY_TOOL_SCHEMA["description"]),
        parameters=copy.deepcopy(MEMORY_TOOL_SCHEMA["parameters"]),
    )(run)


def _session_search_parameters() -> dict[str, Any]:
    """The store's schema, with ``limit`` clamped by the tool (SS-59) rather than refused."""
    parameters: dict[str, Any] = copy.deepcopy(SESSION_SEARCH_SCHEMA["parameters"])
    limit = parameters["properties"]["limit"]
    limit.pop("minimum", None)
    limit.pop("maximum", None)
    return parameters


def session_search_tool(search: SessionSearch, current_session: Callable[[], str | None]) -> Tool:
    """``session_search`` over past sessions; ``current_session`` names the live one, whose
    lineage is left out (it is already in context). It is asked at every call, because the
    id changes when a compaction rotates the session."""

    def session_search(query: str = "", role_filter: str = "", limit: int = 3) -> str:
        return search.run(
            query, role_filter=role_filter, limit=limit, current_session_id=current_session()
        )

    return tool(
        name=str(SESSION_SEARCH_SCHEMA["name"]),
        description=str(SESSION_SEARCH_SCHEMA["description"]),
        parameters=_session_search_parameters(),
    )(session_search)


def read_output_tool(outputs: OutputStore) -> Tool:
    """``read_output``: a window of, or a search in, a tool output saved to ``outputs``."""

    def read_output(
        name: str, offset: int = 0, limit: int = DEFAULT_READ_LIMIT, pattern: str = ""
    ) -> str:
        """Read or search a tool output that was too large for the context and was saved.

        name: the saved output's path or name, as given in its <persisted-output> block
        offset: byte position to start reading at (0 is the start)
        limit: how many bytes to return
        pattern: when given, list the lines that contain this text (with their offsets) instead
        """
        return read_output_text(outputs, name, offset, limit, pattern)

    return tool(max_result_chars=math.inf)(read_output)


def context_status_tool(status: Callable[[], Mapping[str, Any]]) -> Tool:
    """``context_status``: the host's view of context pressure, as JSON, when asked."""

    def context_status() -> str:
        """Report how full the context window is (tokens used, limit, compaction threshold,
        compactions so far). Call it before starting large work; nothing needs doing when
        the context is far from its threshold."""
        return json.dumps(dict(status()), ensure_ascii=False, default=str)

    return tool(context_status)
