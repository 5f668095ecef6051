"""OpenAI chat messages and tools <-> the Responses API's input and output items, pure.

The library's messages are Chat Completions dicts. The Responses API wants a list of
*items*: messages (``role`` and ``content`` of ``input_text`` / ``input_image`` parts, or
``output_text`` for the assistant), ``function_call`` items that carry a ``call_id``, and
``function_call_output`` items that answer one. Its tool declarations are flat
(``{"type": "function", "name": ...}``) where Chat nests them under ``function``. A reply's
``output`` is a list of items of the same kinds plus ``reasoning`` and, when the server
compacted the context, an opaque ``compaction`` item.

Items that have no Chat counterpart (reasoning, compaction) travel on an assistant message
under the internal key :data:`RESPONSES_ITEMS_KEY`, so that a transcript can carry them to
the next request in their original place; :func:`messages_to_input` sends them back as
they came. Nothing here touches its input.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..messages import call_id, call_name, role_of, tool_calls_of
from ..messages.native import RESPONSES_ITEMS_KEY, latest_native_compaction

__all__ = [
    "RESPONSES_ITEMS_KEY",
    "messages_to_input",
    "output_to_message_parts",
    "responses_finish_reason",
    "tools_to_responses",
]


_TEXT_TYPES = ("text", "input_text", "output_text")
_IMAGE_TYPES = ("image_url", "input_image")


def _get(obj: Any, key: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


def _image_part(part: Mapping[str, Any]) -> dict[str, Any] | None:
    url = part.get("image_url")
    detail = None
    if isinstance(url, Mapping):
        detail = url.get("detail")
        url = url.get("url")
    if not isinstance(url, str) or not url:
        return None
    item: dict[str, Any] = {"type": "input_image", "image_url": url}
    detail = detail or part.get("detail")
    item["detail"] = detail if isinstance(detail, str) else "auto"
    return item


def _parts(content: Any, *, text_type: str) -> str | list[dict[str, Any]]:
    """Chat content as Responses content: a string stays a string; parts are converted."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else [content]:
        if isinstance(part, str):
            parts.append({"type": text_type, "text": part})
            continue
        if not isinstance(part, Mapping):
            continue
        kind = part.get("type")
        if kind in _TEXT_TYPES:
            parts.append({"type": text_type, "text": str(part.get("text") or "")})
        elif kind in _IMAGE_TYPES:
            image = _image_part(part)
            if image is not None:
                parts.append(image)
        else:  # already a Responses part (input_file, refusal...): passed through
            parts.append(copy.deepcopy(dict(part)))
    return parts


def _text(content: Any) -> str:
    parts = _parts(content, text_type="output_text")
    if isinstance(parts, str):
        return parts
    return "".join(str(p.get("text") or "") for p in parts if p.get("type") in _TEXT_TYPES)


def _arguments(call: Mapping[str, Any]) -> str:
    fn = call.get("function")
    raw = fn.get("arguments") if isinstance(fn, Mapping) else None
    if isinstance(raw, str):
        return raw
    return json.dumps(raw if raw is not None else {}, ensure_ascii=False)


def messages_to_input(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Chat messages as a Responses ``input`` list (system messages stay in place).

    When an assistant message carries a ``compaction`` item, what came before it (except
    system messages) is not sent: the item carries that context forward (the compaction
    guide's advice for stateless input chaining), so the request stays small.
    """
    start = latest_native_compaction(messages) or 0
    items: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if index < start and role_of(message) not in ("system", "developer"):
            continue
        role = role_of(message)
        if role == "tool":
            output = message.get("content")
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": str(message.get("tool_call_id") or ""),
                    "output": output if isinstance(output, str) else _text(output),
                }
            )
            continue
        if role == "assistant":
            kept = message.get(RESPONSES_ITEMS_KEY)
            if isinstance(kept, list):
                items.extend(copy.deepcopy(dict(i)) for i in kept if isinstance(i, Mapping))
            text = _text(message.get("content"))
            if text:
                items.append({"role": "assistant", "content": text})
            for call in tool_calls_of(message):
                items.append(
                    {
                        "type": "function_call",
                        "call_id": call_id(call),
                        "name": call_name(call),
                        "arguments": _arguments(call),
                    }
                )
            continue
        items.append(
            {"role": role, "content": _parts(message.get("content"), text_type="input_text")}
        )
    return items


def tools_to_responses(tools: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Chat tool declarations (``function`` nested) as flat Responses function tools."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        fn = tool.get("function")
        if tool.get("type") != "function" or not isinstance(fn, Mapping):
            out.append(copy.deepcopy(dict(tool)))  # a built-in tool, already in its shape
            continue
        flat: dict[str, Any] = {"type": "function", "name": fn.get("name")}
        if fn.get("description"):
            flat["description"] = fn.get("description")
        flat["parameters"] = copy.deepcopy(fn.get("parameters") or {"type": "object"})
        if "strict" in fn:
            flat["strict"] = fn["strict"]
        out.append(flat)
    return out


def _plain(item: Any) -> dict[str, Any]:
    """An SDK model object or a dict as a plain dict (for storing opaque items)."""
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        value = dump(exclude_none=True)
        return dict(value) if isinstance(value, Mapping) else {}
    return copy.deepcopy(dict(item)) if isinstance(item, Mapping) else {}


def output_to_message_parts(
    output: Iterable[Any],
) -> tuple[str | None, list[dict[str, Any]], list[dict[str, Any]]]:
    """A reply's ``output`` items as (text, Chat tool calls, opaque items to keep)."""
    text: list[str] = []
    calls: list[dict[str, Any]] = []
    kept: list[dict[str, Any]] = []
    for item in output:
        kind = _get(item, "type")
        if kind == "message":
            for part in _get(item, "content") or []:
                if _get(part, "type") == "output_text":
                    text.append(str(_get(part, "text") or ""))
        elif kind == "function_call":
            calls.append(
                {
                    "id": str(_get(item, "call_id") or _get(item, "id") or ""),
                    "type": "function",
                    "function": {
                        "name": str(_get(item, "name") or ""),
                        "arguments": str(_get(item, "arguments") or ""),
                    },
                }
            )
        elif kind in ("reasoning", "compaction"):
            kept.append(_plain(item))
    return ("".join(text) or None), calls, kept


def responses_finish_reason(response: Any, has_calls: bool) -> str | None:
    """Chat's finish reason for a Responses reply (``length`` when cut at the output cap)."""
    status = _get(response, "status")
    if status == "incomplete":
        reason = _get(_get(response, "incomplete_details"), "reason")
        return "length" if reason == "max_output_tokens" else "content_filter"
    if has_calls:
        return "tool_calls"
    return "stop" if status in (None, "completed") else str(status)
