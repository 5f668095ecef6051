"""``compress_trajectory``: one pass of the algorithm over one trajectory, sync or async.

The flow is plan -> summarize (with retries) -> assemble -> measure. Planning and assembly
are the pure functions of :mod:`.algorithm`; this module adds the only effects: counting
tokens, calling the summarizer with jittered exponential backoff (TJ-16), and sleeping
between attempts. The sync and async entry points share every step except the summarizer
call and the sleep.

One decision beyond the spec: when the assembled trajectory is not smaller than the input
(a summary as long as the turns it replaced, plus the notice), the input is returned
unchanged, so a pass never makes a trajectory longer. Its metrics say what was attempted
(API calls and errors) but ``was_compressed`` stays false.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final

from ..safety.redact import redact
from .algorithm import FALLBACK_SUMMARY, Plan, assemble, normalize_summary, plan
from .config import CompressionConfig
from .counting import TextCounter, count_tokens, make_counter
from .metrics import TrajectoryMetrics
from .summary import (
    ExtractiveTrajectorySummarizer,
    ModelSummarizer,
    TrajectorySummarizer,
    TrajectorySummaryRequest,
)

__all__ = [
    "MAX_BACKOFF_SECONDS",
    "backoff_delay",
    "compress_trajectory",
    "compress_trajectory_async",
    "count_turns",
    "summarizer_from_config",
]

MAX_BACKOFF_SECONDS: Final = 30.0
_BASE_URL_PREFIXES: Final = ("openrouter", "openai-compatible")

Turns = Sequence[Mapping[str, Any]]


def summarizer_from_config(config: CompressionConfig) -> TrajectorySummarizer:
    """The extractive summarizer, or a model built from ``config.summarization_model``.

    The spec is a ``<provider>:<model>`` string (:func:`palimpsest.providers.connect`);
    ``base_url`` applies to OpenRouter and OpenAI-compatible servers, and the key is read
    from the environment variable ``api_key_env`` names.
    """
    spec = config.summarization_model
    if not spec:
        return ExtractiveTrajectorySummarizer()
    from ..providers.connect import connect, parse_model_spec

    prefix, _ = parse_model_spec(spec)
    base_url = config.base_url if prefix in _BASE_URL_PREFIXES else None
    model = connect(spec, base_url=base_url, api_key=os.environ.get(config.api_key_env) or None)
    return ModelSummarizer(model, config)


_SYSTEM_COUNTS: dict[tuple[TextCounter, str], int] = {}
_SYSTEM_COUNTS_KEPT = 32
"""A dataset's trajectories mostly share one system prompt (and its copy with the summary
notice): its count is kept, for the last few such texts only, instead of encoding the
same few KB again for every entry. Counts are facts about text, the same for any run."""


def _system_count(counter: TextCounter, text: str) -> int:
    if getattr(counter, "__hash__", None) is None:  # a caller's counter may not be hashable
        return count_tokens(counter, text)
    key = (counter, text)
    count = _SYSTEM_COUNTS.get(key)
    if count is None:
        count = count_tokens(counter, text)
        if len(_SYSTEM_COUNTS) >= _SYSTEM_COUNTS_KEPT:
            # the oldest goes (dicts keep insertion order): clearing them all could drop
            # the prompt counted a moment ago, for the next trajectory of the same run
            del _SYSTEM_COUNTS[next(iter(_SYSTEM_COUNTS))]
        _SYSTEM_COUNTS[key] = count
    return count


def count_turns(turns: Turns, counter: TextCounter) -> list[int]:
    """Tokens of each turn's ``value`` (TJ-06)."""
    return [
        _system_count(counter, str(t.get("value") or ""))
        if t.get("from") == "system"
        else count_tokens(counter, str(t.get("value") or ""))
        for t in turns
    ]


def backoff_delay(attempt: int, base: float, rng: Callable[[], float] = random.random) -> float:
    """Seconds to wait after failed attempt ``attempt`` (0-based): ``base * 2**attempt``,
    capped at 30 s, then scaled by a random factor in [0.5, 1) so parallel workers spread."""
    delay = min(float(base) * 2.0**attempt, MAX_BACKOFF_SECONDS)
    return delay * (0.5 + rng() / 2)


def _metrics_for(turns: Turns, total: int) -> TrajectoryMetrics:
    return TrajectoryMetrics(
        original_turns=len(turns),
        original_tokens=total,
        compressed_turns=len(turns),
        compressed_tokens=total,
    )


def _request(turns: Turns, p: Plan, config: CompressionConfig) -> TrajectorySummaryRequest:
    return TrajectorySummaryRequest(
        turns=turns, start=p.start, until=p.until, target_tokens=config.summary_target_tokens
    )


def _attempts(summarizer: TrajectorySummarizer, config: CompressionConfig) -> tuple[int, bool]:
    is_model = bool(getattr(summarizer, "is_model", True))
    return (config.max_retries if is_model else 1), is_model


def _summarize(
    summarizer: TrajectorySummarizer,
    request: TrajectorySummaryRequest,
    config: CompressionConfig,
    metrics: TrajectoryMetrics,
) -> str:
    attempts, is_model = _attempts(summarizer, config)
    for attempt in range(attempts):
        if is_model:
            metrics.summarization_api_calls += 1
        try:
            return normalize_summary(redact(summarizer.summarize(request) or ""))
        except Exception:  # any failed attempt is retried, then falls back
            metrics.summarization_errors += 1
            if attempt + 1 < attempts:
                time.sleep(backoff_delay(attempt, config.retry_delay))
    return FALLBACK_SUMMARY


async def _asummarize(
    summarizer: TrajectorySummarizer,
    request: TrajectorySummaryRequest,
    config: CompressionConfig,
    metrics: TrajectoryMetrics,
) -> str:
    attempts, is_model = _attempts(summarizer, config)
    call: Callable[[TrajectorySummaryRequest], Any] = getattr(
        summarizer, "asummarize", summarizer.summarize
    )
    for attempt in range(attempts):
        if is_model:
            metrics.summarization_api_calls += 1
        try:
            text = call(request)
            if inspect.isawaitable(text):
                text = await _awaited(text)
            return normalize_summary(redact(text or ""))
        except Exception:  # any failed attempt is retried, then falls back
            metrics.summarization_errors += 1
            if attempt + 1 < attempts:
                await asyncio.sleep(backoff_delay(attempt, config.retry_delay))
    return FALLBACK_SUMMARY


async def _awaited(value: Awaitable[Any]) -> Any:
    return await value


def _finish(
    turns: Turns,
    p: Plan,
    counts: Sequence[int],
    summary: str,
    metrics: TrajectoryMetrics,
    config: CompressionConfig,
    counter: TextCounter,
) -> tuple[list[dict[str, Any]], TrajectoryMetrics]:
    out = assemble(turns, p.start, p.until, summary, config)
    # The tail is the input's own turns: their counts are the plan's. Only the head (where
    # the notice changes system turns) and the summary are counted again.
    head = p.start + 1
    tokens = sum(count_turns(out[:head], counter)) + sum(counts[p.until :])
    if tokens >= p.total:
        metrics.still_over_limit = p.total > config.target_max_tokens
        return [dict(t) for t in turns], metrics
    metrics.compressed_turns = len(out)
    metrics.compressed_tokens = tokens
    metrics.turns_removed = len(turns) - len(out)
    metrics.tokens_saved = p.total - tokens
    metrics.compression_ratio = tokens / max(p.total, 1)
    metrics.was_compressed = True
    metrics.still_over_limit = tokens > config.target_max_tokens
    metrics.turns_compressed_start_idx = p.start
    metrics.turns_compressed_end_idx = p.until
    metrics.turns_in_compressed_region = p.until - p.start
    return out, metrics


def _prepare(
    turns: Turns, config: CompressionConfig, counter: TextCounter | None
) -> tuple[Plan, list[int], TrajectoryMetrics, TextCounter, list[dict[str, Any]] | None]:
    """The plan, each turn's count, fresh metrics, the counter, and the finished output when
    no summary is due."""
    counter = counter if counter is not None else make_counter(config)
    counts = count_turns(turns, counter)
    p = plan(turns, counts, config)
    metrics = _metrics_for(turns, p.total)
    if p.status == "summarize":
        return p, counts, metrics, counter, None
    if p.status == "skipped_under_target":
        metrics.skipped_under_target = True
    else:
        metrics.still_over_limit = p.total > config.target_max_tokens
    return p, counts, metrics, counter, [dict(t) for t in turns]


def compress_trajectory(
    turns: Turns,
    config: CompressionConfig,
    *,
    summarizer: TrajectorySummarizer | None = None,
    counter: TextCounter | None = None,
) -> tuple[list[dict[str, Any]], TrajectoryMetrics]:
    """Compress one ShareGPT trajectory to ``config.target_max_tokens`` if it can (TJ-06..19).

    ``turns`` must already be valid (see :func:`palimpsest.trajectories.check_turns`); the
    input is never mutated. Without ``summarizer``, one is built from the config; without
    ``counter``, the config's tokenizer is used (cached per process).
    """
    p, counts, metrics, counter, done = _prepare(turns, config, counter)
    if done is not None:
        return done, metrics
    summarizer = summarizer if summarizer is not None else summarizer_from_config(config)
    summary = _summarize(summarizer, _request(turns, p, config), config, metrics)
    return _finish(turns, p, counts, summary, metrics, config, counter)


async def compress_trajectory_async(
    turns: Turns,
    config: CompressionConfig,
    *,
    summarizer: TrajectorySummarizer | None = None,
    counter: TextCounter | None = None,
) -> tuple[list[dict[str, Any]], TrajectoryMetrics]:
    """:func:`compress_trajectory` with an awaited summarizer (TJ-23).

    Uses the summarizer's ``asummarize`` coroutine when it has one; a sync-only summarizer
    is called directly (the extractive one is quick and CPU-bound).
    """
    p, counts, metrics, counter, done = _prepare(turns, config, counter)
    if done is not None:
        return done, metrics
    summarizer = summarizer if summarizer is not None else summarizer_from_config(config)
    summary = await _asummarize(summarizer, _request(turns, p, config), config, metrics)
    return _finish(turns, p, counts, summary, metrics, config, counter)
