"""Binding an agent to a session: start one, resume a lineage's tip, or start afresh.

Resuming follows the compression lineage to its tip (``resume_target``): the messages and
the stored system prompt come back byte for byte (the provider's cached prefix), the
compaction count is the lineage's length, and the durable guards are read from the row
(CC-22). A session the user ended (not one that was continued) is reopened. ``/new`` ends
the current session with ``new_session``, tells the engine and the memory manager, clears
the history, todos, ledger and usage, and binds a fresh session with a new snapshot.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ..errors import PalimpsestError
from ..messages import role_of
from ..storage.archive import in_place_count
from ..storage.sessions import new_session_id
from .ledger import StateLedger
from .persistence import load_guards, read_guards, save_guards

if TYPE_CHECKING:
    from .state import AgentState, UndoRecord

__all__ = ["bind_session", "start_new_session", "switch_session"]

log = logging.getLogger("palimpsest.agent")


def bind_session(agent: AgentState, session_id: str | None, *, fresh: bool = False) -> None:
    """Start a new session, or resume the tip of ``session_id``'s lineage."""
    store = agent.store
    resumed = False
    if not fresh and store is not None and session_id is not None and store.get_session(session_id):
        sid = store.resume_target(session_id)
        row = store.require_session(sid)
        if row.get("ended_at") is not None and row.get("end_reason") != "compression":
            store.reopen_session(sid)
        agent.messages = [dict(m) for m in store.get_messages(sid)]
        rotations = max(0, len(store.compression_chain(sid)) - 1)
        agent.compressor.compression_count = rotations + in_place_count(store, sid)
        agent.system_prompt = str(row.get("system_prompt") or "")
        agent.turn = sum(1 for m in agent.messages if role_of(m) == "user")
        agent.restore_state(sid)
        resumed = True
    else:
        sid = session_id or new_session_id()
    agent.session_id = sid
    if agent.memory is not None and not fresh:
        agent.memory.initialize_all(sid, platform=agent.source)
    elif agent.memory is not None:
        agent.memory.store.load_from_disk()  # a new session takes a new snapshot
    if not agent.system_prompt:
        agent.system_prompt = agent.prompt_builder.build(
            compression_count=agent.compressor.compression_count
        )
    if store is not None and not resumed:
        store.create_session(
            sid, source=agent.source, model=agent.model_name, system_prompt=agent.system_prompt
        )
    agent.writer.rebind(sid, len(agent.messages))
    try:
        agent.compressor.on_session_start(sid, platform=agent.source, model=agent.model_name)
    except Exception:
        log.warning("engine.on_session_start failed", exc_info=True)
    load_guards(store, sid, agent.compressor)
    agent.guards = read_guards(store, sid) if store is not None else None


def start_new_session(agent: AgentState) -> None:
    """``/new``: end this session (``new_session``) and start a fresh, empty one."""
    old, history = agent.session_id, list(agent.messages)
    if agent.speculative is not None:
        agent.speculative.cancel()
    agent.save()
    if agent.store is not None and old is not None:
        try:
            agent.store.end_session(old, "new_session")
        except PalimpsestError as exc:
            log.warning("could not end session %s: %s", old, exc)
    try:
        agent.compressor.on_session_end(old or "", history)
        agent.compressor.on_session_reset()
    except Exception:
        log.warning("engine session hooks failed", exc_info=True)
    agent.messages = []
    agent.todos.write([])
    agent.ledger = StateLedger(agent.workdir)
    agent.undo = None
    agent.turn = 0
    agent.last_request_len = None
    agent.usage.reset()
    agent.system_prompt = ""
    new_id = new_session_id()
    if agent.memory is not None:
        agent.memory.session_boundary(history, new_id, reset=True, reason="new_session")
    bind_session(agent, new_id, fresh=True)


def switch_session(
    agent: AgentState,
    new_id: str | None,
    old_id: str | None,
    messages: list[dict[str, Any]],
    reason: str,
) -> None:
    """Continue in ``new_id`` with ``messages`` as the live history (after a compaction or
    an undo): the writer, the memory manager and the engine follow (AL-21, AL-22), and the
    durable guards are compared with what the new row inherited (CC-22). The memory
    providers receive the ending session's messages (the live history until now)."""
    engine = agent.compressor
    ended = agent.messages
    agent.messages = messages
    agent.session_id = new_id
    agent.writer.rebind(new_id, len(messages))
    if new_id is not None and new_id != old_id:
        if agent.memory is not None:
            agent.memory.session_boundary(ended, new_id, reset=False, reason=reason)
        try:
            engine.on_session_start(new_id, boundary_reason=reason, old_session_id=old_id)
        except Exception:
            log.warning("engine.on_session_start failed", exc_info=True)
    inherited = read_guards(agent.store, new_id) if agent.store is not None and new_id else None
    agent.guards = save_guards(agent.store, new_id, engine, inherited)
    agent.save_state()  # the ledger and the todos go on with the conversation


def restore_undone(
    agent: AgentState,
    record: UndoRecord,
    new_id: str | None,
    old_id: str | None,
    restored: list[dict[str, Any]],
) -> None:
    """Put the engine and the agent back as they were before the compaction ``record``
    describes, bound to ``new_id`` with ``restored`` (both undo paths: rotation and in place)."""
    engine = agent.compressor
    engine.compression_count = record.compression_count_before
    if hasattr(engine, "previous_summary"):
        engine.previous_summary = record.previous_summary_before
    engine.last_prompt_tokens = 0
    agent.last_request_len = None
    agent.system_prompt = record.system_prompt_before
    switch_session(agent, new_id, old_id, restored, "undo")
    agent.undo = None
