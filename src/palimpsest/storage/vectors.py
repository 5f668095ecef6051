"""The SQLite vector index: one embedding per message, filled off the append path.

``message_vectors`` (migration ``m010_message_vectors``) holds, per message, the name of
the model that embedded it and its unit-length vector as little-endian float32 bytes: the
layout ``sqlite-vec`` reads. Appends never embed: :meth:`VectorIndex.embed_pending` takes
messages that have no vector for the current model, embeds them in batches outside any
transaction and writes each batch in one short write, so an append waits at most for one
batch's ``INSERT``. The store runs it from its upkeep thread (:mod:`.upkeep`) and, for
whatever the thread has not reached yet, before a search (a read-only store searches the
vectors its writer made).

Nearest neighbours are a scan scored by ``sqlite-vec``'s ``vec_distance_cosine`` (loaded
into each connection that searches) under the search's own filters (role, source,
excluded sessions, hidden rewound turns: :mod:`.fts_query`'s SQL conditions). There is no
``vec0`` virtual table: its KNN is a scan too at this size, and a file holding one could
not be opened by a palimpsest without the extension. Without ``sqlite-vec`` (a caller's
own embedding function, no extra), a Python function of the same name does the scoring,
more slowly. What is embedded is the message text redacted
(:func:`palimpsest.safety.redact`) and cut to :data:`EMBED_CHARS`.
"""

from __future__ import annotations

import logging
import math
import sys
import threading
import weakref
from array import array
from collections.abc import Sequence
from typing import Any

import apsw

from ..safety.redact import redact
from .db import Database
from .embedding import EmbeddingModel
from .search_plan import SEARCH_COLUMNS
from .secrets_keeper import newest_message
from .store_common import SearchFilters

__all__ = [
    "EMBED_BATCH",
    "EMBED_CHARS",
    "VectorIndex",
    "load_vector_functions",
    "pack",
    "search_hits",
    "term_coverage",
    "unpack",
]

log = logging.getLogger(__name__)

EMBED_BATCH = 256
"""Messages embedded (and written, in one transaction) per step."""

EMBED_CHARS = 4000
"""Characters of a message that are embedded (a static model averages its tokens: the
start of a long tool output says what it is about; the rest dilutes it)."""

DISTANCE_FUNCTION = "vec_distance_cosine"

NEAR_OVERFETCH = 4
"""The vector scan keeps this many times the asked-for neighbours before the search's
filters (roles, sources, excluded sessions) apply to them."""

_LOADED: weakref.WeakSet[apsw.Connection] = weakref.WeakSet()


def pack(vector: Sequence[float]) -> bytes:
    """``vector`` scaled to unit length, as float32 bytes (little-endian)."""
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    data = array("f", (x / norm for x in vector))
    if sys.byteorder != "little":
        data.byteswap()
    return data.tobytes()


def unpack(blob: bytes) -> list[float]:
    data = array("f")
    data.frombytes(blob)
    if sys.byteorder != "little":
        data.byteswap()
    return data.tolist()


def _python_distance(*args: Any) -> float | None:
    """Cosine distance of two packed unit vectors (the fallback without ``sqlite-vec``)."""
    a, b = args
    if a is None or b is None or len(a) != len(b):
        return None
    return 1.0 - sum(x * y for x, y in zip(unpack(a), unpack(b), strict=True))


def load_vector_functions(con: apsw.Connection) -> bool:
    """Make :data:`DISTANCE_FUNCTION` callable on ``con``; True when ``sqlite-vec`` does it."""
    if con in _LOADED:
        return True
    try:
        import sqlite_vec

        con.enable_load_extension(True)
        try:
            con.load_extension(sqlite_vec.loadable_path())
        finally:
            con.enable_load_extension(False)
        _LOADED.add(con)
        return True
    except (ImportError, apsw.Error, AttributeError):
        log.debug("sqlite-vec not loaded; cosine distance in Python", exc_info=True)
        con.create_scalar_function(DISTANCE_FUNCTION, _python_distance, 2, deterministic=True)
        return False


def _text(content: str | None, tool_name: str | None) -> str:
    text = (content or "").strip()
    if tool_name:
        text = f"{tool_name} {text}"
    return redact(text[:EMBED_CHARS])


_PENDING = (
    "SELECT m.id, m.content, m.tool_name FROM messages AS m"
    " WHERE m.id > ? AND COALESCE(m.content, '') <> '' AND NOT EXISTS"
    " (SELECT 1 FROM message_vectors AS v WHERE v.message_id = m.id AND v.model = ?)"
    " ORDER BY m.id DESC LIMIT ?"
)


class VectorIndex:
    """The vectors of one :class:`~.db.Database` for one :class:`EmbeddingModel`."""

    def __init__(self, db: Database, model: EmbeddingModel, weight: float | None = None) -> None:
        from .fusion import FUSION_WEIGHT

        self.db = db
        self.model = model
        #: How much meaning counts against words in :meth:`fuse` (0..1).
        self.weight = FUSION_WEIGHT if weight is None else float(weight)
        self._seen = 0  # catch_up() has embedded every message up to this id
        self._lock = threading.Lock()  # one embedding pass at a time per store

    # -- filling -------------------------------------------------------------------------

    def pending(self, limit: int = EMBED_BATCH, after: int = 0) -> list[tuple[int, str]]:
        """Up to ``limit`` messages (with ids above ``after``) without a vector of this
        model, newest first."""
        with self.db.reader() as con:
            found = con.execute(_PENDING, (after, self.model.name, limit)).fetchall()
        return [
            (int(str(mid)), _text(str(content), str(tool) if tool else None))
            for mid, content, tool in found
        ]

    def pending_count(self) -> int:
        return int(
            self.db.scalar(
                "SELECT count(*) FROM messages AS m WHERE COALESCE(m.content, '') <> ''"
                " AND NOT EXISTS (SELECT 1 FROM message_vectors AS v"
                " WHERE v.message_id = m.id AND v.model = ?)",
                (self.model.name,),
            )
        )

    def embed_step(self, batch: int = EMBED_BATCH, after: int = 0) -> int:
        """Embed and store one batch of pending messages (ids above ``after``); how many
        were stored (0: none left)."""
        with self._lock:
            todo = self.pending(batch, after)
            if not todo:
                return 0
            vectors = self.model([text for _, text in todo])
            rows = [
                (mid, self.model.name, pack(vec), mid)
                for (mid, _), vec in zip(todo, vectors, strict=True)
            ]

            def store(con: apsw.Connection) -> None:
                # a message deleted since it was read gets no vector (and breaks no key)
                con.executemany(
                    "INSERT OR REPLACE INTO message_vectors (message_id, model, vector)"
                    " SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM messages WHERE id = ?)",
                    rows,
                )

            self.db.write(store)
            return len(rows)

    def embed_pending(self, batch: int = EMBED_BATCH, after: int = 0) -> int:
        """Embed every pending message (ids above ``after``), batch by batch; how many
        were stored."""
        done = 0
        while step := self.embed_step(batch, after):
            done += step
        return done

    def upkeep_task(self) -> bool:
        """One step for the upkeep thread: True while there may be more to embed."""
        return self.embed_step() > 0

    # -- searching -----------------------------------------------------------------------

    def nearest(
        self,
        con: apsw.Connection,
        query: str,
        *,
        filters: Sequence[str] = (),
        params: Sequence[Any] = (),
        limit: int = 50,
    ) -> list[dict[str, Any]]:
        """The ``limit`` messages closest in meaning to ``query`` that pass ``filters`` (SQL
        conditions over ``m`` = messages and ``s`` = sessions, with their ``params``), as
        search hits (:data:`~.search_plan.SEARCH_COLUMNS` plus ``similarity``), closest
        first (call :meth:`catch_up` first for messages not embedded yet)."""
        load_vector_functions(con)
        target = pack(self.model([query])[0])
        # Score the vectors alone first (no join, no text per row), then filter the
        # nearest few; only when the filters leave too few, score under them directly.
        wide = limit * NEAR_OVERFETCH
        inner = (
            f"SELECT message_id AS id, 1.0 - {DISTANCE_FUNCTION}(vector, ?) AS similarity"
            " FROM message_vectors WHERE model = ?"
        )
        hits = self._near(
            con,
            inner + " ORDER BY similarity DESC LIMIT ?",
            (target, self.model.name, wide),
            filters,
            params,
            limit,
        )
        if len(hits) < limit:
            counted = con.execute(
                "SELECT count(*) FROM message_vectors WHERE model = ?", (self.model.name,)
            ).fetchall()
            if int(str(counted[0][0])) > wide:
                hits = self._near(con, inner, (target, self.model.name), filters, params, limit)
        return hits

    @staticmethod
    def _near(
        con: apsw.Connection,
        inner: str,
        inner_params: tuple[Any, ...],
        filters: Sequence[str],
        params: Sequence[Any],
        limit: int,
    ) -> list[dict[str, Any]]:
        conditions = " AND ".join(["1", *filters])
        sql = (
            f"WITH near AS MATERIALIZED ({inner})"
            " SELECT m.id, m.session_id, m.role, substr(COALESCE(m.content, ''), 1, 120),"
            " m.timestamp, s.source, s.model, s.title, 0.0, m.tool_name, s.started_at,"
            " near.similarity FROM near JOIN messages AS m ON m.id = near.id"
            " JOIN sessions AS s ON s.id = m.session_id"
            f" WHERE {conditions} ORDER BY near.similarity DESC, m.id DESC LIMIT ?"
        )
        hits = []
        for row in con.execute(sql, (*inner_params, *params, limit)).fetchall():
            hit = dict(zip(SEARCH_COLUMNS, row[:-1], strict=True))
            hit["similarity"] = float(str(row[-1]))
            hits.append(hit)
        return hits

    def fuse(
        self,
        con: apsw.Connection,
        query: str,
        word_hits: Sequence[dict[str, Any]],
        *,
        filters: Sequence[str] = (),
        params: Sequence[Any] = (),
        weight: float | None = None,
    ) -> list[dict[str, Any]]:
        """``word_hits`` fused with the :data:`~.fusion.SEMANTIC_CANDIDATES` nearest
        messages under the same filters (:func:`~.fusion.fuse_hits`, word scores weighed
        by :func:`term_coverage`), best first."""
        from .fts_query import session_date
        from .fusion import SEMANTIC_CANDIDATES, fuse_hits
        from .turn_context import add_context

        near = self.nearest(con, query, filters=filters, params=params, limit=SEMANTIC_CANDIDATES)
        for hit in near:
            hit["session_date"] = session_date(hit.get("session_started"))
        coverage = term_coverage(con, query, [int(h["id"]) for h in word_hits])
        fused = fuse_hits(word_hits, near, self.weight if weight is None else weight, coverage)
        return add_context(con, fused, filters, params)

    def catch_up(self) -> None:
        """Embed what the upkeep thread has not reached yet (before a search); a read-only
        store leaves it (its vectors were made by the writer). The first call looks at
        every message; later ones only at messages newer than the newest it saw (older
        ones whose text changed are the upkeep thread's), so a search stays cheap."""
        if self.db.read_only:
            return
        newest = newest_message(self.db)
        if newest <= self._seen:
            return
        self.embed_pending(after=self._seen)
        self._seen = newest


def term_coverage(con: apsw.Connection, query: str, ids: Sequence[int]) -> dict[int, float]:
    """The share of ``query``'s words (:func:`~.query_terms.parse_terms`, stemmed by the
    word index) each of ``ids`` holds, 0..1; empty when the query has no words or the
    store has no word index (the fusion then leaves word scores as they are)."""
    from .fts_sanitize import quote_phrase
    from .query_terms import parse_terms

    words = parse_terms(query).words
    wanted = sorted(set(ids))
    if not words or not wanted:
        return {}
    marks = ",".join("?" * len(wanted))
    sql = f"SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? AND rowid IN ({marks})"
    held = dict.fromkeys(wanted, 0)
    try:
        for word in words:
            for (rowid,) in con.execute(sql, (quote_phrase(word), *wanted)):
                held[int(str(rowid))] += 1
    except apsw.SQLError:  # no FTS5 word index in this build (LIKE search)
        log.debug("no word index; coverage not counted", exc_info=True)
        return {}
    return {item: count / len(words) for item, count in held.items()}


def search_hits(
    db: Database,
    vectors: VectorIndex | None,
    query: str,
    filters: SearchFilters,
    *,
    has_fts: bool,
    has_trigram: bool,
) -> list[dict[str, Any]]:
    """The SQLite store's ranked hits for ``query``: words only (:mod:`.fts_query`,
    :mod:`.retrieval`), or, with ``vectors``, word and meaning scores fused so each
    conversation is ranked by its best turn (:mod:`.fusion`)."""
    from .fts_query import build_search, run_search
    from .fusion import SEMANTIC_CANDIDATES

    if not query.strip():
        vectors = None
    limit, offset = max(0, int(filters.limit)), max(0, int(filters.offset))
    want = limit + offset
    plan = build_search(
        query,
        role_filter=filters.role_filter,
        source=filters.source,
        exclude_sources=filters.exclude_sources,
        limit=filters.limit if vectors is None else max(want, SEMANTIC_CANDIDATES),
        offset=filters.offset if vectors is None else 0,
        exclude_session_ids=filters.exclude_session_ids,
        has_trigram=has_trigram,
        has_fts=has_fts,
        match=filters.match,  # type: ignore[arg-type]  # checked by build_search
        snippets=False,
    )
    if vectors is not None:
        vectors.catch_up()
    with db.reader() as con:
        hits = run_search(con, plan)
        if vectors is None:
            return hits
        where, params = filters.conditions()
        fused = vectors.fuse(con, query, hits, filters=where, params=params)
        return fused[offset:want]
