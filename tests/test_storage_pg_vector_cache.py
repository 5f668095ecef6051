"""The vectors a PostgreSQL store keeps between searches (palimpsest.storage.pg_vector_cache),
on a real server: read once, read again only when the row was written again, and never
scored once the row is gone. Skipped without a server (see tests/conftest.py)."""

from __future__ import annotations

import re

from palimpsest.storage.pg_store import PostgresSessionStore
from palimpsest.storage.pg_vector_cache import VectorCache
from palimpsest.storage.vectors import pack

TOPICS = [{"database", "postgres"}, {"kitten", "pet"}, {"car", "electric"}]


def topics(texts: list[str]) -> list[list[float]]:
    """A tiny embedding (the model boundary): one dimension per topic's words."""
    words = [set(re.findall(r"\w+", t.lower())) for t in texts]
    return [[float(len(w & topic)) + 0.01 for topic in TOPICS] for w in words]


def _window(
    store: PostgresSessionStore, cache: VectorCache, *conditions: str
) -> tuple[list[int], bytes]:
    assert store.vectors is not None
    with store.database.connection() as con:
        return cache.window(con, store.vectors.model.name, conditions, (), 12, 100)


def test_vectors_are_read_once_and_again_only_when_rewritten(pg_url: str) -> None:
    store = PostgresSessionStore(pg_url, embedder=topics, background_embedding=False)
    store.create_session("a", source="cli")
    store.create_session("b", source="cron")
    first = store.append_messages(
        "a", [{"role": "user", "content": t} for t in ("We run Postgres.", "A kitten!")]
    )
    other = store.append_message("b", "user", "An electric car.")
    assert store.vectors is not None and store.vectors.embed_pending() == 3
    cache = VectorCache(capacity=100)

    ids, block = _window(store, cache)
    assert ids == [other, first[1], first[0]]  # newest first
    assert block == b"".join(
        pack(v) for v in topics(["An electric car.", "A kitten!", "We run Postgres."])
    )
    assert cache.fetched == 3
    assert _window(store, cache) == (ids, block) and cache.fetched == 3  # nothing read again

    # the text changes: the vector is dropped, embedded again, and read again (new xmin)
    store.database.write(
        lambda con: con.execute(
            "UPDATE messages SET content = 'Now a pet database.' WHERE id = ?", (first[1],)
        )
    )
    assert store.vectors.embed_pending() == 1
    ids, block = _window(store, cache)
    assert cache.fetched == 4
    assert block[12:24] == pack(topics(["Now a pet database."])[0])

    # filters apply on the server; a deleted message is never scored again
    assert _window(store, cache, "s.source = 'cli'")[0] == first[::-1]
    assert store.delete_session("b")
    assert _window(store, cache)[0] == first[::-1]
    store.close()


def test_the_cache_keeps_at_most_twice_its_capacity(pg_url: str) -> None:
    store = PostgresSessionStore(pg_url, embedder=topics, background_embedding=False)
    store.create_session("a", source="cli")
    ids = store.append_messages("a", [{"role": "user", "content": f"pet {i}"} for i in range(7)])
    assert store.vectors is not None and store.vectors.embed_pending() == 7
    cache = VectorCache(capacity=2)
    with store.database.connection() as con:
        for newest in range(3, 8):  # windows over older and older messages
            cache.window(con, store.vectors.model.name, [f"m.id <= {ids[newest - 1]}"], (), 12, 2)
    assert len(cache) <= 4
    store.close()
