"""OpenAI Agents SDK input items (Responses API shapes) <-> our OpenAI chat dicts.

The SDK keeps a conversation as Responses items: messages, ``function_call`` and
``function_call_output`` items, ``reasoning`` items, hosted-tool calls. Our dicts are chat
messages, where an assistant turn's text and its tool calls are one message and each result
follows it. So a run of output items (reasoning, an assistant message, function calls, any
other output) becomes one assistant dict with ``content`` and ``tool_calls`` (ids kept);
``function_call_output`` a ``tool`` dict; user, system and developer messages a dict of
their role (developer as ``system``). Text and images keep their place as OpenAI parts.

Every dict carries the items it came from under the private key ``_openai_agents``, which
our compressor and token counts ignore and the session store keeps; coming back, they are
used while the dict still says what they say, and a dict the compressor wrote or changed
becomes items from its visible fields alone. Items are plain JSON dicts throughout.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..messages.content import call_arguments, call_id, content_text, tool_calls_of

__all__ = ["PRIVATE_KEY", "dicts_to_items", "items_to_dicts"]

PRIVATE_KEY = "_openai_agents"

_INPUT_ROLES = {"user": "user", "system": "system", "developer": "system"}
_TEXT_PARTS = ("input_text", "output_text", "text")


def _plain(item: Any) -> dict[str, Any]:
    """An item as a plain dict (the SDK may hand over pydantic models)."""
    if isinstance(item, Mapping):
        return copy.deepcopy(dict(item))
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        return dict(dump(exclude_unset=True, mode="json"))
    raise TypeError(f"not an input item: {type(item).__name__}")


def _part(part: Any) -> dict[str, Any]:
    if isinstance(part, str):
        return {"type": "text", "text": part}
    kind = part.get("type")
    if kind in _TEXT_PARTS:
        return {"type": "text", "text": str(part.get("text") or "")}
    if kind == "refusal":
        return {"type": "text", "text": str(part.get("refusal") or "")}
    if kind == "input_image" and part.get("image_url"):
        return {"type": "image_url", "image_url": {"url": part["image_url"]}}
    name = part.get("filename") or part.get("file_id") or kind
    return {"type": "text", "text": f"[{name}]"}


def _content(content: Any) -> Any:
    if content is None or isinstance(content, str):
        return content or ""
    return [_part(p) for p in content]


def _is_message(item: Mapping[str, Any]) -> bool:
    return "role" in item and item.get("type", "message") == "message"


def _assistant(group: list[dict[str, Any]]) -> dict[str, Any]:
    texts = [
        content_text(_content(item.get("content")))
        for item in group
        if _is_message(item) and item.get("role") == "assistant"
    ]
    out: dict[str, Any] = {"role": "assistant", "content": "".join(texts)}
    calls = [
        {
            "id": item.get("call_id") or "",
            "type": "function",
            "function": {"name": item.get("name") or "", "arguments": item.get("arguments") or ""},
        }
        for item in group
        if item.get("type") == "function_call"
    ]
    if calls:
        out["tool_calls"] = calls
    return out


def _input_side(item: Mapping[str, Any]) -> dict[str, Any] | None:
    """The dict of an item that is not part of an assistant turn (``None`` if it is)."""
    if _is_message(item) and item.get("role") in _INPUT_ROLES:
        return {"role": _INPUT_ROLES[str(item["role"])], "content": _content(item.get("content"))}
    if item.get("type") == "function_call_output":
        output = item.get("output")
        return {
            "role": "tool",
            "tool_call_id": str(item.get("call_id") or ""),
            "content": output if isinstance(output, str) else _content(output),
        }
    return None


def _visible(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    group: list[dict[str, Any]] = []
    for item in items:
        single = _input_side(item)
        if single is None:
            group.append(dict(item))
            continue
        if group:
            out.append(_assistant(group))
            group = []
        out.append(single)
    if group:
        out.append(_assistant(group))
    return out


def items_to_dicts(items: Sequence[Any]) -> list[dict[str, Any]]:
    """The SDK's items as our dicts, each carrying its items (see the module docstring)."""
    plain = [_plain(item) for item in items]
    out: list[dict[str, Any]] = []
    group: list[dict[str, Any]] = []
    for item in plain:
        if _input_side(item) is None:
            group.append(item)
            continue
        if group:
            out.append({**_assistant(group), PRIVATE_KEY: {"items": group}})
            group = []
        out.append({**(_input_side(item) or {}), PRIVATE_KEY: {"items": [item]}})
    if group:
        out.append({**_assistant(group), PRIVATE_KEY: {"items": group}})
    return out


def _bare(message: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in message.items() if not str(k).startswith("_")}


def _restored(message: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    record = message.get(PRIVATE_KEY)
    items = record.get("items") if isinstance(record, Mapping) else None
    if not isinstance(items, list) or not items:
        return None
    if _visible(items) != [_bare(message)]:
        return None
    return copy.deepcopy(items)


def _input_parts(content: Any, text_type: str) -> Any:
    if content is None or isinstance(content, str):
        return content or ""
    parts: list[dict[str, Any]] = []
    for part in content:
        if isinstance(part, Mapping) and part.get("type") == "image_url":
            url = (part.get("image_url") or {}).get("url")
            parts.append({"type": "input_image", "image_url": url, "detail": "auto"})
        else:
            parts.append({"type": text_type, "text": content_text([part])})
    return parts


def _fresh(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Items from a dict's visible fields (a dict the compressor wrote or changed)."""
    role = message.get("role")
    content = message.get("content")
    if role == "tool":
        output = content if isinstance(content, str) else content_text(content)
        return [
            {
                "type": "function_call_output",
                "call_id": str(message.get("tool_call_id") or ""),
                "output": output,
            }
        ]
    if role != "assistant":
        return [{"role": role or "user", "content": _input_parts(content, "input_text")}]
    items: list[dict[str, Any]] = []
    text = content_text(content)
    if text:
        items.append({"role": "assistant", "content": text})
    for call in tool_calls_of(message):
        name = str((call.get("function") or {}).get("name") or "")
        arguments = call_arguments(call) or json.dumps({})
        items.append(
            {
                "type": "function_call",
                "call_id": call_id(call),
                "name": name,
                "arguments": arguments,
            }
        )
    return items or [{"role": "assistant", "content": ""}]


def dicts_to_items(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Our dicts as the SDK's input items (the inverse of :func:`items_to_dicts`)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        out.extend(_restored(message) or _fresh(message))
    return out
