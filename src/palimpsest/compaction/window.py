"""Which window and which trigger ratio are in effect, and where each came from.

Users run models whose windows range from 8K to 1M tokens and whose quality falls off at
very different points, so one ``compression.threshold`` is not enough:
``compression.model_thresholds`` maps a model-name substring to its own ratio (the longest
matching key wins; a key written ``provider:substring`` only matches on that provider).

A window is only as good as its source, and the answer to "why did it compact at 30K?" is
usually "the window was not what you thought". So the window in effect carries its source:
``caller`` (an argument or flag), ``configured`` (``model.context_length``), ``provider``
(what the model object or its provider's model list reports), ``overflow`` (a provider's
overflow error proved a smaller limit and recovery adopted it) or ``default`` (the built-in
200,000 of the CLI). A provider's model list is asked through :class:`WindowProbe`, which
remembers failures for a cooldown so a provider without such a list is not asked again on
every turn or every agent built.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from ..config import Settings

__all__ = [
    "PROBES",
    "PROBE_COOLDOWN_SECONDS",
    "ContextWindow",
    "ThresholdChoice",
    "WindowProbe",
    "WindowSource",
    "adopt_window",
    "match_model_threshold",
    "resolve_window",
    "split_model_spec",
    "threshold_choice",
    "window_in_effect",
]

log = logging.getLogger("palimpsest.compaction")

WindowSource = Literal["caller", "configured", "provider", "overflow", "default"]

PROBE_COOLDOWN_SECONDS = 600.0
"""A provider whose model list could not be read is not asked again for this long."""


@dataclass(frozen=True)
class ContextWindow:
    """A window in tokens and where it came from (``detail``: which flag, key or error)."""

    tokens: int
    source: WindowSource
    detail: str = ""

    def describe(self) -> str:
        return f"{self.source} ({self.detail})" if self.detail else self.source


@dataclass(frozen=True)
class ThresholdChoice:
    """The trigger ratio chosen for a model and where it came from.

    ``ratio`` ``None`` is the seed default (0.50, floored at 64K tokens); any other ratio is
    explicit and used as given.
    """

    ratio: float | None
    source: str


def split_model_spec(spec: str, provider: str | None = None) -> tuple[str | None, str]:
    """``("openai", "gpt-5")`` for ``"openai:gpt-5"``; ``provider`` wins when given."""
    head, sep, tail = spec.partition(":")
    if sep and head and "/" not in head:
        return (provider or head), tail
    return provider, spec


def match_model_threshold(
    model: str, provider: str | None, table: Mapping[str, float]
) -> tuple[str, float] | None:
    """The longest key of ``table`` matching ``model`` (case-insensitive substring).

    A key ``provider:substring`` matches only when ``provider`` is that provider; a plain
    key matches on any provider. Among matches the longest key wins (so ``openai:gpt-5``
    beats ``gpt-5`` on OpenAI, and ``gpt-5-mini`` beats ``gpt-5``); ``provider:`` with
    nothing after it matches every model of that provider; equal lengths: the key
    first in sort order, so the choice never depends on the file's order.
    """
    name = model.lower()
    where = (provider or "").lower()
    best: tuple[str, float] | None = None
    for key in sorted(table):
        scope, sep, needle = key.partition(":")
        if not sep:
            scope, needle = "", key
        if scope and scope.strip().lower() != where:
            continue
        if needle.strip().lower() not in name or not (needle.strip() or scope.strip()):
            continue  # an empty key matches nothing; ``provider:`` alone, all its models
        if best is None or len(key) > len(best[0]):
            best = (key, table[key])
    return best


def threshold_choice(
    settings: Settings, model: str, provider: str | None = None
) -> ThresholdChoice:
    """The ratio for ``model`` from ``settings``: a ``model_thresholds`` match, else
    ``compression.threshold`` when the file sets it, else the seed default."""
    c = settings.compression
    configured_provider, _ = split_model_spec(settings.model.name or "")
    where, name = split_model_spec(model or settings.model.name or "", provider)
    where = where or configured_provider
    found = match_model_threshold(name, where, c.model_thresholds) if name else None
    if found is not None:
        key, ratio = found
        return ThresholdChoice(ratio, f"compression.model_thresholds[{key!r}]")
    if "threshold" in c.model_fields_set:
        return ThresholdChoice(c.threshold, "compression.threshold")
    return ThresholdChoice(None, "default")


def resolve_window(
    *,
    caller: int | None = None,
    configured: int | None = None,
    provider: Callable[[], int | None] | None = None,
    default: int | None = None,
) -> ContextWindow | None:
    """The first window known, in this order: the caller's, the config's, the provider's,
    the default; ``None`` when none is. The provider is only asked when the first two are
    unset (a configured window always wins over a detected one)."""
    if _positive(caller):
        return ContextWindow(int(caller or 0), "caller")
    if _positive(configured):
        return ContextWindow(int(configured or 0), "configured", "model.context_length")
    if provider is not None:
        found = provider()
        if _positive(found):
            return ContextWindow(int(found or 0), "provider")
    if _positive(default):
        return ContextWindow(int(default or 0), "default")
    return None


class WindowProbe:
    """Asks a provider's model list for a window once, and cools failures down.

    ``probe(key, ask)`` returns what ``ask()`` found (remembered for the process) or
    ``None``; an ``ask`` that raised or found nothing is not called again for ``key`` until
    ``cooldown`` seconds have passed. One instance is shared by the process
    (:data:`PROBES`), so agents built per message by a gateway share the cooldown.
    """

    def __init__(
        self,
        cooldown: float = PROBE_COOLDOWN_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.cooldown = cooldown
        self._clock = clock
        self._found: dict[str, int] = {}
        self._failed: dict[str, float] = {}
        self._lock = threading.Lock()
        self.asked = 0
        """How many times a provider was really asked (tests and ``/status`` read it)."""

    def cooling_down(self, key: str) -> bool:
        with self._lock:
            failed = self._failed.get(key)
        return failed is not None and self._clock() - failed < self.cooldown

    def probe(self, key: str, ask: Callable[[], int | None]) -> int | None:
        with self._lock:
            if key in self._found:
                return self._found[key]
        if self.cooling_down(key):
            return None
        self.asked += 1
        try:
            found = ask()
        except Exception as exc:  # a provider's model list is advisory: never fatal
            log.warning("could not read the context length of %s: %s", key, exc)
            found = None
        with self._lock:
            if _positive(found):
                self._found[key] = int(found or 0)
                self._failed.pop(key, None)
                return self._found[key]
            self._failed[key] = self._clock()
        return None


PROBES = WindowProbe()


class _Engine(Protocol):
    """What these helpers use of a :class:`~.engine.ContextEngine` (which imports this
    module, so it is named structurally here)."""

    context_length: int
    context_window: ContextWindow | None

    def update_model(self, model: str, context_length: int) -> None: ...


def window_in_effect(engine: _Engine) -> ContextWindow:
    """The engine's window with its source; a window set by ``update_model`` alone (a host
    that did not say why) is the caller's."""
    tokens = int(engine.context_length)
    known = engine.context_window
    if known is not None and known.tokens == tokens:
        return known
    return ContextWindow(tokens, "caller")


def adopt_window(
    engine: _Engine, tokens: int, source: WindowSource, detail: str = "", *, model: str = ""
) -> None:
    """Give ``engine`` a new window (``update_model``) and remember where it came from."""
    engine.update_model(model or str(getattr(engine, "model", "") or ""), tokens)
    engine.context_window = ContextWindow(tokens, source, detail)


def _positive(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0
