"""``palimpsest replay TRANSCRIPT [--context-length N]``: a recorded conversation through the
real agent, to see when compaction fires, what it removes and costs, and how sessions chain.

The transcript's assistant turns are replayed by :class:`~palimpsest.agent.replay_model.
ReplayChatModel`; its tool results come back through replay tools keyed by call id (native
tool calls) or as the next user message (text actions), as the framework sent them. The
agent, the compressor and the session store are the real ones, so what the timeline shows
is what a live session with that window would have done.

The timeline is one line per turn (and per model round when a turn has tool rounds), one
per compaction (path, what was removed, time, the session it continues in and its parent),
then the session chain and totals. ``--json`` prints the same records as JSON lines.

The sessions and saved outputs a replay makes go to a throwaway directory unless ``--db``
(that database) or ``--keep`` (the user's own store) asks to keep them.
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from ..agent.compaction_cost import compaction_lines, describe_cost
from ..agent.events import CompactionEvent, ToolCallEvent, TurnEnd, UsageEvent, WarningEvent
from ..agent.replay_model import (
    REPLAY_PREFIX,
    ReplayChatModel,
    ReplayScript,
    ReplayTurn,
    build_script,
    replay_tools,
)
from ..config import Settings, load_settings
from ..messages import load_transcript, validate_transcript
from ..safety.redact import redact
from ..storage.archive import archived_messages
from ..storage.contract import Store
from .common import CONTEXT_LENGTH_HELP, context_length_of, fail, handle_errors
from .render import status_figure
from .sessions import open_store
from .terminal_text import for_terminal, json_for_terminal

if TYPE_CHECKING:
    from ..agent.loop import Agent

__all__ = [
    "MIN_ITERATIONS",
    "CompactionModeOption",
    "Timeline",
    "replay_command",
    "replay_transcript",
    "with_compaction_mode",
]


class CompactionModeOption(StrEnum):
    """``--compaction-mode``: how the replay's store records a compaction."""

    rotation = "rotation"
    in_place = "in-place"


def with_compaction_mode(settings: Settings, in_place: bool) -> Settings:
    """``settings`` with ``compression.in_place`` set."""
    compression = settings.compression.model_copy(update={"in_place": in_place})
    return settings.model_copy(update={"compression": compression})


MIN_ITERATIONS = 50
"""Model rounds a replayed turn may take at least; a longer recorded turn gets its length."""


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
def _routed_logs(timeline: Timeline, verbose: bool) -> Iterator[None]:
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


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _percent(tokens: int | None, window: int) -> float | None:
    return round(100.0 * tokens / window, 1) if tokens is not None and window else None


def _tokens_text(tokens: int | None, estimated: bool, window: int) -> str:
    if tokens is None:
        return "? tokens"
    mark = "~" if estimated else ""
    return f"{mark}{tokens:,} tokens ({mark}{_percent(tokens, window)}% of {window:,})"


_MODE_TEXT = {"rotation": "rotation", "in_place": "in place"}


def _compaction_record(turn: int, event: CompactionEvent) -> tuple[dict[str, Any], str]:
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
    mode = _MODE_TEXT.get(event.mode or "", "not stored")
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
class _TurnTally:
    rounds: int = 0
    tool_calls: int = 0
    end: TurnEnd | None = None


def _play_turn(
    agent: Agent,
    number: int,
    turn: ReplayTurn,
    window: int,
    timeline: Timeline,
    totals: Counter[str],
    show_rounds: bool,
    model: ReplayChatModel | None = None,
) -> _TurnTally:
    tally = _TurnTally()
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
                f"  round {tally.rounds}: {_count(len(agent.messages), 'message')}, "
                f"{_tokens_text(tokens, event.estimated, window)}"
            )
            timeline.add(record, text if show_rounds else None)
        elif isinstance(event, ToolCallEvent):
            tally.tool_calls += 1
        elif isinstance(event, CompactionEvent):
            totals[f"compactions_{event.path}"] += int(event.compacted)
            timeline.add(*_compaction_record(number, event))
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


def _turn_record(
    agent: Agent, number: int, count: int, turn: ReplayTurn, tally: _TurnTally, window: int
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
        f"turn {number}/{count} ({turn.kind}): {_count(tally.rounds, 'round')}, "
        f"{_count(tally.tool_calls, 'tool call')} · {_count(len(agent.messages), 'message')} · "
        f"{_tokens_text(tokens, estimated, window)}"
    )
    if record["error"]:
        text += f" · stopped: {record['error']}"
    return record, text


def _chain(store: Store, session_id: str | None, timeline: Timeline) -> list[str]:
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


def _title(store: Store, session_id: str, title: str) -> None:
    """Name the replay's first session; its continuations take "#2", "#3" from it. Titles
    are unique in a store, so a second replay of the same file adds its session id."""
    try:
        store.set_session_title(session_id, title)
    except ValueError:
        store.set_session_title(session_id, f"{title} {session_id}")


def _mode_of(agent: Agent) -> str:
    return "in_place" if agent.settings.compression.in_place else "rotation"


def replay_transcript(
    script: ReplayScript,
    store: Store,
    *,
    context_length: int,
    timeline: Timeline,
    name: str = "transcript",
    settings: Settings | None = None,
) -> dict[str, Any]:
    """Drive a real Agent through ``script``; return the totals record."""
    from ..agent.loop import Agent  # the loop pulls in every layer: load it only to replay

    # The replayed model also plays the provider's window, so an oversized request is
    # refused as a real server would refuse it, and the reactive path shows up.
    model = ReplayChatModel(
        model=f"{REPLAY_PREFIX}:{name}", when_exhausted="empty", context_length=context_length
    )
    longest = max((len(t.replies) for t in script.turns), default=0)
    agent = Agent(
        model,
        tools=replay_tools(script),
        store=store,
        context_length=context_length,
        system_message=script.system,
        source="replay",
        builtin_tools=False,
        max_iterations=max(MIN_ITERATIONS, longest + 2),
        settings=settings or load_settings(),
    )
    if agent.session_id is not None:
        _title(store, agent.session_id, f"replay {name}")
    sessions_before = store.session_count() - 1  # the agent's first session is this replay's
    totals: Counter[str] = Counter()
    started = time.perf_counter()
    try:
        for number, turn in enumerate(script.turns, start=1):
            totals["unplayed_replies"] += model.load(turn.replies)
            tally = _play_turn(
                agent,
                number,
                turn,
                context_length,
                timeline,
                totals,
                show_rounds=script.native,
                model=model,
            )
            totals["rounds"] += tally.rounds
            totals["tool_calls"] += tally.tool_calls
            record, text = _turn_record(
                agent, number, len(script.turns), turn, tally, context_length
            )
            totals["turn_errors"] += int(record["error"] is not None)
            timeline.add(record, text)
        totals["unplayed_replies"] += model.remaining
        elapsed = time.perf_counter() - started
        chain = _chain(store, agent.session_id, timeline)
        status = agent.context_status()
        ledger = agent.usage.compactions
    finally:
        agent.close()
    compactions = {
        k.removeprefix("compactions_"): v for k, v in totals.items() if "compactions_" in k
    }
    record = {
        "event": "totals",
        "turns": len(script.turns),
        "model_calls": totals["rounds"],
        "replies_played": model.served,
        "replies_unplayed": totals["unplayed_replies"],
        "unrecorded_answers": model.unrecorded,
        "tool_calls": totals["tool_calls"],
        "compactions": sum(compactions.values()),
        "compactions_by_path": {k: v for k, v in compactions.items() if v},
        "turn_errors": totals["turn_errors"],
        "sessions": len(chain),
        "sessions_created": store.session_count() - sessions_before,
        "compaction_mode": _mode_of(agent),
        "final_session_id": agent.session_id,
        "final_messages": len(agent.messages),
        "final_tokens": status_figure(status, "used"),
        "final_estimated": bool(status.get("estimated")),
        "compaction_costs": [entry.to_dict() for entry in ledger.entries],
        "compaction_saving_usd": ledger.running_saving_usd,
        "seconds": round(elapsed, 3),
    }
    for line in compaction_lines(ledger):
        timeline.add({"event": "compaction_cost", "text": line}, f"  {line}")
    by_path = ", ".join(f"{k} {v}" for k, v in record["compactions_by_path"].items())
    timeline.add(
        record,
        f"totals: {_count(record['turns'], 'turn')}, "
        f"{_count(record['model_calls'], 'model call')}, "
        f"{_count(record['tool_calls'], 'tool call')}, "
        f"{_count(record['compactions'], 'compaction')}{f' ({by_path})' if by_path else ''}, "
        f"{_count(record['sessions_created'], 'session')} created "
        f"({_MODE_TEXT[record['compaction_mode']]}), "
        f"{_count(record['turn_errors'], 'turn error')}, {elapsed:.2f} s",
    )
    return record


def replay_command(
    transcript: Annotated[
        Path,
        typer.Argument(
            help="Transcript file (OpenAI, SWE-agent, mini-swe-agent, Claude Code or Codex)."
        ),
    ],
    context_length: Annotated[
        int | None, typer.Option("--context-length", min=1, help=CONTEXT_LENGTH_HELP)
    ] = None,
    db: Annotated[
        Path | None,
        typer.Option(
            "--db",
            help="Keep the replayed sessions in this database (default: a throwaway one, "
            "deleted when the replay ends).",
        ),
    ] = None,
    keep: Annotated[
        bool,
        typer.Option(
            "--keep",
            help="Keep the replayed sessions and saved outputs in your own store "
            "(store.path, else $PALIMPSEST_HOME/state.db).",
        ),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the timeline as JSON lines.")
    ] = False,
    verbose: Annotated[
        bool,
        typer.Option("--verbose", help="Also show the library's log messages in the timeline."),
    ] = False,
    compaction_mode: Annotated[
        CompactionModeOption | None,
        typer.Option(
            "--compaction-mode",
            help="rotation (a continuation session per compaction) or in-place (the session "
            "keeps its id); default: compression.in_place from the config.",
        ),
    ] = None,
) -> None:
    """Replay a transcript's assistant turns through the agent and show its compactions."""
    console = Console(highlight=False, soft_wrap=True)
    timeline = Timeline(console, as_json=as_json)
    with handle_errors(), ExitStack() as cleanup:
        cleanup.enter_context(_routed_logs(timeline, verbose))
        settings = load_settings()
        if compaction_mode is not None:
            settings = with_compaction_mode(settings, compaction_mode.value == "in-place")
        context_length = context_length_of(context_length, settings.model.context_length)
        messages = load_transcript(transcript)
        validate_transcript(messages, path=str(transcript))
        script = build_script(messages)
        if not script.turns:
            fail(f"{transcript}: the transcript has no user message to replay")
        style = "native tool calls" if script.native else "text actions"
        timeline.add(
            {
                "event": "start",
                "transcript": str(transcript),
                "messages": len(messages),
                "turns": len(script.turns),
                "replies": len(script.replies),
                "style": "native" if script.native else "text",
                "skipped_messages": script.skipped,
                "context_length": context_length,
                "compaction_mode": "in_place" if settings.compression.in_place else "rotation",
            },
            f"replay {transcript.name}: {_count(len(messages), 'message')} as "
            f"{_count(len(script.turns), 'turn')} "
            f"({style}) into a {context_length:,}-token window, compaction "
            f"{'in place' if settings.compression.in_place else 'by rotation'}",
        )
        if db is None and not keep:
            # A replay is an experiment: by default nothing of it lands in the user's own
            # store (sessions, titles, saved outputs); --db or --keep says otherwise.
            scratch = Path(cleanup.enter_context(tempfile.TemporaryDirectory(prefix="replay-")))
            settings = settings.model_copy(
                update={
                    "outputs": settings.outputs.model_copy(
                        update={"path": str(scratch / "outputs")}
                    )
                }
            )
            db = scratch / "state.db"
        store = open_store(db)
        try:
            replay_transcript(
                script,
                store,
                context_length=context_length,
                timeline=timeline,
                name=transcript.name,
                settings=settings,
            )
        finally:
            store.close()
