"""The records a replay prints: one per model round, turn, compaction, log line and session
of the chain, each as a text line and as a JSON record (``--json``).

:func:`play_turn` runs one recorded turn through the agent and turns its events into
records; :func:`turn_record` and :func:`chain_records` summarise a turn and the sessions the
replay made. Kept apart from :mod:`.replay`, which sets up the agent, the store and the
command's options.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rich.console import Console

from ..agent.compaction_cost import describe_cost
from ..agent.events import CompactionEvent, ToolCallEvent, TurnEnd, UsageEvent, WarningEvent
from ..agent.replay_model import ReplayChatModel, ReplayTurn
from ..safety.redact import redact
from ..storage.archive import archived_messages
from ..storage.contract import Store
from .render import status_figure
from .terminal_text import for_terminal, json_for_terminal

if TYPE_CHECKING:
    from ..agent.loop import Agent

__all__ = [
    "MODE_TEXT",
    "Timeline",
    "TurnTally",
    "chain_records",
    "compaction_record",
    "count_text",
    "play_turn",
    "routed_logs",
    "turn_record",
]


@dataclass
class Timeline:
    """The records of one replay, printed as they come (text lines or JSON lines)."""

    console: Console
    as_json: bool = False
    records: list[dict[str, Any]] = field(default_factory=list)

    def add(self, record: dict[str, Any], text: str | None) -> None:
        self.records.append(record)
        if self.as_json:
            line = json_for_terminal(json.dumps(record, ensure_ascii=False))
            self.console.print(line, markup=False)
        elif text is not None:
            self.console.print(for_terminal(text), markup=False, highlight=False)


class _TimelineLog(logging.Handler):
    """Log records of the library during a replay, as timeline records: JSON lines with
    ``--json``, text lines only with ``--verbose``; never raw lines on stderr (they said
    things like "need > 7" beside a timeline that had its own figures)."""

    def __init__(self, timeline: Timeline, verbose: bool) -> None:
        super().__init__(logging.INFO)
        self.timeline = timeline
        self.verbose = verbose

    def emit(self, record: logging.LogRecord) -> None:
        message = redact(record.getMessage())
        entry = {"event": "log", "level": record.levelname.lower(), "message": message}
        self.timeline.add(entry, f"  log: {message}" if self.verbose else None)


@contextmanager
def routed_logs(timeline: Timeline, verbose: bool) -> Iterator[None]:
    logger = logging.getLogger("palimpsest")
    handler = _TimelineLog(timeline, verbose)
    previous = (logger.propagate, logger.level)
    logger.addHandler(handler)
    logger.propagate = False  # no second copy through the root logger or Python's last resort
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate, _ = previous
        logger.setLevel(previous[1])


def count_text(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _percent(tokens: int | None, window: int) -> float | None:
    return round(100.0 * tokens / window, 1) if tokens is not None and window else None


def _tokens_text(tokens: int | None, estimated: bool, window: int) -> str:
    if tokens is None:
        return "? tokens"
    mark = "~" if estimated else ""
    return f"{mark}{tokens:,} tokens ({mark}{_percent(tokens, window)}% of {window:,})"


MODE_TEXT = {"rotation": "rotation", "in_place": "in place"}


def compaction_record(turn: int, event: CompactionEvent) -> tuple[dict[str, Any], str]:
    record: dict[str, Any] = {
        "event": "compaction",
        "turn": turn,
        "path": event.path,
        "compacted": event.compacted,
        "messages_before": event.before_messages,
        "messages_after": event.after_messages,
        "tokens_before": event.before_tokens,
        "tokens_after": event.after_tokens,
        "seconds": round(event.seconds, 4),
        "session_id": event.session_id,
        "parent_session_id": event.parent_session_id,
        "fallback_used": event.fallback_used,
        "reason": redact(event.reason) if event.reason else None,
        "mode": event.mode,
    }
    if event.cost is not None:
        record["cost"] = event.cost.to_dict()
    if not event.compacted:
        return record, f"  ⟳ compaction ({event.path}) did not compact: {record['reason'] or '?'}"
    removed = event.before_messages - event.after_messages
    record["messages_removed"] = max(removed, 0)
    mode = MODE_TEXT.get(event.mode or "", "not stored")
    text = (
        f"  ⟳ compaction ({event.path}, {mode}): "
        f"{event.before_messages:,} → {event.after_messages:,} "
        f"messages ({f'{removed:,} removed' if removed > 0 else 'none removed'}), "
        f"{event.before_tokens:,} → {event.after_tokens:,} tokens, "
        f"{event.seconds * 1000:.0f} ms"
    )
    if event.session_id and event.mode == "in_place":
        text += f"\n    stays in {event.session_id} (earlier messages archived in it)"
    elif event.session_id:
        text += f"\n    continues in {event.session_id} (parent {event.parent_session_id or '-'})"
    if event.fallback_used:
        text += " · fallback summary"
    if event.cost is not None:
        text += f"\n    cost: {describe_cost(event.cost)}"
    return record, text


@dataclass
class TurnTally:
    rounds: int = 0
    tool_calls: int = 0
    end: TurnEnd | None = None


def play_turn(
    agent: Agent,
    number: int,
    turn: ReplayTurn,
    window: int,
    timeline: Timeline,
    totals: Counter[str],
    show_rounds: bool,
    model: ReplayChatModel | None = None,
) -> TurnTally:
    tally = TurnTally()
    for event in agent.run(turn.user):
        if isinstance(event, UsageEvent):
            tally.rounds += 1
            tokens = event.prompt_tokens
            record = {
                "event": "round",
                "turn": number,
                "round": tally.rounds,
                "messages": len(agent.messages),
                "prompt_tokens": tokens,
                "estimated": event.estimated,
                "percent": _percent(tokens, window),
            }
            text = (
                f"  round {tally.rounds}: {count_text(len(agent.messages), 'message')}, "
                f"{_tokens_text(tokens, event.estimated, window)}"
            )
            timeline.add(record, text if show_rounds else None)
        elif isinstance(event, ToolCallEvent):
            tally.tool_calls += 1
        elif isinstance(event, CompactionEvent):
            totals[f"compactions_{event.path}"] += int(event.compacted)
            timeline.add(*compaction_record(number, event))
        elif (
            isinstance(event, WarningEvent)
            and event.code == "empty_answer"
            and model is not None
            and model.remaining == 0
        ):
            # The recording has no more replies for this turn: the end of the script, not
            # a model failure. Recorded in --json, not shown as a warning.
            timeline.add({"event": "recording_ended", "turn": number}, None)
        elif isinstance(event, WarningEvent):
            record = {"event": "warning", "turn": number, "code": event.code}
            record["message"] = redact(event.message)
            timeline.add(record, f"  warning: {record['message']}")
        elif isinstance(event, TurnEnd):
            tally.end = event
    return tally


def turn_record(
    agent: Agent, number: int, count: int, turn: ReplayTurn, tally: TurnTally, window: int
) -> tuple[dict[str, Any], str]:
    status = agent.context_status()
    used = status_figure(status, "used")
    tokens = int(used) if used is not None else None
    estimated = bool(status.get("estimated"))
    end = tally.end
    record = {
        "event": "turn",
        "turn": number,
        "kind": turn.kind,
        "transcript_index": turn.index,
        "replies": len(turn.replies),
        "rounds": tally.rounds,
        "tool_calls": tally.tool_calls,
        "messages": len(agent.messages),
        "tokens": tokens,
        "estimated": estimated,
        "percent": _percent(tokens, window),
        "session_id": agent.session_id,
        "completed": bool(end and end.completed),
        "error": redact(end.error) if end and end.error else None,
    }
    text = (
        f"turn {number}/{count} ({turn.kind}): {count_text(tally.rounds, 'round')}, "
        f"{count_text(tally.tool_calls, 'tool call')} · {count_text(len(agent.messages), 'message')} · "
        f"{_tokens_text(tokens, estimated, window)}"
    )
    if record["error"]:
        text += f" · stopped: {record['error']}"
    return record, text


def chain_records(store: Store, session_id: str | None, timeline: Timeline) -> list[str]:
    if session_id is None:
        return []
    chain = store.compression_chain(session_id)
    if not timeline.as_json:
        timeline.console.print("sessions (oldest first):", markup=False)
    for position, sid in enumerate(chain):
        row = store.get_session(sid) or {}
        record = {
            "event": "session",
            "position": position + 1,
            "session_id": sid,
            "parent_session_id": row.get("parent_session_id"),
            "title": row.get("title"),
            "messages": len(store.get_messages(sid)),
            "archived_messages": len(archived_messages(store, sid)),
            "end_reason": row.get("end_reason"),
        }
        parent = f" ← {record['parent_session_id']}" if record["parent_session_id"] else ""
        ended = f" · ended: {record['end_reason']}" if record["end_reason"] else ""
        if record["archived_messages"]:
            ended = f" (+{record['archived_messages']:,} archived){ended}"
        timeline.add(
            record,
            f"  {sid}{parent} · {record['title'] or '(untitled)'} · "
            f"{record['messages']:,} messages{ended}",
        )
    return chain
