"""Importing whole agent histories (Claude Code, Codex) into the store, incrementally.

:func:`import_history` walks a tree found by :func:`~palimpsest.messages.history_files.discover`
and stores each session file as a session whose ``source`` is ``<agent>:<project>`` (the
session's working directory), started when the agent's first record says. A sub-agent's
conversation, whether a sidechain inside the session file or a file of its own, becomes a
child session of its parent (``parent_session_id``: the delegate kind of child, which the
compression-chain walk never follows and search folds into the parent's lineage).

The ``history_imports`` table (migration ``m009_history_imports``) makes it incremental:
an unchanged file (same size and mtime) is not even read; a grown one whose imported
prefix still hashes the same appends only the messages past those already stored; one
rewritten in place is imported again in place of its old sessions, so nothing is ever
stored twice. Each file lands in one transaction with its bookkeeping. A file that cannot
be read or converted is reported with the reason and skipped; the others go in.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import apsw

from ..messages.content import content_text
from ..messages.formats_common import ConversionError
from ..messages.history_files import (
    Conversation,
    HistoryFile,
    SessionFile,
    convert_history,
    default_root,
    discover,
    read_lines,
)
from .contract import Store as SessionStore
from .titles import MAX_TITLE_LENGTH, next_title_in_lineage, sanitize_title
from .transfer import content_digest
from .writes import session_exists

__all__ = ["FileOutcome", "HistoryImport", "Status", "import_history"]

Status = Literal["new", "grown", "unchanged", "replaced", "empty", "failed"]
Progress = Callable[[HistoryFile], None]


@dataclass
class FileOutcome:
    """What happened to one file: ``messages`` stored this run (all its conversations)."""

    path: Path
    status: Status
    messages: int = 0
    sessions: int = 0
    error: str | None = None
    bad_lines: int = 0
    unknown_records: int = 0
    pending: bool = False


@dataclass
class HistoryImport:
    """The result of one :func:`import_history` run."""

    agent: str
    root: Path
    files: list[FileOutcome] = field(default_factory=list)

    def count(self, *statuses: Status) -> int:
        return sum(1 for f in self.files if f.status in statuses)

    @property
    def messages(self) -> int:
        return sum(f.messages for f in self.files)

    @property
    def failed(self) -> list[FileOutcome]:
        return [f for f in self.files if f.status == "failed"]


@dataclass(frozen=True)
class _Tracked:
    key: str
    session_id: str | None
    size: int
    mtime: float
    sha256: str
    messages: int
    messages_sha256: str


def import_history(
    store: SessionStore,
    agent: str,
    root: str | Path | None = None,
    *,
    progress: Progress | None = None,
    total: Callable[[int], None] | None = None,
) -> HistoryImport:
    """Import every session file of ``agent`` under ``root`` (default: the agent's own place).

    ``total`` is called once with the number of files found, ``progress`` after each file.
    """
    where = Path(root).expanduser() if root is not None else default_root(agent)
    files = discover(agent, where)
    if total is not None:
        total(len(files))
    result = HistoryImport(agent, where)
    for file in files:
        result.files.append(_import_one(store, file))
        if progress is not None:
            progress(file)
    _link_orphans(store, agent)
    return result


def _import_one(store: SessionStore, file: HistoryFile) -> FileOutcome:
    path = str(file.path)
    try:
        info = file.path.stat()
        tracked = _tracked(store, path)
        own = tracked.get("")
        if own is not None and own.size == info.st_size and own.mtime == info.st_mtime:
            return FileOutcome(file.path, "unchanged")
        data = file.path.read_bytes()
        read = read_lines(data)
        replaced = own is not None and (
            len(data) < own.size or _sha(data[: own.size]) != own.sha256
        )
        if own is not None and not replaced and read.consumed == own.size:
            _touch(store, path, info.st_mtime)
            return FileOutcome(file.path, "unchanged", pending=read.pending)
        session = convert_history(file, read.records)
    except (OSError, ConversionError) as exc:
        reason = exc.problem if isinstance(exc, ConversionError) else (exc.strerror or str(exc))
        return FileOutcome(file.path, "failed", error=reason)
    if replaced:
        tracked = {}
    outcome = FileOutcome(
        file.path,
        "replaced" if replaced else ("grown" if own is not None else "new"),
        bad_lines=len(read.bad_lines),
        unknown_records=session.unknown_records,
        pending=read.pending,
    )
    state = _FileState(
        file, session, info.st_mtime, read.consumed, _sha(data[: read.consumed]), len(read.records)
    )

    def write(con: apsw.Connection) -> None:
        if replaced:
            _forget(store, con, path)
        outcome.messages, outcome.sessions = state.store(store, con, tracked)

    store.database.write(write)
    if outcome.messages == 0 and outcome.status == "new":
        outcome.status = "empty"
    return outcome


@dataclass
class _FileState:
    file: HistoryFile
    session: SessionFile
    mtime: float
    size: int
    sha256: str
    records: int

    def store(
        self, store: SessionStore, con: apsw.Connection, tracked: dict[str, _Tracked]
    ) -> tuple[int, int]:
        """Append what is new of every conversation; returns (messages, sessions touched)."""
        added = touched = 0
        own = self._conversation(store, con, self.session.conversations[0], tracked, None)
        added += own[0]
        touched += own[0] > 0
        for conversation in self.session.conversations[1:]:
            count, _sid = self._conversation(store, con, conversation, tracked, own[1])
            added += count
            touched += count > 0
        return added, touched

    def _conversation(
        self,
        store: SessionStore,
        con: apsw.Connection,
        conversation: Conversation,
        tracked: dict[str, _Tracked],
        parent: str | None,
    ) -> tuple[int, str | None]:
        row = tracked.get(conversation.key)
        done = row.messages if row is not None else 0
        sid = row.session_id if row is not None else None
        if (
            row is not None
            and sid is not None
            and content_digest(conversation.messages[:done]) != row.messages_sha256
        ):
            # The new lines changed a message already stored (Claude Code writes one
            # response as several lines; a continuation line merges into the last
            # message): store the conversation again rather than half of it twice.
            _clear(con, sid)
            done = 0
        fresh = conversation.messages[done:]
        if fresh and sid is None:
            sid = self._create(store, con, conversation, parent)
        if fresh and sid is not None:
            ids = store.append_messages(sid, fresh)
            # Dated when the agent wrote them, not when they were imported: the start of
            # the session for a new one, the file's last change for what a grown one gained.
            base = self.session.started_at if done == 0 else None
            _date(con, sid, ids, base if base is not None else self.mtime)
        session = self.session
        con.execute(
            "INSERT OR REPLACE INTO history_imports (path, key, agent, session_id,"
            " agent_session_id, parent_agent_session_id, size, mtime, sha256, records,"
            " messages, messages_sha256, imported_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                str(self.file.path),
                conversation.key,
                self.file.agent,
                sid,
                session.session_id if not conversation.key else None,
                session.parent_session_id if not conversation.key else None,
                self.size,
                self.mtime,
                self.sha256,
                self.records,
                done + len(fresh),
                content_digest(conversation.messages),
                time.time(),
            ),
        )
        stored_before = row.messages if row is not None else 0
        return len(conversation.messages) - stored_before, sid

    def _create(
        self,
        store: SessionStore,
        con: apsw.Connection,
        conversation: Conversation,
        parent: str | None,
    ) -> str:
        session = self.session
        if parent is None and session.parent_session_id:
            parent = _store_id_of(con, self.file.agent, session.parent_session_id)
        started = session.started_at if session.started_at is not None else self.mtime
        sid = _fresh_id(con, started)
        system = next((m for m in conversation.messages if m.get("role") == "system"), None)
        store.create_session(
            sid,
            source=f"{self.file.agent}:{session.project or self.file.project_folder}",
            system_prompt=content_text(system.get("content")) if system else None,
            parent_session_id=parent,
        )
        con.execute("UPDATE sessions SET started_at = ? WHERE id = ?", (started, sid))
        title = _title(session.title if not conversation.key else None)
        if title is not None:
            store.set_session_title(sid, next_title_in_lineage(con, title))
        return sid


def _date(con: apsw.Connection, session_id: str, ids: list[int], start: float) -> None:
    # The session's own rows only: on PostgreSQL another writer's rows may fall between.
    if ids:
        con.execute(
            "UPDATE messages SET timestamp = ? + (id - ?) * 1e-6"
            " WHERE session_id = ? AND id BETWEEN ? AND ?",
            (start, ids[0], session_id, ids[0], ids[-1]),
        )


def _clear(con: apsw.Connection, session_id: str) -> None:
    """Remove a session's messages (the triggers drop them from the indexes too)."""
    con.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
    con.execute(
        "UPDATE sessions SET message_count = 0, tool_call_count = 0 WHERE id = ?", (session_id,)
    )


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _tracked(store: SessionStore, path: str) -> dict[str, _Tracked]:
    found = store.database.query(
        "SELECT key, session_id, size, mtime, sha256, messages, messages_sha256"
        " FROM history_imports WHERE path = ?",
        (path,),
    )
    return {
        str(r["key"]): _Tracked(
            str(r["key"]),
            r["session_id"],
            int(r["size"]),
            float(r["mtime"]),
            str(r["sha256"]),
            int(r["messages"]),
            str(r["messages_sha256"]),
        )
        for r in found
    }


def _touch(store: SessionStore, path: str, mtime: float) -> None:
    def touch(con: apsw.Connection) -> None:
        con.execute("UPDATE history_imports SET mtime = ? WHERE path = ?", (mtime, path))

    store.database.write(touch)


def _forget(store: SessionStore, con: apsw.Connection, path: str) -> None:
    """Delete the sessions a rewritten file was imported as, and their bookkeeping."""
    for (sid,) in con.execute(
        "SELECT session_id FROM history_imports WHERE path = ? AND session_id IS NOT NULL",
        (path,),
    ).fetchall():
        store.delete_session(str(sid))
    con.execute("DELETE FROM history_imports WHERE path = ?", (path,))


def _store_id_of(con: apsw.Connection, agent: str, agent_session_id: str) -> str | None:
    found = con.execute(
        "SELECT session_id FROM history_imports WHERE agent = ? AND agent_session_id = ?"
        " AND key = '' AND session_id IS NOT NULL LIMIT 1",
        (agent, agent_session_id),
    ).fetchall()
    return str(found[0][0]) if found else None


def _fresh_id(con: apsw.Connection, started: float) -> str:
    """A store id in the usual shape, dated when the session started, not yet taken."""
    stamp = datetime.fromtimestamp(started).strftime("%Y%m%d_%H%M%S")
    while True:
        sid = f"{stamp}_{secrets.token_hex(3)}"
        if not session_exists(con, sid):
            return sid


def _title(text: str | None) -> str | None:
    """The agent's own title for the session (Claude Code's summary), cut to fit."""
    return sanitize_title(" ".join(text.split())[:MAX_TITLE_LENGTH]) if text else None


def _link_orphans(store: SessionStore, agent: str) -> None:
    """Give sub-agent sessions whose parent file came later (or in a later run) their parent."""

    def link(con: apsw.Connection) -> None:
        rows: list[Any] = con.execute(
            "SELECT c.session_id, p.session_id FROM history_imports AS c"
            " JOIN history_imports AS p ON p.agent = c.agent"
            "  AND p.agent_session_id = c.parent_agent_session_id AND p.key = ''"
            " JOIN sessions AS s ON s.id = c.session_id"
            " WHERE c.agent = ? AND c.key = '' AND s.parent_session_id IS NULL"
            "  AND p.session_id IS NOT NULL AND p.session_id != c.session_id",
            (agent,),
        ).fetchall()
        for child, parent in rows:
            con.execute("UPDATE sessions SET parent_session_id = ? WHERE id = ?", (parent, child))

    store.database.write(link)
