"""Which sessions belong to one conversation: compression chains, lineage, listing rows.

Three kinds of child point at a parent through ``parent_session_id``: compression
continuations, delegated sub-agents and ``/branch`` children. Only the first continues the
same conversation, and it is recognised by time, not by a flag (spec SS-27): the parent
ended with ``end_reason = 'compression'`` and the child started at or after that end.
Sub-agents and branches are created while the parent is still live, so they never satisfy
the predicate, and :func:`compression_tip` never follows them.

``lineage`` is the wider family (every ancestor and descendant through any kind of edge);
session search uses it to skip the conversation the agent is already in (SS-55, SS-56).
All walks are bounded and cycle-safe: the file may have been edited by hand.
"""

from __future__ import annotations

import json
from typing import Any

import apsw

from ..messages import content_text
from ..safety.redact import redact
from .db import rows

__all__ = [
    "MAX_RESUME_HOPS",
    "MAX_TIP_HOPS",
    "PREVIEW_CHARS",
    "compression_chain",
    "compression_parent",
    "compression_tip",
    "lineage",
    "lineage_root",
    "list_rows",
    "resume_target",
]

#: SS-29: how far a tip lookup follows continuations before giving up.
MAX_TIP_HOPS = 100
#: SS-43: preview length before the ``...``.
PREVIEW_CHARS = 60

_CONTINUATION_CHILD = """
    SELECT c.id FROM sessions AS c JOIN sessions AS p ON p.id = c.parent_session_id
    WHERE c.parent_session_id = ? AND p.end_reason = 'compression'
      AND p.ended_at IS NOT NULL AND c.started_at >= p.ended_at
    ORDER BY c.started_at DESC, c.rowid DESC LIMIT 1
"""


def compression_tip(con: apsw.Connection, session_id: str) -> str:
    """The newest compression continuation reachable from ``session_id`` (SS-29).

    Returns ``session_id`` itself when it has no continuation or is unknown.
    """
    current, seen = session_id, {session_id}
    for _ in range(MAX_TIP_HOPS):
        found = con.execute(_CONTINUATION_CHILD, (current,)).fetchall()
        if not found or found[0][0] in seen:
            break
        current = str(found[0][0])
        seen.add(current)
    return current


def compression_parent(con: apsw.Connection, session_id: str) -> str | None:
    """The session ``session_id`` continues after a compression, if it is a continuation."""
    found = con.execute(
        "SELECT p.id FROM sessions AS c JOIN sessions AS p ON p.id = c.parent_session_id"
        " WHERE c.id = ? AND p.end_reason = 'compression' AND p.ended_at IS NOT NULL"
        " AND c.started_at >= p.ended_at",
        (session_id,),
    ).fetchall()
    return str(found[0][0]) if found else None


def compression_chain(con: apsw.Connection, session_id: str) -> list[str]:
    """Every session of ``session_id``'s compression chain, oldest first."""
    first, seen = session_id, {session_id}
    for _ in range(MAX_TIP_HOPS):
        parent = compression_parent(con, first)
        if parent is None or parent in seen:
            break
        first = parent
        seen.add(parent)
    chain, seen = [first], {first}
    for _ in range(MAX_TIP_HOPS):
        found = con.execute(_CONTINUATION_CHILD, (chain[-1],)).fetchall()
        if not found or found[0][0] in seen:
            break
        chain.append(str(found[0][0]))
        seen.add(chain[-1])
    return chain


#: SS-36: how far a resume walks down to find a descendant that holds messages.
MAX_RESUME_HOPS = 32


def resume_target(con: apsw.Connection, session_id: str) -> str:
    """The session to reopen when a user resumes ``session_id`` (SS-36).

    Follow compression continuations to the tip (never sub-agents or branches). If that
    session holds no messages, walk the most recently started children, at most 32 hops,
    to the first descendant that does; if none does, keep the tip.
    """
    tip = compression_tip(con, session_id)
    current, seen = tip, {tip}
    for _ in range(MAX_RESUME_HOPS):
        if con.execute(
            "SELECT 1 FROM messages WHERE session_id = ? LIMIT 1", (current,)
        ).fetchall():
            return current
        child = con.execute(
            "SELECT id FROM sessions WHERE parent_session_id = ?"
            " ORDER BY started_at DESC, rowid DESC LIMIT 1",
            (current,),
        ).fetchall()
        if not child or child[0][0] in seen:
            break
        current = str(child[0][0])
        seen.add(current)
    return tip


def _parent_of(con: apsw.Connection, session_id: str) -> str | None:
    found = con.execute(
        "SELECT parent_session_id FROM sessions WHERE id = ?", (session_id,)
    ).fetchall()
    return str(found[0][0]) if found and found[0][0] is not None else None


def lineage_root(con: apsw.Connection, session_id: str) -> str:
    """The top-most ancestor through ``parent_session_id`` (any kind of edge), cycle-safe."""
    current, seen = session_id, {session_id}
    while True:
        parent = _parent_of(con, current)
        if parent is None or parent in seen:
            return current
        current = parent
        seen.add(parent)


def lineage(con: apsw.Connection, session_id: str) -> list[str]:
    """``session_id``, its ancestors and all their descendants, root first.

    This is the whole family tree under :func:`lineage_root`, so siblings reached through
    a shared ancestor are included: everything already in (or summarized into) the
    conversation the agent is having.
    """
    root = lineage_root(con, session_id)
    family = [
        str(r[0])
        for r in con.execute(
            """
            WITH RECURSIVE tree(id) AS (
                SELECT ?
                UNION
                SELECT s.id FROM sessions AS s JOIN tree ON s.parent_session_id = tree.id
            )
            SELECT id FROM tree
            """,
            (root,),
        )
    ]
    if session_id not in family:
        family.append(session_id)
    return family


def _preview(con: apsw.Connection, session_id: str) -> str:
    found = con.execute(
        "SELECT content, content_json FROM messages WHERE session_id = ? AND role = 'user'"
        " ORDER BY timestamp, id LIMIT 1",
        (session_id,),
    ).fetchall()
    if not found or found[0][0] is None:
        return ""
    raw, is_json = found[0]
    if is_json:
        raw = content_text(json.loads(str(raw)))
    # Redacted before the cut: a key cut at character 60 no longer looks like a key.
    text = " ".join(redact(str(raw)).split())
    return text[:PREVIEW_CHARS] + "..." if len(text) > PREVIEW_CHARS else text


def _last_active(con: apsw.Connection, session: dict[str, Any]) -> float:
    found = con.execute(
        "SELECT max(timestamp) FROM messages WHERE session_id = ?", (session["id"],)
    ).fetchall()
    value = found[0][0] if found else None
    return float(value) if value is not None else float(session["started_at"])


_TOTALS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "api_call_count",
    "unreported_calls",
)


def _session(con: apsw.Connection, session_id: str) -> dict[str, Any]:
    return rows(con.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)))[0]


def list_rows(
    con: apsw.Connection,
    *,
    limit: int = 20,
    offset: int = 0,
    source: str | None = None,
    include_children: bool = False,
) -> list[dict[str, Any]]:
    """One row per logical conversation, newest first (SS-41..SS-43).

    Roots and ``/branch`` children are listed; compression continuations and sub-agent
    children only with ``include_children`` (and then every session is its own row, with no
    projection). Otherwise a conversation whose root ended with
    ``compression`` shows its tip's id, title, counts, preview and activity, keeps the
    root's ``started_at`` and gains ``_lineage_root_id``. Token counters, ``api_call_count``
    and ``estimated_cost_usd`` are summed over the whole chain, since each continuation
    pays for its own calls; ``chain_length`` counts its sessions.
    """
    where = ["(? IS NULL OR s.source = ?)"]
    if not include_children:
        where.append(
            "(s.parent_session_id IS NULL OR EXISTS (SELECT 1 FROM sessions AS p"
            " WHERE p.id = s.parent_session_id AND p.end_reason = 'branched'"
            " AND p.ended_at IS NOT NULL AND s.started_at >= p.ended_at))"
        )
    found = rows(
        con.execute(
            f"SELECT s.* FROM sessions AS s WHERE {' AND '.join(where)}"
            " ORDER BY s.started_at DESC, s.id DESC LIMIT ? OFFSET ?",
            (source, source, max(0, int(limit)), max(0, int(offset))),
        )
    )
    result = []
    for root in found:
        project = root["end_reason"] == "compression" and not include_children
        chain = compression_chain(con, root["id"]) if project else []
        row = dict(_session(con, chain[-1])) if len(chain) > 1 else dict(root)
        members = [_session(con, sid) for sid in chain] if len(chain) > 1 else [root]
        row["started_at"] = root["started_at"]
        row["_lineage_root_id"] = root["id"]
        row["chain_length"] = len(members)
        for key in _TOTALS:
            row[key] = sum(int(m[key] or 0) for m in members)
        costs = [m["estimated_cost_usd"] for m in members if m["estimated_cost_usd"] is not None]
        row["estimated_cost_usd"] = sum(costs) if costs else None
        row["total_tokens"] = sum(
            row[k]
            for k in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
        )
        row["preview"] = _preview(con, row["id"])
        row["last_active"] = _last_active(con, row)
        result.append(row)
    return result
