"""Opaque provider items that ride on an assistant message, and the native compaction among them.

Two APIs return state the library cannot read but must send back in place: the OpenAI
Responses API's output items (``reasoning``, ``compaction``: an ``encrypted_content``
string), and the Anthropic Messages API's ``compaction`` block (a summary, a signature and
``encrypted_content``). They travel on the assistant message that brought them, under two
``_``-prefixed keys, so that they are stored with the session (the store keeps unknown keys
in its ``extra`` column), survive export and import, and are never sent to a provider that
would not understand them (``for_provider`` drops ``_`` keys).

:func:`for_request` is what a host sends a backend: internal keys dropped *except* these
two, which the Responses and Anthropic backends put back in place and every other backend
drops. :func:`latest_native_compaction` finds the newest provider-made compaction; what
comes before it is context the provider has already folded into it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "ANTHROPIC_BLOCKS_KEY",
    "CARRIED_KEYS",
    "RESPONSES_ITEMS_KEY",
    "for_request",
    "latest_native_compaction",
    "live_window",
    "native_compaction_of",
]

RESPONSES_ITEMS_KEY = "_responses_items"
"""An assistant message's opaque Responses items (``reasoning``, ``compaction``), in order,
sent back before that message's own text and calls."""

ANTHROPIC_BLOCKS_KEY = "_anthropic_blocks"
"""An assistant message's Anthropic blocks that have no chat form (``compaction``), sent
back first in that message's content, verbatim."""

CARRIED_KEYS = (RESPONSES_ITEMS_KEY, ANTHROPIC_BLOCKS_KEY)
"""The internal keys a request keeps for the backend (see :func:`for_request`)."""

_ROUTE_OF_KEY = {RESPONSES_ITEMS_KEY: "openai-responses", ANTHROPIC_BLOCKS_KEY: "anthropic"}


def native_compaction_of(message: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """``(route, item)`` when ``message`` carries a provider's compaction, else ``None``.

    ``route`` is ``"openai-responses"`` or ``"anthropic"``; ``item`` is the last compaction
    item or block on the message. An Anthropic block whose ``content`` is null is a failed
    compaction (the server treats it as a no-op) and does not count.
    """
    if message.get("role") != "assistant":
        return None
    found: tuple[str, dict[str, Any]] | None = None
    for key, route in _ROUTE_OF_KEY.items():
        items = message.get(key)
        if not isinstance(items, list):
            continue
        for item in items:
            if not isinstance(item, Mapping) or item.get("type") != "compaction":
                continue
            if route == "anthropic" and not item.get("content"):
                continue
            if route == "openai-responses" and not item.get("encrypted_content"):
                continue
            found = (route, dict(item))
    return found


def latest_native_compaction(messages: Sequence[Mapping[str, Any]]) -> int | None:
    """Index of the newest message that carries a provider's compaction, or ``None``."""
    for index in range(len(messages) - 1, -1, -1):
        if native_compaction_of(messages[index]) is not None:
            return index
    return None


def live_window(messages: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The messages from the newest native compaction on (all of them when there is none):
    what the provider still reads, since it folded everything before into that item."""
    start = latest_native_compaction(messages)
    return list(messages[start:] if start is not None else messages)


def for_request(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Messages ready for a backend: internal keys dropped except :data:`CARRIED_KEYS`."""
    return [
        {k: v for k, v in m.items() if not k.startswith("_") or k in CARRIED_KEYS} for m in messages
    ]
