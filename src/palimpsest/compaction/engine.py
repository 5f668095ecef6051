"""The context-engine contract and how engines are found.

A host (an agent loop, a gateway, the CLI) talks to one engine per conversation through
this contract: it reports usage after every response, asks whether to compress, and
compresses. The attribute names are part of the contract because hosts read them
directly; they match the reference design so engines written for it port easily.

Engines are discovered through the entry-point group ``palimpsest.context_engines``; the
built-in ``"compressor"`` registers through the same door as third-party engines.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from importlib.metadata import entry_points
from typing import Any

from ..errors import PluginNotFoundError
from .window import ContextWindow

__all__ = ["ENGINE_GROUP", "ContextEngine", "available_engines", "load_engine"]

ENGINE_GROUP = "palimpsest.context_engines"


class ContextEngine(ABC):
    """Base class every context engine implements (spec CE-01..CE-08).

    Lifecycle: instantiate (one instance per agent, never shared), ``on_session_start``,
    then per response ``update_from_response``, per turn ``should_compress`` and, when it
    says so, ``compress``; ``on_session_end`` only at real session boundaries.
    """

    # Token state, read directly by hosts. Engines keep these current.
    last_prompt_tokens: int = 0
    last_completion_tokens: int = 0
    last_total_tokens: int = 0
    threshold_tokens: int = 0
    context_length: int = 0
    compression_count: int = 0

    # Where the window and the trigger ratio came from (``/status``, ``config show``).
    context_window: ContextWindow | None = None
    threshold_source: str = "default"

    # Preflight parameters; the built-in compressor overrides them.
    threshold_percent: float = 0.75
    protect_first_n: int = 3
    protect_last_n: int = 6

    @property
    @abstractmethod
    def name(self) -> str:
        """Short identifier, e.g. ``"compressor"``."""

    @abstractmethod
    def update_from_response(self, usage: dict[str, Any]) -> None:
        """Record the normalized usage of the latest response."""

    @abstractmethod
    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        """True when compaction should run now."""

    @abstractmethod
    def compress(
        self,
        messages: list[dict[str, Any]],
        current_tokens: int | None = None,
        focus_topic: str | None = None,
    ) -> list[dict[str, Any]]:
        """Return a new, valid message list; never mutate ``messages``."""

    # -- optional hooks with defaults (CE-04, CE-07) -------------------------------------

    def should_compress_info(self, prompt_tokens: int | None = None) -> tuple[bool, str | None]:
        """``(should_compress, reason_blocked)``; engines that can say why override this."""
        return self.should_compress(prompt_tokens), None

    def should_compress_preflight(self, messages: list[dict[str, Any]]) -> bool:
        """Cheap pre-call check; the default never asks for a preflight compression."""
        return False

    def has_content_to_compress(self, messages: list[dict[str, Any]]) -> bool:
        """Whether anything outside the protected zones exists; default: assume so."""
        return True

    def on_session_start(self, session_id: str, **kwargs: Any) -> None:
        """A conversation begins; kwargs may hold home, platform, model, boundary_reason."""

    def on_session_end(self, session_id: str, messages: list[dict[str, Any]]) -> None:
        """A real session boundary (exit, /reset, expiry); never called per turn."""

    def on_session_reset(self) -> None:
        """``/new`` or ``/reset``: forget per-session token state."""
        self.last_prompt_tokens = 0
        self.last_completion_tokens = 0
        self.last_total_tokens = 0
        self.compression_count = 0

    def on_turn_complete(
        self, messages: list[dict[str, Any]], usage: dict[str, Any] | None = None, **kwargs: Any
    ) -> None:
        """Called after each completed turn; default does nothing."""

    def should_defer_preflight_to_real_usage(self, rough_tokens: int) -> bool:
        return False

    def select_context(
        self,
        request_messages: list[dict[str, Any]],
        *,
        conversation_messages: list[dict[str, Any]],
        incoming_message: str,
        budget_tokens: int,
    ) -> list[dict[str, Any]] | None:
        """What one request sees (retrieval, topic routing), or ``None`` to send it as built.

        ``request_messages`` is the request about to be sent (the system prompt first);
        ``conversation_messages`` the stored history; ``incoming_message`` the user's
        message of this turn; ``budget_tokens`` what the request should stay under. The
        returned list replaces the request for this one call only: the stored conversation
        and the cached system prompt are never changed by it. Both lists are copies. A host
        ignores an engine that raises or returns something that is not a message list, and
        sends the request as built (fails open). The default changes nothing.
        """
        return None

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """Tools this engine offers the model; none by default."""
        return []

    def handle_tool_call(self, name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Answer a call to one of :meth:`get_tool_schemas`; must return a JSON string."""
        return json.dumps({"error": f"Unknown context engine tool: {name}"})

    def get_status(self) -> dict[str, Any]:
        """The standard status fields hosts display."""
        prompt = max(0, self.last_prompt_tokens)
        usage_percent = min(100.0, prompt / self.context_length * 100) if self.context_length else 0
        return {
            "last_prompt_tokens": prompt,
            "threshold_tokens": self.threshold_tokens,
            "context_length": self.context_length,
            "usage_percent": usage_percent,
            "compression_count": self.compression_count,
        }

    def update_model(
        self,
        model: str,
        context_length: int,
        base_url: str = "",
        api_key: str = "",
        provider: str = "",
    ) -> None:
        """The user switched models: adopt the new window and recompute the threshold."""
        self.context_length = context_length
        self.threshold_tokens = int(context_length * self.threshold_percent)


def _registered() -> dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group=ENGINE_GROUP)}


def available_engines() -> list[str]:
    """Names of every engine registered under :data:`ENGINE_GROUP`."""
    return sorted(_registered())


def load_engine(name: str = "compressor", **kwargs: Any) -> ContextEngine:
    """Instantiate the engine registered as ``name`` with ``kwargs``.

    Raises :class:`PluginNotFoundError` listing the registered names when ``name`` is
    unknown, and ``TypeError`` when the registered object is not a :class:`ContextEngine`.
    """
    registered = _registered()
    if name not in registered:
        raise PluginNotFoundError("context engine", name, list(registered))
    factory = registered[name].load()
    engine = factory(**kwargs)
    if not isinstance(engine, ContextEngine):
        raise TypeError(
            f"entry point {name!r} in {ENGINE_GROUP} produced {type(engine).__name__}, "
            "not a ContextEngine"
        )
    return engine
