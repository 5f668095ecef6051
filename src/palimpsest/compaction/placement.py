"""Phase 4 with the fit step: put the summary between head and tail, and make it all fit.

:func:`~.fit.fit_to_window` clips the largest texts when the result is too big, and shrinks
the summary last, by whole lines, and only when that makes the list fit. Dropping lines
still loses whole sections, so when the fit step had to shrink the summary itself, or the
list does not fit at all, and the summary can be written again cheaply (a deterministic
summarizer), it is rewritten to a smaller budget instead: every section stays, each
shorter.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..messages.content import content_text
from .assemble import Assembly, assemble
from .fit import FitResult, fit_to_window, is_clipped
from .markers import END_MARKER, SUMMARY_FLAG, with_summary_prefix

__all__ = ["MIN_REWRITE_BUDGET", "REWRITE_PASSES", "Placed", "place_summary", "summary_clipped"]

REWRITE_PASSES = 3
"""Times a summary the fit step clipped is rewritten to a smaller budget."""
REWRITE_SHARE = 0.6
"""Each rewrite asks for this share of the previous summary's size."""
MIN_REWRITE_BUDGET = 60
"""The smallest budget a rewrite asks for."""


@dataclass(frozen=True)
class Placed:
    """The summary body finally used, the assembly around it, and the fitted result."""

    body: str
    assembly: Assembly
    fitted: FitResult


def summary_clipped(messages: Sequence[dict[str, Any]]) -> bool:
    """True when the fit step cut text out of the summary itself (not out of a tail message
    the summary was merged into, after its end marker). Lines it dropped whole leave no
    marker: :attr:`~.fit.FitResult.summary_shrunk` says so."""
    for message in messages:
        if message.get(SUMMARY_FLAG):
            text = content_text(message.get("content"))
            return is_clipped(text.partition(END_MARKER)[0])
    return False


def place_summary(
    head: list[dict[str, Any]],
    body: str,
    tail: list[dict[str, Any]],
    *,
    has_user_turn: bool,
    orphan_call_policy: Literal["stub", "strip"],
    target: int,
    count: Callable[[Sequence[dict[str, Any]]], int],
    count_text: Callable[[str], int],
    rewrite: Callable[[int], str | None] | None = None,
) -> Placed:
    """Assemble ``head + summary + tail`` and fit it to ``target`` tokens.

    ``rewrite(budget)`` writes the summary again to a budget (``None`` when it cannot);
    without it a clipped summary stays clipped, and a rewrite no shorter than the summary
    it replaces is not used.
    """
    for attempt in range(REWRITE_PASSES + 1):
        assembly = assemble(
            head,
            with_summary_prefix(body),
            tail,
            has_user_turn=has_user_turn,
            orphan_call_policy=orphan_call_policy,
        )
        fitted = fit_to_window(assembly.messages, target, count)
        done = fitted.fits and not (fitted.summary_shrunk or summary_clipped(fitted.messages))
        if rewrite is None or attempt == REWRITE_PASSES or done:
            break
        rewritten = rewrite(max(MIN_REWRITE_BUDGET, int(count_text(body) * REWRITE_SHARE)))
        if rewritten is None or count_text(rewritten) >= count_text(body):
            # a summarizer with nothing shorter may answer a smaller budget with a longer
            # text (the extractive one keeps every heading when even its terse form is over)
            break
        body = rewritten
    return Placed(body, assembly, fitted)
