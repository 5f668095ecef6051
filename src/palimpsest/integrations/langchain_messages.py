"""LangChain messages <-> our OpenAI-format dicts, both ways, without loss.

What a provider reads goes into the dict's own fields: role, content (a string, or text and
``image_url`` parts), ``tool_calls`` with their ids and JSON arguments, ``tool_call_id``,
``name``. What has no OpenAI field (message ids, ``additional_kwargs``, response and usage
metadata, a tool message's status and artifact, content blocks other than text and images)
rides along under the private key ``_langchain``, which our compressor and token counts
ignore. Coming back, that record is used as long as the visible fields still say what it
says; a message the compressor wrote or changed comes back from its visible fields alone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.tool import ToolCall

from ..errors import TranscriptError
from ..messages.content import (
    arguments_object,
    call_arguments,
    call_id,
    tool_calls_of,
)

__all__ = ["PRIVATE_KEY", "dicts_to_messages", "message_to_dict", "messages_to_dicts"]

PRIVATE_KEY = "_langchain"

_ROLES = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}
_VISIBLE_FIELDS = {"content", "tool_calls", "tool_call_id", "type", "name", "role"}


def _part(block: Any) -> dict[str, Any] | None:
    """One content block as an OpenAI part (``None``: no OpenAI equivalent)."""
    if isinstance(block, str):
        return {"type": "text", "text": block}
    if not isinstance(block, Mapping):
        return None
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return {"type": "text", "text": block["text"]}
    if kind == "image_url":
        return {"type": "image_url", "image_url": dict(block["image_url"])}
    if kind == "image":
        if isinstance(block.get("url"), str):
            return {"type": "image_url", "image_url": {"url": block["url"]}}
        data = block.get("base64") or block.get("data")
        if isinstance(data, str):
            mime = block.get("mime_type") or "image/png"
            return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data}"}}
    return None


def _content(content: Any) -> str | list[dict[str, Any]]:
    """Visible content: a string stays one; a block list keeps its text and images."""
    if isinstance(content, str):
        return content
    parts = [_part(block) for block in content or []]
    return [p for p in parts if p is not None]


def _tool_call(call: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": call.get("id") or "",
        "type": "function",
        "function": {
            "name": call.get("name") or "",
            "arguments": json.dumps(call.get("args") or {}, ensure_ascii=False),
        },
    }


def _role(message: BaseMessage) -> str:
    if isinstance(message, ChatMessage):
        return message.role
    role = _ROLES.get(message.type)
    if role is None:
        raise TranscriptError(
            f"a LangChain {type(message).__name__} has no chat role; only system, human, "
            "ai, tool and chat messages can be compacted"
        )
    return role


def message_to_dict(message: BaseMessage) -> dict[str, Any]:
    """One LangChain message as our dict (see the module docstring)."""
    out: dict[str, Any] = {"role": _role(message), "content": _content(message.content)}
    if message.name is not None:
        out["name"] = message.name
    if isinstance(message, AIMessage) and message.tool_calls:
        out["tool_calls"] = [_tool_call(call) for call in message.tool_calls]
    if isinstance(message, ToolMessage):
        out["tool_call_id"] = message.tool_call_id
    record: dict[str, Any] = {
        "type": message.type,
        "fields": message.model_dump(exclude=_VISIBLE_FIELDS, exclude_defaults=True),
    }
    if out["content"] != message.content:
        record["content"] = message.content
    if isinstance(message, ChatMessage):
        record["fields"]["role"] = message.role
    out[PRIVATE_KEY] = record
    return out


def messages_to_dicts(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    return [message_to_dict(m) for m in messages]


def _calls(message: Mapping[str, Any]) -> list[ToolCall]:
    return [
        ToolCall(
            name=str((c.get("function") or {}).get("name") or ""),
            args=arguments_object(call_arguments(c)),
            id=call_id(c) or None,
            type="tool_call",
        )
        for c in tool_calls_of(message)
    ]


def _fresh(message: Mapping[str, Any]) -> BaseMessage:
    """A message from the visible fields alone (one the compressor wrote or changed)."""
    role = message.get("role")
    content = message.get("content")
    content = "" if content is None else content
    name = message.get("name")
    if role == "system":
        return SystemMessage(content=content, name=name)
    if role == "user":
        return HumanMessage(content=content, name=name)
    if role == "assistant":
        return AIMessage(content=content, name=name, tool_calls=_calls(message))
    if role == "tool":
        return ToolMessage(content=content, tool_call_id=str(message.get("tool_call_id") or ""))
    return ChatMessage(content=content, role=str(role))


def _restored(message: Mapping[str, Any]) -> BaseMessage | None:
    """The message its private record describes, if the visible fields still agree."""
    record = message.get(PRIVATE_KEY)
    if not isinstance(record, Mapping):
        return None
    fields = dict(record.get("fields") or {})
    content = record.get("content", message.get("content"))
    kind = record.get("type")
    base: dict[str, Any] = {"content": content, **fields}
    if message.get("name") is not None:
        base["name"] = message["name"]
    restored: BaseMessage
    if kind == "system":
        restored = SystemMessage(**base)
    elif kind == "human":
        restored = HumanMessage(**base)
    elif kind == "ai":
        restored = AIMessage(**base, tool_calls=_calls(message))
    elif kind == "tool":
        restored = ToolMessage(**base, tool_call_id=str(message.get("tool_call_id") or ""))
    elif kind == "chat":
        restored = ChatMessage(**base)
    else:
        return None
    again = message_to_dict(restored)
    same = all(again.get(k) == message.get(k) for k in ("role", "content", "tool_calls", "name"))
    return restored if same else None


def dicts_to_messages(messages: Sequence[Mapping[str, Any]]) -> list[BaseMessage]:
    """Our dicts as LangChain messages (the inverse of :func:`messages_to_dicts`)."""
    return [_restored(m) or _fresh(m) for m in messages]
