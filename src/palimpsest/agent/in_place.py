"""In-place compaction in the agent (``compression.in_place``, agent-loop.md AL-25).

The default rotation ends the session at step 5 of a compaction and continues in a new one
(:mod:`.compaction_step`). In place, step 5 archives the session's live rows under the
same id and writes the compacted list as its live history
(:func:`palimpsest.storage.archive.archive_in_place`); every other step runs as before,
with the one id passed as both old and new, so no memory boundary or engine session
start happens. ``/undo`` of such a compaction (:func:`undo_in_place_compaction`) makes
the archived rows live again under that id, also after a restart, since the store keeps
what the undo needs (:func:`record_from_store`).
"""

from __future__ import annotations

import logging
from typing import Any

from ..errors import PalimpsestError
from ..storage.archive import archive_in_place, archived_messages, last_in_place, undo_in_place
from .binding import restore_undone
from .driver import Flow, Offload
from .events import AgentEvent, WarningEvent
from .state import AgentState, UndoRecord

__all__ = [
    "archive_step",
    "in_place_enabled",
    "record_from_store",
    "undo_in_place_compaction",
]

log = logging.getLogger("palimpsest.agent")


def in_place_enabled(agent: AgentState) -> bool:
    """Does this agent compact in place (``compression.in_place``)? Only on a SQLite store
    (or none): the archive lives there; on PostgreSQL the agent rotates (docs/postgres.md)."""
    if agent.store is not None and getattr(agent.store, "backend", "sqlite") != "sqlite":
        return False
    return bool(agent.settings.compression.in_place)


def archive_step(
    agent: AgentState,
    session_id: str | None,
    compacted: list[dict[str, Any]],
    *,
    prompt_before: str,
    count_before: int,
) -> Flow:
    """Step 5 in place: archive the live rows of ``session_id`` and store ``compacted`` as
    its live history. Returns whether the store recorded it (``False`` without a store, or
    when the store refused: the compacted list is still used, with a warning)."""
    store = agent.store
    if store is None or session_id is None:
        return False
    try:
        yield Offload(
            lambda: archive_in_place(
                store,
                session_id,
                compacted,
                system_prompt=agent.system_prompt,
                system_prompt_before=prompt_before,
                compression_count_before=count_before,
            )
        )
    except (PalimpsestError, ValueError) as exc:
        log.warning("could not archive %s in place: %s", session_id, exc)
        yield WarningEvent(
            "session_archive_failed",
            f"The compacted conversation could not be stored in place ({exc}); the store "
            "still holds the messages from before the compaction as the live history.",
        )
        return False
    return True


def record_from_store(agent: AgentState) -> UndoRecord | None:
    """The newest in-place compaction of the agent's session not yet undone, as an undo
    record (for an agent that has none in memory, e.g. after a restart)."""
    store, sid = agent.store, agent.session_id
    if store is None or sid is None:
        return None
    last = last_in_place(store, sid)
    if last is None:
        return None
    return UndoRecord(
        before=[dict(m) for m in archived_messages(store, sid, last.number)],
        after_len=last.written,
        old_session_id=sid,
        new_session_id=sid,
        compression_count_before=last.compression_count_before,
        previous_summary_before=None,
        system_prompt_before=last.system_prompt_before or agent.system_prompt,
        in_place=True,
    )


def undo_in_place_compaction(agent: AgentState, record: UndoRecord) -> tuple[str, list[AgentEvent]]:
    """Put an in-place compaction back: the archived messages plus what was said since
    become the live history again, in memory and in the store, under the same id."""
    if agent.speculative is not None:
        agent.speculative.cancel()  # a candidate prepared on the compacted history is stale
    events: list[AgentEvent] = []
    sid = agent.session_id
    compacted_len = len(agent.messages)
    restored = [*record.before, *agent.messages[record.after_len :]]
    if agent.store is not None and sid is not None:
        try:
            undo_in_place(agent.store, sid)
        except PalimpsestError as exc:
            log.warning("could not record the undo in the store: %s", exc)
            events.append(
                WarningEvent(
                    "undo_not_stored",
                    f"The compaction was undone in this conversation, but the store could "
                    f"not record it ({exc}).",
                )
            )
    restore_undone(agent, record, sid, sid, restored)
    text = (
        f"Undid the last compaction: {compacted_len} → {len(restored)} messages in context. "
        f"Session {sid} keeps its id; the compacted messages are marked undone."
    )
    return text, events
