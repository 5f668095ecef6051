"""What a session store promises, whatever holds the rows: the typed contract.

:class:`~.sessions.SessionStore` (one SQLite file) and
:class:`~.pg_store.PostgresSessionStore` (a PostgreSQL database) both satisfy
:class:`Store`; :func:`~.factory.open_store` returns one or the other, and every command,
the agent, the integrations and the ``session_search`` tool are written against this
protocol. One test suite (tests/test_storage_contract.py) runs against both backends.

The promises, grouped:

* **sessions**: create (idempotent on the id), read, end (first reason wins), reopen,
  retitle (titles unique), delete (children kept, orphaned), count;
* **lineage**: compression continuations (:meth:`Store.start_continuation`: the parent
  ends with ``compression`` and the child starts no earlier), tips, chains, resume
  targets, the whole family, listing one row per conversation;
* **messages**: append a batch in one transaction (all or nothing, ids in order),
  read back exactly what was written (the :mod:`.codec` round trip);
* **accounting**: token counters and costs added atomically (:mod:`.accounting`);
* **search**: ranked hits (``rank`` lower is better, ``session_rank`` for the session's
  metadata match) from :meth:`Store.search_hits`, the same with redacted snippets from
  :meth:`Store.search_messages`, and the secret values a session revealed;
* **search by meaning**: a store opened with an embedder keeps one vector per message
  (:attr:`Store.vectors`, a :class:`VectorSearch`: filled off the append path, caught up
  before a search) and its searches fuse word and meaning scores (:mod:`.fusion`);
  without one, ``vectors`` is ``None`` and search is by words only;
* **maintenance**: verify (report, never raise) and repair.

``database`` is the small SQL gateway (:class:`SqlGateway`) shared modules use for their
key-value state; it takes the SQLite dialect on both backends (:mod:`.pg_db`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from ..messages import Message
from ..usage import CanonicalUsage
from .embedding import EmbeddingModel

__all__ = ["SqlGateway", "Store", "VectorSearch"]

T = TypeVar("T")


class SqlGateway(Protocol):
    """One write path and pooled reads, in the SQLite dialect (``?`` parameters)."""

    @property
    def read_only(self) -> bool: ...

    def write(self, fn: Callable[[Any], T]) -> T: ...

    def reader(self) -> AbstractContextManager[Any]: ...

    def snapshot(self) -> AbstractContextManager[Any]: ...

    def query(self, sql: str, params: Any = None) -> list[dict[str, Any]]: ...

    def scalar(self, sql: str, params: Any = None) -> Any: ...


@runtime_checkable
class VectorSearch(Protocol):
    """A store's vectors for one embedding model (:mod:`.vectors` on SQLite,
    :mod:`.pg_vectors` on PostgreSQL): what both backends provide."""

    model: EmbeddingModel
    """The model whose vectors are stored and compared (by its name)."""
    weight: float
    """How much meaning counts against words in the fusion (0..1, :mod:`.fusion`)."""

    def pending_count(self) -> int:
        """Messages with text and no vector of :attr:`model` yet."""
        ...

    def embed_step(self, batch: int = ..., after: int = 0) -> int:
        """Embed and store one batch of pending messages (ids above ``after``, newest
        first); how many (0: none left)."""
        ...

    def embed_pending(self, batch: int = ..., after: int = 0) -> int:
        """Embed every pending message (ids above ``after``); how many."""
        ...

    def catch_up(self) -> None:
        """Embed the messages added since the last call (what a search runs first)."""
        ...


@runtime_checkable
class Store(Protocol):
    """The session store contract (see the module docstring)."""

    backend: str
    """``"sqlite"`` or ``"postgresql"``."""
    location: str
    """Where the rows are: the file path, or the URL without its password."""
    has_fts5: bool
    has_trigram: bool

    @property
    def path(self) -> Path: ...

    @property
    def database(self) -> SqlGateway: ...

    @property
    def read_only(self) -> bool: ...

    @property
    def read_only_reason(self) -> str | None: ...

    @property
    def vectors(self) -> VectorSearch | None:
        """Search by meaning (opened with an embedder), else ``None``."""
        ...

    @property
    def schema_version(self) -> int: ...

    def close(self) -> None: ...

    def __enter__(self) -> Store: ...

    def __exit__(self, *exc: object) -> None: ...

    def connection_for_reads(self) -> AbstractContextManager[Any]: ...

    # sessions
    def create_session(
        self,
        session_id: str | None = None,
        source: str = "cli",
        model: str | None = None,
        model_config: Mapping[str, Any] | None = None,
        system_prompt: str | None = None,
        user_id: str | None = None,
        parent_session_id: str | None = None,
        title: str | None = None,
    ) -> str: ...

    def ensure_session(self, session_id: str, source: str = "unknown", **fields: Any) -> str: ...

    def get_session(self, session_id: str) -> dict[str, Any] | None: ...

    def require_session(self, session_id: str) -> dict[str, Any]: ...

    def resolve_session_id(self, id_or_prefix: str) -> str | None: ...

    def end_session(self, session_id: str, end_reason: str) -> bool: ...

    def reopen_session(self, session_id: str) -> None: ...

    def update_system_prompt(self, session_id: str, prompt: str | None) -> None: ...

    def set_session_title(self, session_id: str, title: str | None) -> bool: ...

    def delete_session(self, session_id: str) -> bool: ...

    def session_count(self, source: str | None = None) -> int: ...

    def message_count(self, session_id: str | None = None) -> int: ...

    # messages
    def append_message(
        self,
        session_id: str,
        role: str,
        content: Any = None,
        tool_name: str | None = None,
        tool_calls: Any = None,
        tool_call_id: str | None = None,
        token_count: int | None = None,
        finish_reason: str | None = None,
        reasoning: str | None = None,
        reasoning_content: str | None = None,
        reasoning_details: Any = None,
    ) -> int: ...

    def append_messages(
        self,
        session_id: str,
        messages: Iterable[Mapping[str, Any]],
        *,
        token_counts: Sequence[int | None] | None = None,
    ) -> list[int]: ...

    def last_message_time(self, session_id: str) -> float | None: ...

    def get_messages(self, session_id: str, *, include_inactive: bool = False) -> list[Message]: ...

    # lineage
    def start_continuation(
        self,
        parent_id: str,
        *,
        messages: Iterable[Mapping[str, Any]] | None = None,
        model: str | None = None,
        system_prompt: str | None = None,
        title: str | None = None,
        session_id: str | None = None,
    ) -> str: ...

    def get_compression_tip(self, session_id: str) -> str: ...

    def resume_target(self, session_id: str) -> str: ...

    def compression_chain(self, session_id: str) -> list[str]: ...

    def lineage(self, session_id: str) -> list[str]: ...

    def lineage_root(self, session_id: str) -> str: ...

    def seed_message_count(self, session_id: str) -> int: ...

    def list_sessions(
        self,
        limit: int = 20,
        offset: int = 0,
        source: str | None = None,
        *,
        include_children: bool = False,
    ) -> list[dict[str, Any]]: ...

    # accounting
    def update_token_counts(
        self,
        session_id: str,
        input_tokens: int = 0,
        output_tokens: int = 0,
        model: str | None = None,
        cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
        reasoning_tokens: int = 0,
        estimated_cost_usd: float | None = None,
        actual_cost_usd: float | None = None,
        cost_status: str | None = None,
        cost_source: str | None = None,
        pricing_version: str | None = None,
        billing_provider: str | None = None,
        billing_base_url: str | None = None,
        billing_mode: str | None = None,
        api_call_count: int = 0,
        absolute: bool = False,
        unreported_calls: int = 0,
    ) -> None: ...

    def record_usage(
        self,
        session_id: str,
        usage: CanonicalUsage | None,
        cost_usd: float | None = None,
        *,
        model: str | None = None,
    ) -> None: ...

    # search
    def search_hits(
        self,
        query: str,
        role_filter: str | Iterable[str] | None = None,
        source: str | Iterable[str] | None = None,
        limit: int = 20,
        offset: int = 0,
        exclude_session_ids: Iterable[str] = (),
        exclude_sources: str | Iterable[str] | None = None,
        match: str = "auto",
    ) -> list[dict[str, Any]]: ...

    def search_messages(
        self,
        query: str,
        role_filter: str | Iterable[str] | None = None,
        source: str | Iterable[str] | None = None,
        limit: int = 20,
        offset: int = 0,
        exclude_session_ids: Iterable[str] = (),
        exclude_sources: str | Iterable[str] | None = None,
        match: str = "auto",
    ) -> list[dict[str, Any]]: ...

    def session_secrets(self, session_ids: Iterable[str]) -> dict[str, frozenset[str]]: ...

    def keep_secrets(self, budget_seconds: float | None = None) -> bool: ...

    # transcripts, maintenance
    def export_session(self, session_id: str, *, chain: bool = False) -> list[Message]: ...

    def import_transcript(
        self,
        path: str | Path,
        format: str = "auto",
        source: str = "import",
        title: str | None = None,
        again: bool = False,
        lenient: bool = False,
    ) -> str: ...

    def verify(self) -> list[str]: ...

    def repair(self) -> list[str]: ...
