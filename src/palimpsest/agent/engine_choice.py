"""Which context engine an agent gets when none is passed in: ``context.engine`` decides.

``compressor`` (the default) is the built-in :class:`ContextCompressor`; ``native`` is the
same compressor behind the model's provider-side compaction where its route offers one
(:mod:`palimpsest.compaction.native`, :mod:`palimpsest.providers.native_routes`); any other
name is loaded from the ``palimpsest.context_engines`` entry points with the window as
``context_length`` (an unknown name is a :class:`~palimpsest.errors.PluginNotFoundError`
that lists the registered ones).
"""

from __future__ import annotations

from typing import Any

from ..compaction.compressor import ContextCompressor
from ..compaction.engine import ContextEngine, load_engine
from ..compaction.native import NativeCompactionEngine
from ..config import Settings
from ..providers.native_routes import native_route_for

__all__ = ["configured_engine"]


def configured_engine(
    settings: Settings, model: object, window: int, overrides: dict[str, Any]
) -> ContextEngine:
    """The engine ``settings.context.engine`` names, for ``model`` and a ``window``.

    ``overrides`` are the compressor keyword arguments the agent sets (model name, output
    cap); they apply to the built-in engines only.
    """
    name = settings.context.engine
    if name == "compressor":
        return ContextCompressor.from_settings(settings, context_length=window, **overrides)
    if name == "native":
        return NativeCompactionEngine.with_route(
            native_route_for(model), settings, context_length=window, **overrides
        )
    return load_engine(name, context_length=window)
