"""Provider-reported token usage, normalized into one canonical shape.

Each provider names and nests its counters differently, and some include cached tokens in
the input total while others do not. ``CanonicalUsage`` holds disjoint buckets, so
``prompt_tokens`` (what the next request must carry, and what compression decisions use)
and ``total_tokens`` are derived the same way for every provider.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["CanonicalUsage"]


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
