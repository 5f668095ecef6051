"""OpenAI chat messages and tools <-> Anthropic Messages API blocks, both directions, pure.

The library's messages are OpenAI chat dicts; the Anthropic API wants a ``system``
parameter, ``tool_use`` blocks inside assistant turns, ``tool_result`` blocks inside user
turns, ``image`` blocks with a ``source``, and strictly alternating roles. This module
converts between the two without touching its input. ``cache_control`` markers placed by
:mod:`palimpsest.providers.caching` survive the trip: a part's marker stays on its block,
a message-level marker lands on that message's last block.
"""

from __future__ import annotations

import base64
import copy
import json
import re
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..messages import call_id, call_name, parse_arguments, role_of, tool_calls_of

__all__ = [
    "anthropic_content_to_openai",
    "anthropic_finish_reason",
    "anthropic_to_openai",
    "anthropic_tools_to_openai",
    "image_part_to_anthropic",
    "openai_to_anthropic",
    "openai_tool_choice_to_anthropic",
    "openai_tools_to_anthropic",
]

_DATA_URL = re.compile(r"^data:(?P<type>[^;,]*)(?P<b64>;base64)?,(?P<data>.*)$", re.S)
_TEXT_TYPES = ("text", "input_text", "output_text")
_IMAGE_TYPES = ("image_url", "input_image")
# Blocks that are already in Anthropic's shape pass through unchanged.
_NATIVE_TYPES = (
    "image",
    "document",
    "tool_use",
    "tool_result",
    "thinking",
    "redacted_thinking",
    "compaction",
)
_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
}


def _image_url(part: Mapping[str, Any]) -> str:
    url = part.get("image_url")
    if isinstance(url, Mapping):
        url = url.get("url")
    if not isinstance(url, str):
        url = part.get("url")
    return url if isinstance(url, str) else ""


def image_part_to_anthropic(part: Mapping[str, Any]) -> dict[str, Any] | None:
    """An OpenAI ``image_url``/``input_image`` part as an Anthropic ``image`` block.

    Data URLs become ``base64`` sources; http(s) URLs become ``url`` sources. Returns
    ``None`` for a part without a usable URL.
    """
    url = _image_url(part)
    match = _DATA_URL.match(url)
    block: dict[str, Any]
    if match:
        data = match.group("data")
        if not match.group("b64"):
            data = base64.b64encode(urllib.parse.unquote_to_bytes(data)).decode("ascii")
        media_type = match.group("type") or "image/png"
        block = {
            "type": "image",
            "source": {"type": "base64", "media_type": media_type, "data": data},
        }
    elif url.startswith(("http://", "https://")):
        block = {"type": "image", "source": {"type": "url", "url": url}}
    else:
        return None
    if "cache_control" in part:
        block["cache_control"] = copy.deepcopy(part["cache_control"])
    return block


def _anthropic_image_to_openai(block: Mapping[str, Any]) -> dict[str, Any]:
    source = block.get("source")
    source = source if isinstance(source, Mapping) else {}
    if source.get("type") == "base64":
        url = f"data:{source.get('media_type', 'image/png')};base64,{source.get('data', '')}"
    else:
        url = str(source.get("url", ""))
    return {"type": "image_url", "image_url": {"url": url}}


def _blocks(content: Any) -> list[dict[str, Any]]:
    """Anthropic content blocks for one message's OpenAI ``content``."""
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if isinstance(content, Mapping):
        content = [content]
    blocks: list[dict[str, Any]] = []
    for part in content if isinstance(content, list | tuple) else [str(content)]:
        if isinstance(part, str):
            if part:
                blocks.append({"type": "text", "text": part})
            continue
        if not isinstance(part, Mapping):
            continue
        kind = part.get("type")
        block: dict[str, Any] | None
        if kind in _TEXT_TYPES or (kind is None and "text" in part):
            text = part.get("text")
            if not isinstance(text, str) or not text:
                continue
            block = {"type": "text", "text": text}
            if "cache_control" in part:
                block["cache_control"] = copy.deepcopy(part["cache_control"])
        elif kind in _IMAGE_TYPES:
            block = image_part_to_anthropic(part)
        elif kind in _NATIVE_TYPES:
            block = copy.deepcopy(dict(part))
        else:
            block = None  # audio, files, unknown parts: nothing Anthropic accepts here
        if block is not None:
            blocks.append(block)
    return blocks


def _mark_last(blocks: list[dict[str, Any]], message: Mapping[str, Any]) -> None:
    marker = message.get("cache_control")
    if marker is not None and blocks:
        blocks[-1]["cache_control"] = copy.deepcopy(marker)


def _tool_result(message: Mapping[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": str(message.get("tool_call_id") or ""),
    }
    if isinstance(content, str):
        block["content"] = content
    elif content is not None:
        inner = [b for b in _blocks(content) if b.get("type") in ("text", "image")]
        block["content"] = inner
    else:
        block["content"] = ""
    marker = message.get("cache_control")
    if marker is not None:
        block["cache_control"] = copy.deepcopy(marker)
    return block


def _tool_use(call: Any) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": call_id(call),
        "name": call_name(call),
        "input": parse_arguments(call),
    }


def openai_to_anthropic(
    messages: Iterable[Mapping[str, Any]],
) -> tuple[str | list[dict[str, Any]] | None, list[dict[str, Any]]]:
    """``(system, messages)`` for the Messages API from OpenAI chat messages.

    System and developer messages join into ``system`` (a string, or text blocks when any
    carries a ``cache_control`` marker). Assistant ``tool_calls`` become ``tool_use``
    blocks with parsed JSON input; ``tool`` messages become ``tool_result`` blocks in a
    user turn; consecutive same-role turns merge, with tool results first in a user turn.
    Messages that convert to no blocks at all (an empty assistant turn) are dropped.
    """
    system_blocks: list[dict[str, Any]] = []
    out: list[dict[str, Any]] = []
    for message in messages:
        role = role_of(message)
        if role in ("system", "developer"):
            blocks = [b for b in _blocks(message.get("content")) if b.get("type") == "text"]
            _mark_last(blocks, message)
            system_blocks.extend(blocks)
            continue
        if role in ("tool", "function"):
            target, blocks = "user", [_tool_result(message)]
        else:
            target = "assistant" if role == "assistant" else "user"
            blocks = _blocks(message.get("content"))
            if target == "assistant":
                blocks.extend(_tool_use(call) for call in tool_calls_of(message))
            _mark_last(blocks, message)
        if not blocks:
            continue
        if out and out[-1]["role"] == target:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": target, "content": blocks})
    for turn in out:
        if turn["role"] == "user":
            # The API wants tool results before any other block of the turn.
            turn["content"].sort(key=lambda b: b.get("type") != "tool_result")
    system: str | list[dict[str, Any]] | None
    if not system_blocks:
        system = None
    elif any("cache_control" in b for b in system_blocks):
        system = system_blocks
    else:
        system = "\n\n".join(b["text"] for b in system_blocks)
    return system, out


def _text_of_blocks(blocks: Sequence[Mapping[str, Any]]) -> str:
    return "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")


def anthropic_content_to_openai(
    blocks: Iterable[Mapping[str, Any]],
) -> tuple[str | None, list[dict[str, Any]]]:
    """``(content, tool_calls)`` of an assistant reply's Anthropic content blocks.

    Text blocks join into the content (``None`` when there is none); ``tool_use`` blocks
    become OpenAI tool calls whose ``arguments`` are JSON strings.
    """
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "tool_use":
            calls.append(
                {
                    "id": str(block.get("id", "")),
                    "type": "function",
                    "function": {
                        "name": str(block.get("name", "")),
                        "arguments": json.dumps(block.get("input") or {}, ensure_ascii=False),
                    },
                }
            )
    content = "".join(texts)
    return (content or None), calls


def anthropic_finish_reason(stop_reason: str | None) -> str | None:
    """OpenAI's ``finish_reason`` for an Anthropic ``stop_reason``."""
    if stop_reason is None:
        return None
    return _FINISH.get(stop_reason, stop_reason)


def _openai_parts(blocks: Sequence[Mapping[str, Any]]) -> str | list[dict[str, Any]]:
    if all(b.get("type") == "text" for b in blocks):
        return _text_of_blocks(blocks)
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if block.get("type") == "text":
            parts.append({"type": "text", "text": str(block.get("text", ""))})
        elif block.get("type") == "image":
            parts.append(_anthropic_image_to_openai(block))
    return parts


def anthropic_to_openai(
    messages: Iterable[Mapping[str, Any]],
    system: str | Sequence[Mapping[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """OpenAI chat messages from Messages-API ``messages`` (and ``system``).

    The inverse of :func:`openai_to_anthropic`: ``tool_result`` blocks become ``tool``
    messages, ``tool_use`` blocks become ``tool_calls``, images become ``image_url``
    parts. ``cache_control`` markers are not carried back.
    """
    out: list[dict[str, Any]] = []
    if isinstance(system, str) and system:
        out.append({"role": "system", "content": system})
    elif system:
        text = "\n\n".join(str(b.get("text", "")) for b in system if b.get("type") == "text")
        if text:
            out.append({"role": "system", "content": text})
    for message in messages:
        role = role_of(message)
        content = message.get("content")
        blocks: list[Mapping[str, Any]]
        if isinstance(content, str):
            blocks = [{"type": "text", "text": content}]
        else:
            blocks = [b for b in content or [] if isinstance(b, Mapping)]
        if role == "assistant":
            reply_text, calls = anthropic_content_to_openai(blocks)
            reply: dict[str, Any] = {"role": "assistant", "content": reply_text}
            if calls:
                reply["tool_calls"] = calls
            out.append(reply)
            continue
        rest: list[Mapping[str, Any]] = []
        for block in blocks:
            if block.get("type") != "tool_result":
                rest.append(block)
                continue
            inner = block.get("content")
            if isinstance(inner, list):
                inner = _openai_parts([b for b in inner if isinstance(b, Mapping)])
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": str(block.get("tool_use_id", "")),
                    "content": inner if inner is not None else "",
                }
            )
        if rest:
            out.append({"role": "user", "content": _openai_parts(rest)})
    return out


def openai_tools_to_anthropic(tools: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Anthropic tool definitions (``name``, ``description``, ``input_schema``).

    Accepts the wrapped ``{"type": "function", "function": {...}}`` form and the bare
    function dict; a definition that already has ``input_schema`` passes through.
    """
    out: list[dict[str, Any]] = []
    for tool in tools:
        if "input_schema" in tool or (tool.get("type") not in (None, "function")):
            out.append(copy.deepcopy(dict(tool)))
            continue
        wrapped = tool.get("function")
        fn: Mapping[str, Any] = wrapped if isinstance(wrapped, Mapping) else tool
        converted: dict[str, Any] = {
            "name": str(fn.get("name", "")),
            "input_schema": copy.deepcopy(
                fn.get("parameters") or {"type": "object", "properties": {}}
            ),
        }
        if fn.get("description"):
            converted["description"] = str(fn["description"])
        if "cache_control" in tool:
            converted["cache_control"] = copy.deepcopy(tool["cache_control"])
        out.append(converted)
    return out


def anthropic_tools_to_openai(tools: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI ``{"type": "function", "function": {...}}`` tools from Anthropic definitions."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        fn: dict[str, Any] = {
            "name": str(tool.get("name", "")),
            "parameters": copy.deepcopy(
                tool.get("input_schema") or {"type": "object", "properties": {}}
            ),
        }
        if tool.get("description"):
            fn["description"] = str(tool["description"])
        out.append({"type": "function", "function": fn})
    return out


def openai_tool_choice_to_anthropic(choice: Any) -> dict[str, Any] | None:
    """Anthropic ``tool_choice`` for an OpenAI one (``auto``, ``required``, ``none``, named)."""
    if choice is None:
        return None
    if isinstance(choice, str):
        return {
            "auto": {"type": "auto"},
            "required": {"type": "any"},
            "none": {"type": "none"},
        }.get(choice, {"type": "auto"})
    if isinstance(choice, Mapping):
        if choice.get("type") in ("auto", "any", "none", "tool"):
            return dict(choice)
        fn = choice.get("function")
        if isinstance(fn, Mapping) and fn.get("name"):
            return {"type": "tool", "name": str(fn["name"])}
    return {"type": "auto"}
