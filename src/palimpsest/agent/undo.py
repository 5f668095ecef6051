"""``/undo``: put the last compaction back into the live context, and record it.

The pre-compaction messages are never lost: the agent keeps them for its last compaction,
and the store keeps them in the parent session. Undo rebuilds the live history as those
messages plus whatever was said since the compaction, and records it in the store this way:

* the compacted continuation ends with ``end_reason = 'undone'``;
* a new continuation of the **parent** (which ended with ``compression``) holds the
  restored history. Lineage walks follow the newest continuation, so resuming the
  conversation lands on the restored session, never on the undone one.

The compressor's count and previous summary go back to what they were, and the prompt goes
back to the one the restored history was sent with (its cached prefix). An agent resumed
from the store has no in-memory record; it reconstructs one from the parent session.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ..errors import PalimpsestError
from ..storage.sessions import new_session_id
from .binding import restore_undone
from .compaction_step import UndoRecord
from .events import AgentEvent, WarningEvent
from .in_place import record_from_store, undo_in_place_compaction

if TYPE_CHECKING:
    from .state import AgentState

__all__ = ["NOTHING_TO_UNDO", "undo_last_compaction"]

log = logging.getLogger("palimpsest.agent")

NOTHING_TO_UNDO = "Nothing to undo: no compaction happened in this conversation yet."


def _record_from_store(agent: AgentState) -> UndoRecord | None:
    """The last compaction as the store remembers it (parent's messages, the seed count)."""
    store, sid = agent.store, agent.session_id
    if store is None or sid is None:
        return None
    chain = store.compression_chain(sid)
    if len(chain) < 2 or chain[-1] != sid:
        return None
    parent = chain[-2]
    before = [dict(m) for m in store.get_messages(parent)]
    seeds = store.seed_message_count(sid)
    if not before or agent.messages[: len(before)] == before:
        # this session is itself a restored copy (its parent's messages, then whatever
        # was said between the compaction and the undo): nothing was compacted
        return None
    row = store.get_session(parent) or {}
    return UndoRecord(
        before=before,
        after_len=seeds,
        old_session_id=parent,
        new_session_id=sid,
        compression_count_before=max(0, agent.compressor.compression_count - 1),
        previous_summary_before=None,
        system_prompt_before=str(row.get("system_prompt") or agent.system_prompt),
    )


def undo_last_compaction(agent: AgentState) -> tuple[str, list[AgentEvent]]:
    """Undo the last compaction; the reply text and any warnings."""
    record = agent.undo
    if record is None:  # after a restart: the store's newest compaction, in place first
        record = record_from_store(agent) or _record_from_store(agent)
    if record is None or record.new_session_id != agent.session_id:
        return NOTHING_TO_UNDO, []
    if record.in_place:
        return undo_in_place_compaction(agent, record)
    if agent.speculative is not None:
        agent.speculative.cancel()  # a candidate prepared on the compacted history is stale
    events: list[AgentEvent] = []
    compacted_len = len(agent.messages)
    restored = [*record.before, *agent.messages[record.after_len :]]
    store = agent.store
    undone = agent.session_id
    new_id = undone
    if store is not None and record.old_session_id is not None:
        try:
            if undone != record.old_session_id and undone is not None:
                store.end_session(undone, "undone")
            new_id = store.start_continuation(
                record.old_session_id,
                messages=restored,
                model=agent.model_name,
                system_prompt=record.system_prompt_before,
            )
        except (PalimpsestError, ValueError) as exc:
            log.warning("could not record the undo in the store: %s", exc)
            events.append(
                WarningEvent(
                    "undo_not_stored",
                    f"The compaction was undone in this conversation, but the store could "
                    f"not record it ({exc}).",
                )
            )
            new_id = undone
    elif store is None:
        new_id = new_session_id()

    restore_undone(agent, record, new_id, undone, restored)
    text = f"Undid the last compaction: {compacted_len} → {len(restored)} messages in context."
    if new_id != undone:
        text += f" Session continues as {new_id}; the compacted session {undone} is marked undone."
    return text, events
