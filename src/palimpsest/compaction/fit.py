"""Make a compacted list fit the window, or say exactly why it cannot.

Compaction keeps a head, a summary and a tail by position and budget; nothing in those
rules promises that the three together fit the model's window. A SWE-agent task message
can be 6K tokens and one tool observation 50K. This step runs after assembly and measures
the result against the *fit target*: ``context_length`` minus the output reserve (the
tokens the model needs for its reply).

The output reserve is the explicit output cap ``max_tokens`` when one is set and smaller
than the window (the same cap CC-05 reserves for the trigger); otherwise
:data:`DEFAULT_OUTPUT_RESERVE` tokens, at most a quarter of the window. The seed defines no
reserve without a cap (spec CC-05 leaves the window whole), so this default is ours.

When the result is too big, in this order:

1. **Shrink the tail.** Whole units after the summary are dropped, oldest first: a unit
   is one message, or an assistant message with tool calls together with its results, so
   a call is never separated from its result. The unit holding the newest real user
   request, the unit holding the newest user message of any kind (a host may hand a
   text-action agent's observation back as the user turn) and the last unit (what the
   model answers next) are never dropped.
2. **Clip oversized messages.** The largest remaining text contents are clipped, keeping
   their beginning and end around a visible :data:`CLIP_MARKER`: tail messages first, then
   head messages (of a summary merged into a tail message, only the text after its end
   marker). System and developer messages (the system prompt) are never clipped: they are
   the host's contract with the model. No message is clipped below
   :data:`MIN_CLIPPED_CHARS` characters.
3. **Shrink the summary last, by whole lines** (:mod:`.summary_lines`): its long note gives
   way to :data:`SHORT_SUMMARY_PREFIX`, then the lines a resumed agent needs least go
   (placeholders, repeats, older progress) whether or not that is enough. The lines that
   carry its facts (identifiers, the request, the changed files, the last failure) and its
   headings go only when that makes the list fit, and its middle is clipped only as a last
   resort that fits: cutting the summary's middle used to remove exactly those facts while
   leaving the list over the target anyway.
4. **Say why not.** If the list is still too big, the result says so (``fits=False``) with
   a reason naming what is left (the system prompt, the summary, the head).

Every step keeps the list a valid provider sequence. Pure: the input list and its
messages are never modified.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..messages.content import content_text, prepend_text, role_of, tool_calls_of
from .markers import (
    END_MARKER,
    SHORT_SUMMARY_PREFIX,
    SUMMARY_FLAG,
    SUMMARY_PREFIX,
    SUMMARY_USER_TURN_FLAG,
    is_compaction_summary_message,
    is_real_user_message,
)
from .summary_lines import AIM_RANK, TOP_RANK, drop_summary_lines

__all__ = [
    "CLIP_MARKER",
    "DEFAULT_OUTPUT_RESERVE",
    "MIN_CLIPPED_CHARS",
    "FitResult",
    "fit_target",
    "fit_to_window",
    "is_clipped",
    "output_reserve",
]

DEFAULT_OUTPUT_RESERVE = 4_096
"""Tokens kept free for the reply when no explicit ``max_tokens`` is set."""

MAX_RESERVE_SHARE = 4
"""The default reserve never takes more than a quarter (1/4) of the window."""

MIN_CLIPPED_CHARS = 400
"""A clipped message keeps at least this many characters of its own text."""

CLIP_MARKER = "[… {removed:,} characters clipped by palimpsest to fit the context window …]"
"""Put where text was cut out of a message; ``{removed}`` is the number of characters."""
_CLIP_WORDS = CLIP_MARKER.split("}", 1)[1].split("…", 1)[0].strip()

_UNCLIPPABLE_ROLES = frozenset({"system", "developer"})
_MAX_PASSES = 4  # clipping works from estimates; a few passes absorb their error

Messages = list[dict[str, Any]]
Counter = Callable[[Sequence[dict[str, Any]]], int]


@dataclass(frozen=True)
class FitResult:
    """The fitted list, its size, and what was done to get there."""

    messages: Messages
    tokens: int
    target: int
    fits: bool
    reason: str | None = None
    dropped_messages: int = 0
    clipped_messages: int = 0
    summary_shrunk: bool = False
    """The summary itself was made shorter (lines dropped or its middle clipped)."""


def _positive_int(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if value > 0 else None


def output_reserve(context_length: int, max_tokens: int | None = None) -> int:
    """Tokens reserved for the reply: ``max_tokens`` when set and below the window, else the
    default (4,096, at most a quarter of the window)."""
    cap = _positive_int(max_tokens)
    if cap is not None and cap < context_length:
        return cap
    return min(DEFAULT_OUTPUT_RESERVE, context_length // MAX_RESERVE_SHARE)


def fit_target(context_length: int, max_tokens: int | None = None) -> int:
    """The most tokens the messages may take: the window minus the output reserve."""
    return max(1, context_length - output_reserve(context_length, max_tokens))


def fit_to_window(messages: Sequence[dict[str, Any]], target: int, count: Counter) -> FitResult:
    """``messages`` made to fit ``target`` tokens by ``count`` where possible (see module doc).

    The summary message (the one carrying the summary flag) divides head from tail; a list
    without one is all tail after its leading system messages.
    """
    out = list(messages)
    tokens = count(out)
    if tokens <= target:
        return FitResult(out, tokens, target, True)
    anchor = _anchor(out)
    out, dropped, tokens = _shrink_tail(out, anchor, target, count, tokens)
    clipped = 0
    if tokens > target:
        out, clipped, tokens = _clip(out, _anchor(out), target, count, tokens)
    shrunk = 0
    if tokens > target:
        out, tokens, shrunk = _shrink_summary(out, target, count, tokens)
    if tokens <= target:
        return FitResult(out, tokens, target, True, None, dropped, clipped + shrunk, bool(shrunk))
    return FitResult(
        out, tokens, target, False, _why_not(out, target, count, tokens), dropped, clipped
    )


def _anchor(messages: Messages) -> int:
    """Index of the summary message; without one, the last leading system message."""
    for i, m in enumerate(messages):
        if m.get(SUMMARY_FLAG):
            return i
    i = 0
    while i < len(messages) and role_of(messages[i]) in _UNCLIPPABLE_ROLES:
        i += 1
    return i - 1


def _units(messages: Messages, start: int) -> list[tuple[int, int]]:
    """``[begin, end)`` spans after ``start``: single messages, or a call with its results."""
    spans: list[tuple[int, int]] = []
    i = start
    while i < len(messages):
        j = i + 1
        # A call keeps its results; a stray result stays with its neighbouring results.
        role = role_of(messages[i])
        if (role == "assistant" and tool_calls_of(messages[i])) or role == "tool":
            while j < len(messages) and role_of(messages[j]) == "tool":
                j += 1
        spans.append((i, j))
        i = j
    return spans


def _shrink_tail(
    messages: Messages, anchor: int, target: int, count: Counter, tokens: int
) -> tuple[Messages, int, int]:
    start = anchor + 1
    if anchor >= 0 and tool_calls_of(messages[anchor]):
        # The summary was merged into a message with calls: its results stay with it.
        while start < len(messages) and role_of(messages[start]) == "tool":
            start += 1
    units = _units(messages, start)
    after = range(anchor + 1, len(messages))
    newest_request = max((i for i in after if is_real_user_message(messages[i])), default=None)
    # The newest user turn whatever it reads as: a host that hands a text-action agent's
    # observation back as the user turn (a LangGraph run of a SWE-agent loop) has no
    # request in the tail, and that observation is what the model is answering.
    newest_turn = max((i for i in after if _is_user_turn(messages[i])), default=None)
    protected = {i for i in (newest_request, newest_turn) if i is not None}
    keep = [True] * len(units)

    def kept() -> Messages:
        out = messages[:start]
        for (begin, end), flag in zip(units, keep, strict=True):
            if flag:
                out.extend(messages[begin:end])
        return _rejoin(out, anchor)

    out = messages
    for k, (begin, end) in enumerate(units):
        if tokens <= target:
            break
        if any(begin <= i < end for i in protected):
            continue
        if k == len(units) - 1:
            continue  # the last unit is what the model answers next
        keep[k] = False
        out = kept()
        tokens = count(out)
    dropped = sum(end - begin for (begin, end), flag in zip(units, keep, strict=True) if not flag)
    return out, dropped, tokens


def _is_user_turn(message: dict[str, Any]) -> bool:
    """A user-role message with something to say that is not a summary."""
    return (
        role_of(message) == "user"
        and not message.get(SUMMARY_FLAG)
        and not is_compaction_summary_message(message)
        and bool(content_text(message.get("content")).strip())
    )


def _rejoin(messages: Messages, anchor: int) -> Messages:
    """Merge the summary into the next message when dropping left two of one role adjacent."""
    if not 0 <= anchor < len(messages) - 1:
        return messages
    summary, nxt = messages[anchor], messages[anchor + 1]
    role = role_of(summary)
    if (
        summary.get(SUMMARY_FLAG)
        and role in ("user", "assistant")
        and role == role_of(nxt)
        and not tool_calls_of(summary)
        and content_text(summary.get("content"))
    ):
        merged = {
            **nxt,
            "content": prepend_text(nxt.get("content"), content_text(summary.get("content"))),
            SUMMARY_FLAG: True,
            SUMMARY_USER_TURN_FLAG: summary.get(SUMMARY_USER_TURN_FLAG, False),
        }
        return [*messages[:anchor], merged, *messages[anchor + 2 :]]
    return messages


def _clippable(message: dict[str, Any]) -> bool:
    if role_of(message) in _UNCLIPPABLE_ROLES:
        return False
    content = message.get("content")
    text = content if isinstance(content, str) else None
    if isinstance(content, list):
        text = "".join(p.get("text", "") for p in content if _is_text_part(p))
    return text is not None and len(text) > MIN_CLIPPED_CHARS


def _is_text_part(part: Any) -> bool:
    return (
        isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
    )


def _clip_text(text: str, keep: int) -> str:
    """``text`` cut to about ``keep`` characters: its start and end around the marker."""
    if len(text) <= keep:
        return text
    keep = max(keep, MIN_CLIPPED_CHARS)
    head = keep * 2 // 3  # the start usually says what the output is; the end how it ended
    tail = keep - head
    removed = len(text) - head - tail
    if removed <= 0:
        return text
    marker = CLIP_MARKER.format(removed=removed)
    return f"{text[:head]}\n{marker}\n{text[len(text) - tail :]}"


def _clip_message(message: dict[str, Any], shrink_to: float) -> dict[str, Any]:
    """A copy with its text contents scaled to ``shrink_to`` of their length.

    In a summary merged into a tail message, only the text after the summary's end marker
    is clipped while there is any: cutting across the marker would lose the end of the
    summary (its identifiers) and the marker that tells the model where the summary stops.
    """
    content = message.get("content")
    protect = bool(message.get(SUMMARY_FLAG))
    if isinstance(content, str):
        return {**message, "content": _clip_part(content, shrink_to, protect)}
    if not isinstance(content, list):
        return message
    parts = [
        {**p, "text": _clip_part(p["text"], shrink_to, protect)} if _is_text_part(p) else p
        for p in content
    ]
    return {**message, "content": parts}


def _clip_part(text: str, shrink_to: float, protect_summary: bool) -> str:
    if protect_summary and text.startswith(SUMMARY_PREFIX):
        # the long note goes before any of the summary does
        goal = int(len(text) * shrink_to)
        text = SHORT_SUMMARY_PREFIX + text[len(SUMMARY_PREFIX) :]
        if len(text) <= goal:
            return text
        shrink_to = goal / len(text)
    if not protect_summary:
        return _clip_text(text, int(len(text) * shrink_to))
    # The summary's own text is never cut here (that is shrink_summary's, by whole lines);
    # only a tail message merged after its end marker is.
    cut = text.find(END_MARKER)
    if cut >= 0:
        cut += len(END_MARKER)
        rest = text[cut:]
        if rest.strip() and not is_clipped(rest):
            excess = len(text) - int(len(text) * shrink_to)
            return text[:cut] + _clip_text(rest, max(len(rest) - excess, 0))
    return text


def is_clipped(text: str) -> bool:
    """True when ``text`` carries a :data:`CLIP_MARKER`, i.e. the fit step cut it."""
    return _CLIP_WORDS in text


def _clip(
    messages: Messages, anchor: int, target: int, count: Counter, tokens: int
) -> tuple[Messages, int, int]:
    out = list(messages)
    clipped: set[int] = set()
    for _ in range(_MAX_PASSES):
        # Tail first (largest first), then head, the summary last: the newest work matters
        # most to the model, and the summary is the only record of the middle.
        order = sorted(
            (i for i in range(len(out)) if _clippable(out[i])),
            key=lambda i: (
                2 if out[i].get(SUMMARY_FLAG) else int(i < anchor),
                -count([out[i]]),
            ),
        )
        if not order or tokens <= target:
            break
        for i in order:
            if tokens <= target:
                break
            size = count([out[i]]) - count([])
            excess = tokens - target
            if size <= 0:
                continue
            shrink_to = max(0.0, (size - excess) / size) * 0.95  # leave room for the marker
            new = _clip_message(out[i], shrink_to)
            if new == out[i]:
                continue
            out[i] = new
            clipped.add(i)
            tokens = count(out)
    return out, len(clipped), tokens


def _shrink_summary(
    messages: Messages, target: int, count: Counter, tokens: int
) -> tuple[Messages, int, int]:
    """The summary made shorter: first by its least needed lines (:mod:`.summary_lines`),
    then, only when that makes the list fit, by its headings and the lines that carry its
    facts (the identifiers, the request, the changed files and the last failure), and as a
    last resort by clipping its middle. A shrink of the facts that would still
    leave the list over the target is not made: it would lose them for nothing."""
    at = next((i for i, m in enumerate(messages) if m.get(SUMMARY_FLAG)), None)
    if at is None:
        return messages, tokens, 0
    shrunk = 0
    stages = [(AIM_RANK - 1, False, False)]
    stages += [(rank, True, False) for rank in range(AIM_RANK, TOP_RANK + 1)]
    stages.append((TOP_RANK, True, True))
    for max_rank, headings, middle in stages:
        out, now = list(messages), tokens
        for _ in range(_MAX_PASSES):
            size = count([out[at]]) - count([])
            if size <= 0:
                break
            # whole lines leave no marker behind: no room need be kept for one
            shrink_to = max(0.0, (size - (now - target)) / size) * (0.95 if middle else 1.0)
            new = _shrink_summary_message(out[at], shrink_to, (max_rank, headings, middle))
            if new == out[at]:
                break
            out[at] = new
            now = count(out)
            if now <= target:
                return out, now, 1
        if max_rank < AIM_RANK and now < tokens:
            messages, tokens, shrunk = out, now, 1  # what says least goes even without a fit
    return messages, tokens, shrunk


def _shrink_summary_text(text: str, shrink_to: float, stage: tuple[int, bool, bool]) -> str:
    """One text of a summary message with its summary part (up to the end marker) shorter
    by the characters ``shrink_to`` asks of the whole text."""
    cut = text.find(END_MARKER)
    if cut < 0 and not text.startswith((SUMMARY_PREFIX, SHORT_SUMMARY_PREFIX)):
        return text  # a part of the message that is not the summary
    cut = len(text) if cut < 0 else cut + len(END_MARKER)
    summary, rest = text[:cut], text[cut:]
    goal = max(0, len(summary) - (len(text) - int(len(text) * shrink_to)))
    max_rank, headings, middle = stage
    if not middle:
        return drop_summary_lines(summary, goal, max_rank, headings) + rest
    body = summary.removesuffix(END_MARKER)
    ends = len(body) < len(summary)
    clipped = _clip_text(body, max(goal - len(END_MARKER), 0))
    return clipped + (END_MARKER if ends else "") + rest


def _shrink_summary_message(
    message: dict[str, Any], shrink_to: float, stage: tuple[int, bool, bool]
) -> dict[str, Any]:
    def change(text: str) -> str:
        return _shrink_summary_text(text, shrink_to, stage)

    content = message.get("content")
    if isinstance(content, str):
        return {**message, "content": change(content)}
    if not isinstance(content, list):
        return message
    parts = [{**p, "text": change(p["text"])} if _is_text_part(p) else p for p in content]
    return {**message, "content": parts}


def _why_not(messages: Messages, target: int, count: Counter, tokens: int) -> str:
    system = sum(count([m]) - count([]) for m in messages if role_of(m) in _UNCLIPPABLE_ROLES)
    summary = sum(count([m]) - count([]) for m in messages if m.get(SUMMARY_FLAG))
    parts = [f"{tokens:,} tokens after fitting, over the target of {target:,}"]
    if system:
        parts.append(f"system prompt {system:,} (never clipped)")
    if summary:
        parts.append(f"summary {summary:,}")
    parts.append(
        f"{len(messages)} messages left, each clipped to at least {MIN_CLIPPED_CHARS} characters"
    )
    return "; ".join(parts)
