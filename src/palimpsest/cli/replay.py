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

import tempfile
import time
from collections import Counter
from contextlib import ExitStack
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from ..agent.compaction_cost import compaction_lines
from ..agent.replay_model import (
    REPLAY_PREFIX,
    ReplayChatModel,
    ReplayScript,
    build_script,
    replay_tools,
)
from ..config import Settings, load_settings
from ..messages import load_transcript, validate_transcript
from ..storage.contract import Store
from .common import CONTEXT_LENGTH_HELP, context_length_of, fail, handle_errors
from .render import status_figure
from .replay_timeline import (
    MODE_TEXT,
    Timeline,
    chain_records,
    count_text,
    play_turn,
    routed_logs,
    turn_record,
)
from .sessions import open_store

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
            tally = play_turn(
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
            record, text = turn_record(
                agent, number, len(script.turns), turn, tally, context_length
            )
            totals["turn_errors"] += int(record["error"] is not None)
            timeline.add(record, text)
        totals["unplayed_replies"] += model.remaining
        elapsed = time.perf_counter() - started
        chain = chain_records(store, agent.session_id, timeline)
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
        f"totals: {count_text(record['turns'], 'turn')}, "
        f"{count_text(record['model_calls'], 'model call')}, "
        f"{count_text(record['tool_calls'], 'tool call')}, "
        f"{count_text(record['compactions'], 'compaction')}{f' ({by_path})' if by_path else ''}, "
        f"{count_text(record['sessions_created'], 'session')} created "
        f"({MODE_TEXT[record['compaction_mode']]}), "
        f"{count_text(record['turn_errors'], 'turn error')}, {elapsed:.2f} s",
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
        cleanup.enter_context(routed_logs(timeline, verbose))
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
            f"replay {transcript.name}: {count_text(len(messages), 'message')} as "
            f"{count_text(len(script.turns), 'turn')} "
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
