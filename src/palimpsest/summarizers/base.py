"""Who writes a handoff summary: the ``Summarizer`` protocol and the request it receives.

The compressor decides *what* to summarize (the middle of the transcript, the previous
summary, a focus topic, a budget) and renders the full prompt an LLM would receive; a
summarizer only turns that request into text. Keeping the request a plain value means an
extractive summarizer, an LLM summarizer and a test double all see the same input.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ..messages.reading import MessageReading

__all__ = ["RedactedText", "Summarizer", "SummaryRequest", "SupportsCooldown"]


@dataclass(frozen=True)
class SummaryRequest:
    """Everything a summarizer needs for one compaction.

    ``turns`` are the messages of the middle span as the caller wrote them (not pruned),
    oldest first, without earlier compaction summaries.
    ``previous_summary`` is the body of the last summary without its prefix, or ``None`` on
    a first compaction. ``budget_tokens`` is the target size. ``prompt`` is the complete text
    an LLM summarizer sends (preamble, turns, template, focus block), already redacted.
    ``template`` names the section layout (``"handoff"`` or ``"classic"``). A summarizer
    class that sets ``needs_prompt = False`` (it reads ``turns`` itself) receives an empty
    ``prompt``, which saves rendering and redacting it. ``retry_note`` is set when an
    earlier answer to the same request was rejected: the reasons, already appended to
    ``prompt``, kept apart so a summarizer that rebuilds the prompt can carry them over.
    """

    turns: list[dict[str, Any]]
    previous_summary: str | None
    focus_topic: str | None
    budget_tokens: int
    prompt: str
    template: str = "handoff"
    has_user_turn: bool = True
    metadata: dict[str, Any] = field(default_factory=dict)
    goal: str | None = None
    """The conversation's first real user request when it lies before ``turns`` (in the
    head, which is kept verbatim), so a summary can name the goal; ``None`` otherwise."""
    readings: tuple[MessageReading, ...] | None = None
    """:func:`~palimpsest.messages.reading.read_transcript` of ``turns``, one per turn, read
    in the context of the whole transcript (a turn that answers an action before the span
    is still an observation); ``None``: the summarizer reads ``turns`` itself."""
    retry_note: str | None = None
    tail: Sequence[Mapping[str, Any]] | None = None
    """The messages kept verbatim after ``turns`` (the compressor's tail), oldest first;
    ``None`` when the caller does not say. A summarizer may rank what it keeps by what the
    tail goes on to use (the extractive one ranks identifiers so); it never summarizes it."""


@runtime_checkable
class Summarizer(Protocol):
    """Anything with ``summarize(request) -> str``; raising means the summary failed.

    Raise :class:`palimpsest.errors.SummaryError` (or any exception) on failure; the
    compressor then applies its cooldown and fallback rules. Return the summary body
    only; the compressor adds the prefix and redacts.
    """

    def summarize(self, request: SummaryRequest) -> str: ...


class RedactedText(str):
    """A summary body that is, as it stands, the output of
    :func:`palimpsest.safety.redact.redact`.

    Redaction is idempotent (``redact(redact(x)) == redact(x)``, held by the property tests
    of ``tests/test_safety_redact.py``), so redacting such a text again returns it
    unchanged: the compressor skips that pass over a reply that reaches it in this type and
    unchanged by its own cleaning. Anything that changes the text makes a plain ``str``, so
    the mark never outlives the redaction it stands for.
    """

    __slots__ = ()


@runtime_checkable
class SupportsCooldown(Protocol):
    """A summarizer that manages its own failure cooldowns (e.g. the LLM summarizer).

    While ``cooldown_remaining()`` is above zero the compressor does not call ``summarize``
    and uses its deterministic fallback instead; automatic compression is blocked
    (spec CC-18). A manual compression calls ``reset_cooldown()`` first (CC-82).
    """

    def cooldown_remaining(self) -> float: ...

    def reset_cooldown(self) -> None: ...
