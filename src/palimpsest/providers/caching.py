"""Anthropic prompt caching: where the ``cache_control`` breakpoints go (spec TK-33..TK-42).

Strategy ``system_and_3``: one breakpoint on the system prompt (stable for the whole
session) and a rolling window over the last three other messages, four in all, which is
Anthropic's maximum. Each content shape carries its marker differently (TK-35); the
function works on copies, strips old markers first so that decorating twice never
exceeds four (TK-37), and leaves the caller's list and dicts untouched.

Markers are placed on OpenAI-format messages; the Anthropic backend's converter carries
them onto the Messages-API blocks, and OpenRouter passes them through to Claude.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from ..messages import role_of

__all__ = [
    "FIVE_MINUTE_ONLY",
    "MAX_BREAKPOINTS",
    "ONE_HOUR_EXCEPTIONS",
    "apply_anthropic_cache_control",
    "apply_cache_control",
    "cache_marker",
    "caching_enabled",
    "count_cache_markers",
    "effective_cache_ttl",
    "is_claude_model",
    "is_native_anthropic",
    "strip_cache_control",
]

MAX_BREAKPOINTS = 4
"""Anthropic rejects a request with more than four ``cache_control`` markers."""

FIVE_MINUTE_ONLY: tuple[str, ...] = ("qwen", "dashscope", "aliyuncs", "alibaba", "bailian")
"""Lower-cased substrings of model names, providers or base URLs that honour only the
5-minute cache (TK-42): Qwen models and Alibaba-family routes. A ``1h`` TTL is clamped."""

ONE_HOUR_EXCEPTIONS: tuple[str, ...] = ()
"""Substrings of routes inside :data:`FIVE_MINUTE_ONLY` that were measured to honour 1h;
add one here to stop clamping it."""

_CACHING_ROUTES = ("openrouter",)


def is_claude_model(model: str | None) -> bool:
    """True when the model name says Claude (``claude-sonnet-4``, ``anthropic/claude-3.5``)."""
    return bool(model) and "claude" in str(model).lower()


def is_native_anthropic(provider: str | None, base_url: str | None = None) -> bool:
    """True for the Anthropic Messages API itself (provider ``anthropic`` or its host)."""
    if (provider or "").lower() == "anthropic":
        return True
    return "api.anthropic.com" in (base_url or "").lower()


def caching_enabled(model: str | None, provider: str | None, base_url: str | None = None) -> bool:
    """TK-41: a Claude model on a route that honours ``cache_control``.

    The routes are the native Anthropic API and aggregators that pass markers through to
    Claude (OpenRouter, by provider name or base URL).
    """
    if not is_claude_model(model):
        return False
    if is_native_anthropic(provider, base_url):
        return True
    route = f"{provider or ''} {base_url or ''}".lower()
    return any(name in route for name in _CACHING_ROUTES)


def effective_cache_ttl(
    ttl: str | None,
    *,
    model: str | None = None,
    provider: str | None = None,
    base_url: str | None = None,
) -> str:
    """TK-42: ``ttl or "5m"``, with ``1h`` clamped to ``5m`` on 5-minute-only routes."""
    resolved = ttl or "5m"
    if resolved != "1h":
        return resolved
    where = " ".join(x for x in (model, provider, base_url) if x).lower()
    if any(x in where for x in ONE_HOUR_EXCEPTIONS):
        return resolved
    if any(x in where for x in FIVE_MINUTE_ONLY):
        return "5m"
    return resolved


def cache_marker(
    ttl: str | None = "5m",
    *,
    model: str | None = None,
    provider: str | None = None,
    base_url: str | None = None,
) -> dict[str, str]:
    """TK-34: ``{"type": "ephemeral"}``, plus ``"ttl": "1h"`` for an unclamped hour."""
    resolved = effective_cache_ttl(ttl, model=model, provider=provider, base_url=base_url)
    return {"type": "ephemeral", "ttl": "1h"} if resolved == "1h" else {"type": "ephemeral"}


def _has_marker(message: Mapping[str, Any]) -> bool:
    if "cache_control" in message:
        return True
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(p, Mapping) and "cache_control" in p for p in content
    )


def _stripped(message: Mapping[str, Any]) -> dict[str, Any]:
    """A copy without markers; content decoration made from a string becomes a string again."""
    out = {k: copy.deepcopy(v) for k, v in message.items() if k != "cache_control"}
    content = out.get("content")
    if not isinstance(content, list):
        return out
    marked_parts = [isinstance(p, dict) and "cache_control" in p for p in content]
    for part in content:
        if isinstance(part, dict):
            part.pop("cache_control", None)
    if not any(marked_parts):
        return out
    # Decoration never makes an empty text part, so only non-empty ones are undone.
    plain = all(
        isinstance(p, dict)
        and set(p) == {"type", "text"}
        and p["type"] == "text"
        and isinstance(p["text"], str)
        and p["text"]
        for p in content
    )
    if plain and len(content) == 1:
        out["content"] = content[0]["text"]
    elif plain and len(content) == 2 and all(marked_parts) and role_of(out) == "system":
        # The static-prefix split of the system prompt (TK-39), both parts marked.
        out["content"] = content[0]["text"] + content[1]["text"]
    return out


def strip_cache_control(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """TK-40: the messages without top-level or part markers; unmarked ones are kept as is."""
    return [_stripped(m) if _has_marker(m) else m for m in messages]  # type: ignore[misc]


def count_cache_markers(messages: Sequence[Mapping[str, Any]]) -> int:
    """How many ``cache_control`` markers the messages carry (top-level and in parts)."""
    total = 0
    for message in messages:
        total += "cache_control" in message
        content = message.get("content")
        if isinstance(content, list):
            total += sum(1 for p in content if isinstance(p, Mapping) and "cache_control" in p)
    return total


def _can_carry(message: Mapping[str, Any], native: bool, tool_part_markers: bool) -> bool:
    """TK-38: whether a marker placed on this message would actually land somewhere."""
    if native:
        return True
    content = message.get("content")
    if role_of(message) == "tool" and not tool_part_markers:
        return False
    if isinstance(content, str):
        return bool(content)
    if isinstance(content, list):
        return bool(content) and isinstance(content[-1], Mapping)
    return False


def _mark(
    message: dict[str, Any], marker: dict[str, str], native: bool, tool_part_markers: bool
) -> bool:
    """Place ``marker`` on ``message`` (a private copy) by content shape (TK-35)."""
    content = message.get("content")
    if role_of(message) == "tool":
        if native:
            message["cache_control"] = dict(marker)
            return True
        if not tool_part_markers:
            return False  # seed: no marker on a proxied tool message; the slot stays unused
    if isinstance(content, str) and content:
        message["content"] = [{"type": "text", "text": content, "cache_control": dict(marker)}]
        return True
    if isinstance(content, list) and content:
        last = content[-1]
        if isinstance(last, dict):
            last["cache_control"] = dict(marker)
            return True
        return False
    message["cache_control"] = dict(marker)
    return True


def _mark_system(
    message: dict[str, Any],
    marker: dict[str, str],
    native: bool,
    tool_part_markers: bool,
    prefix: str | None,
) -> int:
    """Mark the system message; returns how many breakpoints it took (0, 1 or 2)."""
    content = message.get("content")
    if prefix and isinstance(content, str) and content.startswith(prefix) and content != prefix:
        message["content"] = [
            {"type": "text", "text": prefix, "cache_control": dict(marker)},
            {"type": "text", "text": content[len(prefix) :], "cache_control": dict(marker)},
        ]
        return 2
    return 1 if _mark(message, marker, native, tool_part_markers) else 0


def apply_anthropic_cache_control(
    messages: Sequence[Mapping[str, Any]],
    cache_ttl: str | None = "5m",
    native_anthropic: bool = False,
    *,
    skip_unmarkable: bool = False,
    tool_part_markers: bool | None = None,
    static_system_prefix: str | None = None,
) -> list[dict[str, Any]]:
    """Place up to four ``cache_control`` breakpoints (``system_and_3``, TK-33..TK-37).

    The system message at index 0 is marked, then the last ``4 - used`` non-system
    messages. Returns a new list; marked (or previously marked) messages are deep
    copies, the others are the caller's objects. Applying it again to its own output
    gives the same result. An empty input is returned as is. With ``skip_unmarkable``
    (TK-38) a message that cannot carry a marker does not use up a slot, and proxied tool
    messages get a part marker unless ``tool_part_markers`` is False.

    ``static_system_prefix`` (TK-39) declares the stable start of the system prompt: the
    system content becomes ``[prefix + marker, rest + marker]`` (two breakpoints) and only
    the last two other messages are marked. A system prompt equal to the prefix stays one
    part.
    """
    if not messages:
        return messages  # type: ignore[return-value]
    marker = cache_marker(cache_ttl)
    part_markers = skip_unmarkable if tool_part_markers is None else tool_part_markers
    out: list[dict[str, Any]] = strip_cache_control(messages)
    used = 0
    if role_of(out[0]) == "system":
        first = out[0] if out[0] is not messages[0] else copy.deepcopy(dict(out[0]))
        used = _mark_system(first, marker, native_anthropic, part_markers, static_system_prefix)
        if used:
            out[0] = first
    slots = MAX_BREAKPOINTS - used
    candidates = [
        i
        for i in range(len(out))
        if not (i == 0 and role_of(out[0]) == "system") and role_of(out[i]) != "system"
    ]
    if skip_unmarkable:
        candidates = [i for i in candidates if _can_carry(out[i], native_anthropic, part_markers)]
    for i in candidates[-slots:] if slots > 0 else []:
        copy_ = out[i] if out[i] is not messages[i] else copy.deepcopy(dict(out[i]))
        if _mark(copy_, marker, native_anthropic, part_markers):
            out[i] = copy_
    return out


apply_cache_control = apply_anthropic_cache_control
"""The spec's name for :func:`apply_anthropic_cache_control`."""
