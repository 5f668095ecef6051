"""Layer 3: all tool results of one assistant turn together stay within a budget (TR-17, TR-18).

Each result can be under its own threshold while ten of them together still flood the
context. After a turn's results are collected, :func:`enforce_turn_budget` spills the
largest ones, one by one, until the total fits. It edits the messages in place because the
caller's turn list is what goes into the history next.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

from palimpsest.messages.content import content_text, part_text
from palimpsest.outputs.budget import DEFAULT_BUDGET, BudgetConfig
from palimpsest.outputs.preview import PERSISTED_OPEN
from palimpsest.outputs.sandbox import SandboxEnvironment, maybe_persist_tool_result

__all__ = ["BUDGET_TOOL_NAME", "PersistFn", "enforce_turn_budget", "message_size"]

BUDGET_TOOL_NAME = "__budget_enforcement__"
"""Tool name the default persistence runs under, so no per-tool rule keeps a result in."""

PersistFn = Callable[[str, str, str], str]
"""``(content, tool_name, call_id) -> replacement text`` for one spilled result."""


def message_size(message: Mapping[str, Any]) -> int:
    """Characters of a message's text: a string's length, or the sum of its text parts (TR-18)."""
    content = message.get("content")
    if isinstance(content, list):
        return sum(len(part_text(part)) for part in content)
    return len(content_text(content))


def _largest_text_part(parts: list[Any]) -> int | None:
    """Index of the largest text part not already spilled, or ``None``."""
    best: int | None = None
    best_size = 0
    for index, part in enumerate(parts):
        text = part_text(part)
        if len(text) > best_size and PERSISTED_OPEN not in text:
            best, best_size = index, len(text)
    return best


def _with_text(part: Any, text: str) -> Any:
    if isinstance(part, str):
        return text
    return {**part, "text": text}


def _spill(message: dict[str, Any], persist: PersistFn, name: str, call_id: str) -> bool:
    """Replace the message's text (or its largest text part) by ``persist``'s result.

    Returns False, and leaves the message alone, when there is nothing to spill or the
    replacement would not be smaller: that result is skipped rather than retried.
    """
    content = message.get("content")
    if isinstance(content, list):
        index = _largest_text_part(content)
        if index is None:
            return False
        text = part_text(content[index])
        replacement = persist(text, name, call_id)
        if len(replacement) >= len(text):
            return False
        parts = list(content)  # a new list: the old one may be shared with other messages
        parts[index] = _with_text(parts[index], replacement)
        message["content"] = parts
        return True
    text = content_text(content)
    if not text:
        return False
    replacement = persist(text, name, call_id)
    if len(replacement) >= len(text):
        return False
    message["content"] = replacement
    return True


def enforce_turn_budget(
    tool_messages: list[dict[str, Any]],
    env: SandboxEnvironment | None = None,
    config: BudgetConfig = DEFAULT_BUDGET,
    *,
    persist: PersistFn | None = None,
) -> list[dict[str, Any]]:
    """Spill the largest results of one turn until their total is within ``config.turn_budget``.

    Modifies the messages in place and returns the same list. Candidates are the messages
    whose text does not already hold a persisted block, plus every message with list
    content, largest first (earlier first on ties). Each is persisted with threshold 0 under
    ``__budget_enforcement__`` and its ``tool_call_id`` (``budget_<index>`` when missing);
    a list message spills its largest text part. The loop stops once the total fits.

    ``persist`` replaces the default persistence; it gets the message's ``name`` as the
    tool name (``""`` when missing). A replacement that is not smaller than the original is
    discarded and the next candidate tried.
    """
    if not tool_messages:
        return tool_messages
    for index, message in enumerate(tool_messages):
        if not isinstance(message, MutableMapping):
            raise TypeError(f"tool_messages[{index}] is not a message dict: {message!r}")
    sizes = [message_size(m) for m in tool_messages]
    total = sum(sizes)
    if total <= config.turn_budget:
        return tool_messages

    def default_persist(content: str, _name: str, call_id: str) -> str:
        return maybe_persist_tool_result(
            content, BUDGET_TOOL_NAME, call_id, env, config, threshold=0
        )

    spill = persist if persist is not None else default_persist
    candidates = [
        index
        for index, message in enumerate(tool_messages)
        if isinstance(message.get("content"), list)
        or PERSISTED_OPEN not in content_text(message.get("content"))
    ]
    candidates.sort(key=lambda index: sizes[index], reverse=True)
    for index in candidates:
        if total <= config.turn_budget:
            break
        message = tool_messages[index]
        raw_id = message.get("tool_call_id")
        call_id = str(raw_id) if raw_id not in (None, "") else f"budget_{index}"
        name = message.get("name")
        if _spill(message, spill, name if isinstance(name, str) else "", call_id):
            new_size = message_size(message)
            total += new_size - sizes[index]
            sizes[index] = new_size
    return tool_messages
