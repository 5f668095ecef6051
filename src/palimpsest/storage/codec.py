"""How an OpenAI-format message becomes a ``messages`` row and comes back unchanged.

Pure functions, no database. The contract is a round trip: for any message dict ``m``,
``decode_row(encode_message(m))`` equals ``m``. That holds because

* string content is stored as is; list (or dict) content is stored as JSON text with
  ``content_json = 1`` and parsed back on read (spec SS-22; a flag column instead of the
  reference's ``"\\x00json:"`` prefix, because SQLite's ``LIKE`` stops at a NUL byte and
  the LIKE search path would never see such rows);
* ``tool_calls`` and structured reasoning fields are stored as JSON;
* ``_compressed_summary`` has its own column, and every other key without a column
  (``name`` on a user message, ``_compressed_summary_has_user_turn``, vendor keys) goes to
  the ``extra`` JSON object.

A tool result's ``name`` is stored in ``tool_name`` so tool names are searchable (SS-07);
when the result carries no ``name`` the caller may supply the name of the call it answers,
and a marker in ``extra`` keeps it out of the exported message.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..messages import Message, call_name, role_of, tool_calls_of

__all__ = [
    "MESSAGE_COLUMNS",
    "UnreadableValue",
    "count_tool_calls",
    "decode_row",
    "encode_message",
    "message_of",
]


def message_of(role: str, content: Any, **optional: Any) -> Message:
    """A message from ``append_message``'s arguments: role, content, and each optional
    field (``name``, ``tool_calls``, ``reasoning``, …) that is not ``None``."""
    message: Message = {"role": role, "content": content}
    message.update({k: v for k, v in optional.items() if v is not None})
    return message


#: Columns written for every message, in INSERT order (``session_id`` and ``timestamp``
#: are supplied by the store).
MESSAGE_COLUMNS = (
    "role",
    "content",
    "content_json",
    "tool_call_id",
    "tool_calls",
    "tool_name",
    "token_count",
    "finish_reason",
    "reasoning",
    "reasoning_content",
    "reasoning_details",
    "codex_reasoning_items",
    "codex_message_items",
    "_compressed_summary",
    "extra",
)

# Message keys stored in a column of the same name; str values stay text, anything else
# is JSON-encoded and flagged in extra["_json_keys"] so it decodes back to the same type.
_PLAIN_KEYS = (
    "tool_call_id",
    "finish_reason",
    "reasoning",
    "reasoning_content",
    "reasoning_details",
    "codex_reasoning_items",
    "codex_message_items",
)
_HANDLED = {"role", "content", "tool_calls", "name", "_compressed_summary", *_PLAIN_KEYS}
_DERIVED_NAME = "_palimpsest_derived_tool_name"
_JSON_KEYS = "_palimpsest_json_keys"
_NO_CONTENT = "_palimpsest_no_content"
_NULL_KEYS = "_palimpsest_null_keys"


class UnreadableValue(ValueError):
    """A stored column holds text that is not the JSON it was written as (damaged bytes).

    ``column`` names it; the store turns this into ``DatabaseCorruptError``.
    """

    def __init__(self, column: str, exc: ValueError) -> None:
        self.column = column
        super().__init__(f"column {column} is not valid JSON ({exc})")


def _loads(column: str, text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise UnreadableValue(column, exc) from exc


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def count_tool_calls(message: Mapping[str, Any]) -> int:
    """SS-22: a list of calls counts its length, any other non-empty value counts 1."""
    calls = message.get("tool_calls")
    if not calls or role_of(message) == "tool":
        return 0
    return len(calls) if isinstance(calls, list) else 1


def encode_message(
    message: Mapping[str, Any],
    *,
    token_count: int | None = None,
    tool_name: str | None = None,
) -> dict[str, Any]:
    """The column values for ``message`` (keys of :data:`MESSAGE_COLUMNS`).

    ``tool_name`` names the call a ``role: tool`` message answers when the message itself
    has no ``name``.
    """
    role = role_of(message)
    if not role:
        raise ValueError("a message needs a string 'role'")
    extra: dict[str, Any] = {k: v for k, v in message.items() if k not in _HANDLED}
    content = message.get("content")
    content_json = 0
    if content is not None and not isinstance(content, str):
        content, content_json = _dumps(content), 1
    calls = message.get("tool_calls")
    row: dict[str, Any] = {
        "role": role,
        "content": content,
        "content_json": content_json,
        "tool_calls": None if calls is None else _dumps(calls),
        "token_count": token_count,
        "_compressed_summary": 1 if message.get("_compressed_summary") else 0,
    }
    json_keys: list[str] = []
    for key in _PLAIN_KEYS:
        value = message.get(key)
        if value is not None and not isinstance(value, str):
            value = _dumps(value)
            json_keys.append(key)
        row[key] = value
    if "_compressed_summary" in message and message["_compressed_summary"] is not True:
        extra["_compressed_summary"] = message["_compressed_summary"]
    if "content" not in message:
        extra[_NO_CONTENT] = True
    name = message.get("name")
    if role == "tool" and isinstance(name, str):
        row["tool_name"] = name
    else:
        if "name" in message and name is not None:
            extra["name"] = name
        row["tool_name"] = tool_name if role == "tool" else None
        if row["tool_name"] is not None:
            extra[_DERIVED_NAME] = True
    if json_keys:
        extra[_JSON_KEYS] = json_keys
    # A key present with the value None has no column value to tell it from "absent".
    nulls = [k for k in _HANDLED - {"role", "content"} if k in message and message[k] is None]
    if nulls:
        extra[_NULL_KEYS] = sorted(nulls)
    row["extra"] = _dumps(extra) if extra else None
    return row


def decode_row(row: Mapping[str, Any]) -> Message:
    """The message a ``messages`` row was made from (inverse of :func:`encode_message`).

    Raises :class:`UnreadableValue` when a JSON column no longer parses.
    """
    extra: dict[str, Any] = _loads("extra", row["extra"]) if row.get("extra") else {}
    if not isinstance(extra, dict):
        raise UnreadableValue("extra", ValueError("not a JSON object"))
    derived = bool(extra.pop(_DERIVED_NAME, False))
    json_keys = set(extra.pop(_JSON_KEYS, ()))
    message: Message = {"role": row["role"]}
    content = row.get("content")
    if content is not None and row.get("content_json"):
        content = _loads("content", content)
    if not extra.pop(_NO_CONTENT, False):
        message["content"] = content
    if row.get("tool_calls") is not None:
        message["tool_calls"] = _loads("tool_calls", row["tool_calls"])
    if row["role"] == "tool" and row.get("tool_name") is not None and not derived:
        message["name"] = row["tool_name"]
    for key in _PLAIN_KEYS:
        value = row.get(key)
        if value is not None:
            message[key] = _loads(key, value) if key in json_keys else value
    if row.get("_compressed_summary"):
        message["_compressed_summary"] = True
    for key in extra.pop(_NULL_KEYS, ()):
        message[key] = None
    message.update(extra)
    return message


def call_names(messages: list[Message]) -> dict[str, str]:
    """``tool_call_id -> function name`` for every call the messages make."""
    names: dict[str, str] = {}
    for message in messages:
        for call in tool_calls_of(message):
            cid = call.get("id") if isinstance(call, Mapping) else getattr(call, "id", None)
            if isinstance(cid, str) and cid:
                names[cid] = call_name(call)
    return names
