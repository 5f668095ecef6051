"""The engine's request-time context selection, wired into each model call of a turn.

Before every call the turn asks the engine (:meth:`~palimpsest.compaction.engine.
ContextEngine.select_context`) what this one request should carry; the answer replaces the
request for that call only (:func:`~palimpsest.compaction.selection.select_request` gives
the engine copies and keeps the system prompt first). An engine that raises or returns an
unusable list is ignored: the request goes as built, the host gets a
``context_selection_failed`` warning and the log a line (fail open).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ..compaction.selection import select_request
from ..messages import role_of
from ..safety.redact import redact
from ..tokens import estimate_request_tokens_rough
from .driver import Flow
from .events import WarningEvent

if TYPE_CHECKING:
    from .state import AgentState

__all__ = ["request_estimate", "selected_request"]

log = logging.getLogger("palimpsest.agent")


def selected_request(agent: AgentState, request: list[dict[str, Any]], incoming: str) -> Flow:
    """The request to send for this call: the engine's selection or ``request`` itself.

    ``budget_tokens`` is the engine's threshold less what every request carries besides
    the messages (system prompt and tool schemas), the room a selection should stay in."""
    engine = agent.compressor
    budget = max(0, int(engine.threshold_tokens) - agent.request_overhead())
    chosen, problem = select_request(
        engine, request, conversation=agent.messages, incoming=incoming, budget_tokens=budget
    )
    if problem is not None:
        shown = redact(problem)
        log.warning("context selection by engine %s ignored: %s", engine.name, shown)
        yield WarningEvent(
            "context_selection_failed",
            f"The context engine's selection was ignored ({shown}); the request was sent as built.",
        )
    return chosen


def request_estimate(
    agent: AgentState, request: list[dict[str, Any]], built: list[dict[str, Any]]
) -> int:
    """The rough size of the request sent: the agent's own estimate when it is the request
    as built, else the selection's. Usage calibration compares the provider's count with
    this figure, so it must describe what was sent, not the whole history."""
    if request is built:
        return agent.estimate_request()
    body = [m for m in request if role_of(m) not in ("system", "developer")]
    schemas = agent.tools.schemas()
    measure = getattr(agent.compressor, "estimate_request_tokens", None)
    if callable(measure):
        return int(measure(body, agent.system_prompt, schemas))
    return estimate_request_tokens_rough(body, agent.system_prompt, schemas)
