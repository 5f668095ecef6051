"""The agent's window and its built-in engine, with where the window came from.

The window is the caller's ``context_length=``, else ``model.context_length`` from the
config, else what the provider says: the model object's own ``context_length`` or, when it
has one, its provider's model list through ``probe_context_length()``. The probe is asked
through the process-wide :data:`~palimpsest.compaction.window.PROBES`, so a provider
without such a list is not asked again for every agent a gateway builds (failures are
cooled down). The trigger ratio for the model comes from ``compression.model_thresholds``
when a key matches (the compressor resolves it, scoped by the model's provider).
"""

from __future__ import annotations

from typing import Any

from ..compaction.engine import ContextEngine
from ..compaction.window import PROBES, ContextWindow, adopt_window, resolve_window
from ..config import Settings
from ..errors import ConfigError
from ..providers.base import ChatModel
from .engine_choice import configured_engine

__all__ = ["default_engine", "provider_window", "use_callers_window"]


def provider_window(model: ChatModel) -> int | None:
    """The window the model object reports, else its provider's model list (cooled down)."""
    own = getattr(model, "context_length", None)
    if isinstance(own, int) and not isinstance(own, bool) and own > 0:
        return own
    probe = getattr(model, "probe_context_length", None)
    if not callable(probe):
        return None
    key = ":".join(
        str(getattr(model, attr, "") or "") for attr in ("provider", "base_url", "model")
    )
    return PROBES.probe(key, probe)


def default_engine(
    settings: Settings, model: ChatModel, context_length: int | None, max_tokens: int | None
) -> ContextEngine:
    """The engine ``context.engine`` names for the agent's model (the built-in compressor by
    default), its window's source recorded."""
    window = resolve_window(
        caller=context_length,
        configured=settings.model.context_length,
        provider=lambda: provider_window(model),
    )
    if window is None:
        raise ConfigError(
            "the agent needs the model's context length: pass context_length=, set "
            "model.context_length in the config, or pass a compressor",
            key="model.context_length",
        )
    name = str(getattr(model, "model", "") or "")
    overrides: dict[str, Any] = {
        "model": name,
        "provider": getattr(model, "provider", None),
        "window_source": window,
    }
    if max_tokens is not None:
        overrides["max_tokens"] = max_tokens
    return configured_engine(settings, model, window.tokens, overrides)


def use_callers_window(engine: ContextEngine, model_name: str, context_length: int | None) -> None:
    """A caller's ``context_length=`` beside its own engine: adopted, marked as the caller's."""
    if context_length and context_length != engine.context_length:
        adopt_window(engine, context_length, "caller", model=model_name)
    elif context_length:
        engine.context_window = ContextWindow(context_length, "caller")
