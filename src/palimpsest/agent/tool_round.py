"""One round of tool calls: run them, keep their outputs within budget, append, report.

The calls run in parallel (:meth:`~.registry.ToolRegistry.call_many`). Before any result
joins the history the output guard (:class:`~palimpsest.outputs.guard.OutputGuard`) applies
the per-result threshold and then the turn's aggregate budget (spec tool-results.md): a
result too large for the context becomes a preview block pointing at its saved copy, or, when
the call can simply be repeated, a pointer that says how. Running and guarding happen in one
offloaded step, so saving a large output never blocks an event loop. Results are then
appended in call order, announced, and fed to the state ledger (with the tool's own text, not
the preview, so the ledger still reads exit codes and paths).
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from ..messages import call_arguments, call_id, call_name, parse_arguments
from ..outputs.guard import RerunSource
from ..outputs.rerun import NOT_REPEATABLE
from .driver import Flow, Offload
from .events import ToolCallEvent, ToolResultEvent
from .tools import ToolContext, ToolOutcome

if TYPE_CHECKING:
    from .state import AgentState

__all__ = ["tool_round"]


def tool_round(agent: AgentState, calls: list[Any], turn: int) -> Flow:
    """Announce, run and guard (offloaded), append in call order, report, feed the ledger."""
    requests: list[tuple[str, str]] = []
    for call in calls:
        name, arguments = call_name(call), call_arguments(call)
        requests.append((name, arguments))
        yield ToolCallEvent(call_id=call_id(call), name=name, arguments=arguments)
    context = ToolContext(session_id=agent.session_id, turn=turn, workdir=agent.workdir)
    ids = [call_id(call) for call in calls]

    def run_and_guard() -> tuple[list[ToolOutcome], list[dict[str, Any]]]:
        outcomes = agent.tools.call_many(requests, context)
        return outcomes, guard_results(agent, requests, ids, outcomes)

    outcomes, messages = yield Offload(run_and_guard)
    for call, (name, _args), outcome, message in zip(
        calls, requests, outcomes, messages, strict=True
    ):
        agent.append(message)
        yield ToolResultEvent(
            call_id=call_id(call),
            name=name,
            content=message["content"],
            is_error=outcome.is_error,
            seconds=outcome.seconds,
        )
        agent.ledger.record_call(name, parse_arguments(call), outcome, turn)


def guard_results(
    agent: AgentState,
    requests: list[tuple[str, str]],
    ids: list[str],
    outcomes: list[ToolOutcome],
) -> list[dict[str, Any]]:
    """The round's tool messages with layers 2 and 3 of the output budget applied."""
    guard = agent.output_guard
    guard.config = agent.output_budget()
    messages: list[dict[str, Any]] = []
    reruns: dict[str, RerunSource] = {}
    for (name, arguments), cid, outcome in zip(requests, ids, outcomes, strict=True):
        rerun: RerunSource = (
            NOT_REPEATABLE
            if outcome.is_error
            else partial(agent.tools.rerun, name, arguments, outcome.content)
        )
        reruns[cid] = rerun
        item = agent.tools.get(name)
        content = guard.admit(
            outcome.body if outcome.body is not None else outcome.content,
            tool_name=name,
            call_id=cid,
            registry_max=item.max_result_chars if item is not None else None,
            rerun=rerun,
        )
        messages.append({"role": "tool", "tool_call_id": cid, "name": name, "content": content})
    guard.enforce_turn(messages, reruns)
    return messages
