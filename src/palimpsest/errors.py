"""The one exception tree of palimpsest.

Errors are part of the API: callers catch a class, never parse a message. The tree keeps
"the caller got it wrong" (``UserError``: a bad transcript, config key, query or argument)
apart from "the run failed" (``RunError``: a provider, a summary, the database)::

    PalimpsestError
    ├── UserError
    │   ├── TranscriptError        file, message index, problem
    │   ├── ConfigError            config key
    │   ├── QueryError             a search query that cannot be run
    │   ├── PluginNotFoundError    unknown engine / provider name; lists what exists
    │   ├── MissingDependencyError an optional extra is not installed; names it
    │   ├── SessionNotFoundError   unknown session id
    │   │   └── AmbiguousSessionIdError  a prefix matching several ids; lists them
    │   ├── DuplicateTranscriptError   a transcript imported before; names the session
    │   ├── OutputTargetError      an output path that is not (or cannot be) a regular file
    │   └── MemoryToolError        a memory write the agent must change
    │       ├── MemoryCapacityError    over the character limit; lists the entries
    │       ├── MemoryMatchError       old_text matched nothing, or several different entries
    │       └── MemoryThreatError      content blocked by the threat scan; names the category
    └── RunError
        ├── SummaryError           a summarizer could not produce a summary
        ├── ProviderError          a model call failed (provider, status_code, body)
        │   ├── ContextOverflowError   the prompt does not fit (limit, requested)
        │   ├── OutputLimitError       prompt fits, prompt + max_tokens does not
        │   ├── RateLimitError         retry_after seconds when the provider says
        │   ├── AuthError
        │   └── QuotaError
        └── StorageError           the SQLite store failed (path)
            ├── DatabaseLockedError     another process kept the write lock past the retries
            ├── DatabaseReadOnlyError   the file (or its directory) cannot be written
            └── DatabaseCorruptError    damaged pages or rows (message_ids when known)

Every exception carries its context as attributes; constructors never log.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "AmbiguousSessionIdError",
    "AuthError",
    "ConfigError",
    "ContextOverflowError",
    "DatabaseCorruptError",
    "DatabaseLockedError",
    "DatabaseReadOnlyError",
    "DuplicateTranscriptError",
    "MemoryCapacityError",
    "MemoryMatchError",
    "MemoryThreatError",
    "MemoryToolError",
    "MissingDependencyError",
    "NativeCompactionError",
    "OutputLimitError",
    "OutputTargetError",
    "PalimpsestError",
    "PluginNotFoundError",
    "ProviderError",
    "QueryError",
    "QuotaError",
    "RateLimitError",
    "RunError",
    "SessionNotFoundError",
    "StorageError",
    "SummaryError",
    "TranscriptError",
    "UserError",
]


class PalimpsestError(Exception):
    """Root of every error palimpsest raises on purpose."""


class UserError(PalimpsestError):
    """The caller got something wrong; the message says what to change."""


class RunError(PalimpsestError):
    """The run failed through no fault of the arguments (provider, summary, storage)."""


class TranscriptError(UserError):
    """A transcript could not be read or is not a valid message sequence.

    ``str(err)`` reads ``<path>: message <index>: <problem>`` with the parts that are known.
    """

    def __init__(
        self, problem: str, *, path: str | Path | None = None, index: int | None = None
    ) -> None:
        self.problem = problem
        self.path = str(path) if path is not None else None
        self.index = index
        parts = []
        if self.path:
            parts.append(self.path)
        if index is not None:
            parts.append(f"message {index}")
        parts.append(problem)
        super().__init__(": ".join(parts))


class ConfigError(UserError):
    """A configuration file or value is invalid; ``key`` names the dotted key."""

    def __init__(self, message: str, *, key: str | None = None, path: str | Path | None = None):
        self.key = key
        self.path = str(path) if path is not None else None
        super().__init__(message)


class QueryError(UserError):
    """A search query could not be run even after sanitizing."""

    def __init__(self, message: str, *, query: str | None = None) -> None:
        self.query = query
        super().__init__(message)


class PluginNotFoundError(UserError):
    """No engine or provider is registered under ``name``; ``available`` lists those that are."""

    def __init__(self, kind: str, name: str, available: list[str]) -> None:
        self.kind = kind
        self.name = name
        self.available = sorted(available)
        listed = ", ".join(self.available) or "none"
        super().__init__(f"unknown {kind} {name!r}; available: {listed}")


def _extra_requirements(extra: str) -> list[str]:
    """The requirements this installation declares for ``extra`` (``openai>=1.40``, ...)."""
    from importlib import metadata

    try:
        declared = metadata.requires("palimpsest") or []
    except metadata.PackageNotFoundError:
        return []
    wanted = (f'extra == "{extra}"', f"extra == '{extra}'")
    return [r.split(";")[0].strip() for r in declared if any(w in r for w in wanted)]


class MissingDependencyError(UserError):
    """An optional dependency is missing; the message names what to install.

    The hint names the dependency itself (``pip install 'openai>=1.40'``), not
    ``palimpsest[extra]`` from PyPI: the name ``palimpsest`` there is another project.
    """

    def __init__(self, package: str, extra: str) -> None:
        self.package = package
        self.extra = extra
        needed = " ".join(f"'{r}'" for r in _extra_requirements(extra)) or f"'{package}'"
        super().__init__(
            f"{package} is not installed; install it with: pip install {needed} "
            f"(or, in a checkout of palimpsest: pip install -e '.[{extra}]')"
        )


class SessionNotFoundError(UserError):
    """No session has this id."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        super().__init__(
            f"no session with id {session_id!r}; run 'palimpsest sessions list' to see ids"
        )


class AmbiguousSessionIdError(SessionNotFoundError):
    """A prefix that starts several session ids: no single session is meant.

    ``candidates`` are the first matching ids (sorted), ``count`` how many match in all.
    A subclass of :class:`SessionNotFoundError`, so code that handles "no such session"
    keeps working.
    """

    def __init__(self, prefix: str, candidates: list[str], count: int) -> None:
        self.candidates = list(candidates)
        self.count = count
        shown = ", ".join(self.candidates)
        more = f" and {count - len(self.candidates)} more" if count > len(self.candidates) else ""
        UserError.__init__(
            self,
            f"session id prefix {prefix!r} is ambiguous: it matches {count} sessions "
            f"({shown}{more}); give more characters of the id",
        )
        self.session_id = prefix


class DuplicateTranscriptError(UserError):
    """The same transcript (by content hash) is already stored as ``existing_id``."""

    def __init__(self, existing_id: str, digest: str, source: str | None = None) -> None:
        self.existing_id = existing_id
        self.digest = digest
        where = f"{source}: " if source else ""
        super().__init__(
            f"{where}already imported as session {existing_id} (same content); "
            "pass --again to import another copy"
        )


class OutputTargetError(UserError):
    """An output path that cannot be written as a regular file: a directory, a device, a
    FIFO, a socket, a standard stream, a file that is not writable, a missing directory.

    ``target`` is the path as given, ``problem`` what is wrong with it; ``str(err)`` reads
    ``<target>: <problem>``. Raised before anything is written.
    """

    def __init__(self, target: str | Path, problem: str) -> None:
        self.target = str(target)
        self.problem = problem
        super().__init__(f"{self.target}: {problem}")


class MemoryToolError(UserError):
    """A memory write that the agent must change before it can succeed."""


class MemoryCapacityError(MemoryToolError):
    """The write would exceed the file's character limit.

    ``usage`` and ``limit`` are character counts; ``entries`` are the current entries so
    the agent can choose what to replace or remove.
    """

    def __init__(self, message: str, *, usage: int, limit: int, entries: list[str]) -> None:
        self.usage = usage
        self.limit = limit
        self.entries = list(entries)
        super().__init__(message)


class MemoryMatchError(MemoryToolError):
    """``old_text`` matched no entry, or matched several different entries."""

    def __init__(self, message: str, *, old_text: str, matches: list[str] | None = None):
        self.old_text = old_text
        self.matches = list(matches or [])
        super().__init__(message)


class MemoryThreatError(MemoryToolError):
    """Content was blocked by the threat scan; ``category`` names why.

    ``pattern`` is the id of the rule that matched (``exfil_curl``) when there is one.
    """

    def __init__(self, message: str, *, category: str, pattern: str | None = None) -> None:
        self.category = category
        self.pattern = pattern
        super().__init__(message)


class SummaryError(RunError):
    """A summarizer failed to produce a usable summary."""

    def __init__(self, message: str, *, model: str | None = None, cause_kind: str | None = None):
        self.model = model
        self.cause_kind = cause_kind
        super().__init__(message)


class ProviderError(RunError):
    """A model call failed. ``status_code`` and ``body`` are set when an HTTP answer came back."""

    reason: str | None = None
    """The classification the provider edge gave it (``context_overflow``, ``rate_limit``,
    ``tool_message_malformed``, ...; see :mod:`palimpsest.providers.overflow`)."""

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        model: str | None = None,
        status_code: int | None = None,
        body: str | None = None,
    ) -> None:
        self.provider = provider
        self.model = model
        self.status_code = status_code
        self.body = body
        super().__init__(message)


class ContextOverflowError(ProviderError):
    """The prompt does not fit the model's window; ``limit``/``requested`` when reported."""

    def __init__(
        self,
        message: str,
        *,
        limit: int | None = None,
        requested: int | None = None,
        payload_too_large: bool = False,
        **kwargs: object,
    ) -> None:
        self.limit = limit
        self.requested = requested
        self.payload_too_large = payload_too_large
        super().__init__(message, **kwargs)  # type: ignore[arg-type]


class OutputLimitError(ProviderError):
    """The prompt fits but prompt + max_tokens does not: lower max_tokens, do not compress."""

    def __init__(
        self,
        message: str,
        *,
        limit: int | None = None,
        input_tokens: int | None = None,
        suggested_max_tokens: int | None = None,
        **kwargs: object,
    ) -> None:
        self.limit = limit
        self.input_tokens = input_tokens
        self.suggested_max_tokens = suggested_max_tokens
        super().__init__(message, **kwargs)  # type: ignore[arg-type]


class RateLimitError(ProviderError):
    """The provider asked us to slow down; ``retry_after`` in seconds when it said so."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: object):
        self.retry_after = retry_after
        super().__init__(message, **kwargs)  # type: ignore[arg-type]


class AuthError(ProviderError):
    """The credentials were refused (401/403)."""


class QuotaError(ProviderError):
    """The account is out of quota or credit (402, insufficient_quota)."""


class NativeCompactionError(RunError):
    """A provider-side compaction gave nothing usable; the engine falls back to its own.

    ``refused`` is true when the route said it does not offer compaction at all (an
    unsupported model, route or beta): the engine stops asking for the rest of the session.
    A transient error or an unusable reply leaves ``refused`` false: the next compaction
    asks the provider again.
    """

    def __init__(self, message: str, *, refused: bool = False) -> None:
        self.refused = refused
        super().__init__(message)


class StorageError(RunError):
    """The SQLite store failed; ``path`` names the database file."""

    def __init__(self, message: str, *, path: str | Path | None = None) -> None:
        self.path = str(path) if path is not None else None
        super().__init__(message)


class DatabaseLockedError(StorageError):
    """Another process held the write lock through every retry; nothing was written."""


class DatabaseReadOnlyError(StorageError):
    """The database cannot be written (file, directory or filesystem); reads still work.

    ``reason`` says which of them refuses the write.
    """

    def __init__(
        self, message: str, *, path: str | Path | None = None, reason: str | None = None
    ) -> None:
        self.reason = reason
        super().__init__(message, path=path)


class DatabaseCorruptError(StorageError):
    """The database file, or some of its rows, cannot be read.

    ``message_ids`` names the ``messages`` rows known to be unreadable (empty when the
    damage is in the file's structure rather than in identified rows).
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        message_ids: tuple[int, ...] = (),
    ) -> None:
        self.message_ids = message_ids
        super().__init__(message, path=path)
