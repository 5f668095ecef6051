"""ShareGPT turns read as the chat messages the rest of the library understands.

Training trajectories store turns as ``{"from": system|human|gpt|tool, "value": text}``.
The library's reading of transcripts (:mod:`palimpsest.messages.reading`) and its
extractive summarizer work on OpenAI-style chat messages, so this module maps one onto the
other without changing the trajectory itself:

- ``system`` -> ``system``, ``human`` -> ``user``;
- ``gpt`` -> ``assistant``. Hermes-style function calling, the common ShareGPT agent
  format, writes each call as ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``
  in the text: those blocks become ``tool_calls`` with ids local to the trajectory. Other
  text actions (fenced commands, ``<command>`` tags, ``<function=...>`` calls) stay in the
  text, where the reading recognises them;
- ``tool`` -> one ``tool`` message per ``<tool_response>`` block, answering the open calls
  of the last ``gpt`` turn in order; a ``tool`` turn with no open native call is the output
  of a text action and becomes an ``OBSERVATION:`` user message, the envelope the reading
  pairs with the action before it.

The mapping is per turn (:func:`turn_messages`), so a slice of turns maps to the messages of
exactly those turns.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ..messages.reading_observation import opens_like_observation

__all__ = ["ROLE_MAP", "first_request", "to_chat_messages", "turn_messages"]

ROLE_MAP: Final = {"system": "system", "human": "user", "gpt": "assistant", "tool": "tool"}

_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
_RESPONSE = re.compile(r"<tool_response>\s*(.*?)\s*</tool_response>", re.DOTALL)


def _parse_call(body: str) -> tuple[str, str] | None:
    try:
        data = json.loads(body)
    except ValueError:
        return None
    if not isinstance(data, Mapping) or not isinstance(data.get("name"), str):
        return None
    args = data.get("arguments", data.get("parameters", {}))
    arguments = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
    return data["name"], arguments


def _assistant(index: int, text: str) -> tuple[dict[str, Any], list[str]]:
    calls: list[dict[str, Any]] = []
    kept: list[str] = []
    last = 0
    for match in _CALL.finditer(text):
        parsed = _parse_call(match.group(1))
        if parsed is None:
            continue
        kept.append(text[last : match.start()])
        last = match.end()
        call_id = f"call_{index}_{len(calls)}"
        calls.append(
            {
                "id": call_id,
                "type": "function",
                "function": {"name": parsed[0], "arguments": parsed[1]},
            }
        )
    kept.append(text[last:])
    message: dict[str, Any] = {"role": "assistant", "content": "".join(kept).strip()}
    if calls:
        message["tool_calls"] = calls
    return message, [c["id"] for c in calls]


def _response_text(body: str) -> str:
    try:
        data = json.loads(body)
    except ValueError:
        return body
    if isinstance(data, Mapping) and "content" in data:
        content = data["content"]
        return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    return body


def turn_messages(turns: Sequence[Mapping[str, Any]]) -> list[list[dict[str, Any]]]:
    """The chat messages of each turn (one list per turn, same order)."""
    out: list[list[dict[str, Any]]] = []
    open_calls: list[str] = []
    for index, turn in enumerate(turns):
        role = turn.get("from")
        value = turn.get("value")
        text = value if isinstance(value, str) else ""
        if role == "gpt":
            message, open_calls = _assistant(index, text)
            out.append([message])
        elif role == "tool":
            out.append(_tool(text, open_calls))
        else:
            open_calls = []
            out.append([{"role": ROLE_MAP.get(str(role), "user"), "content": text}])
    return out


def _tool(text: str, open_calls: list[str]) -> list[dict[str, Any]]:
    if not open_calls:
        body = text if opens_like_observation(text) else f"OBSERVATION:\n{text}"
        return [{"role": "user", "content": body}]
    blocks = [m.group(1) for m in _RESPONSE.finditer(text)] or [text]
    messages = []
    for block in blocks:
        call_id = open_calls.pop(0) if open_calls else None
        message: dict[str, Any] = {"role": "tool", "content": _response_text(block)}
        if call_id is not None:
            message["tool_call_id"] = call_id
        messages.append(message)
    return messages


def to_chat_messages(turns: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """All turns' chat messages, flattened."""
    return [m for group in turn_messages(turns) for m in group]


def first_request(turns: Sequence[Mapping[str, Any]]) -> str | None:
    """The value of the first ``human`` turn in ``turns``, or ``None``."""
    for turn in turns:
        if turn.get("from") == "human" and isinstance(turn.get("value"), str):
            return str(turn["value"]).strip() or None
    return None
