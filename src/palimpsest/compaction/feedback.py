"""What a manual ``/compress`` tells the user, decided once and rendered anywhere.

The compressor only reports facts (message lists, rough token figures, its per-call failure
fields); :func:`summarize_manual_compression` turns them into a headline, a token line and
an optional note, so the CLI, a gateway and tests all say the same thing (CC-113, CC-114).
Token figures come from the chars/4 estimate and are always labelled rough. A failure
reason is always redacted before it is shown, whatever the user's redaction setting.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..safety.redact import redact

__all__ = ["summarize_manual_compression"]

DENSER_SUMMARY_NOTE = (
    "Note: fewer messages can still raise this rough estimate when compression rewrites "
    "the transcript into denser summaries."
)
REFUSED_NOTE = (
    "The summary would have been larger than the messages it replaces, so no messages were removed."
)
ABORTED_NOTE = "Summary generation failed, so no messages were removed."
FALLBACK_NOTE = (
    "Summary generation failed; limited fallback context was used instead "
    "and {dropped} message(s) were removed."
)


def summarize_manual_compression(
    before_messages: Sequence[Mapping[str, Any]],
    after_messages: Sequence[Mapping[str, Any]],
    before_tokens: int,
    after_tokens: int,
    *,
    fallback_used: bool = False,
    aborted: bool = False,
    dropped_count: int | None = None,
    failure_reason: str | None = None,
    refused_would_grow: bool = False,
) -> dict[str, Any]:
    """Feedback for one manual compression.

    The keyword arguments are the compressor's per-call fields
    (``last_summary_fallback_used``, ``last_compress_aborted``,
    ``last_summary_dropped_count``, ``last_summary_error``,
    ``last_compress_refused_would_grow``). Returns a dict with ``noop``, ``headline``,
    ``token_line``, ``note`` (``None`` when there is nothing to add) and the facts it was
    built from: ``aborted``, ``fallback_used``, ``refused_would_grow``, ``before_count``,
    ``after_count``, ``before_tokens``, ``after_tokens``, ``dropped_count`` and the redacted
    ``failure_reason``.
    """
    before_count = len(before_messages)
    after_count = len(after_messages)
    noop = list(after_messages) == list(before_messages)
    # A bool is an int in Python; "True messages dropped" is never a count.
    if isinstance(dropped_count, int) and not isinstance(dropped_count, bool):
        dropped = dropped_count
    else:
        dropped = max(before_count - after_count, 0)
    reason = _clean_reason(failure_reason)

    if noop and after_tokens == before_tokens:
        token_line = f"Rough transcript estimate: ~{before_tokens:,} tokens (unchanged)"
    else:
        token_line = f"Rough transcript estimate: ~{before_tokens:,} → ~{after_tokens:,} tokens"

    note: str | None = None
    if refused_would_grow:
        headline = (
            "Compression refused (summary would grow the conversation): "
            f"{before_count} messages preserved"
        )
        note = REFUSED_NOTE
    elif aborted:
        headline = f"Compression aborted: {before_count} messages preserved"
        note = _with_reason(ABORTED_NOTE, reason)
    elif fallback_used:
        headline = f"Compressed with fallback: {before_count} → {after_count} messages"
        note = _with_reason(FALLBACK_NOTE.format(dropped=dropped), reason)
    elif noop:
        headline = f"No changes from compression: {before_count} messages"
    else:
        headline = f"Compressed: {before_count} → {after_count} messages"
        if after_count < before_count and after_tokens > before_tokens:
            note = DENSER_SUMMARY_NOTE

    return {
        "noop": noop,
        "headline": headline,
        "token_line": token_line,
        "note": note,
        "aborted": aborted,
        "fallback_used": fallback_used,
        "refused_would_grow": refused_would_grow,
        "before_count": before_count,
        "after_count": after_count,
        "before_tokens": before_tokens,
        "after_tokens": after_tokens,
        "dropped_count": dropped,
        "failure_reason": reason,
    }


def _clean_reason(reason: object) -> str | None:
    if reason is None:
        return None
    text = redact(str(reason)).strip()
    return text or None


def _with_reason(note: str, reason: str | None) -> str:
    return f"{note} Reason: {reason}" if reason else note
