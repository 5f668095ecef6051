"""The count a fitting decision rests on: a proven bound where it settles the question, else exact.

The rough rule (chars / 4) is fine for budgets, but a verdict taken on it can be wrong by
more than the whole window: symbolic-math output, base64, minified code and CJK text take
2.3x to 4x more tokens than it says, so a transcript of 182K real tokens read as ~78K and
"needed no compression" on a 160K window. A decision to leave a transcript alone, and
every "it fits" a command reports, must not rest on such a guess.

The bound: every token of a byte-level BPE vocabulary (``o200k_base``, ``cl100k_base``)
covers at least one UTF-8 byte, so the bytes of the texts :class:`~palimpsest.ExactCounter`
tokenizes, plus its per-message framing and image charge, can never be below the exact
count. When that bound is within the limit, the verdict "fits" is proven without loading
a tokenizer; when it is not, the exact count decides. Nothing in between is guessed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .tokens import IMAGE_TOKENS, ExactCounter, exact_fields

__all__ = ["DecidingCount", "deciding_count", "utf8_bound"]


def utf8_bound(messages: Sequence[Mapping[str, Any]]) -> int:
    """An upper bound of ``ExactCounter().count_messages(messages)`` for any BPE encoding.

    Each message costs its framing tokens, the UTF-8 bytes of every text the exact counter
    tokenizes, and the fixed image charge; a non-empty list adds the reply priming.
    """
    if not messages:
        return 0
    total = ExactCounter.reply_priming
    for message in messages:
        fields, images = exact_fields(message)
        total += ExactCounter.tokens_per_message + images * IMAGE_TOKENS
        total += sum(len(f.encode("utf-8", "surrogatepass")) for f in fields)
    return total


@dataclass(frozen=True)
class DecidingCount:
    """A token figure and how it was obtained: ``exact`` (tokenized) or ``bound`` (at most)."""

    tokens: int
    method: Literal["exact", "bound"]
    encoding: str = "o200k_base"

    @property
    def label(self) -> str:
        """What the figure is, for a report: ``exact o200k_base`` or ``UTF-8 bound``."""
        if self.method == "exact":
            return f"exact {self.encoding}"
        return "UTF-8 bound"

    def shown(self) -> str:
        """The figure as a person reads it: ``12,345`` or ``≤12,345``."""
        return f"{self.tokens:,}" if self.method == "exact" else f"≤{self.tokens:,}"


def deciding_count(
    messages: Sequence[Mapping[str, Any]],
    limit: int,
    exact: Callable[[], ExactCounter],
) -> DecidingCount:
    """The count to compare against ``limit``: the UTF-8 bound when it is within ``limit``
    (then the exact count is too), otherwise the exact count from ``exact()`` (called only
    then: loading a vocabulary takes about a second)."""
    bound = utf8_bound(messages)
    if bound <= limit:
        return DecidingCount(bound, "bound")
    counter = exact()
    return DecidingCount(counter.count_messages(messages), "exact", counter.name)
