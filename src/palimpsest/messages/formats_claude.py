"""Claude Code session logs (``~/.claude/projects/*/*.jsonl``) to chat-completions messages.

Each log line is a record with ``type`` ``user``, ``assistant``, ``summary`` or a bookkeeping
type, and the API message in ``message``. The conversion keeps every message the model saw:

- ``tool_use`` blocks become the assistant message's ``tool_calls`` (``input`` as JSON text);
- ``tool_result`` blocks inside a user line become ``role: tool`` messages, placed before any
  other blocks of that line so that they directly follow their call;
- Claude Code writes one API response as several lines sharing ``message.id``; those lines are
  merged back into one assistant message (tool results logged between them stay after it);
- ``thinking`` text is not content a provider accepts back as text, so it is kept in the
  internal ``_reasoning`` key (dropped on output);
- ``summary`` lines, bookkeeping lines (``system``, including the ``compact_boundary``
  marker, ``file-history-snapshot``, ...) and sidechain lines (a sub-agent's own
  conversation, whose answer already appears as the tool result of the main conversation)
  are not messages of this conversation and are skipped; a line of a type not listed here is
  skipped too and counted in the load's notes.

Records that are in the user role but are not the person's ask keep their text and say what
they are for the reading: ``isMeta`` lines (host-written context such as the local-command
caveat or an expanded skill) carry the internal key ``_noise``, the compaction summary
(``isCompactSummary``) carries ``_summary_source``. Command wrappers (``<command-name>``,
``<local-command-stdout>``) and interrupt notices are recognised by the reading from their
text (:mod:`.reading_noise`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .content import Message
from .formats_common import (
    ConversionError,
    Notes,
    Record,
    collapse_parts,
    normalize_part,
    text_part,
    to_json_text,
    tool_result_content,
    type_of,
)
from .formats_parse import Document
from .formats_spec import FULL, NONE, Fit, Reader, first_failure, partial, records_of
from .reading_types import NOISE_KEY, SUMMARY_SOURCE_KEY

MESSAGE_TYPES = frozenset({"user", "assistant"})
BOOKKEEPING_TYPES = frozenset(
    {"summary", "system", "file-history-snapshot", "queue-operation", "progress"}
)
"""Record types that are not messages and are skipped without a note."""


def looks_like_claude_code(value: Any) -> bool:
    """True for one Claude Code log record (a line of the JSONL file)."""
    if not isinstance(value, Mapping):
        return False
    kind = type_of(value)
    if kind in MESSAGE_TYPES and isinstance(value.get("message"), Mapping):
        return True
    return kind == "summary" and "leafUuid" in value


def _has_type(value: Any) -> bool:
    return isinstance(value, Mapping) and isinstance(value.get("type"), str)


def check_claude_code(doc: Document) -> Fit:
    """Every record an object with a ``type``, at least one a user/assistant message line."""
    records = records_of(doc, "loglines")
    if records is None or not any(looks_like_claude_code(r.value) for r in records):
        return NONE
    problem = first_failure(records, _has_type, "a Claude Code log record has a 'type'")
    return partial(problem) if problem else FULL


def convert_claude_code(records: list[Record], notes: Notes | None = None) -> list[Message]:
    """Messages of a Claude Code session, in log order; unknown record types go to ``notes``."""
    out: list[Message] = []
    # message.id and position of the last assistant message while only tool results follow it.
    open_id: str | None = None
    open_at = -1
    for record in records:
        line = record.value
        if not isinstance(line, Mapping):
            raise ConversionError(f"{record.where}: expected a JSON object, got {_kind(line)}")
        kind = type_of(line)
        if kind not in MESSAGE_TYPES:
            if notes is not None and kind not in BOOKKEEPING_TYPES:
                notes.skip(str(kind))
            continue
        if line.get("isSidechain") is True:
            continue
        message = line.get("message")
        if not isinstance(message, Mapping):
            raise ConversionError(f"{record.where}: {kind} record has no 'message' object")
        if kind == "assistant":
            msg_id = message.get("id")
            blocks = _assistant_message(record.where, message.get("content"))
            if isinstance(msg_id, str) and msg_id and msg_id == open_id:
                _merge_assistant(out[open_at], blocks)
            else:
                out.append(blocks)
                open_at = len(out) - 1
            open_id = msg_id if isinstance(msg_id, str) else None
        else:
            converted = _user_messages(record.where, message.get("content"))
            _mark_host_records(line, converted)
            out.extend(converted)
            if any(m["role"] != "tool" for m in converted):
                open_id = None
    return out


def _kind(value: Any) -> str:
    return type(value).__name__


def _mark_host_records(line: Mapping[str, Any], converted: list[Message]) -> None:
    """Say what a user line is when Claude Code marks it as not typed by the person."""
    for message in converted:
        if message["role"] != "user":
            continue
        if line.get("isCompactSummary") is True:
            message[SUMMARY_SOURCE_KEY] = "claude-code"
        elif line.get("isMeta") is True:
            message[NOISE_KEY] = "claude-code meta"


def _convert(doc: Document, notes: Notes) -> list[Message]:
    return convert_claude_code(records_of(doc, "loglines") or [], notes)


CLAUDE_CODE = Reader(
    "claude-code",
    "a Claude Code session log",
    "JSONL (or {\"loglines\": [...]}) of records with a 'type', user/assistant ones with a "
    "'message' object",
    check_claude_code,
    _convert,
)


def _assistant_message(where: str, content: Any) -> Message:
    message: Message = {"role": "assistant", "content": None}
    if isinstance(content, str):
        message["content"] = content
        return message
    if not isinstance(content, list):
        raise ConversionError(f"{where}: assistant 'content' must be a string or a list")
    parts: list[Any] = []
    calls: list[dict[str, Any]] = []
    reasoning: list[str] = []
    for block in content:
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind == "tool_use":
            calls.append(_tool_call(where, block))
        elif kind == "thinking":
            thinking = block.get("thinking")
            if isinstance(thinking, str) and thinking:
                reasoning.append(thinking)
        elif kind == "redacted_thinking":
            continue  # encrypted reasoning: no text to keep
        else:
            parts.append(_block_part(block))
    if parts:
        message["content"] = collapse_parts(parts)
    if calls:
        message["tool_calls"] = calls
    if reasoning:
        message["_reasoning"] = "\n\n".join(reasoning)
    if message["content"] is None and not calls:
        message["content"] = ""  # a reply that was all thinking: still an (empty) reply
    return message


def _merge_assistant(target: Message, extra: Message) -> None:
    """Fold a continuation line of the same API message into the message already emitted."""
    parts = _as_parts(target.get("content")) + _as_parts(extra.get("content"))
    target["content"] = collapse_parts(parts) if parts else None
    calls = [*target.get("tool_calls", []), *extra.get("tool_calls", [])]
    if calls:
        target["tool_calls"] = calls
    reasoning = [r for r in (target.get("_reasoning"), extra.get("_reasoning")) if r]
    if reasoning:
        target["_reasoning"] = "\n\n".join(reasoning)
    if target["content"] is None and not calls:
        target["content"] = ""


def _as_parts(content: Any) -> list[Any]:
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [text_part(content)]
    return list(content)


def _tool_call(where: str, block: Mapping[str, Any]) -> dict[str, Any]:
    call_id = block.get("id")
    name = block.get("name")
    if not isinstance(call_id, str) or not call_id:
        raise ConversionError(f"{where}: tool_use block has no 'id'")
    if not isinstance(name, str) or not name:
        raise ConversionError(f"{where}: tool_use block {call_id!r} has no 'name'")
    arguments = block.get("input", {})
    return {
        "id": call_id,
        "type": "function",
        "function": {
            "name": name,
            "arguments": arguments if isinstance(arguments, str) else to_json_text(arguments),
        },
    }


def _block_part(block: Any) -> Any:
    """A non-tool content block as a chat-completions part (images as data or http URLs)."""
    if isinstance(block, Mapping) and block.get("type") == "image":
        source = block.get("source")
        if isinstance(source, Mapping):
            if source.get("type") == "base64" and isinstance(source.get("data"), str):
                media = source.get("media_type") or "application/octet-stream"
                url = f"data:{media};base64,{source['data']}"
                return {"type": "image_url", "image_url": {"url": url}}
            if source.get("type") == "url" and isinstance(source.get("url"), str):
                return {"type": "image_url", "image_url": {"url": source["url"]}}
    return normalize_part(block)


def _user_messages(where: str, content: Any) -> list[Message]:
    """A user line as tool results (first, in order) followed by a user message if any."""
    if isinstance(content, str):
        return [{"role": "user", "content": content}]
    if not isinstance(content, list):
        raise ConversionError(f"{where}: user 'content' must be a string or a list")
    results: list[Message] = []
    parts: list[Any] = []
    for block in content:
        if isinstance(block, Mapping) and block.get("type") == "tool_result":
            results.append(_tool_result(where, block))
        else:
            parts.append(_block_part(block))
    if parts or not results:
        results.append({"role": "user", "content": collapse_parts(parts)})
    return results


def _tool_result(where: str, block: Mapping[str, Any]) -> Message:
    call_id = block.get("tool_use_id")
    if not isinstance(call_id, str) or not call_id:
        raise ConversionError(f"{where}: tool_result block has no 'tool_use_id'")
    content = block.get("content")
    if isinstance(content, list):
        content = collapse_parts([_block_part(b) for b in content])
    message: Message = {
        "role": "tool",
        "tool_call_id": call_id,
        "content": "" if content is None else tool_result_content(content),
    }
    if block.get("is_error") is True:
        message["_is_error"] = True
    return message
