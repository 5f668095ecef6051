"""Phase 1 of compaction: shrink old tool traffic without calling a model.

Before anything is summarized, the bulk of a long agent transcript is usually tool output
nobody will read again. This pass, cheap and deterministic, works through the list in a few
linear sweeps:

1. **Boundary** (CC-31): the newest messages that fit the tail token budget, with
   ``protect_last_n`` as a floor, are protected; only indices below the boundary are touched
   by steps 3 and 4.
2. **Dedup** (CC-36): over the *whole* list, an older tool result whose text reappears later
   becomes :data:`DUPLICATE_PLACEHOLDER`; the newest copy stays.
3. **Demotion** (CC-33 to CC-35, CC-41, CC-42): old results longer than 200 characters
   become a one-line summary (or the classic placeholder); old screenshots become text.
   Text-action agents get their tool output back as *user* messages; the transcript's
   reading (:mod:`palimpsest.messages.reading`) marks those as observations, and they are
   demoted the same way while staying user messages of the same shape, their one-liner
   built from the action the reading found (``[bash] ran `pytest` -> exit 1, …``).
4. **Argument shrinking** (CC-37, CC-38): long string values inside old tool-call arguments
   are cut, and the arguments are re-serialized so they stay valid JSON.

The input list and its dicts are never mutated: the result is a new list holding the very
same message objects except where something changed, which get a shallow copy.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..messages.content import call_id, call_name, is_image_part, parse_arguments
from ..messages.reading import MessageReading, read_transcript
from ..tokens import message_budget_tokens
from .oneliners import (
    DUPLICATE_PLACEHOLDER,
    PRUNED_PLACEHOLDER,
    SCREENSHOT_PLACEHOLDER,
    is_pruned_content,
    summarize_action_output,
    summarize_tool_result,
)

__all__ = [
    "DEDUP_MIN_CHARS",
    "DUPLICATE_PLACEHOLDER",
    "PRUNED_PLACEHOLDER",
    "PRUNE_MIN_CHARS",
    "SCREENSHOT_PLACEHOLDER",
    "SHRINK_ARGS_MIN_CHARS",
    "SHRINK_STRING_MAX_CHARS",
    "TRUNCATED_MARKER",
    "PruneResult",
    "PruneStyle",
    "is_pruned_content",
    "prune_boundary",
    "prune_tool_results",
    "shrink_tool_arguments",
    "summarize_tool_result",
]

PruneStyle = Literal["summary", "placeholder"]

PRUNE_MIN_CHARS = 200
"""An old tool result is demoted only when its text is longer than this (CC-33)."""

DEDUP_MIN_CHARS = 200
"""Tool results at least this long take part in deduplication (CC-36)."""

SHRINK_ARGS_MIN_CHARS = 500
"""Tool-call arguments longer than this are shrunk (CC-37)."""

SHRINK_STRING_MAX_CHARS = 200
"""String values inside shrunk arguments keep this many characters (CC-38)."""

TRUNCATED_MARKER = "...[truncated]"
"""Appended to every string value cut by argument shrinking (CC-38)."""

SCREENSHOT_REMOVED_PREFIX = "[screenshot removed] "
"""Start of the text that replaces a ``_multimodal`` tool-result envelope (CC-41)."""

_ENVELOPE_SUMMARY_CHARS = 200
_ENVELOPE_SUMMARY_KEYS = ("text_summary", "summary")


@dataclass(frozen=True)
class PruneResult:
    """What :func:`prune_tool_results` did.

    ``messages`` is a new list (shallow copies only where changed; input untouched).
    ``pruned_count`` counts demoted and deduplicated tool results; ``shrunk_calls`` counts
    tool calls whose arguments were shrunk, which are not part of ``pruned_count``.
    Indices below ``boundary`` were eligible for demotion and shrinking. ``readings`` is
    the input's reading; pruning keeps every message's kind, so it also reads ``messages``
    (pass it on to :func:`~palimpsest.compaction.boundaries.find_tail_cut`).
    """

    messages: list[dict[str, Any]]
    pruned_count: int
    boundary: int
    shrunk_calls: int
    readings: Sequence[MessageReading] = ()


def prune_boundary(
    messages: Sequence[Mapping[str, Any]],
    *,
    protect_last_n: int,
    tail_token_budget: int | None,
) -> int:
    """First index of the protected tail; indices below it may be pruned (CC-31).

    Walking back from the end, messages are protected while their CC-39 estimates fit in
    ``tail_token_budget``; at least ``min(protect_last_n, n - 1)`` are protected whatever
    their size. Without a positive budget the tail is the last ``protect_last_n`` messages.
    """
    n = len(messages)
    keep = max(protect_last_n, 0)
    if tail_token_budget is None or tail_token_budget <= 0:
        return max(n - keep, 0)
    used = 0
    fitted = 0
    for i in range(n - 1, -1, -1):
        cost = message_budget_tokens(messages[i])
        if used + cost > tail_token_budget:
            break
        used += cost
        fitted += 1
    protected = max(fitted, min(keep, n - 1))
    return max(n - protected, 0)


def prune_tool_results(
    messages: Sequence[dict[str, Any]],
    *,
    protect_last_n: int,
    tail_token_budget: int | None,
    style: PruneStyle = "summary",
    readings: Sequence[MessageReading] | None = None,
    keep_before: int = 0,
    min_chars: int = PRUNE_MIN_CHARS,
) -> PruneResult:
    """Dedup, demote and shrink old tool traffic in one cheap pass (CC-30 to CC-42).

    ``style="placeholder"`` replaces eligible results with :data:`PRUNED_PLACEHOLDER`
    instead of one-liners (CC-35). ``readings`` is the list's reading when the caller
    already has it; otherwise it is read here (it finds observations in user messages).
    ``keep_before`` leaves the first messages exactly as they are (a prefix the provider
    still has cached: :mod:`.cache_policy`); ``min_chars`` raises the length a result
    must exceed to be demoted (CC-45's proactive pass uses 8,000).
    """
    if style not in ("summary", "placeholder"):
        raise ValueError(f"prune style must be 'summary' or 'placeholder', not {style!r}")
    result: list[dict[str, Any]] = list(messages)
    if not result:
        return PruneResult(result, 0, 0, 0)
    boundary = prune_boundary(
        result, protect_last_n=protect_last_n, tail_token_budget=tail_token_budget
    )
    if readings is None or len(readings) != len(result):
        readings = read_transcript(result)
    floor = max(0, min(keep_before, len(result)))
    minimum = max(min_chars, PRUNE_MIN_CHARS)
    pruned = _dedup(result, floor)
    demoted, shrunk = _demote_and_shrink(result, messages, boundary, style, floor, minimum)
    demoted += _demote_user_observations(result, readings, boundary, style, floor, minimum)
    return PruneResult(result, pruned + demoted, boundary, shrunk, readings)


def _dedup(result: list[dict[str, Any]], floor: int = 0) -> int:
    """Replace every older copy of a repeated tool result, newest kept (CC-36).

    Only results of equal length can be equal, so texts are grouped by length first and
    hashed only when their length occurs more than once: on a real transcript almost no
    20 KB output is ever hashed.
    """
    by_length: dict[int, list[int]] = {}
    for i, msg in enumerate(result):
        if msg.get("role") != "tool":
            continue
        content = msg.get("content")
        if isinstance(content, str) and len(content) >= DEDUP_MIN_CHARS:
            group = by_length.get(len(content))
            if group is None:
                by_length[len(content)] = [i]
            else:
                group.append(i)
    replaced = 0
    for group in by_length.values():
        if len(group) < 2:
            continue
        newer: set[str] = set()
        for i in reversed(group):
            content = result[i]["content"]
            if content in newer and i >= floor:
                result[i] = {**result[i], "content": DUPLICATE_PLACEHOLDER}
                replaced += 1
            else:
                newer.add(content)
    return replaced


def _demote_and_shrink(
    result: list[dict[str, Any]],
    original: Sequence[Mapping[str, Any]],
    boundary: int,
    style: PruneStyle,
    floor: int = 0,
    minimum: int = PRUNE_MIN_CHARS,
) -> tuple[int, int]:
    """Demote old tool results and shrink old call arguments below ``boundary``."""
    # Calls are indexed while walking forward, so a result finds the nearest call with its
    # id even when a provider reuses ids across turns; the whole-list index is a fallback
    # for results that precede their call, built only if one ever misses.
    calls: dict[str, Any] = {}
    fallback: dict[str, Any] | None = None
    demoted = 0
    shrunk = 0
    for i in range(boundary):
        msg = result[i]
        role = msg.get("role")
        if role == "assistant":
            tool_calls = msg.get("tool_calls")
            if tool_calls and isinstance(tool_calls, list | tuple):
                for call in tool_calls:
                    calls[call_id(call)] = call
                if i >= floor:
                    shrunk += _shrink_message_calls(result, i, tool_calls)
            continue
        if role != "tool" or i < floor:
            continue
        content = msg.get("content")
        if isinstance(content, str):
            if len(content) <= minimum or is_pruned_content(content):
                continue
            if style == "placeholder":
                text = PRUNED_PLACEHOLDER
            else:
                key = _result_id(msg)
                call = calls.get(key)
                if call is None:
                    if fallback is None:
                        fallback = _index_calls(original)
                    call = fallback.get(key)
                text = _one_liner(call, content)
            result[i] = {**msg, "content": text}
            demoted += 1
        elif isinstance(content, list):
            parts = _strip_images(content)
            if parts is not None:
                result[i] = {**msg, "content": parts}
                demoted += 1
        elif isinstance(content, Mapping) and content.get("_multimodal"):
            result[i] = {**msg, "content": _envelope_text(content)}
            demoted += 1
    return demoted, shrunk


def _demote_user_observations(
    result: list[dict[str, Any]],
    readings: Sequence[MessageReading],
    boundary: int,
    style: PruneStyle,
    floor: int = 0,
    minimum: int = PRUNE_MIN_CHARS,
) -> int:
    """Demote old observations that are user messages; role and keys stay as they were."""
    demoted = 0
    for i in range(floor, boundary):
        reading = readings[i]
        if reading.kind != "observation" or reading.role != "user":
            continue
        msg = result[i]
        content = msg.get("content")
        if isinstance(content, str):
            if len(content) <= minimum or is_pruned_content(content):
                continue
            replacement: Any = _observation_one_liner(reading, readings, style)
        elif isinstance(content, list) and _text_parts_only(content):
            # SWE-agent's cache_control processor writes observations as one text part
            # (with cache_control): keep that shape, first part's keys included.
            text = reading.text
            if len(text) <= minimum or is_pruned_content(text):
                continue
            line = _observation_one_liner(reading, readings, style)
            replacement = [{**content[0], "text": line}]
        else:
            continue  # tool_result blocks, images: left in the shape the caller wrote
        result[i] = {**msg, "content": replacement}
        demoted += 1
    return demoted


def _text_parts_only(content: Any) -> bool:
    return (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(p, Mapping) and p.get("type") == "text" for p in content)
    )


def _observation_one_liner(
    reading: MessageReading, readings: Sequence[MessageReading], style: PruneStyle
) -> str:
    if style == "placeholder":
        return PRUNED_PLACEHOLDER
    observation = reading.observation
    output = observation.output if observation else reading.text
    exit_code = observation.exit_code if observation else None
    action = None
    if observation is not None and observation.action_index is not None:
        actions = readings[observation.action_index].actions
        action = actions[0] if actions else None
    if action is None:
        tool = observation.tool if observation else None
        return summarize_action_output(tool, {}, None, output, exit_code)
    return summarize_action_output(action.tool, action.arguments, action.command, output, exit_code)


def _result_id(msg: Mapping[str, Any]) -> str:
    """A tool message's ``tool_call_id`` as a string, ``""`` when missing (CC-42, CC-105)."""
    value = msg.get("tool_call_id")
    return str(value) if value else ""


def _index_calls(messages: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    index: dict[str, Any] = {}
    for msg in messages:
        if msg.get("role") == "assistant":
            tool_calls = msg.get("tool_calls")
            if tool_calls and isinstance(tool_calls, list | tuple):
                for call in tool_calls:
                    index[call_id(call)] = call
    return index


def _one_liner(call: Any, content: str) -> str:
    if call is None:
        return summarize_tool_result("unknown", {}, content)
    return summarize_tool_result(call_name(call), parse_arguments(call), content)


def _strip_images(parts: list[Any]) -> list[Any] | None:
    """``parts`` with each image part turned into a text marker; ``None`` if it has none."""
    if not any(is_image_part(part) for part in parts):
        return None
    marker = {"type": "text", "text": SCREENSHOT_PLACEHOLDER}
    return [dict(marker) if is_image_part(part) else part for part in parts]


def _envelope_text(envelope: Mapping[str, Any]) -> str:
    """The string that replaces a ``_multimodal`` envelope: marker + start of its summary."""
    summary = ""
    for key in _ENVELOPE_SUMMARY_KEYS:
        value = envelope.get(key)
        if isinstance(value, str) and value:
            summary = value
            break
    return SCREENSHOT_REMOVED_PREFIX + (summary[:_ENVELOPE_SUMMARY_CHARS] or PRUNED_PLACEHOLDER)


def _shrink_message_calls(
    result: list[dict[str, Any]], index: int, tool_calls: Sequence[Any]
) -> int:
    """Shrink long arguments of the dict tool calls of ``result[index]`` (CC-37)."""
    replaced: list[Any] | None = None
    for j, call in enumerate(tool_calls):
        if not isinstance(call, Mapping):
            continue  # object-style calls are read, never rewritten
        fn = call.get("function")
        if not isinstance(fn, Mapping):
            continue
        raw = fn.get("arguments")
        if not isinstance(raw, str) or len(raw) <= SHRINK_ARGS_MIN_CHARS:
            continue
        shrunk = shrink_tool_arguments(raw)
        if shrunk is raw:
            continue
        if replaced is None:
            replaced = list(tool_calls)
        replaced[j] = {**call, "function": {**fn, "arguments": shrunk}}
    if replaced is None:
        return 0
    result[index] = {**result[index], "tool_calls": replaced}
    return sum(1 for old, new in zip(tool_calls, replaced, strict=True) if old is not new)


def shrink_tool_arguments(raw: str) -> str:
    """``raw`` JSON with every string value over 200 characters cut (CC-38).

    Cut values keep their first 200 characters followed by ``...[truncated]``; keys,
    numbers, booleans and nulls are kept, and the result is re-serialized with non-ASCII
    kept and default separators, so it is always valid JSON. The raw text is never sliced:
    text that does not parse as JSON, or JSON with nothing to cut, is returned as is (the
    very same object).
    """
    try:
        value = json.loads(raw)
        changed, shrunk = _shrink_value(value)
        if not changed:
            return raw
        text = json.dumps(shrunk, ensure_ascii=False)
    except (ValueError, TypeError, RecursionError):
        return raw
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate escaped in the input cannot be written raw; keep it escaped.
        text = json.dumps(shrunk)
    return text


def _shrink_value(value: Any) -> tuple[bool, Any]:
    if isinstance(value, str):
        if len(value) > SHRINK_STRING_MAX_CHARS:
            return True, value[:SHRINK_STRING_MAX_CHARS] + TRUNCATED_MARKER
        return False, value
    if isinstance(value, list):
        changed = False
        items = []
        for item in value:
            item_changed, new_item = _shrink_value(item)
            changed = changed or item_changed
            items.append(new_item)
        return changed, (items if changed else value)
    if isinstance(value, dict):
        changed = False
        fields = {}
        for key, item in value.items():
            item_changed, new_item = _shrink_value(item)
            changed = changed or item_changed
            fields[key] = new_item
        return changed, (fields if changed else value)
    return False, value
