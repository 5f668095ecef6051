"""Calling a context engine the way the agent's compaction step needs (AL-16 step 2).

Engines are plugins: a third-party ``ContextEngine`` may accept fewer keyword arguments
than ours, may not have our per-call fields, and may report that its protected head and
tail already hold every message. These helpers are the agent's side of that contract:
pass only what ``compress`` accepts, read the per-call facts manual feedback reports
(CC-114) with defaults for an engine that lacks them, and retry once with a one-message
head when a small window leaves no middle to summarize. They live apart from
:mod:`.compaction_step`, which sequences the steps around the call.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from ..compaction.engine import ContextEngine

__all__ = [
    "SHORT_HEAD",
    "accepted_kwargs",
    "compress_with_a_short_head",
    "engine_facts",
    "head_and_tail_are_everything",
]


def accepted_kwargs(engine: ContextEngine, wanted: Mapping[str, Any]) -> dict[str, Any]:
    """Only the keyword arguments ``engine.compress`` accepts (AL-16 step 2)."""
    try:
        params = inspect.signature(engine.compress).parameters
    except (TypeError, ValueError):
        return {}
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return dict(wanted)
    return {k: v for k, v in wanted.items() if k in params}


def engine_facts(engine: ContextEngine) -> dict[str, Any]:
    """The engine's per-call fields that manual feedback reports (CC-114)."""
    return {
        "fallback_used": bool(getattr(engine, "last_summary_fallback_used", False)),
        "aborted": bool(getattr(engine, "last_compress_aborted", False)),
        "dropped_count": getattr(engine, "last_summary_dropped_count", None),
        "failure_reason": getattr(engine, "last_summary_error", None),
        "refused_would_grow": bool(getattr(engine, "last_compress_refused_would_grow", False)),
    }


_NO_MIDDLE = (
    "too few messages",
    "nothing between head and tail",
    "the summary would not shrink the conversation",  # a middle of one or two messages
)
SHORT_HEAD = 1
"""Head messages kept when the window is too small for the protected head and tail."""


def head_and_tail_are_everything(engine: ContextEngine) -> bool:
    stats = getattr(engine, "last_stats", None)
    protect = getattr(engine, "protect_first_n", 0)
    return (
        stats is not None
        and not getattr(stats, "compressed", True)
        and getattr(stats, "reason", None) in _NO_MIDDLE
        and isinstance(protect, int)
        and protect > SHORT_HEAD
    )


def compress_with_a_short_head(
    engine: ContextEngine,
    before: list[dict[str, Any]],
    approx_tokens: int | None,
    kwargs: dict[str, Any],
) -> list[dict[str, Any]]:
    """Compact again keeping only the first message as the head.

    The context is over the threshold (or the provider refused it) yet the protected head
    and tail hold every message: a small window with large messages (measured with the
    0.5B model at 2,048 tokens: seven messages of a few hundred tokens each). Without this,
    every later turn overflows and "cannot compress further"; with it, the task (the first
    message) and the newest turns stay and the rest is summarized.
    """
    saved = engine.protect_first_n
    strikes = getattr(engine, "ineffective_compression_count", None)
    engine.protect_first_n = SHORT_HEAD
    try:
        result = engine.compress(before, approx_tokens, None, **kwargs)
    finally:
        engine.protect_first_n = saved
    stats = getattr(engine, "last_stats", None)
    if strikes is not None and not getattr(stats, "compressed", False):
        # one pass, one strike: the retry that could not shrink either does not count twice
        engine.ineffective_compression_count = strikes  # type: ignore[attr-defined]
    return result
