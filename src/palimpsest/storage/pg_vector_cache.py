"""The vectors a PostgreSQL store's searches score, kept in the process between searches.

Scoring by meaning on PostgreSQL happens in Python (:mod:`.pg_vectors`): a search needs
the vectors of the newest :data:`~.pg_vectors.VECTOR_WINDOW` messages that pass its
filters. Reading them all from the server each time (about 1 KB a message, 20 MB at the
full window) cost most of a search's time: about 0.9 s at 20,000 messages on the loaded
test machine, against about 0.13 s for the same statement returning only each row's id
and version (docs/postgres.md). So :class:`VectorCache` asks the server only *which*
rows are in the window, as ``(message id, xmin)``, and reads the vectors of the rows it
does not hold yet, or whose ``xmin`` changed (PostgreSQL gives a row a new ``xmin``
whenever it is written again: a message re-embedded after an edit, another model's
vector replaced). What a search scores is therefore always what the server holds at
that moment, never an older vector.

The cache keeps at most twice the window (the rows outside the latest window go first)
and is per store object, so per process; its memory is about 1 KB a message held.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import psycopg

__all__ = ["VectorCache"]


class VectorCache:
    """Packed vectors by message id, each with the row version it was read at."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._rows: dict[int, tuple[str, bytes]] = {}
        self._lock = threading.Lock()
        #: Vectors read from the server since the cache was made (for tests and figures).
        self.fetched = 0

    def __len__(self) -> int:
        return len(self._rows)

    def window(
        self,
        con: psycopg.Connection[Any],
        model: str,
        conditions: Sequence[str],
        params: Sequence[Any],
        width: int,
        limit: int,
    ) -> tuple[list[int], bytes]:
        """The ids of the newest ``limit`` rows of ``model``'s vectors that pass
        ``conditions`` (those of ``width`` bytes) (SQL over ``v`` = message_vectors, ``m`` = messages,
        ``s`` = sessions, with ``%s`` parameters), newest first, and their vectors end to
        end in the same order."""
        # ids and versions only: no vector is read (not even its length) for rows held
        where = " AND ".join(["v.model = %s", *conditions])
        found = con.execute(
            "SELECT v.message_id, v.xmin::text FROM message_vectors AS v"
            " JOIN messages AS m ON m.id = v.message_id JOIN sessions AS s ON s.id = m.session_id"
            f" WHERE {where} ORDER BY v.message_id DESC LIMIT %s",
            (model, *params, limit),
        ).fetchall()
        versions = {int(mid): str(xmin) for mid, xmin in found}
        with self._lock:
            stale = [m for m, x in versions.items() if self._rows.get(m, ("",))[0] != x]
        fresh: dict[int, tuple[str, bytes]] = {}
        if stale:
            rows = (
                con.cursor(binary=True)  # bytea as bytes, not hex text
                .execute(
                    "SELECT message_id, xmin::text, vector FROM message_vectors"
                    " WHERE message_id = ANY(%s) AND model = %s AND length(vector) = %s",
                    (stale, model, width),
                )
                .fetchall()
            )
            fresh = {int(mid): (str(xmin), bytes(vec)) for mid, xmin, vec in rows}
        with self._lock:
            self._rows.update(fresh)
            self.fetched += len(fresh)
            # a row rewritten between the two statements is scored as read now (newer);
            # a stale row gone between them is left out, never scored with its old vector
            gone = set(stale) - set(fresh)  # or of another width: never held
            ids = [m for m in versions if m in self._rows and m not in gone]
            block = b"".join(self._rows[m][1] for m in ids)
            if len(self._rows) > 2 * self.capacity:
                keep = set(ids)
                self._rows = {m: r for m, r in self._rows.items() if m in keep}
        return ids, block
