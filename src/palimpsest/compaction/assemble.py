"""Phase 4: stitch head + summary + tail into a list every provider accepts.

Providers reject two things a naive splice produces: two user (or two assistant) messages
in a row, and tool results whose call is gone or calls whose result is gone. The role of
the summary message is chosen against both neighbours (merging it into the first tail
message when neither role fits), and the tool pairs are repaired afterwards.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..messages.content import (
    append_text,
    call_id,
    content_text,
    prepend_text,
    role_of,
    tool_calls_of,
)
from ..messages.native import CARRIED_KEYS
from .markers import (
    COMPACTION_NOTE,
    COMPACTION_STUB_RESULT,
    END_MARKER,
    SUMMARY_FLAG,
    SUMMARY_USER_TURN_FLAG,
)

__all__ = [
    "Assembly",
    "SanitizeReport",
    "add_compaction_note",
    "assemble",
    "choose_summary_role",
    "sanitize_tool_pairs",
    "strip_host_markers",
]

Role = Literal["user", "assistant"]
# Summary flags, and the opaque provider items a kept message carries (a native compaction,
# reasoning): they belong to the message, which the provider expects back verbatim.
_KEPT_INTERNAL_KEYS = frozenset({SUMMARY_FLAG, SUMMARY_USER_TURN_FLAG, *CARRIED_KEYS})
_SYSTEM_ROLES = frozenset({"system", "developer"})
STRIPPED_CALL_TEXT = "(tool call removed)"


@dataclass(frozen=True)
class Assembly:
    """The assembled list and how the summary was placed."""

    messages: list[dict[str, Any]]
    summary_role: Role
    merged: bool
    sanitize: SanitizeReport


@dataclass(frozen=True)
class SanitizeReport:
    removed_results: int = 0
    stubbed_calls: int = 0
    stripped_calls: int = 0


def strip_host_markers(message: dict[str, Any]) -> dict[str, Any]:
    """A shallow copy without host-internal markers (CC-108); summary flags survive."""
    return {k: v for k, v in message.items() if not k.startswith("_") or k in _KEPT_INTERNAL_KEYS}


def add_compaction_note(message: dict[str, Any]) -> dict[str, Any]:
    """The system message with the compaction note appended once (CC-88)."""
    content = message.get("content")
    if COMPACTION_NOTE in content_text(content):
        return message
    return {**message, "content": append_text(content, COMPACTION_NOTE)}


def choose_summary_role(
    head_role: str | None, tail_role: str | None, *, force_user: bool = False
) -> tuple[Role, bool]:
    """``(role, merge_into_tail)`` per the truth table of CC-93, CC-95 and CC-96.

    ``head_role`` is the last head message's role (``None`` without a head),
    ``tail_role`` the first tail message's (``None`` for an empty tail, which never
    collides). A forced user-leading summary merges into a user tail instead of flipping.
    """
    if force_user or head_role is None or head_role in _SYSTEM_ROLES:
        return "user", tail_role == "user"
    role: Role = "user" if head_role in ("assistant", "tool") else "assistant"
    if role == tail_role:
        flipped: Role = "assistant" if role == "user" else "user"
        if flipped != head_role:
            return flipped, False
        return role, True  # merged: the summary takes tail[0]'s role, which equals ``role``
    return role, False


def _summary_block(summary: str) -> str:
    return f"{summary}\n\n{END_MARKER}"


def assemble(
    head: Sequence[dict[str, Any]],
    summary: str,
    tail: Sequence[dict[str, Any]],
    *,
    has_user_turn: bool,
    orphan_call_policy: Literal["stub", "strip"] = "stub",
) -> Assembly:
    """Head (the system note added once, CC-88), summary, tail; then sanitize.

    ``summary`` is the prefixed summary text. The inputs are never modified.
    """
    head_out = [strip_host_markers(m) for m in head]
    if head_out and role_of(head_out[0]) == "system":
        head_out[0] = add_compaction_note(head_out[0])
    tail_out = [strip_host_markers(m) for m in tail]

    head_role = role_of(head_out[-1]) if head_out else None
    tail_role = role_of(tail_out[0]) if tail_out else None
    user_survives = any(role_of(m) == "user" for m in (*head_out, *tail_out))
    role, merge = choose_summary_role(head_role, tail_role, force_user=not user_survives)

    block = _summary_block(summary)
    flags = {SUMMARY_FLAG: True, SUMMARY_USER_TURN_FLAG: has_user_turn}
    if merge and tail_out:
        first = tail_out[0]
        tail_out[0] = {**first, "content": prepend_text(first.get("content"), block), **flags}
        middle: list[dict[str, Any]] = []
    else:
        middle = [{"role": role, "content": block, **flags}]

    sanitized, report = sanitize_tool_pairs([*head_out, *middle, *tail_out], orphan_call_policy)
    return Assembly(sanitized, role, merge and bool(tail_out), report)


def sanitize_tool_pairs(
    messages: Sequence[dict[str, Any]], policy: Literal["stub", "strip"] = "stub"
) -> tuple[list[dict[str, Any]], SanitizeReport]:
    """Make every tool result answer a call of the assistant right before its group, and
    every call have exactly one result (CC-103 to CC-105).

    Results with no matching call (or a second result for one call) are removed. A call
    left unanswered gets a stub result after its group (``policy="stub"``) or is removed
    from its assistant message (``policy="strip"``). Returns new dicts where anything changed.
    """
    out: list[dict[str, Any]] = []
    removed = stubbed = stripped = 0
    gaps: list[int] = []  # positions in ``out`` where a removed result used to sit
    pending: list[str] = []  # ids of the open group's calls still unanswered, in call order
    group_at = -1  # index in ``out`` of the assistant that opened the current group

    def close_group() -> None:
        nonlocal stubbed, stripped
        if group_at < 0 or not pending:
            return
        if policy == "strip":
            stripped += len(pending)
            out[group_at] = _strip_calls(out[group_at], set(pending))
        else:
            stubbed += len(pending)
            out.extend(
                {"role": "tool", "tool_call_id": cid, "content": COMPACTION_STUB_RESULT}
                for cid in pending
            )
        pending.clear()

    for message in messages:
        role = role_of(message)
        if role == "tool":
            cid = str(message.get("tool_call_id") or "")
            if group_at >= 0 and cid in pending:
                pending.remove(cid)
                out.append(message)
            else:
                removed += 1
                gaps.append(len(out))
            continue
        close_group()
        group_at = -1
        out.append(message)
        if role == "assistant" and tool_calls_of(message):
            group_at = len(out) - 1
            seen: set[str] = set()
            for call in tool_calls_of(message):
                cid = call_id(call)
                if cid not in seen:
                    seen.add(cid)
                    pending.append(cid)
    close_group()
    for gap in reversed(gaps):
        _merge_exposed_neighbours(out, gap)
    return out, SanitizeReport(removed, stubbed, stripped)


def _strip_calls(message: dict[str, Any], drop: set[str]) -> dict[str, Any]:
    kept = [c for c in tool_calls_of(message) if call_id(c) not in drop]
    new = {k: v for k, v in message.items() if k != "tool_calls"}
    if kept:
        new["tool_calls"] = kept
    elif not content_text(new.get("content")).strip():
        new["content"] = STRIPPED_CALL_TEXT
    return new


def _join_contents(first: Any, second: Any) -> Any:
    if isinstance(first, list) or isinstance(second, list):

        def parts(c: Any) -> list[Any]:
            if isinstance(c, list):
                return list(c)
            return [{"type": "text", "text": c}] if c else []

        return parts(first) + parts(second)
    if not first:
        return second
    if not second:
        return first
    return f"{first}\n\n{second}"


def _merge_exposed_neighbours(messages: list[dict[str, Any]], gap: int) -> None:
    """Join the two messages around ``gap`` if a removed orphan left two user (or two plain
    assistant) messages adjacent; joining keeps both texts and keeps strict providers happy.
    """
    if not 0 < gap < len(messages):
        return
    prev, message = messages[gap - 1], messages[gap]
    role = role_of(message)
    if (
        role in ("user", "assistant")
        and role_of(prev) == role
        and not tool_calls_of(prev)
        and not prev.get(SUMMARY_FLAG)
        and not message.get(SUMMARY_FLAG)
    ):
        joined = _join_contents(prev.get("content"), message.get("content"))
        messages[gap - 1 : gap + 1] = [{**message, "content": joined}]
