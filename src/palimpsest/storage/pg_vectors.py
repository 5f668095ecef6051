"""Search by meaning on PostgreSQL: message vectors in a ``bytea`` column, scored in Python.

The SQLite store keeps its vectors in ``message_vectors`` and scores them with
``sqlite-vec`` (:mod:`.vectors`). PostgreSQL has the same table (``pg_schema`` migration
2) holding the same little-endian float32 bytes. pgvector is not part of Debian's server
package and a shared server may not allow extensions, so the vectors are scored here, in
the client:

* **Filling.** Appends never embed. :class:`PgVectorIndex` embeds pending messages (no
  vector of the current model) in batches of :data:`~.vectors.EMBED_BATCH`, each written in
  one short transaction, from a daemon thread an append wakes (:meth:`notify` only sets an
  event) and, for whatever the thread has not reached yet, before a search. Several
  processes on one database may embed the same message at once; the last write wins, and
  both wrote the same vector.
* **Scoring.** A search reads, under the search's own filters (roles, sources, excluded
  sessions, hidden rewound turns), the vectors of the newest :data:`VECTOR_WINDOW`
  messages, in one statement, and scores them against the query's vector with numpy (a
  plain-Python loop when numpy is missing); the :data:`~.fusion.SEMANTIC_CANDIDATES`
  closest become meaning hits. Cost per search: reading about 1 KB per scored message (the
  bundled model's 256 floats) and one matrix-vector product (measured: docs/postgres.md).
  Older messages are found by their words only.
* **Fusion** is :func:`~.fusion.fuse_hits`, the SQLite store's, with the same weight.
"""

from __future__ import annotations

import heapq
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import psycopg

from .embedding import EmbeddingModel, EmbedFunction, as_model
from .fts_query import session_date
from .pg_db import PgDatabase
from .pg_vector_cache import VectorCache
from .pg_words import query_lexemes
from .query_terms import parse_terms
from .search_plan import SEARCH_COLUMNS
from .store_common import SearchFilters
from .vectors import EMBED_BATCH, pack, unpack
from .vectors import _text as _text  # what is embedded: the same text as on SQLite

__all__ = [
    "VECTOR_WINDOW",
    "PgVectorIndex",
    "nearest_ids",
    "nearest_in_block",
    "search_hits",
    "term_coverage",
]

log = logging.getLogger(__name__)

VECTOR_WINDOW = 20_000
"""A search scores the vectors of at most this many messages (the newest that pass its
filters): about 20 MB read per search at 256 dimensions."""

CATCH_UP_MARGIN = 1_000
"""Ids below the newest one seen that a catch-up looks at again: a concurrent writer's
transaction may commit a lower id after a higher one was seen."""

FULL_PASS_SECONDS = 300.0
"""How often the background thread looks at every message (a text changed by an edit,
ids the catch-up margin missed), not only the new ones: a scan of the message ids, once
every five minutes while the thread runs."""

IDLE_SECONDS = 1.0
"""How long the background thread sleeps when no append wakes it."""

_PENDING = (
    "SELECT m.id, m.content, m.tool_name FROM messages AS m"
    " WHERE m.id > %s AND COALESCE(m.content, '') <> '' AND NOT EXISTS"
    " (SELECT 1 FROM message_vectors AS v WHERE v.message_id = m.id AND v.model = %s)"
    " ORDER BY m.id DESC LIMIT %s"
)

_STORE = (
    "INSERT INTO message_vectors (message_id, model, vector)"
    " SELECT u.id, %s, u.vector FROM unnest(%s::bigint[], %s::bytea[]) AS u(id, vector)"
    " JOIN messages AS m ON m.id = u.id"  # a message deleted since it was read gets none
    " ON CONFLICT (message_id) DO UPDATE SET model = EXCLUDED.model, vector = EXCLUDED.vector"
)


def nearest_ids(
    query: bytes, ids: Sequence[int], vectors: Sequence[bytes], limit: int
) -> list[tuple[int, float]]:
    """The ``limit`` of ``ids`` whose packed unit ``vectors`` are closest to the packed
    ``query`` (cosine), as ``(id, similarity)``, closest first, ties newest (highest id)
    first; a vector of another width is never among them."""
    width = len(query)
    kept = [(i, v) for i, v in zip(ids, vectors, strict=True) if len(v) == width]
    return nearest_in_block(query, [i for i, _ in kept], b"".join(v for _, v in kept), limit)


def nearest_in_block(
    query: bytes, ids: Sequence[int], block: bytes, limit: int
) -> list[tuple[int, float]]:
    """:func:`nearest_ids` over one contiguous ``block``: the packed vectors of ``ids``,
    in their order, end to end (what one aggregate statement reads: no Python object
    per row); with numpy one matrix-vector product, else a loop."""
    width = len(query)
    if not ids or limit <= 0 or width == 0 or len(block) != width * len(ids):
        return []
    try:
        import numpy as np
    except ImportError:  # a caller's own embedding function, without the extra
        target = unpack(query)
        scored = (
            (
                sum(
                    x * y
                    for x, y in zip(unpack(block[k * width : (k + 1) * width]), target, strict=True)
                ),
                i,
            )
            for k, i in enumerate(ids)
        )
        return [(i, score) for score, i in heapq.nlargest(limit, scored)]
    matrix = np.frombuffer(block, "<f4").reshape(len(ids), width // 4)
    scores = matrix @ np.frombuffer(query, "<f4")
    order = np.asarray(ids, dtype=np.int64)
    if len(ids) > limit:  # the best ``limit`` (ties at the cut included), then sorted
        cut = np.partition(scores, len(ids) - limit)[len(ids) - limit]
        near = np.flatnonzero(scores >= cut)
        scores, order = scores[near], order[near]
    best = np.lexsort((-order, -scores))[:limit]
    return [(int(order[k]), float(scores[k])) for k in best]


def term_coverage(con: psycopg.Connection[Any], query: str, ids: Sequence[int]) -> dict[int, float]:
    """The share of ``query``'s words each of ``ids`` holds in its ``tsv`` (0..1), as
    :func:`.vectors.term_coverage` counts it in the SQLite word index."""
    words = parse_terms(query).words
    wanted = sorted(set(ids))
    if not words or not wanted:
        return {}
    # each word as its lexemes ANDed (pg_words: the tokenizer that wrote the index)
    asked = [
        " & ".join("'" + x.replace("\\", "\\\\").replace("'", "''") + "'" for x in lexemes)
        for lexemes in (query_lexemes([w]) for w in words)
        if lexemes
    ]
    if not asked:
        return dict.fromkeys(wanted, 0.0)
    found = con.execute(
        "SELECT m.id, (SELECT count(*) FROM unnest(%s::text[]) AS w(q)"
        " WHERE m.tsv @@ w.q::tsquery) FROM messages AS m WHERE m.id = ANY(%s)",
        (asked, wanted),
    ).fetchall()
    return {int(item): int(count) / len(words) for item, count in found}


class PgVectorIndex:
    """The vectors of one :class:`~.pg_db.PgDatabase` for one :class:`EmbeddingModel`.

    The same methods as the SQLite :class:`~.vectors.VectorIndex` (``pending_count``,
    ``embed_step``, ``embed_pending``, ``catch_up``, ``nearest``, ``fuse``, ``weight``),
    plus the background thread (:meth:`notify`, :meth:`close`).
    """

    def __init__(
        self,
        db: PgDatabase,
        model: EmbeddingModel,
        weight: float | None = None,
        *,
        background: bool = True,
    ) -> None:
        from .fusion import FUSION_WEIGHT

        self.db = db
        self.model = model
        #: How much meaning counts against words in :meth:`fuse` (0..1).
        self.weight = FUSION_WEIGHT if weight is None else float(weight)
        #: Embedding passes of the background thread that failed (logged).
        self.errors = 0
        self._background = background
        self._seen = 0  # catch_up() has embedded every message up to this id (less a margin)
        self._lock = threading.Lock()  # one embedding step at a time per store
        self._catching_up = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        #: The window's vectors, kept between searches (:mod:`.pg_vector_cache`).
        self.cache = VectorCache(VECTOR_WINDOW)

    @classmethod
    def for_store(
        cls,
        db: PgDatabase,
        embedder: EmbeddingModel | EmbedFunction | str | None,
        background: bool = True,
    ) -> PgVectorIndex | None:
        """The index a store opened with ``embedder`` keeps (``None`` without one)."""
        if embedder is None:
            return None
        return cls(db, as_model(embedder), background=background)

    # -- filling -------------------------------------------------------------------------

    def pending(self, limit: int = EMBED_BATCH, after: int = 0) -> list[tuple[int, str]]:
        """Up to ``limit`` messages (ids above ``after``) without a vector of this model,
        newest first."""
        with self.db.connection() as con:
            found = con.execute(_PENDING, (after, self.model.name, limit)).fetchall()
        return [(int(mid), _text(content, tool)) for mid, content, tool in found]

    def pending_count(self) -> int:
        with self.db.connection() as con:
            row = con.execute(
                "SELECT count(*) FROM messages AS m WHERE COALESCE(m.content, '') <> ''"
                " AND NOT EXISTS (SELECT 1 FROM message_vectors AS v"
                " WHERE v.message_id = m.id AND v.model = %s)",
                (self.model.name,),
            ).fetchone()
        return int(row[0]) if row else 0

    def embed_step(self, batch: int = EMBED_BATCH, after: int = 0) -> int:
        """Embed and store one batch of pending messages (ids above ``after``); how many
        were embedded (0: none left)."""
        with self._lock:
            todo = self.pending(batch, after)
            if not todo:
                return 0
            vectors = self.model([text for _, text in todo])  # outside any transaction
            ids = [mid for mid, _ in todo]
            packed = [pack(v) for v in vectors]
            self.db.transact(lambda con: con.execute(_STORE, (self.model.name, ids, packed)))
            return len(todo)

    def embed_pending(self, batch: int = EMBED_BATCH, after: int = 0) -> int:
        """Embed every pending message (ids above ``after``), batch by batch."""
        done = 0
        while step := self.embed_step(batch, after):
            done += step
        return done

    def catch_up(self) -> None:
        """Embed the messages newer than the newest seen (all of them the first time);
        run before a search and by the background thread."""
        with self._catching_up:
            with self.db.connection() as con:
                row = con.execute("SELECT COALESCE(max(id), 0) FROM messages").fetchone()
            newest = int(row[0]) if row else 0
            if newest <= self._seen:
                return
            self.embed_pending(after=max(0, self._seen - CATCH_UP_MARGIN) if self._seen else 0)
            self._seen = newest

    # -- the background thread -----------------------------------------------------------

    def notify(self) -> None:
        """Called after an append commits: wake (or start) the embedding thread."""
        if not self._background or self._stop.is_set():
            return
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name="palimpsest-pg-embed", daemon=True
            )
            self._thread.start()
        self._wake.set()

    def _run(self) -> None:
        last_full = 0.0
        while not self._stop.is_set():
            self._wake.wait(IDLE_SECONDS)
            self._wake.clear()
            if self._stop.is_set():
                break
            try:
                self.catch_up()
                if time.monotonic() - last_full >= FULL_PASS_SECONDS:
                    self.embed_pending()
                    last_full = time.monotonic()
            except Exception:  # a caller's embedding function or the server failed
                self.errors += 1
                log.warning("embedding new messages failed; retrying later", exc_info=True)
                self._stop.wait(IDLE_SECONDS)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def close(self) -> None:
        """Stop the background thread (a step under way finishes first)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    # -- searching -----------------------------------------------------------------------

    def nearest(
        self,
        con: psycopg.Connection[Any],
        query: str,
        *,
        filters: Sequence[str] = (),
        params: Sequence[Any] = (),
        limit: int = 50,
    ) -> list[dict[str, Any]]:
        """The ``limit`` messages closest in meaning to ``query`` among the newest
        :data:`VECTOR_WINDOW` that pass ``filters`` (SQL over ``m`` = messages and ``s`` =
        sessions, written with ``?``), as search hits plus ``similarity``, closest first."""
        target = pack(self.model([query])[0])
        ids, block = self.cache.window(
            con,
            self.model.name,
            [f.replace("?", "%s") for f in filters],
            params,
            len(target),
            VECTOR_WINDOW,
        )
        best = nearest_in_block(target, ids, block, limit)
        if not best:
            return []
        similarity = dict(best)
        rows = con.execute(
            "SELECT m.id, m.session_id, m.role, '', m.timestamp, s.source, s.model, s.title,"
            " 0.0, m.tool_name, s.started_at FROM messages AS m"
            " JOIN sessions AS s ON s.id = m.session_id WHERE m.id = ANY(%s)",
            (list(similarity),),
        ).fetchall()
        hits = []
        for row in rows:
            hit = dict(zip(SEARCH_COLUMNS, row, strict=True))
            hit["similarity"] = similarity[int(hit["id"])]
            hits.append(hit)
        hits.sort(key=lambda h: (-h["similarity"], -int(h["id"])))
        return hits

    def fuse(
        self,
        con: psycopg.Connection[Any],
        query: str,
        word_hits: Sequence[dict[str, Any]],
        *,
        filters: Sequence[str] = (),
        params: Sequence[Any] = (),
        weight: float | None = None,
    ) -> list[dict[str, Any]]:
        """``word_hits`` fused with the nearest messages under the same filters, best first
        (:func:`~.fusion.fuse_hits` with :func:`term_coverage`, as on SQLite)."""
        from .fusion import SEMANTIC_CANDIDATES, fuse_hits
        from .turn_context import add_context

        near = self.nearest(con, query, filters=filters, params=params, limit=SEMANTIC_CANDIDATES)
        for hit in near:
            hit["session_date"] = session_date(hit.get("session_started"))
        coverage = term_coverage(con, query, [int(h["id"]) for h in word_hits])
        fused = fuse_hits(word_hits, near, self.weight if weight is None else weight, coverage)
        return add_context(con, fused, filters, params, pyformat=True)


def search_hits(
    db: PgDatabase,
    vectors: PgVectorIndex | None,
    query: str,
    filters: SearchFilters,
) -> list[dict[str, Any]]:
    """Ranked hits for ``query``: words only (:mod:`.pg_search`), or, with ``vectors``,
    word and meaning scores fused so each conversation is ranked by its best turn."""
    from .fusion import SEMANTIC_CANDIDATES
    from .pg_search import search_hits as word_hits

    fused = vectors is not None and bool(query.strip())
    limit, offset = max(0, int(filters.limit)), max(0, int(filters.offset))
    want = limit + offset
    if vectors is not None and fused:
        vectors.catch_up()
    with db.connection() as con:
        hits = word_hits(
            con,
            query,
            replace(filters, limit=max(want, SEMANTIC_CANDIDATES), offset=0) if fused else filters,
        )
        if vectors is None or not fused:
            return hits
        if want <= 0:
            return []
        where, params = filters.conditions()
        found = vectors.fuse(con, query, hits, filters=where, params=params)
    return found[offset:want]
