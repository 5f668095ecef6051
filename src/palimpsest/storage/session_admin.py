"""Finding a session by a prefix of its id, and deleting sessions with their lineage.

Ids are timestamps with a random tail (``20261123_101500_a1b2c3``), so a person types a
prefix; a prefix that starts several ids must say so and list them instead of claiming
"no session". Deleting is lineage-aware: a compression continuation starts from its
parent's summary and a parent's tip points into its children, so :func:`family` tells a
caller what else is linked before it deletes, and :func:`delete_sessions` removes several
sessions, their messages and their ``state_meta`` bookkeeping in one transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import apsw

from ..errors import AmbiguousSessionIdError, SessionNotFoundError
from .titles import escape_like
from .writes import seed_key

__all__ = [
    "IMPORT_KEY_PREFIX",
    "MAX_CANDIDATES",
    "Family",
    "delete_sessions",
    "family",
    "handle_of",
    "import_key",
    "matching_ids",
    "resolve_prefix",
]

MAX_CANDIDATES = 10
"""Ids an ambiguity error lists (it also says how many match in all)."""

IMPORT_KEY_PREFIX = "import_sha256:"
"""``state_meta`` keys ``import_sha256:<hex digest>`` name the session a transcript with
that content was imported as (see :mod:`.transfer`)."""


def import_key(digest: str) -> str:
    """The ``state_meta`` key recording which session holds an imported transcript."""
    return IMPORT_KEY_PREFIX + digest


def _count(con: apsw.Connection, sql: str, value: str) -> int:
    row = con.execute(sql, (value,)).fetchall()[0]
    return int(str(row[0]))


def matching_ids(
    con: apsw.Connection, prefix: str, limit: int = MAX_CANDIDATES
) -> tuple[list[str], int]:
    """The first ``limit`` ids starting with ``prefix`` (sorted) and how many match."""
    pattern = escape_like(prefix) + "%"
    count = _count(con, "SELECT count(*) FROM sessions WHERE id LIKE ? ESCAPE '\\'", pattern)
    found = con.execute(
        "SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\\' ORDER BY id LIMIT ?",
        (pattern, limit),
    ).fetchall()
    return [str(row[0]) for row in found], count


def handle_of(session_id: str) -> str:
    """The short handle of an id: its last ``_`` part (``d230a6`` of
    ``20261127_130004_d230a6``), the part people can type, as git's short hashes."""
    return session_id.rsplit("_", 1)[-1]


def _matching_handles(con: apsw.Connection, handle: str) -> list[str]:
    """Ids whose handle (last ``_`` part) starts with ``handle``, sorted."""
    if not handle or "_" in handle:
        return []
    rows = con.execute(
        "SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\\' ORDER BY id",
        ("%\\_" + escape_like(handle) + "%",),
    ).fetchall()
    return [str(r[0]) for r in rows if handle_of(str(r[0])).startswith(handle)]


def resolve_prefix(con: apsw.Connection, id_or_prefix: str) -> str:
    """The exact id, else the one id starting with it, else the one id whose short handle
    (:func:`handle_of`) starts with it.

    :class:`SessionNotFoundError` when none does, :class:`AmbiguousSessionIdError`
    (listing the candidates) when several do.
    """
    if con.execute("SELECT 1 FROM sessions WHERE id = ?", (id_or_prefix,)).fetchall():
        return id_or_prefix
    candidates, count = matching_ids(con, id_or_prefix) if id_or_prefix else ([], 0)
    if count == 0:
        handles = _matching_handles(con, id_or_prefix)
        candidates, count = handles[:MAX_CANDIDATES], len(handles)
    if count == 1:
        return candidates[0]
    if count > 1:
        raise AmbiguousSessionIdError(id_or_prefix, candidates, count)
    raise SessionNotFoundError(id_or_prefix)


@dataclass(frozen=True)
class Family:
    """The sessions linked to one by ``parent_session_id``, in either direction."""

    session_id: str
    parent: str | None
    children: list[str] = field(default_factory=list)
    lineage: list[str] = field(default_factory=list)
    """The whole family tree, root first (``session_id`` included)."""

    @property
    def linked(self) -> bool:
        return len(self.lineage) > 1


def family(con: apsw.Connection, session_id: str) -> Family:
    """Parent, children and whole lineage of ``session_id`` (see :mod:`.lineage`)."""
    from .lineage import lineage

    parent = con.execute(
        "SELECT parent_session_id FROM sessions WHERE id = ?", (session_id,)
    ).fetchall()
    if not parent:
        raise SessionNotFoundError(session_id)
    children = [
        str(row[0])
        for row in con.execute(
            "SELECT id FROM sessions WHERE parent_session_id = ? ORDER BY started_at, id",
            (session_id,),
        )
    ]
    up = parent[0][0]
    return Family(session_id, None if up is None else str(up), children, lineage(con, session_id))


def delete_sessions(con: apsw.Connection, session_ids: Sequence[str]) -> int:
    """Delete the sessions, their messages and their bookkeeping; return messages removed.

    Run it inside one write transaction (``store.database.write``) so a family goes
    whole. A session outside ``session_ids`` whose parent is deleted is kept, orphaned
    (SS-24), as :meth:`~.sessions.SessionStore.delete_session` does.
    """
    removed = 0
    doomed = list(dict.fromkeys(session_ids))
    for sid in doomed:
        removed += _count(con, "SELECT count(*) FROM messages WHERE session_id = ?", sid)
    for sid in doomed:
        con.execute(
            "UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ?", (sid,)
        )
        con.execute("DELETE FROM messages WHERE session_id = ?", (sid,))
        con.execute("DELETE FROM in_place_compactions WHERE session_id = ?", (sid,))
        con.execute("DELETE FROM sessions WHERE id = ?", (sid,))
        con.execute(
            "DELETE FROM state_meta WHERE key = ? OR (key LIKE ? AND value = ?)",
            (seed_key(sid), IMPORT_KEY_PREFIX + "%", sid),
        )
    return removed
