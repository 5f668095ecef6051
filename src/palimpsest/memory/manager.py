"""``MemoryManager``: the built-in provider plus at most one external one, behind one API.

The host talks to the manager only. It guarantees (MEM-42..56):

* the built-in provider (the L1 files and the ``memory`` tool) is registered first and
  cannot be removed; at most one external provider is active, a second is refused with a
  warning naming ``memory.provider``;
* tool calls are routed by name; a provider's schemas are read before any state changes,
  core tool names and names already taken are refused, and a failing provider answers with
  an error string instead of an exception;
* one provider's failure never stops the others; an external prefetch is bounded by a
  timeout on a daemon thread, and a provider still busy from the last turn is skipped;
* recalled text reaches the model only through :meth:`prepare_request`, which returns a
  new list: stored messages never carry a fence;
* successful built-in writes are mirrored to the external provider through a shim that
  calls ``on_memory_write`` with only the arguments its signature accepts.

Providers are found through the entry-point group ``palimpsest.memory_providers``
(:mod:`palimpsest.memory.registry`).
"""

from __future__ import annotations

import json
import logging
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..compaction.markers import is_compaction_summary_message
from ..config import home_dir, load_settings
from ..messages import content_text, role_of
from ..safety.redact import redact
from .checkpoint import Checkpoint, checkpoint_version, take_checkpoint
from .fences import (
    StreamingContextScrubber,
    build_memory_context_block,
    inject_memory_context,
    is_trivial_prompt,
    sanitize_context,
)
from .providers import BuiltinMemoryProvider, MemoryProvider
from .registry import load_provider
from .shim import call_memory_write
from .store import MemoryStore
from .worker import BackgroundWorker

if TYPE_CHECKING:
    from ..config import Settings

__all__ = [
    "DEFAULT_PREFETCH_TIMEOUT",
    "SHUTDOWN_DRAIN_SECONDS",
    "MemoryManager",
    "StreamingContextScrubber",
    "build_memory_context_block",
    "sanitize_context",
]

log = logging.getLogger(__name__)

DEFAULT_PREFETCH_TIMEOUT = 8.0
SHUTDOWN_DRAIN_SECONDS = 5.0


def _error(message: str) -> str:
    return json.dumps({"success": False, "error": message}, ensure_ascii=False)


class MemoryManager:
    """Fans memory work out to the built-in provider and one optional external provider."""

    def __init__(
        self,
        store: MemoryStore | None = None,
        *,
        builtin: BuiltinMemoryProvider | None = None,
        core_tool_names: Iterable[str] = (),
        prefetch_timeout: float = DEFAULT_PREFETCH_TIMEOUT,
        profile: Literal["seed", "refined"] = "seed",
        home: str | Path | None = None,
    ) -> None:
        self.builtin = builtin or BuiltinMemoryProvider(store, profile=profile)
        self.core_tool_names = frozenset(core_tool_names)
        self.prefetch_timeout = prefetch_timeout
        self.session_id = ""
        self._home = Path(home).expanduser() if home is not None else None
        self._providers: list[MemoryProvider] = [self.builtin]
        self._schemas: dict[str, dict[str, Any]] = {}
        self._tool_index: dict[str, MemoryProvider] = {}
        self._inflight: dict[int, threading.Thread] = {}
        self._worker = BackgroundWorker("palimpsest-memory")
        self._register_tools(self.builtin, self._load_schemas(self.builtin) or [])

    @classmethod
    def from_settings(
        cls, settings: Settings | None = None, *, home: str | Path | None = None, **kwargs: Any
    ) -> MemoryManager:
        """The manager a host gets from config: limits, scan mode and ``memory.provider``."""
        settings = settings if settings is not None else load_settings()
        manager = cls(
            MemoryStore.from_settings(settings, home),
            prefetch_timeout=settings.memory.prefetch_timeout,
            profile=settings.context.profile,
            home=home,
            **kwargs,
        )
        if settings.memory.provider:
            manager.add_provider(load_provider(settings.memory.provider))
        return manager

    # --- registration -------------------------------------------------------------------

    @property
    def providers(self) -> tuple[MemoryProvider, ...]:
        return tuple(self._providers)

    @property
    def external(self) -> MemoryProvider | None:
        return self._providers[1] if len(self._providers) > 1 else None

    @property
    def store(self) -> MemoryStore:
        return self.builtin.store

    def _load_schemas(self, provider: MemoryProvider) -> list[dict[str, Any]] | None:
        try:
            return list(provider.get_tool_schemas())
        except Exception as exc:
            warnings.warn(
                f"memory provider {provider.name!r} not registered: its tool schemas "
                f"failed to load ({exc})",
                RuntimeWarning,
                stacklevel=3,
            )
            return None

    def _register_tools(self, provider: MemoryProvider, schemas: list[dict[str, Any]]) -> None:
        for schema in schemas:
            name = schema.get("name") if isinstance(schema, Mapping) else None
            if not isinstance(name, str) or not name:
                continue  # a nameless schema is skipped without blocking the others
            if name in self.core_tool_names:
                log.warning(
                    "memory tool %r of %r shadows a core tool; skipped", name, provider.name
                )
                continue
            if name in self._tool_index:
                continue  # first provider to declare a name keeps it
            self._tool_index[name] = provider
            self._schemas[name] = dict(schema)

    def add_provider(self, provider: MemoryProvider) -> bool:
        """Register the external provider; ``False`` (with a warning) when refused."""
        if isinstance(provider, BuiltinMemoryProvider):
            warnings.warn("the built-in memory provider is always registered", stacklevel=2)
            return False
        current = self.external
        if current is not None:
            warnings.warn(
                f"memory provider {provider.name!r} refused: only one external memory "
                f"provider can be active and {current.name!r} already is. Choose one with "
                "the config key memory.provider.",
                stacklevel=2,
            )
            return False
        if not provider.is_available():
            warnings.warn(
                f"memory provider {provider.name!r} is not available here; not registered",
                RuntimeWarning,
                stacklevel=2,
            )
            return False
        schemas = self._load_schemas(provider)
        if schemas is None:
            return False
        self._providers.append(provider)
        self._register_tools(provider, schemas)
        return True

    def remove_provider(self, name: str) -> None:
        """Remove the external provider called ``name``; the built-in one cannot go."""
        if name == self.builtin.name:
            raise ValueError("the built-in memory provider cannot be removed")
        for provider in self._providers[1:]:
            if provider.name == name:
                self._providers.remove(provider)
                for tool in [t for t, p in self._tool_index.items() if p is provider]:
                    del self._tool_index[tool], self._schemas[tool]

    # --- tools --------------------------------------------------------------------------

    def get_all_tool_names(self) -> list[str]:
        return list(self._tool_index)

    def get_all_tool_schemas(self) -> list[dict[str, Any]]:
        return [dict(schema) for schema in self._schemas.values()]

    def tool_definitions(self, existing: Iterable[str] = ()) -> list[dict[str, Any]]:
        """OpenAI-style tool entries for the request, skipping names already present."""
        taken = set(existing)
        return [
            {"type": "function", "function": dict(schema)}
            for name, schema in self._schemas.items()
            if name not in taken
        ]

    def handle_tool_call(self, name: str, args: Mapping[str, Any], **kwargs: Any) -> str:
        """Route a tool call to its provider; errors come back as JSON strings (MEM-44)."""
        provider = self._tool_index.get(name)
        if provider is None:
            return _error(f"No memory provider handles tool '{name}'")
        try:
            result = provider.handle_tool_call(name, args, **kwargs)
        except Exception as exc:
            log.warning("memory tool %r failed", name, exc_info=True)
            return _error(f"Memory tool '{name}' failed: {exc}")
        if provider is self.builtin:
            self._mirror_builtin_write()
        return result

    def _mirror_builtin_write(self) -> None:
        outcome = self.builtin.last_outcome
        self.builtin.last_outcome = None
        if outcome is None or outcome.result is None:
            return
        for write in outcome.result.writes:
            metadata = {
                "old_text": write.old_text,
                "previous_content": write.previous_content,
                "session_id": self.session_id,
            }
            for provider in self._providers[1:]:
                try:
                    call_memory_write(
                        provider.on_memory_write,
                        write.action,
                        write.target,
                        write.content,
                        metadata,
                        session_id=self.session_id,
                    )
                except Exception:
                    log.warning("on_memory_write failed in %r", provider.name, exc_info=True)

    # --- lifecycle fan-out --------------------------------------------------------------

    def _each(self, method: str, *args: Any, **kwargs: Any) -> list[Any]:
        results = []
        for provider in self._providers:
            try:
                results.append(getattr(provider, method)(*args, **kwargs))
            except Exception:
                log.warning("memory provider %r failed in %s", provider.name, method, exc_info=True)
        return results

    def initialize_all(self, session_id: str, *, platform: str = "cli", **kwargs: Any) -> None:
        """Initialize every provider for ``session_id`` (this also freezes the L1 snapshot)."""
        self.session_id = session_id
        home = self._home if self._home is not None else home_dir()
        kwargs.setdefault("agent_context", "primary")
        kwargs.setdefault("threat_scan", self.store.threat_scan)
        self._each("initialize", session_id, home=home, platform=platform, **kwargs)

    def build_system_prompt(self) -> str:
        """The non-blank ``system_prompt_block()`` texts joined by a blank line (MEM-46)."""
        blocks = self._each("system_prompt_block")
        return "\n\n".join(b for b in blocks if isinstance(b, str) and b.strip())

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        self._each("on_turn_start", turn_number, message, **kwargs)

    def on_pre_compress(self, messages: Sequence[Mapping[str, Any]]) -> str:
        texts = self._each("on_pre_compress", messages)
        return "\n\n".join(t for t in texts if isinstance(t, str) and t.strip())

    @property
    def checkpoint_api_version(self) -> int:
        """The checkpoint contract every active provider keeps: the lowest they declare."""
        return min(checkpoint_version(p) for p in self._providers)

    def checkpoint(self, messages: Sequence[Mapping[str, Any]]) -> Checkpoint:
        """``on_pre_compress`` of every provider, with their failures collected, not logged
        away (:mod:`.checkpoint`); the text is what :meth:`on_pre_compress` returns."""
        return take_checkpoint(self._providers, messages)

    def on_delegation(self, task: str, result: str, **kwargs: Any) -> None:
        self._each("on_delegation", task, result, **kwargs)

    # --- per-turn recall ----------------------------------------------------------------

    def _prefetch_external(self, provider: MemoryProvider, query: str, deadline: float) -> str:
        key = id(provider)
        running = self._inflight.get(key)
        if running is not None and running.is_alive():
            return ""  # still busy from an earlier turn: skipped, not queried again
        box: list[str] = []

        def run() -> None:
            try:
                box.append(provider.prefetch(redact(query), session_id=self.session_id))
            except Exception:
                log.warning("memory provider %r failed in prefetch", provider.name, exc_info=True)

        thread = threading.Thread(target=run, name=f"prefetch-{provider.name}", daemon=True)
        self._inflight[key] = thread
        thread.start()
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            log.warning("memory provider %r prefetch timed out", provider.name)
            return ""
        return box[0] if box and isinstance(box[0], str) else ""

    def prefetch_all(self, query: str) -> str:
        """Recalled text of every provider for ``query``, joined by a blank line (MEM-46)."""
        try:
            texts = [self.builtin.prefetch(query, session_id=self.session_id)]
        except Exception:
            log.warning("the built-in memory provider failed in prefetch", exc_info=True)
            texts = []
        deadline = time.monotonic() + self.prefetch_timeout
        texts += [self._prefetch_external(p, query, deadline) for p in self._providers[1:]]
        return "\n\n".join(t for t in texts if isinstance(t, str) and t.strip())

    def memory_context_block(self, query: str) -> str:
        """The fenced recall block for ``query``; ``""`` for trivial prompts or no recall."""
        if is_trivial_prompt(query):
            return ""
        return build_memory_context_block(self.prefetch_all(query))

    def prepare_request(
        self, messages: Sequence[Mapping[str, Any]], query: str | None = None
    ) -> list[dict[str, Any]]:
        """The outgoing message list with recall fenced onto the last user message.

        ``messages`` (the stored history) is not modified; the fence lives only in the
        returned list. ``query`` defaults to the text of the last user message.
        """
        if query is None:
            users = [m for m in messages if role_of(m) == "user"]
            query = content_text(users[-1].get("content")) if users else ""
        return inject_memory_context(messages, self.memory_context_block(query))

    # --- background work ----------------------------------------------------------------

    def _submit_external(self, method: str, *args: Any, **kwargs: Any) -> None:
        for provider in self._providers[1:]:
            bound: Callable[..., Any] = getattr(provider, method)
            self._worker.submit(bound, *args, **kwargs)

    def sync_all(self, user_content: Any, assistant_content: Any) -> None:
        """Persist a finished turn to every provider, in turn order, in the background.

        Multimodal content is flattened to text, secrets are redacted, and a compaction
        summary posing as a user turn is never synced: providers must not learn stale
        tasks as user facts (MEM-53).
        """
        user = user_content if isinstance(user_content, str) else content_text(user_content)
        reply = (
            assistant_content
            if isinstance(assistant_content, str)
            else content_text(assistant_content)
        )
        if is_compaction_summary_message(user):
            return
        self.builtin.sync_turn(user, reply, session_id=self.session_id)
        self._submit_external("sync_turn", redact(user), redact(reply), session_id=self.session_id)

    def queue_prefetch_all(self, query: str) -> None:
        """Warm up the next turn's prefetch on the same worker (after pending syncs)."""
        self._submit_external("queue_prefetch", redact(query), session_id=self.session_id)

    def session_boundary(
        self,
        messages: Sequence[Mapping[str, Any]],
        new_session_id: str,
        *,
        reset: bool = False,
        reason: str = "new_session",
    ) -> None:
        """End the current session and switch to ``new_session_id`` as one serialized task.

        Pending syncs run first because the worker is FIFO (MEM-54).
        """
        snapshot = [dict(m) for m in messages]
        old = self.session_id
        self.session_id = new_session_id

        def task() -> None:
            for provider in self._providers:
                try:
                    provider.on_session_end(snapshot)
                    provider.on_session_switch(
                        new_session_id, parent_session_id=old, reset=reset, reason=reason
                    )
                except Exception:
                    log.warning("memory provider %r failed at a session boundary", provider.name)

        self._worker.submit(task)

    def drain(self, timeout: float = SHUTDOWN_DRAIN_SECONDS) -> bool:
        """Wait for queued background work; ``True`` when it all finished in time."""
        return self._worker.drain(timeout)

    def on_session_end(self, messages: Sequence[Mapping[str, Any]]) -> None:
        self.drain()
        self._each("on_session_end", [dict(m) for m in messages])

    def shutdown_all(self) -> None:
        """Drain background work (up to 5 s), then shut providers down in reverse order."""
        self._worker.drain(SHUTDOWN_DRAIN_SECONDS)
        self._worker.stop()
        for provider in reversed(self._providers):
            try:
                provider.shutdown()
            except Exception:
                log.warning("memory provider %r failed to shut down", provider.name)
