"""Decisions of reactive recovery, kept apart from the loop that acts on them (AL-09..14).

When a model call fails, the loop asks these functions what to do; none of them does I/O:

* an output-cap error (the prompt fits, prompt + ``max_tokens`` does not) gets a smaller
  ``max_tokens`` and a retry, never a compaction (:func:`smaller_max_tokens`);
* a context overflow is retried after a forced compaction, at most
  :data:`MAX_COMPRESSION_ATTEMPTS` times, and only while each pass makes progress
  (:func:`made_progress`, AL-12); the messages the user sees when it gives up are here;
* the per-turn counters live in :class:`RecoveryState`, which a compaction resets (AL-23).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import OutputLimitError

__all__ = [
    "DEFAULT_MAX_ATTEMPTS",
    "MAX_ATTEMPTS_CAP",
    "MAX_COMPRESSION_ATTEMPTS",
    "MAX_OUTPUT_RETRIES",
    "MIN_MAX_TOKENS",
    "RecoveryState",
    "cannot_compress_error",
    "made_progress",
    "max_attempts",
    "overflow_exhausted_error",
    "smaller_max_tokens",
]

MAX_COMPRESSION_ATTEMPTS = 3
"""Overflow recoveries per turn before the turn ends with advice (AL-09)."""

DEFAULT_MAX_ATTEMPTS = 3
MAX_ATTEMPTS_CAP = 10
"""Preflight passes: ``compression.max_attempts`` (AL-05, AL-06)."""

MAX_OUTPUT_RETRIES = 3
"""Retries with a smaller ``max_tokens`` per model call."""

MIN_MAX_TOKENS = 256
"""Below this an answer is not worth asking for: the output-cap recovery gives up."""

UNCAPPED_FALLBACK = 4_096
"""The cap tried when no ``max_tokens`` was sent and the error names no room."""


@dataclass
class RecoveryState:
    """Per-turn retry counters; reset after every compaction (AL-23)."""

    compression_attempts: int = 0
    output_retries: int = 0
    empty_answers: int = 0

    def reset(self) -> None:
        self.compression_attempts = 0
        self.output_retries = 0
        self.empty_answers = 0


def max_attempts(value: object) -> int:
    """``compression.max_attempts``: an int from 1 to 10; anything else is 3 (AL-06)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return DEFAULT_MAX_ATTEMPTS
    return min(value, MAX_ATTEMPTS_CAP)


def smaller_max_tokens(error: OutputLimitError, current: int | None) -> int | None:
    """The next output cap after ``error``, or ``None`` when no smaller cap is useful.

    The provider's suggestion wins; else the room the error reports (limit minus input);
    else half of the current cap (or :data:`UNCAPPED_FALLBACK` when none was sent).
    """
    candidates: list[int] = []
    if error.suggested_max_tokens:
        candidates.append(int(error.suggested_max_tokens))
    elif error.limit and error.input_tokens is not None:
        candidates.append(int(error.limit) - int(error.input_tokens) - 64)
    elif current:
        candidates.append(current // 2)
    else:
        candidates.append(UNCAPPED_FALLBACK)
    proposal = candidates[0]
    if current is not None and proposal >= current:
        proposal = current // 2
    return proposal if proposal >= MIN_MAX_TOKENS else None


def made_progress(
    before_messages: int, after_messages: int, before_tokens: int, after_tokens: int
) -> bool:
    """A recovery pass made progress when it cut messages **or** the rough size (AL-12)."""
    return after_messages < before_messages or after_tokens < before_tokens


def cannot_compress_error(tokens: int) -> str:
    """The partial result's error when a pass made no progress (AL-12)."""
    return f"Context length exceeded (~{tokens:,} tokens). Cannot compress further."


def overflow_exhausted_error(attempts: int) -> str:
    """The turn's error after :data:`MAX_COMPRESSION_ATTEMPTS` failed recoveries (AL-09)."""
    return (
        f"The conversation is still too large for the model's context window after "
        f"{attempts} compression attempts. Start a fresh conversation with /new, or retry "
        "compression with /compress."
    )
