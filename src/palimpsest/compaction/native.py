"""The ``native`` context engine: the provider compacts, palimpsest's compressor catches what it misses.

Two providers now compact a conversation on their own side and hand back an opaque item
that later requests send in place of what it folded:

* **inline** routes compact inside an ordinary request once it reaches a threshold the
  request names (OpenAI Responses ``context_management``); the reply carries the item;
* **request** routes compact when asked, in a request of their own (Anthropic Messages'
  ``compaction`` parameter, beta ``compact-2026-09-04``); the reply is the item alone.

This engine is the built-in :class:`~.compressor.ContextCompressor` (same threshold, same
protected head and tail, same summary) with a route in front of it. On an inline route it
asks the provider to compact ``native_margin_tokens`` below its own threshold, so the
provider goes first and the compressor fires only when the provider did not compact (it
refused the parameter, failed, or the context grew past both within one call). On a request
route, a compaction asks the provider first and falls back to the compressor when the route
refuses (an unsupported model or beta: native is then off for the rest of the session),
errors, or returns nothing usable (no block, an empty summary, a result no smaller).

Either way the agent's history keeps the provider's item on the assistant message that
carries it (:mod:`palimpsest.messages.native`), so it is stored with the session and a
resumed session sends it again; the store and ``session_search`` keep the original messages,
as they do for every compaction. The engine measures the context from the newest native
compaction on, which is all the provider still reads.

The route objects live with the providers (:mod:`palimpsest.providers.native_routes`); this
module only knows the small :class:`NativeCompactionRoute` protocol.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from ..config import Settings
from ..errors import NativeCompactionError
from ..messages import role_of
from ..messages.native import latest_native_compaction, live_window
from .compressor import ContextCompressor
from .repair import check_messages
from .stats import CompressionStats

__all__ = ["DEFAULT_NATIVE_MARGIN", "NativeCompactionEngine", "NativeCompactionRoute"]

log = logging.getLogger("palimpsest.compaction")

DEFAULT_NATIVE_MARGIN = 4_000
"""Tokens between the provider's compaction threshold and the compressor's own."""


@runtime_checkable
class NativeCompactionRoute(Protocol):
    """What a provider route offers the engine (see module docstring)."""

    name: str
    """The route, as in :func:`palimpsest.messages.native.native_compaction_of`."""
    mode: Literal["inline", "request"]
    refused: str | None
    """Why the route does not compact (set once it said so); ``None`` while it may."""

    def arm(self, threshold_tokens: int) -> None:
        """Inline routes: compact from ``threshold_tokens`` on in every later request."""

    def compact(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        """Request routes: the assistant message carrying the compaction of ``messages``;
        raises :class:`~palimpsest.errors.NativeCompactionError` when there is none."""


class NativeCompactionEngine(ContextCompressor):
    """A :class:`ContextCompressor` that lets the provider compact first (``context.engine:
    native``). ``route`` is ``None`` on a route with no native compaction: the engine is then
    the compressor alone. Other arguments are the compressor's."""

    def __init__(
        self,
        context_length: int,
        *args: Any,
        route: NativeCompactionRoute | None = None,
        native_margin_tokens: int = DEFAULT_NATIVE_MARGIN,
        **kwargs: Any,
    ) -> None:
        if native_margin_tokens < 0:
            raise ValueError("native_margin_tokens must be >= 0")
        self.route = route
        self.native_margin_tokens = native_margin_tokens
        self.native_compactions = 0
        """Compactions the provider made that this engine adopted (request routes)."""
        self.last_native_error: str | None = None
        """Why the last request to the provider gave no compaction (``None``: none failed)."""
        self.last_native_used = False
        super().__init__(context_length, *args, **kwargs)

    @classmethod
    def with_route(
        cls, route: NativeCompactionRoute | None, settings: Settings, **kwargs: Any
    ) -> NativeCompactionEngine:
        """An engine configured from ``settings`` like the compressor, with ``route``."""
        engine = cls.from_settings(settings, **kwargs)
        if not isinstance(engine, NativeCompactionEngine):  # from_settings builds ``cls``
            raise TypeError(f"expected a NativeCompactionEngine, got {type(engine).__name__}")
        engine.route = route
        engine.native_margin_tokens = settings.compression.native_margin_tokens
        engine._arm()
        return engine

    @property
    def name(self) -> str:
        return "native"

    @property
    def native_threshold_tokens(self) -> int:
        """Where an inline route is asked to compact: the margin below our threshold."""
        return max(1, self.threshold_tokens - self.native_margin_tokens)

    @property
    def native_active(self) -> bool:
        """Whether the provider is still asked to compact."""
        return self.route is not None and self.route.refused is None

    def _recompute_thresholds(self) -> None:
        super()._recompute_thresholds()
        self._arm()

    def _arm(self) -> None:
        route = getattr(self, "route", None)
        if route is not None and route.mode == "inline" and route.refused is None:
            route.arm(self.native_threshold_tokens)

    # -- measuring ------------------------------------------------------------------------

    def estimate_request_tokens(
        self,
        messages: Sequence[Mapping[str, Any]],
        system_prompt: str = "",
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> int:
        """The request as the provider reads it: from the newest native compaction on."""
        return super().estimate_request_tokens(live_window(messages), system_prompt, tools)

    def has_content_to_compress(self, messages: list[dict[str, Any]]) -> bool:
        start = latest_native_compaction(messages) or 0
        return super().has_content_to_compress(messages[start:])

    # -- compacting -----------------------------------------------------------------------

    def compress(
        self,
        messages: list[dict[str, Any]],
        current_tokens: int | None = None,
        focus_topic: str | None = None,
        *,
        force: bool = False,
        memory_context: str = "",
    ) -> list[dict[str, Any]]:
        """The provider's compaction where the route offers one on request, else the
        compressor's; both work on the messages from the newest native compaction on."""
        check_messages(messages)
        start = latest_native_compaction(messages) or 0
        live = list(messages[start:])
        self.last_native_used = False
        route = self.route
        if route is not None and route.mode == "request" and route.refused is None:
            self.last_native_error = None
            try:
                return self._compact_natively(route, messages, live)
            except NativeCompactionError as exc:
                if exc.refused:
                    route.refused = str(exc)
                self.last_native_error = str(exc)
                log.warning("native compaction by %s not used: %s", route.name, exc)
        return super().compress(
            live, current_tokens, focus_topic, force=force, memory_context=memory_context
        )

    def _compact_natively(
        self,
        route: NativeCompactionRoute,
        messages: list[dict[str, Any]],
        live: list[dict[str, Any]],
    ) -> list[dict[str, Any]]:
        cut = _current_turn_start(live)
        if cut <= 0:
            raise NativeCompactionError("nothing before the current turn to compact")
        carrier = route.compact([dict(m) for m in live[:cut]])
        result = [carrier, *(dict(m) for m in live[cut:])]
        before = self.token_counter.count_messages(messages)
        after = self.token_counter.count_messages(result)
        if after >= self.token_counter.count_messages(live):
            raise NativeCompactionError(
                f"the provider's compaction did not shrink the context ({after:,} tokens)"
            )
        self._reset_call_fields()
        stats = CompressionStats(
            before_messages=len(messages),
            after_messages=len(result),
            before_tokens=before,
            after_tokens=after,
            head_messages=0,
            middle_messages=cut,
            tail_messages=len(live) - cut,
            summary_role="assistant",
            compressed=True,
            reason=f"native compaction by {route.name}",
            fit_target_tokens=self.fit_target_tokens,
        )
        stats.fits = after <= stats.fit_target_tokens
        self.last_stats = stats
        self.compression_count += 1
        self.native_compactions += 1
        self.last_native_used = True
        self._record_compaction(stats.savings_pct, after)
        return result

    def get_status(self) -> dict[str, Any]:
        status = super().get_status()
        route = self.route
        status.update(
            native_route=route.name if route is not None else None,
            native_mode=route.mode if route is not None else None,
            native_refused=route.refused if route is not None else None,
            native_threshold_tokens=self.native_threshold_tokens,
            native_compactions=self.native_compactions,
        )
        return status


def _current_turn_start(messages: Sequence[Mapping[str, Any]]) -> int:
    """Index of the newest user message: the turn in progress stays verbatim after the
    compaction (the request must end on it, and a provider's compaction replaces only what
    it was sent)."""
    for index in range(len(messages) - 1, -1, -1):
        if role_of(messages[index]) == "user":
            return index
    return 0
