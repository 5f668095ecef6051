"""Codex CLI rollout logs (``~/.codex/sessions/**/rollout-*.jsonl``) to chat messages.

A rollout line is ``{"timestamp", "type", "payload"}``. Only ``response_item`` lines are the
conversation (Responses API items); ``session_meta``, ``turn_context``, ``event_msg`` (UI
events that repeat the items) and ``compacted`` markers are metadata and are skipped. Older
Codex versions wrote the items bare, one per line, after an ``{"id", "timestamp"}`` header and
with ``{"record_type": "state"}`` markers; those files are read too.

Items map to chat-completions messages as follows:

- ``message`` -> a message of its role; ``input_text``/``output_text`` parts become text parts,
  ``input_image`` an ``image_url`` part, a ``reasoning`` part goes to ``_reasoning``;
- ``function_call`` (and ``custom_tool_call``, ``local_shell_call``) -> a tool call. Calls that
  follow each other, or follow an assistant text message directly, join that one assistant
  message, as the model produced them in one response;
- ``function_call_output`` / ``custom_tool_call_output`` -> a ``role: tool`` message;
- ``reasoning`` items are skipped (encrypted or summarized thinking, not conversation text);
  ``web_search_call`` items are skipped too (server-side searches with no result item).

A line or item of any other type is skipped and counted in the load's notes (Codex adds item
types between releases; a newer rollout still loads, and says what it passed over).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .content import Message, part_type
from .formats_common import (
    ConversionError,
    Notes,
    Record,
    collapse_parts,
    normalize_part,
    to_json_text,
    tool_result_content,
    type_of,
)
from .formats_parse import Document
from .formats_spec import FULL, NONE, Fit, Reader, first_failure, partial, records_of

ROLLOUT_TYPES = frozenset({"session_meta", "response_item", "turn_context", "event_msg"})
_METADATA_TYPES = frozenset({"session_meta", "turn_context", "event_msg", "compacted"})
_SKIPPED_ITEMS = frozenset({"reasoning", "web_search_call"})
_CALL_ITEMS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
_OUTPUT_ITEMS = frozenset({"function_call_output", "custom_tool_call_output"})
_ITEM_TYPES = _SKIPPED_ITEMS | _CALL_ITEMS | _OUTPUT_ITEMS | {"message"}
_RESPONSES_PARTS = frozenset({"input_text", "output_text", "input_image"})
CODEX_ITEM_TYPES = _ITEM_TYPES
"""Responses item types :func:`convert_codex` reads (any other one is refused)."""


def looks_like_codex(value: Any) -> bool:
    """True for one rollout line, in the current envelope form or the older bare form."""
    if not isinstance(value, Mapping):
        return False
    kind = type_of(value)
    if kind in ROLLOUT_TYPES and isinstance(value.get("payload"), Mapping):
        return True
    if value.get("record_type") == "state" or kind in _SKIPPED_ITEMS | _CALL_ITEMS | _OUTPUT_ITEMS:
        return True
    content = value.get("content")
    return (
        kind == "message"
        and isinstance(content, list)
        and any(part_type(p) in _RESPONSES_PARTS for p in content)
    )


def _is_rollout_line(value: Any) -> bool:
    """An envelope or older bare line: an object with a ``type``, or a header/state marker."""
    if not isinstance(value, Mapping):
        return False
    return (
        isinstance(value.get("type"), str)
        or "record_type" in value
        or ("id" in value and "timestamp" in value)
    )


def check_codex(doc: Document) -> Fit:
    """Every line a rollout line (typed, or a header/state marker), one at least Codex's own."""
    records = records_of(doc, None)
    if records is None or not any(looks_like_codex(r.value) for r in records):
        return NONE
    problem = first_failure(records, _is_rollout_line, "a Codex rollout line has a 'type'")
    return partial(problem) if problem else FULL


def _item_of(where: str, line: Mapping[str, Any], notes: Notes | None) -> Mapping[str, Any] | None:
    """The Responses item a line carries, or ``None`` for a metadata or skipped line."""
    kind = type_of(line)
    if kind in _METADATA_TYPES or "record_type" in line:
        return None
    if kind == "response_item":
        item = line.get("payload")
        if not isinstance(item, Mapping):
            raise ConversionError(f"{where}: response_item has no 'payload' object")
        return item
    if kind in _ITEM_TYPES and "payload" not in line:
        return line  # older rollouts: the item itself
    if kind is None and "id" in line and "timestamp" in line:
        return None  # older rollouts: the session header line
    if kind is None:
        raise ConversionError(f"{where}: not a Codex rollout line (it has no 'type')")
    if notes is None:
        raise ConversionError(f"{where}: unknown rollout line type {kind!r}")
    notes.skip(f"line {kind}")
    return None


def convert_codex(records: list[Record], notes: Notes | None = None) -> list[Message]:
    """Messages of a Codex rollout, in log order.

    Lines and items of unknown types are counted in ``notes``; without ``notes`` they are
    refused with an error naming the line.
    """
    out: list[Message] = []
    # True while the last emitted message is an assistant message that calls may join.
    joinable = False
    for record in records:
        line = record.value
        if not isinstance(line, Mapping):
            raise ConversionError(f"{record.where}: expected a JSON object, got {_kind(line)}")
        item = _item_of(record.where, line, notes)
        if item is None:
            continue
        item_type = type_of(item)
        if item_type in _SKIPPED_ITEMS:
            continue
        if item_type == "message":
            message = _message(record.where, item)
            out.append(message)
            joinable = message["role"] == "assistant"
        elif item_type in _CALL_ITEMS:
            call = _tool_call(record.where, item)
            if joinable:
                out[-1].setdefault("tool_calls", []).append(call)
            else:
                out.append({"role": "assistant", "content": None, "tool_calls": [call]})
            joinable = True
        elif item_type in _OUTPUT_ITEMS:
            out.append(_tool_result(record.where, item))
            joinable = False
        elif notes is not None:
            notes.skip(f"item {item_type}")
        else:
            raise ConversionError(
                f"{record.where}: unsupported Codex item type {item_type!r} "
                "(supported: message, function_call, function_call_output, custom_tool_call, "
                "custom_tool_call_output, local_shell_call, reasoning)"
            )
    return out


def _convert(doc: Document, notes: Notes) -> list[Message]:
    return convert_codex(records_of(doc, None) or [], notes)


CODEX = Reader(
    "codex",
    "a Codex CLI rollout",
    'JSONL rollout lines ({"type", "payload"} envelopes, or the older bare items)',
    check_codex,
    _convert,
)


def _kind(value: Any) -> str:
    return type(value).__name__


def _message(where: str, item: Mapping[str, Any]) -> Message:
    role = item.get("role")
    if not isinstance(role, str) or not role:
        raise ConversionError(f"{where}: message item has no 'role'")
    content = item.get("content")
    message: Message = {"role": role, "content": content}
    if isinstance(content, list):
        parts: list[Any] = []
        reasoning: list[str] = []
        for part in content:
            if isinstance(part, Mapping) and part.get("type") == "reasoning":
                text = part.get("text")
                if isinstance(text, str) and text:
                    reasoning.append(text)
            else:
                parts.append(normalize_part(part))
        message["content"] = collapse_parts(parts)
        if reasoning:
            message["_reasoning"] = "\n\n".join(reasoning)
    return message


def _tool_call(where: str, item: Mapping[str, Any]) -> dict[str, Any]:
    call_id = item.get("call_id") or item.get("id")
    if not isinstance(call_id, str) or not call_id:
        raise ConversionError(f"{where}: {item.get('type')} item has no 'call_id'")
    item_type = type_of(item)
    if item_type == "local_shell_call":
        name: Any = "local_shell"
        arguments: Any = to_json_text(item.get("action", {}))
    elif item_type == "custom_tool_call":
        # Free-form tools (apply_patch) take raw text; wrap it so arguments stay JSON.
        name = item.get("name")
        arguments = to_json_text({"input": item.get("input", "")})
    else:
        name = item.get("name")
        arguments = item.get("arguments", "")
        if not isinstance(arguments, str):
            arguments = to_json_text(arguments)
    if not isinstance(name, str) or not name:
        raise ConversionError(f"{where}: tool call {call_id!r} has no 'name'")
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _tool_result(where: str, item: Mapping[str, Any]) -> Message:
    call_id = item.get("call_id")
    if not isinstance(call_id, str) or not call_id:
        raise ConversionError(f"{where}: {item.get('type')} item has no 'call_id'")
    output = item.get("output")
    if isinstance(output, list):
        output = collapse_parts([normalize_part(p) for p in output])
    content = "" if output is None else tool_result_content(output)
    return {"role": "tool", "tool_call_id": call_id, "content": content}
