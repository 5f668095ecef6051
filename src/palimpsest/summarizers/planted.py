"""Keep instructions planted in tool output out of handoff summaries (issue 20).

A summary is re-injected on every later turn, so text from a tool output or a fetched page
that addresses the model ("ignore all previous instructions and …") must never reach it as
an instruction. The extractive summarizer passes its body through :func:`withhold_planted`:
every directive-shaped line that is not the user's own request is replaced by a note that
names what was withheld and never repeats it. (The model summarizer is checked instead, in
verified compaction: :mod:`palimpsest.compaction.verify` rejects and retries.)

"The user's own request" means the user messages of the span and of the previous summary's
goal, as :func:`user_messages` collects them.
"""

from __future__ import annotations

from ..messages import content_text
from ..safety.threats.directives import withhold
from .base import SummaryRequest

__all__ = ["user_messages", "withhold_planted"]


def user_messages(request: SummaryRequest) -> list[str]:
    """The texts the user wrote: user turns of the span, the goal, the previous summary's
    quoted request lines."""
    texts = [
        content_text(turn.get("content"))
        for turn in request.turns
        if isinstance(turn, dict) and turn.get("role") == "user"
    ]
    if request.goal:
        texts.append(request.goal)
    return texts


def withhold_planted(body: str, request: SummaryRequest) -> str:
    """``body`` with planted directive lines replaced by a note (see the module docstring)."""
    return withhold(body, user_messages(request))
