"""Provider-reported token usage, normalized into one canonical shape.

Each provider names and nests its counters differently, and some include cached tokens in
the input total while others do not. ``CanonicalUsage`` holds disjoint buckets, so
``prompt_tokens`` (what the next request must carry, and what compression decisions use)
and ``total_tokens`` are derived the same way for every provider.

``normalize_usage`` reads the three shapes the library meets (Anthropic Messages, OpenAI
Chat Completions, OpenAI Responses) from plain dicts or SDK objects alike, and never
raises on odd values: a counter it cannot read counts as 0 (spec TK-10..TK-15).

Usage a provider did not report is *unknown*, which is not zero: llama.cpp's server never
sends usage on a stream, and a session recorded as "0 tokens, $0.00" after an hour of work
misleads. ``reported_usage`` therefore gives ``None`` for a missing usage object, providers
put that ``None`` on ``Completion.usage``, and sums keep the known part and a count of
unreported calls apart (:class:`UsageTotal`). Shown, such a sum is a lower bound:
``≥ 1,234 (2 calls unreported)``, or ``unknown`` when no call reported anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "API_SHAPES",
    "ApiShape",
    "CanonicalUsage",
    "UsageTotal",
    "format_token_pair",
    "format_token_total",
    "normalize_usage",
    "reported_usage",
]

ApiShape = Literal["anthropic", "chat", "responses"]

#: Accepted ``api_shape`` spellings -> canonical shape. The long names are the API modes
#: hosts tend to use in config (``anthropic_messages``, ``chat_completions``, ...).
API_SHAPES: dict[str, ApiShape] = {
    "anthropic": "anthropic",
    "anthropic_messages": "anthropic",
    "messages": "anthropic",
    "chat": "chat",
    "chat_completions": "chat",
    "openai": "chat",
    "responses": "responses",
    "codex_responses": "responses",
}


@dataclass(frozen=True)
class CanonicalUsage:
    """Disjoint token buckets of one (or, when added, several) requests (TK-10)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    request_count: int = 1
    raw_usage: Any = None

    @property
    def prompt_tokens(self) -> int:
        """Everything the prompt occupied in the window, cached or not."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.output_tokens

    def __add__(self, other: CanonicalUsage) -> CanonicalUsage:
        if not isinstance(other, CanonicalUsage):
            return NotImplemented
        return CanonicalUsage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            request_count=self.request_count + other.request_count,
        )

    def for_engine(self) -> dict[str, int]:
        """The dict a context engine's ``update_from_response`` receives (TK-16)."""
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
        }

    def to_dict(self) -> dict[str, int]:
        """The buckets and derived totals as plain ints (for JSON, logs, the session store)."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "request_count": self.request_count,
            "prompt_tokens": self.prompt_tokens,
            "total_tokens": self.total_tokens,
        }


def _hop(obj: Any, name: str) -> Any:
    """One path step: a mapping key or an attribute, whichever the object offers."""
    if not obj:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _count(obj: Any, *path: str) -> int:
    """The counter at ``path``; missing or falsy hops, junk and negatives all give 0 (TK-15)."""
    value = obj
    for name in path:
        value = _hop(value, name)
        if not value:
            return 0
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError, OverflowError):
        return 0


def _first(obj: Any, *paths: tuple[str, ...]) -> int:
    """The first non-zero counter among candidate paths (TK-14)."""
    for path in paths:
        value = _count(obj, *path)
        if value:
            return value
    return 0


def _reasoning(raw: Any) -> int:
    return _first(
        raw,
        ("output_tokens_details", "reasoning_tokens"),
        ("completion_tokens_details", "reasoning_tokens"),
    )


def normalize_usage(raw: Any, api_shape: str = "chat") -> CanonicalUsage:
    """Normalize a provider's usage object (dict or SDK object) into ``CanonicalUsage``.

    ``api_shape`` is ``"anthropic"`` (input already excludes cache), ``"chat"`` (the
    default; ``prompt_tokens`` includes cached tokens) or ``"responses"`` (``input_tokens``
    includes cached tokens). ``None`` or an empty object gives all zeros with
    ``request_count == 1``. The original object is kept as ``raw_usage``.
    """
    shape = API_SHAPES.get(api_shape.lower()) if isinstance(api_shape, str) else None
    if shape is None:
        known = ", ".join(sorted(set(API_SHAPES.values())))
        raise ValueError(f"unknown usage api_shape {api_shape!r}; expected one of: {known}")
    if not raw:
        return CanonicalUsage(raw_usage=raw if raw is not None else None)

    reasoning = _reasoning(raw)
    if shape == "anthropic":
        return CanonicalUsage(
            input_tokens=_count(raw, "input_tokens"),
            output_tokens=_count(raw, "output_tokens"),
            cache_read_tokens=_count(raw, "cache_read_input_tokens"),
            cache_write_tokens=_count(raw, "cache_creation_input_tokens"),
            reasoning_tokens=reasoning,
            raw_usage=raw,
        )
    if shape == "responses":
        total_in = _count(raw, "input_tokens")
        cache_read = _count(raw, "input_tokens_details", "cached_tokens")
        cache_write = _first(
            raw,
            ("input_tokens_details", "cache_write_tokens"),
            ("input_tokens_details", "cache_creation_tokens"),
        )
        output = _count(raw, "output_tokens")
    else:
        total_in = _first(raw, ("prompt_tokens",), ("input_tokens",))
        cache_read = _first(
            raw,
            ("prompt_tokens_details", "cached_tokens"),
            ("cache_read_input_tokens",),
            ("prompt_cache_hit_tokens",),
            ("cached_tokens",),
        )
        cache_write = _first(
            raw,
            ("prompt_tokens_details", "cache_write_tokens"),
            ("prompt_tokens_details", "cache_creation_input_tokens"),
            ("cache_creation_input_tokens",),
            ("cache_write_tokens",),
        )
        output = _first(raw, ("completion_tokens",), ("output_tokens",))
    return CanonicalUsage(
        input_tokens=max(0, total_in - cache_read - cache_write),
        output_tokens=output,
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
        reasoning_tokens=reasoning,
        raw_usage=raw,
    )


def reported_usage(raw: Any, api_shape: str = "chat") -> CanonicalUsage | None:
    """Like :func:`normalize_usage`, but ``None`` when the provider reported no usage.

    ``None`` and an empty object are "not reported"; an object whose counters are all zero
    is a report of zero. Providers use this for ``Completion.usage``.
    """
    usage = normalize_usage(raw, api_shape)  # validates api_shape either way
    return usage if raw else None


def format_token_total(known: int, unreported_calls: int, calls: int | None = None) -> str:
    """A token figure that may be missing parts: ``1,234``, ``≥ 1,234 (2 calls
    unreported)``, or ``unknown (3 calls unreported)`` when no call reported anything
    (``calls`` is the number of calls in all; without it a zero ``known`` counts as none)."""
    if not unreported_calls:
        return f"{known:,}"
    noun = "call" if unreported_calls == 1 else "calls"
    reported = (calls - unreported_calls) if calls is not None else (1 if known else 0)
    if reported <= 0:
        return f"unknown ({unreported_calls:,} {noun} unreported)"
    return f"≥ {known:,} ({unreported_calls:,} {noun} unreported)"


def format_token_pair(
    input_tokens: int, output_tokens: int, unreported_calls: int, calls: int
) -> str:
    """``1,234 in / 56 out``, ``≥ 1,234 in / ≥ 56 out (1 call unreported)``, or
    ``unknown (2 calls unreported)`` when none of the ``calls`` reported usage."""
    if not unreported_calls:
        return f"{input_tokens:,} in / {output_tokens:,} out"
    noun = "call" if unreported_calls == 1 else "calls"
    if calls - unreported_calls <= 0:
        return f"unknown ({unreported_calls:,} {noun} unreported)"
    return (
        f"≥ {input_tokens:,} in / ≥ {output_tokens:,} out ({unreported_calls:,} {noun} unreported)"
    )


@dataclass(frozen=True)
class UsageTotal:
    """The usage of several calls, some of which may not have reported any.

    ``known`` sums the calls that reported (its ``request_count`` counts them);
    ``unreported_calls`` counts the others. A figure from ``known`` is exact only when
    :attr:`complete`; otherwise it is a lower bound.
    """

    known: CanonicalUsage = field(default_factory=lambda: CanonicalUsage(request_count=0))
    unreported_calls: int = 0

    def add(self, usage: CanonicalUsage | None) -> UsageTotal:
        """This total plus one call's usage (``None``: the call reported none)."""
        if usage is None:
            return UsageTotal(self.known, self.unreported_calls + 1)
        return UsageTotal(self.known + usage, self.unreported_calls)

    @property
    def calls(self) -> int:
        """Every call counted, reported or not."""
        return self.known.request_count + self.unreported_calls

    @property
    def complete(self) -> bool:
        """Every call reported its usage: the figures are exact, not lower bounds."""
        return self.unreported_calls == 0

    def tokens(self, bucket: str) -> str:
        """One bucket (``input_tokens``, ``prompt_tokens``, ...) as shown to a person."""
        value = getattr(self.known, bucket)
        if not isinstance(value, int):
            raise ValueError(f"not a token bucket: {bucket!r}")
        return format_token_total(value, self.unreported_calls, self.calls)

    def to_dict(self) -> dict[str, int | None]:
        """Plain values: known buckets, ``None`` for each when no call reported at all."""
        out: dict[str, int | None] = {}
        nothing_known = self.known.request_count == 0 and self.unreported_calls > 0
        for key, value in self.known.to_dict().items():
            out[key] = None if nothing_known and key != "request_count" else value
        out["unreported_calls"] = self.unreported_calls
        out["calls"] = self.calls
        return out
