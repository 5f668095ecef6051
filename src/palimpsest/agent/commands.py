"""The slash commands a host hands to :meth:`~.loop.Agent.command` instead of sending as chat.

``/compress [focus]`` (AL-26..29): the focus is the trimmed rest of the line; a history with
nothing outside its protected zones gets a "nothing to compress yet" reply without any
model call; otherwise the manual path runs with force semantics and the reply is the
rendered :func:`~palimpsest.compaction.feedback.summarize_manual_compression`.
``/new`` ends the session (``new_session``) after a memory flush when it had enough user
turns, and starts a fresh one. ``/usage``, ``/status`` report; ``/undo`` puts the last
compaction back (:mod:`.undo`). A line that is not a slash command returns ``None``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..compaction.feedback import summarize_manual_compression
from ..pricing import format_cost
from ..tokens import estimate_messages_tokens_rough
from .binding import start_new_session
from .compaction_cost import compaction_lines
from .compaction_step import CompactionOutcome, manual_compaction
from .driver import drain
from .events import AgentEvent
from .flush import FlushResult
from .status import context_status, render_status
from .undo import undo_last_compaction

if TYPE_CHECKING:
    from .state import AgentState

__all__ = ["COMMANDS", "NOTHING_TO_COMPRESS", "CommandResult", "parse_command", "run_command"]

NOTHING_TO_COMPRESS = (
    "Nothing to compress yet: the conversation is still inside its protected head and tail."
)


@dataclass(frozen=True)
class CommandResult:
    """A command's reply for the user, and the events it produced (compaction, warnings)."""

    name: str
    text: str
    events: list[AgentEvent] = field(default_factory=list)


def parse_command(line: str) -> tuple[str, str] | None:
    """``("/compress", "API endpoints")`` for ``"/compress  API endpoints "``; else ``None``."""
    stripped = line.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    name, _, rest = stripped.partition(" ")
    return name.lower(), rest.strip()


def _compress(agent: AgentState, focus: str) -> CommandResult:
    engine = agent.compressor
    try:
        has_content = engine.has_content_to_compress(agent.messages)
    except (ValueError, TypeError) as exc:
        return CommandResult("/compress", f"Cannot compress this history: {exc}")
    if not has_content:
        return CommandResult("/compress", NOTHING_TO_COMPRESS)
    before = list(agent.messages)
    before_tokens = estimate_messages_tokens_rough(before)
    events, outcome = drain(agent.model, manual_compaction(agent, focus or None))
    assert isinstance(outcome, CompactionOutcome)
    if outcome.locked:
        return CommandResult("/compress", outcome.event.reason or "", events)
    after = agent.messages if outcome.compacted else before
    facts = outcome.feedback_facts
    feedback = summarize_manual_compression(
        before,
        after,
        before_tokens,
        estimate_messages_tokens_rough(after),
        fallback_used=bool(facts.get("fallback_used")),
        aborted=bool(facts.get("aborted")),
        dropped_count=facts.get("dropped_count"),
        failure_reason=facts.get("failure_reason"),
        refused_would_grow=bool(facts.get("refused_would_grow")),
    )
    lines = [feedback["headline"], feedback["token_line"]]
    if feedback["note"]:
        lines.append(feedback["note"])
    if not outcome.compacted and outcome.event.reason and not feedback["note"]:
        lines.append(f"Reason: {outcome.event.reason}")
    if outcome.event.parent_session_id:
        lines.append(f"Session continues as {agent.session_id}.")
    elif outcome.event.mode == "in_place":
        lines.append(
            f"Session {agent.session_id} keeps its id; the earlier messages are archived in "
            "it (session_search finds them, /undo restores them)."
        )
    return CommandResult("/compress", "\n".join(lines), events)


def _new(agent: AgentState, _: str) -> CommandResult:
    min_turns = agent.settings.memory.flush_min_turns
    events: list[AgentEvent] = []
    flushed: FlushResult | None = None
    if agent.flush_enabled:
        flow = agent.flush_flow(agent.messages, min_turns=max(1, min_turns))
        events, flushed = drain(agent.model, flow)
    old = agent.session_id
    start_new_session(agent)
    text = f"Started a new session {agent.session_id} (the previous one, {old}, is kept)."
    if flushed is not None and flushed.applied:
        text += f" Saved {len(flushed.applied)} memory update(s) first."
    return CommandResult("/new", text, events)


def _usage(agent: AgentState, _: str) -> CommandResult:
    totals = agent.usage.totals
    cost = agent.cost_usd
    tokens = f"Tokens: {totals.tokens('input_tokens')} in, {totals.tokens('output_tokens')} out"
    if totals.known.reasoning_tokens:
        tokens += f" ({totals.tokens('reasoning_tokens')} reasoning)"
    lines = [
        f"Model calls: {totals.calls}",
        tokens,
        f"Cache: {totals.tokens('cache_read_tokens')} read, "
        f"{totals.tokens('cache_write_tokens')} written",
        "Cost: " + _cost_text(cost, totals.calls, totals.unreported_calls),
    ]
    if totals.unreported_calls:
        lines.append(
            f"Unreported: {totals.unreported_calls} call(s) sent no usage; the totals above "
            "count only the calls that did."
        )
    lines.extend(compaction_lines(agent.usage.compactions))
    return CommandResult("/usage", "\n".join(lines))


def _cost_text(cost: float | None, calls: int, unreported: int) -> str:
    """The cost line's figure: unknown whenever no call reported usage (even on a local
    route that bills nothing, "$0.00" would claim a measurement nobody made)."""
    if cost is None or (calls and unreported >= calls):
        return "unknown" + (" (no call reported usage)" if calls and unreported >= calls else "")
    prefix = "≥ " if unreported else ""
    return prefix + format_cost(cost)


def _status(agent: AgentState, _: str) -> CommandResult:
    return CommandResult("/status", render_status(context_status(agent)))


def _undo(agent: AgentState, _: str) -> CommandResult:
    text, events = undo_last_compaction(agent)
    return CommandResult("/undo", text, events)


COMMANDS: dict[str, Callable[[AgentState, str], CommandResult]] = {
    "/compress": _compress,
    "/new": _new,
    "/usage": _usage,
    "/status": _status,
    "/undo": _undo,
}


def run_command(agent: AgentState, line: str) -> CommandResult | None:
    """Dispatch ``line``; ``None`` when it is not a slash command."""
    parsed = parse_command(line)
    if parsed is None:
        return None
    name, rest = parsed
    handler = COMMANDS.get(name)
    if handler is None:
        known = ", ".join(COMMANDS)
        return CommandResult(name, f"Unknown command {name}. Commands: {known}.")
    return handler(agent, rest)
