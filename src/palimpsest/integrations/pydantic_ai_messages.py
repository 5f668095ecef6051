"""pydantic-ai messages <-> our OpenAI-format dicts, both ways, without loss.

A ``ModelRequest`` becomes one dict per part (system prompt, user prompt, tool return,
retry feedback); a ``ModelResponse`` becomes one assistant dict with its text and tool calls
(ids and JSON arguments kept). User content keeps text and images as OpenAI parts; other
media is named in a text part. What the OpenAI format has no field for (timestamps, usage,
model and provider names, thinking parts, instructions, metadata) rides along: the first
dict of each message carries, under the private key ``_pydantic_ai`` (which our compressor
and token counts ignore), the message object itself for the round trip in memory, and the
message as pydantic-ai's own JSON (``ModelMessagesTypeAdapter``) for the session store.
Coming back, the object (else the JSON) is used while the dicts still say what it says;
dicts the compressor wrote or changed come back from their visible fields alone.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic_ai.messages import (
    BinaryContent,
    ImageUrl,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserContent,
    UserPromptPart,
)

from ..messages.content import call_arguments, call_id, content_text, tool_calls_of

__all__ = ["PRIVATE_KEY", "dicts_to_messages", "messages_to_dicts"]

PRIVATE_KEY = "_pydantic_ai"


def _user_part(item: UserContent) -> dict[str, Any]:
    if isinstance(item, str):
        return {"type": "text", "text": item}
    if isinstance(item, ImageUrl):
        return {"type": "image_url", "image_url": {"url": item.url}}
    if isinstance(item, BinaryContent) and item.is_image:
        data = base64.b64encode(item.data).decode("ascii")
        return {"type": "image_url", "image_url": {"url": f"data:{item.media_type};base64,{data}"}}
    return {"type": "text", "text": f"[{type(item).__name__}]"}


def _user(part: UserPromptPart) -> dict[str, Any]:
    if isinstance(part.content, str):
        return {"role": "user", "content": part.content}
    return {"role": "user", "content": [_user_part(item) for item in part.content]}


def _request_part(part: ModelRequestPart) -> dict[str, Any] | None:
    if isinstance(part, SystemPromptPart):
        return {"role": "system", "content": part.content}
    if isinstance(part, UserPromptPart):
        return _user(part)
    if isinstance(part, ToolReturnPart):
        return {
            "role": "tool",
            "tool_call_id": part.tool_call_id,
            "name": part.tool_name,
            "content": part.model_response_str(),
        }
    if part.part_kind == "retry-feedback":  # RetryFeedbackPart, new in 2.x minor releases
        return {"role": "user", "content": part.model_response()}
    if isinstance(part, RetryPromptPart):  # deprecated in 2.x, still read from old histories
        if part.tool_name is None:
            return {"role": "user", "content": part.model_response()}
        return {
            "role": "tool",
            "tool_call_id": part.tool_call_id,
            "name": part.tool_name,
            "content": part.model_response(),
        }
    return None


def _response(message: ModelResponse) -> dict[str, Any]:
    text = "".join(p.content for p in message.parts if isinstance(p, TextPart))
    out: dict[str, Any] = {"role": "assistant", "content": text}
    calls = [
        {
            "id": p.tool_call_id,
            "type": "function",
            "function": {"name": p.tool_name, "arguments": p.args_as_json_str()},
        }
        for p in message.parts
        if isinstance(p, ToolCallPart)
    ]
    if calls:
        out["tool_calls"] = calls
    return out


def _visible(message: ModelMessage) -> list[dict[str, Any]]:
    if isinstance(message, ModelResponse):
        return [_response(message)]
    dicts = [d for d in (_request_part(p) for p in message.parts) if d is not None]
    return dicts or [{"role": "user", "content": ""}]


def messages_to_dicts(messages: Sequence[ModelMessage]) -> list[dict[str, Any]]:
    """pydantic-ai messages as our dicts (see the module docstring)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        dicts = _visible(message)
        record = ModelMessagesTypeAdapter.dump_python([message], mode="json")[0]
        dicts[0][PRIVATE_KEY] = {"object": message, "json": record, "dicts": len(dicts)}
        out.extend(dicts)
    return out


def _bare(message: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in message.items() if not str(k).startswith("_")}


def _restored(dicts: Sequence[Mapping[str, Any]]) -> ModelMessage | None:
    """The message the first dict's record describes, if ``dicts`` still say what it says."""
    record = dicts[0].get(PRIVATE_KEY) if dicts else None
    if not isinstance(record, Mapping) or record.get("dicts") != len(dicts):
        return None
    message = record.get("object")
    if not isinstance(message, ModelRequest | ModelResponse):
        message = ModelMessagesTypeAdapter.validate_python([record.get("json")])[0]
    if [_bare(d) for d in _visible(message)] != [_bare(d) for d in dicts]:
        return None
    return message


def _user_content(content: Any) -> str | list[UserContent]:
    if isinstance(content, str):
        return content
    items: list[UserContent] = []
    for part in content or []:
        if isinstance(part, Mapping) and part.get("type") == "image_url":
            url = str((part.get("image_url") or {}).get("url") or "")
            items.append(
                BinaryContent.from_data_uri(url) if url.startswith("data:") else ImageUrl(url)
            )
        else:
            items.append(content_text([part]))
    return items


def _fresh_request(message: Mapping[str, Any]) -> ModelRequestPart:
    role = message.get("role")
    content = message.get("content")
    if role == "system":
        return SystemPromptPart(content_text(content))
    if role == "tool":
        return ToolReturnPart(
            tool_name=str(message.get("name") or ""),
            content=content_text(content),
            tool_call_id=str(message.get("tool_call_id") or ""),
        )
    return UserPromptPart(_user_content(content))


def _fresh_response(message: Mapping[str, Any]) -> ModelResponse:
    parts: list[ModelResponsePart] = []
    text = content_text(message.get("content"))
    if text:
        parts.append(TextPart(text))
    for call in tool_calls_of(message):
        name = str((call.get("function") or {}).get("name") or "")
        parts.append(ToolCallPart(name, call_arguments(call) or None, call_id(call)))
    return ModelResponse(parts=parts)


def dicts_to_messages(messages: Sequence[Mapping[str, Any]]) -> list[ModelMessage]:
    """Our dicts as pydantic-ai messages (the inverse of :func:`messages_to_dicts`).

    Consecutive request parts written by the compressor join one ``ModelRequest``, as
    pydantic-ai itself sends them."""
    out: list[ModelMessage] = []
    fresh: list[ModelRequestPart] = []

    def flush() -> None:
        if fresh:
            out.append(ModelRequest(parts=list(fresh)))
            fresh.clear()

    i = 0
    while i < len(messages):
        record = messages[i].get(PRIVATE_KEY)
        size = record.get("dicts") if isinstance(record, Mapping) else None
        restored = _restored(messages[i : i + size]) if isinstance(size, int) else None
        if restored is not None and isinstance(size, int):
            flush()
            out.append(restored)
            i += size
            continue
        if messages[i].get("role") == "assistant":
            flush()
            out.append(_fresh_response(messages[i]))
        else:
            fresh.append(_fresh_request(messages[i]))
        i += 1
    flush()
    return out
