"""What stands in for the middle when no summarizer could write it.

The middle is never dropped silently (CC-85, CC-86): either the rule-based summary of the
same turns, marked as a recovery so the next model knows what it is, or the seed's short
static marker saying how many messages were removed.
"""

from __future__ import annotations

from ..safety.redact import redact

__all__ = ["rule_based_fallback", "static_fallback"]


def static_fallback(dropped: int, reason: str) -> str:
    """The static marker body: nothing summarized, ``dropped`` messages removed."""
    return (
        f"No summary could be produced this time ({redact(reason)}). {dropped} message(s) "
        "were removed to free context space and are not summarized; they held earlier "
        "work from this same session. Continue from the recent messages below and from "
        "the current state of files and other resources."
    )


def rule_based_fallback(body: str, dropped: int, reason: str) -> str:
    """A rule-based summary body, noted in Critical Context as the recovery it is."""
    note = (
        f"The summary model failed ({reason}); the {dropped} compacted message(s) "
        "are covered only by this rule-based recovery."
    )
    return redact(_add_to_section(body, "## Critical Context", note))


def _add_to_section(body: str, heading: str, note: str) -> str:
    """Insert ``note`` as the first line under ``heading``, adding the section if missing."""
    lines = body.split("\n")
    for i, line in enumerate(lines):
        if line.strip() == heading:
            return "\n".join([*lines[: i + 1], note, *lines[i + 1 :]])
    return f"{body.rstrip()}\n\n{heading}\n{note}"
