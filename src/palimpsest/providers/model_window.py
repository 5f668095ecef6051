"""A model's window as an OpenAI-compatible server's model list reports it.

``GET /v1/models`` is part of every OpenAI-compatible server, and several put the window
in each entry under a field of their own: vLLM ``max_model_len``, OpenRouter and LM Studio
``context_length`` (OpenRouter also ``top_provider.context_length``), Groq
``context_window``. OpenAI itself reports none, and llama.cpp's server reports only the
window the weights were trained for (``meta.n_ctx_train``), not the one it allocated, so
neither gives an answer here. The agent asks through
:class:`~palimpsest.compaction.window.WindowProbe`, which cools failures down.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["PROBE_TIMEOUT", "WINDOW_FIELDS", "window_from_entries", "window_of_entry"]

WINDOW_FIELDS = ("max_model_len", "context_length", "context_window", "max_context_length")
"""Fields of a model-list entry that hold the window, in the order they are read."""

PROBE_TIMEOUT = 5.0
"""Seconds the model-list request may take (no retries): it is advisory."""


def _as_window(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value) if value > 0 else None


def window_of_entry(entry: Mapping[str, Any]) -> int | None:
    """The window one model-list entry reports, or ``None``."""
    for name in WINDOW_FIELDS:
        found = _as_window(entry.get(name))
        if found is not None:
            return found
    top = entry.get("top_provider")
    if isinstance(top, Mapping):
        return _as_window(top.get("context_length"))
    return None


def window_from_entries(entries: Iterable[Mapping[str, Any]], model: str) -> int | None:
    """The window of the entry whose ``id`` is ``model`` (or, when the server lists one
    model only, of that one: local servers often list the loaded model under a file name)."""
    listed = [e for e in entries if isinstance(e, Mapping)]
    for entry in listed:
        if entry.get("id") == model:
            return window_of_entry(entry)
    if len(listed) == 1:
        return window_of_entry(listed[0])
    return None
