"""The pure steps of trajectory compression (spec TJ-08..TJ-14, TJ-17..TJ-19).

No I/O, no clocks, no model: every function takes turns and numbers and returns new values,
never mutating its input. :func:`plan` decides everything that can be decided before a
summary exists (which turns go, whether a summary is worth asking for) and :func:`assemble`
puts the answer in place; :mod:`.compress` runs the summarizer between the two, once for the
sync path and once for the async one, so the two cannot drift.

Turns are ShareGPT dicts ``{"from": role, "value": text}``; extra keys a turn carries are
kept on the turns that survive.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from ..compaction.summary import ELISION_MARKER
from .config import CompressionConfig

__all__ = [
    "ELISION_MARKER",
    "FALLBACK_SUMMARY",
    "ROLES",
    "SUMMARY_PREFIX",
    "Plan",
    "assemble",
    "normalize_summary",
    "plan",
    "protected_indices",
    "region_bounds",
    "render_region",
    "snap_boundary",
]

Turn = Mapping[str, Any]

ROLES: Final = ("system", "human", "gpt", "tool")
"""The ShareGPT roles a trajectory may use (TJ-01)."""

SUMMARY_PREFIX: Final = "[CONTEXT SUMMARY]:"
"""Starts every inserted summary turn (TJ-17)."""

FALLBACK_SUMMARY: Final = (
    f"{SUMMARY_PREFIX} Summary generation failed, so no summary of these turns is "
    "available. Earlier turns containing tool calls and tool responses were compressed "
    "to save context space."
)
"""The summary used when every attempt fails (TJ-18)."""


ELIDE_OVER: Final = 3_000
ELIDE_KEEP_HEAD: Final = 1_500
ELIDE_KEEP_TAIL: Final = 500


def protected_indices(turns: Sequence[Turn], config: CompressionConfig) -> frozenset[int]:
    """The first turn of each protected role, plus the last ``protect_last_n_turns`` (TJ-08)."""
    flags = {
        "system": config.protect_first_system,
        "human": config.protect_first_human,
        "gpt": config.protect_first_gpt,
        "tool": config.protect_first_tool,
    }
    protected: set[int] = set()
    seen: set[str] = set()
    for i, turn in enumerate(turns):
        role = turn.get("from")
        if isinstance(role, str) and role not in seen:
            seen.add(role)
            if flags.get(role):
                protected.add(i)
    n = len(turns)
    protected.update(range(max(0, n - config.protect_last_n_turns), n))
    return frozenset(protected)


def region_bounds(n: int, protected: frozenset[int]) -> tuple[int, int]:
    """``(compress_start, compress_end)`` from the protected indices (TJ-09)."""
    half = n // 2
    head = [i for i in protected if i < half]
    tail = [i for i in protected if i >= half]
    start = max(head) + 1 if head else 0
    end = min(tail) if tail else n
    return start, end


def _clean(turns: Sequence[Turn], idx: int) -> bool:
    return idx >= len(turns) or turns[idx].get("from") != "tool"


def snap_boundary(turns: Sequence[Turn], idx: int, lo: int, hi: int) -> int:
    """The nearest boundary that does not split a tool call from its response (TJ-12).

    Forward from ``idx`` to the first clean index ``<= hi``; failing that, backward to the
    nearest clean index ``>= lo``; failing both, ``lo``.
    """
    for j in range(idx, hi + 1):
        if _clean(turns, j):
            return j
    for j in range(min(idx, hi), lo - 1, -1):
        if _clean(turns, j):
            return j
    return lo


@dataclass(frozen=True)
class Plan:
    """What one pass will do, decided before any summary is written.

    ``status`` is ``"skipped_under_target"`` (within budget), ``"unchanged"`` (nothing can
    or should be compressed) or ``"summarize"`` (replace ``[start, until)`` by a summary).
    """

    status: Literal["skipped_under_target", "unchanged", "summarize"]
    total: int
    start: int = -1
    until: int = -1
    region_tokens: int = 0


def plan(turns: Sequence[Turn], counts: Sequence[int], config: CompressionConfig) -> Plan:
    """Decide the region to summarize (TJ-07, TJ-09..TJ-13). ``counts[i]`` is turn i's tokens."""
    total = sum(counts)
    if config.skip_under_target and total <= config.target_max_tokens:
        return Plan("skipped_under_target", total)
    n = len(turns)
    start, end = region_bounds(n, protected_indices(turns, config))
    if start >= end:
        return Plan("unchanged", total)
    # A region never starts on a tool response whose call stays in the head.
    start = snap_boundary(turns, start, start, end)
    if start >= end or not _clean(turns, start):
        return Plan("unchanged", total)
    target = max(total - config.target_max_tokens, 0) + config.summary_target_tokens
    accumulated = 0
    until = start
    for i in range(start, end):
        accumulated += counts[i]
        until = i + 1
        if accumulated >= target:
            break
    else:
        until = end
    # Never separate a gpt call from its tool response(s): the cut moves past them.
    until = snap_boundary(turns, until, start, end)
    region_tokens = sum(counts[start:until])
    if until <= start or region_tokens <= config.summary_target_tokens:
        return Plan("unchanged", total)
    return Plan("summarize", total, start, until, region_tokens)


def elide(text: str) -> str:
    """A long value's first 1,500 and last 500 characters around :data:`ELISION_MARKER`."""
    if len(text) <= ELIDE_OVER:
        return text
    return text[:ELIDE_KEEP_HEAD] + ELISION_MARKER + text[-ELIDE_KEEP_TAIL:]


def render_region(turns: Sequence[Turn], start: int, until: int) -> str:
    """The summarizer's view of ``turns[start:until]`` (TJ-14), ``""`` for an empty range."""
    blocks = []
    for i in range(start, until):
        role = str(turns[i].get("from", "")).upper()
        blocks.append(f"[Turn {i} - {role}]:\n{elide(str(turns[i].get('value', '')))}")
    return "\n\n".join(blocks)


# The prefix as models actually write it back: any case, with or without the colon, or the
# whole answer wrapped in one bracket (``[CONTEXT SUMMARY: did X]``).
_WRITTEN_PREFIX = re.compile(r"\[\s*context\s+summary\s*(?:\]\s*:?|:)", re.IGNORECASE)


def normalize_summary(text: str | None) -> str:
    """Exactly one ``[CONTEXT SUMMARY]:`` prefix in front of the stripped text (TJ-17).

    A prefix the model wrote itself, in any of the forms models use, is removed first, so
    ``[CONTEXT SUMMARY: did X]`` becomes ``[CONTEXT SUMMARY]: did X``, never a doubled one.
    """
    body = (text or "").strip()
    while match := _WRITTEN_PREFIX.match(body):
        wrapped = match.group(0).rstrip().endswith(":") and "]" not in match.group(0)
        body = body[match.end() :].strip()
        if wrapped and body.endswith("]"):
            body = body[:-1].rstrip()
    return f"{SUMMARY_PREFIX} {body}" if body else SUMMARY_PREFIX


def assemble(
    turns: Sequence[Turn], start: int, until: int, summary: str, config: CompressionConfig
) -> list[dict[str, Any]]:
    """Head (with the notice on its system turns), the summary turn, then the rest (TJ-19)."""
    out: list[dict[str, Any]] = []
    for turn in turns[:start]:
        copy = dict(turn)
        if config.add_summary_notice and copy.get("from") == "system":
            copy["value"] = str(copy.get("value", "")) + config.summary_notice_text
        out.append(copy)
    out.append({"from": "human", "value": summary})
    out.extend(dict(turn) for turn in turns[until:])
    return out
