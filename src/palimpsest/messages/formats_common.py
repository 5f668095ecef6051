"""Pieces every transcript converter shares: located records, schema keys, content parts.

A converter receives the parsed file as a list of :class:`Record` values, each carrying a
label such as ``line 12`` or ``loglines[3]`` so that an error can point at the exact spot in
the user's file. The helpers here only reshape data; none of them drops text.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import TranscriptError
from .content import Message

OPENAI_MESSAGE_KEYS = ("role", "content", "name", "tool_calls", "tool_call_id")
"""Keys a converted message keeps; agent frameworks add others that providers reject."""

TEXT_TYPES = frozenset({"text", "input_text", "output_text"})


@dataclass(frozen=True)
class Record:
    """One parsed JSON value of a transcript file and where it sits in the file."""

    where: str
    value: Any


@dataclass
class Notes:
    """What a reader passed over: records of unknown types (counted), a cut-off last line.

    Readers never fail on a record type they do not know, and never drop one silently:
    they count it here, and the loader reports the counts with the messages.
    """

    skipped: Counter[str] = field(default_factory=Counter)
    truncated: str | None = None

    def skip(self, what: str) -> None:
        """Count one record the reader passed over (``what``: its type, as the file says)."""
        self.skipped[what] += 1

    def lines(self) -> list[str]:
        """The notes as sentences, for a report (empty when nothing was passed over)."""
        out: list[str] = []
        if self.truncated:
            out.append(self.truncated)
        if self.skipped:
            total = sum(self.skipped.values())
            kinds = ", ".join(f"{kind} x{n}" for kind, n in sorted(self.skipped.items()))
            noun = "record" if total == 1 else "records"
            out.append(f"skipped {total} {noun} of a type this reader does not know: {kinds}")
        return out


class ConversionError(Exception):
    """Raised inside a converter; the loader adds the file path and re-raises TranscriptError."""

    def __init__(self, problem: str, index: int | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.index = index

    def to_transcript_error(self, path: str | Path | None) -> TranscriptError:
        return TranscriptError(self.problem, path=path, index=self.index)


def type_of(value: Any) -> str | None:
    """The ``type`` of a JSON object when it is a string; ``None`` for anything else."""
    kind = value.get("type") if isinstance(value, Mapping) else None
    return kind if isinstance(kind, str) else None


def to_json_text(value: Any) -> str:
    """A JSON value as compact text that keeps non-ASCII characters readable."""
    return json.dumps(value, ensure_ascii=False)


def text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def collapse_parts(parts: list[Any]) -> Any:
    """A single text part becomes a plain string; anything else stays a list.

    This loses nothing (one part holds exactly that string) and gives downstream readers the
    common shape; several parts stay separate because joining them would invent separators.
    """
    if len(parts) == 1 and isinstance(parts[0], Mapping) and parts[0].get("type") == "text":
        text = parts[0].get("text")
        if isinstance(text, str) and set(parts[0]) == {"type", "text"}:
            return text
    return parts


def normalize_part(part: Any) -> Any:
    """One content part in chat-completions form.

    Responses-style ``input_text``/``output_text`` become ``text``; ``cache_control`` (an
    Anthropic hint OpenAI rejects) is removed; unknown parts are kept as they are.
    """
    if not isinstance(part, Mapping):
        return part
    kind = type_of(part)
    if kind in TEXT_TYPES and isinstance(part.get("text"), str):
        return text_part(part["text"])
    if kind == "input_image":
        url = part.get("image_url")
        if isinstance(url, str):
            return {"type": "image_url", "image_url": {"url": url}}
    return {k: v for k, v in part.items() if k != "cache_control"}


def normalize_content(content: Any) -> Any:
    """Content of a kept message: parts normalized, strings and ``None`` unchanged."""
    if isinstance(content, list):
        return [normalize_part(p) for p in content]
    return content


def tool_result_content(content: Any) -> Any:
    """Content for a ``role: tool`` message: dicts become JSON text, lists of parts stay."""
    if isinstance(content, Mapping):
        return to_json_text(content)
    if isinstance(content, list):
        return [normalize_part(p) for p in content]
    return content


def normalize_tool_call(call: Any) -> Any:
    """A tool call with only the chat-completions keys; object ``arguments`` become JSON text."""
    if not isinstance(call, Mapping):
        return call
    out: dict[str, Any] = {k: call[k] for k in ("id", "type", "function") if k in call}
    out.setdefault("type", "function")
    function = out.get("function")
    if isinstance(function, Mapping):
        function = {k: function[k] for k in ("name", "arguments") if k in function}
        if isinstance(function.get("arguments"), Mapping | list):
            function["arguments"] = to_json_text(function["arguments"])
        out["function"] = function
    return out


def keep_schema_keys(message: Mapping[str, Any]) -> Message:
    """A copy of an agent framework's message with only the keys a provider accepts.

    SWE-agent writes the id a tool result answers as ``tool_call_ids`` (a list); a one-id list
    becomes ``tool_call_id``. A result that claims several calls cannot be split without
    guessing, so it is refused rather than silently attributed to one of them.
    """
    out: Message = {k: message[k] for k in OPENAI_MESSAGE_KEYS if k in message}
    ids = message.get("tool_call_ids")
    if "tool_call_id" not in out and isinstance(ids, list) and ids:
        if len(ids) > 1:
            raise ConversionError(
                f"one tool result answers {len(ids)} tool calls ({', '.join(map(str, ids))}); "
                "split it into one result per call"
            )
        out["tool_call_id"] = ids[0]
    if "content" in out:
        out["content"] = normalize_content(out["content"])
        if out.get("role") == "tool":
            out["content"] = tool_result_content(out["content"])
    if isinstance(out.get("tool_calls"), list):
        out["tool_calls"] = [normalize_tool_call(c) for c in out["tool_calls"]]
    return out
