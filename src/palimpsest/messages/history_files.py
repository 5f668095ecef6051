"""Agent history trees on disk: finding Claude Code and Codex session files and reading them.

Claude Code keeps one JSONL file per session under ``~/.claude/projects/<project>/``
(``$CLAUDE_CONFIG_DIR/projects`` when set); the folder name is the session's working
directory with every character other than a letter or digit turned into ``-``, and each
record carries the real ``cwd``. A sub-agent's conversation is either written into the
session file as ``isSidechain: true`` records (older releases) or into its own file,
``<project>/<sessionId>/subagents/agent-<agentId>.jsonl`` (older still:
``<project>/agent-<agentId>.jsonl``), whose records are all sidechain records naming the
parent ``sessionId``. Codex keeps one rollout per session under
``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`` (``$CODEX_HOME/sessions`` when set); its
``session_meta`` line has the session ``id``, the ``cwd``, and for a spawned sub-agent the
parent thread (``source.subagent.thread_spawn.parent_thread_id``).

Files still being written are normal here, so :func:`read_lines` reads only complete
records: a last line without its newline that is not yet valid JSON is left for the next
run, and a broken line in the middle is skipped and counted (never silently). Record types
a reader does not know (new releases add them) are skipped and counted too. The message
conversion itself is the single-file readers' (:mod:`.formats_claude`, :mod:`.formats_codex`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import UserError
from .content import Message
from .formats_claude import convert_claude_code
from .formats_codex import CODEX_ITEM_TYPES, convert_codex
from .formats_common import Record

__all__ = [
    "AGENTS",
    "CLAUDE_CODE",
    "CODEX",
    "Conversation",
    "HistoryFile",
    "HistoryRead",
    "SessionFile",
    "convert_history",
    "default_root",
    "discover",
    "read_lines",
]

CLAUDE_CODE = "claude-code"
CODEX = "codex"
AGENTS = (CLAUDE_CODE, CODEX)

_CODEX_LINE_TYPES = frozenset(
    {"session_meta", "response_item", "turn_context", "event_msg", "compacted"}
)
_CLAUDE_MESSAGE_TYPES = frozenset({"user", "assistant"})
_CLAUDE_BOOKKEEPING = frozenset(
    {
        "summary",
        "system",
        "file-history-snapshot",
        "custom-title",
        "ai-title",
        "agent-name",
        "queue-operation",
        "progress",
        "attachment",
    }
)
"""Record types Claude Code writes besides messages (skipped); any other type is counted as
unknown in :attr:`SessionFile.unknown_records`."""


@dataclass(frozen=True)
class HistoryFile:
    """One session file found in a tree; ``parent`` is the parent session's own id when the
    path says the file is a sub-agent's (Claude Code's ``<sessionId>/subagents/``)."""

    agent: str
    path: Path
    project_folder: str
    subagent: bool = False
    parent: str | None = None


@dataclass
class HistoryRead:
    """The complete records of a file's first ``consumed`` bytes.

    ``bad_lines`` are 1-based numbers of lines that were not a JSON object (skipped);
    ``pending`` is true when an unfinished last line was left for a later run.
    """

    records: list[Record]
    consumed: int
    bad_lines: list[int] = field(default_factory=list)
    pending: bool = False


@dataclass
class Conversation:
    """Messages to store as one session: ``key`` is ``""`` for the file's own conversation,
    else the id of a sub-agent sidechain written into the same file."""

    key: str
    messages: list[Message]


@dataclass
class SessionFile:
    """What a file says about its session, and the conversations it holds."""

    conversations: list[Conversation]
    session_id: str | None = None
    parent_session_id: str | None = None
    project: str | None = None
    started_at: float | None = None
    title: str | None = None
    unknown_records: int = 0


def _home(environ: Mapping[str, str]) -> Path:
    value = environ.get("HOME")
    return Path(value).expanduser() if value else Path.home()


def default_root(agent: str, environ: Mapping[str, str] | None = None) -> Path:
    """Where ``agent`` keeps its sessions: ``$CLAUDE_CONFIG_DIR/projects`` or
    ``~/.claude/projects``; ``$CODEX_HOME/sessions`` or ``~/.codex/sessions``."""
    env = os.environ if environ is None else environ
    if agent == CLAUDE_CODE:
        base = env.get("CLAUDE_CONFIG_DIR")
        return (Path(base).expanduser() if base else _home(env) / ".claude") / "projects"
    if agent == CODEX:
        base = env.get("CODEX_HOME")
        return (Path(base).expanduser() if base else _home(env) / ".codex") / "sessions"
    raise UserError(f"unknown agent history {agent!r}; use one of: {', '.join(AGENTS)}")


def discover(agent: str, root: Path) -> list[HistoryFile]:
    """Every session file under ``root``, parents before their sub-agents, in path order."""
    if agent not in AGENTS:
        raise UserError(f"unknown agent history {agent!r}; use one of: {', '.join(AGENTS)}")
    if not root.is_dir():
        raise UserError(
            f"{root} is not a directory; pass the folder that holds the "
            f"{'Claude Code projects' if agent == CLAUDE_CODE else 'Codex sessions'}"
        )
    if agent == CODEX:
        return [
            HistoryFile(CODEX, path, path.parent.relative_to(root).as_posix())
            for path in sorted(root.rglob("rollout-*.jsonl"))
            if _listed(path)
        ]
    sessions: list[HistoryFile] = []
    children: list[HistoryFile] = []
    for project in sorted(p for p in root.iterdir() if p.is_dir()):
        for path in sorted(project.glob("*.jsonl")):
            if not _listed(path):
                continue
            if path.name.startswith("agent-"):  # older releases: sub-agents beside sessions
                children.append(HistoryFile(CLAUDE_CODE, path, project.name, subagent=True))
            else:
                sessions.append(HistoryFile(CLAUDE_CODE, path, project.name))
        for path in sorted(project.glob("*/subagents/agent-*.jsonl")):
            if _listed(path):
                parent = path.parent.parent.name
                children.append(
                    HistoryFile(CLAUDE_CODE, path, project.name, subagent=True, parent=parent)
                )
    return sessions + children


def _listed(path: Path) -> bool:
    # A link that leads nowhere is listed too, so the import names it instead of
    # leaving it out without a word.
    return path.is_file() or path.is_symlink()


def read_lines(data: bytes) -> HistoryRead:
    """The complete JSON-object records of ``data`` (a whole JSONL file, read now)."""
    out = HistoryRead(records=[], consumed=0)
    start = 0
    number = 0
    while start < len(data):
        number += 1
        end = data.find(b"\n", start)
        last = end == -1
        line = data[start:] if last else data[start:end]
        value = _object(line)
        if last and value is None and line.strip():
            out.pending = True  # still being written: read it when it is complete
            break
        stop = len(data) if last else end + 1
        if value is not None:
            out.records.append(Record(f"line {number}", value))
        elif line.strip():
            out.bad_lines.append(number)
        out.consumed = stop
        start = stop
    return out


def _object(line: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _epoch(value: Any) -> float | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _first(records: list[Record], key: str) -> Any:
    return next((r.value[key] for r in records if r.value.get(key)), None)


def convert_history(file: HistoryFile, records: list[Record]) -> SessionFile:
    """The session a file's records describe (raises ``ConversionError`` on a bad record)."""
    if file.agent == CODEX:
        return _codex(records)
    return _claude(file, records)


# -- Claude Code ---------------------------------------------------------------------------


def _as_main_line(record: Record) -> Record:
    """A sidechain record as the converter reads main-conversation records."""
    return Record(record.where, {**record.value, "isSidechain": False})


def _claude_title(records: list[Record]) -> str | None:
    # A /rename wins over Claude Code's generated title, which wins over a summary record.
    for kind, key in (
        ("custom-title", "customTitle"),
        ("ai-title", "aiTitle"),
        ("summary", "summary"),
    ):
        found = [r.value.get(key) for r in records if r.value.get("type") == kind]
        texts = [t.strip() for t in found if isinstance(t, str) and t.strip()]
        if texts:
            return texts[-1]
    return None


def _sidechain_groups(records: list[Record]) -> dict[str, list[Record]]:
    """Inline sidechain records by sub-agent: ``agentId`` when given, else the root of
    their ``parentUuid`` chain."""
    side = [r for r in records if r.value.get("isSidechain") is True]
    parent_of = {
        str(r.value["uuid"]): r.value.get("parentUuid") for r in side if r.value.get("uuid")
    }
    groups: dict[str, list[Record]] = {}
    for record in side:
        key = record.value.get("agentId")
        if not isinstance(key, str) or not key:
            node = record.value.get("uuid")
            seen: set[Any] = set()
            while isinstance(parent_of.get(str(node)), str) and node not in seen:
                seen.add(node)
                node = parent_of[str(node)]
            key = str(node or "sidechain")
        groups.setdefault(key, []).append(record)
    return groups


def _claude(file: HistoryFile, records: list[Record]) -> SessionFile:
    known = [r for r in records if r.value.get("type") in _CLAUDE_MESSAGE_TYPES]
    unknown = sum(
        1 for r in records if r.value.get("type") not in _CLAUDE_MESSAGE_TYPES | _CLAUDE_BOOKKEEPING
    )
    own_id = _first(records, "sessionId")
    meta = SessionFile(
        conversations=[],
        project=_first(records, "cwd") or file.project_folder,
        started_at=_epoch(_first(records, "timestamp")),
        title=_claude_title(records),
        unknown_records=unknown,
    )
    if file.subagent:
        meta.parent_session_id = file.parent or own_id
        agent = _first(records, "agentId")
        meta.session_id = f"{meta.parent_session_id}/{agent or file.path.stem}"
        lines = [_as_main_line(r) for r in known]
        meta.conversations.append(Conversation("", convert_claude_code(lines)))
        return meta
    meta.session_id = own_id or file.path.stem
    meta.conversations.append(Conversation("", convert_claude_code(known)))
    for key, group in _sidechain_groups(known).items():
        messages = convert_claude_code([_as_main_line(r) for r in group])
        meta.conversations.append(Conversation(f"sidechain:{key}", messages))
    return meta


# -- Codex ---------------------------------------------------------------------------------


def _codex_known(value: Mapping[str, Any]) -> bool:
    kind = value.get("type")
    if kind == "response_item":
        payload = value.get("payload")
        return isinstance(payload, Mapping) and payload.get("type") in CODEX_ITEM_TYPES
    if kind in _CODEX_LINE_TYPES:
        return True
    # Older rollouts: bare items, state markers and an {"id", "timestamp"} header.
    return kind in CODEX_ITEM_TYPES or "record_type" in value or (kind is None and "id" in value)


def _codex_parent(meta: Mapping[str, Any]) -> str | None:
    source = meta.get("source")
    if isinstance(source, Mapping):
        spawn = source.get("subagent")
        spawn = spawn.get("thread_spawn") if isinstance(spawn, Mapping) else None
        if isinstance(spawn, Mapping) and isinstance(spawn.get("parent_thread_id"), str):
            return str(spawn["parent_thread_id"])
    parent = meta.get("parent_thread_id")
    return parent if isinstance(parent, str) and parent else None


def _codex(records: list[Record]) -> SessionFile:
    known = [r for r in records if _codex_known(r.value)]
    meta_line = next((r.value for r in records if r.value.get("type") == "session_meta"), None)
    payload = meta_line.get("payload") if meta_line else None
    meta: Mapping[str, Any] = payload if isinstance(payload, Mapping) else {}
    header = records[0].value if records and records[0].value.get("type") is None else {}
    session_id = meta.get("id") or header.get("id")
    stamp = meta.get("timestamp") or (meta_line or header).get("timestamp")
    return SessionFile(
        conversations=[Conversation("", convert_codex(known))],
        session_id=str(session_id) if session_id else None,
        parent_session_id=_codex_parent(meta),
        project=meta.get("cwd") if isinstance(meta.get("cwd"), str) else None,
        started_at=_epoch(stamp),
        unknown_records=len(records) - len(known),
    )
