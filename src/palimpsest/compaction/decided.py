"""One manual compaction whose verdicts rest on a count that can be trusted.

``palimpsest compress`` and ``palimpsest sessions compress`` both decide whether to
compress (the threshold, unless forced) and then whether the result fits the window minus
the output reserve. Both verdicts are taken on :mod:`palimpsest.deciding_count`: the UTF-8
upper bound when it alone proves that nothing needs doing, the exact count otherwise. When
the compressor runs, it runs with an exact counter, so its own fit step measures what the
verdict measures; the chars/4 rule is left for tail walks and summary budgets, where an
error costs a few messages of tail, not a wrong "it fits".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..deciding_count import DecidingCount, utf8_bound
from ..tokens import ExactCounter
from .compressor import ContextCompressor
from .stats import CompressionStats

__all__ = ["UNDER_THRESHOLD", "DecidedCompaction", "compact_decided"]

UNDER_THRESHOLD = "under threshold"
"""``stats.reason`` when the input was left alone because it is under the threshold."""


@dataclass
class DecidedCompaction:
    """What :func:`compact_decided` did: the result, the compressor's stats, and the two
    counts the verdicts were taken on (``before`` decides whether to compress, ``after``
    whether the result fits)."""

    result: list[dict[str, Any]]
    stats: CompressionStats
    before: DecidingCount
    after: DecidingCount


def _exact_counter(compressor: ContextCompressor) -> ExactCounter:
    counter = compressor.token_counter
    return counter if isinstance(counter, ExactCounter) else ExactCounter("o200k_base")


def compact_decided(
    compressor: ContextCompressor,
    messages: list[dict[str, Any]],
    *,
    force: bool = False,
    focus: str | None = None,
) -> DecidedCompaction:
    """Compress ``messages`` when forced, over the threshold, or too big for the window.

    The input is left alone, unmeasured by a tokenizer, only when its UTF-8 bound is within
    both the threshold and the fit target (and the compressor does not already count
    exactly). Otherwise the compressor's counter becomes an
    exact one (``o200k_base`` unless it already counts exactly) for this and later calls.
    """
    target = compressor.fit_target_tokens
    bound = utf8_bound(messages)
    counts_exactly = isinstance(compressor.token_counter, ExactCounter)
    if not (force or counts_exactly) and bound <= min(compressor.threshold_tokens, target):
        before = DecidingCount(bound, "bound")
        return DecidedCompaction(messages, _untouched(messages, before, target), before, before)
    counter = _exact_counter(compressor)
    compressor.token_counter = counter
    before = DecidingCount(counter.count_messages(messages), "exact", counter.name)
    if not (force or before.tokens > target or compressor.should_compress(before.tokens)):
        return DecidedCompaction(messages, _untouched(messages, before, target), before, before)
    result = compressor.compress(
        messages, current_tokens=before.tokens, focus_topic=focus, force=force
    )
    stats = compressor.last_stats
    after = DecidingCount(counter.count_messages(result), "exact", counter.name)
    if after.tokens > target and stats.fits:
        stats.fits = False
        stats.not_fit_reason = f"{after.tokens:,} tokens, over the target of {target:,}"
    return DecidedCompaction(result, stats, before, after)


def _untouched(
    messages: list[dict[str, Any]], count: DecidingCount, target: int
) -> CompressionStats:
    stats = CompressionStats(
        before_messages=len(messages),
        after_messages=len(messages),
        before_tokens=count.tokens,
        after_tokens=count.tokens,
        reason=UNDER_THRESHOLD,
        fit_target_tokens=target,
    )
    stats.fits = count.tokens <= target
    if not stats.fits:
        stats.not_fit_reason = (
            f"{count.tokens:,} tokens, over the target of {target:,}, "
            "and under the compaction threshold"
        )
    return stats
