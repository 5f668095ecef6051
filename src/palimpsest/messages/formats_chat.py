"""The readers for message lists: OpenAI chat, SWE-agent ``.traj`` and mini-swe-agent.

All three files already hold chat-completions messages; the readers differ in where the list
sits (a list, ``messages``, ``history``), in what marks the file (mini-swe-agent's
``trajectory_format``), and in the framework keys that must be dropped. Each states its
requirement as a check: every record is an object with a ``role``. A SWE-agent-looking file
whose ``history`` items are not messages (OpenHands writes a ``history`` of events) is a
partial match, never read as roleless messages.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .content import Message
from .formats_common import ConversionError, Notes, Record, keep_schema_keys, tool_result_content
from .formats_parse import Document, json_kind
from .formats_spec import FULL, NONE, Fit, Reader, first_failure, partial, records_of
from .reading_types import IS_DEMO_KEY, MESSAGE_TYPE_KEY

__all__ = ["MINI_SWE_AGENT", "OPENAI", "SWE_AGENT"]

_ROLE_REQUIRED = "a message must be a JSON object with a string 'role'"


def _has_role(value: Any) -> bool:
    return isinstance(value, Mapping) and isinstance(value.get("role"), str)


def _names_a_role(value: Any) -> bool:
    return isinstance(value, Mapping) and "role" in value


def _messages_fit(records: list[Record] | None) -> Fit:
    if records is None:
        return NONE
    if not records:
        return FULL  # {"messages": []}: the loader says it holds no messages
    if not any(_names_a_role(r.value) for r in records):
        return NONE
    problem = first_failure(records, _has_role, _ROLE_REQUIRED)
    return partial(problem) if problem else FULL


def _message_record(record: Record) -> Mapping[str, Any]:
    if not isinstance(record.value, Mapping):
        raise ConversionError(f"{record.where}: a message must be a JSON object")
    return record.value


def _records(doc: Document, key: str | None) -> list[Record]:
    records = records_of(doc, key)
    if records is None:
        expected = f"a list, or an object with a {key!r} list" if key else "a list"
        raise ConversionError(f"expected {expected}, got a JSON {json_kind(doc.value)}")
    return records


# -- openai --------------------------------------------------------------------------------


def _check_openai(doc: Document) -> Fit:
    if doc.shape == "json" and isinstance(doc.value, Mapping) and "history" in doc.value:
        return NONE  # a trajectory, not a chat list
    return _messages_fit(records_of(doc, "messages"))


def _convert_openai(doc: Document, notes: Notes) -> list[Message]:
    out: list[Message] = []
    for record in _records(doc, "messages"):
        message = dict(_message_record(record))
        if message.get("role") == "tool" and isinstance(message.get("content"), Mapping):
            message["content"] = tool_result_content(message["content"])
        out.append(message)
    return out


OPENAI = Reader(
    "openai",
    "an OpenAI chat transcript",
    'a JSON list of messages, {"messages": [...]}, or JSONL with one message per line, '
    "each an object with a 'role'",
    _check_openai,
    _convert_openai,
)

# -- mini-swe-agent ------------------------------------------------------------------------


def _is_mini_marked(doc: Document) -> bool:
    value = doc.value
    if isinstance(value, Mapping):
        fmt = value.get("trajectory_format")
        info = value.get("info")
        if (isinstance(fmt, str) and fmt.startswith("mini-swe-agent")) or (
            isinstance(info, Mapping) and "mini_version" in info
        ):
            return True
    return doc.name.endswith(".traj.json")


def _check_mini(doc: Document) -> Fit:
    if doc.shape != "json" or not _is_mini_marked(doc):
        return NONE
    records = records_of(doc, "messages")
    if records is None:
        return partial(f"no 'messages' list (found {json_kind(doc.value)})")
    problem = first_failure(records, _has_role, _ROLE_REQUIRED)
    return partial(problem) if problem else FULL


def _convert_agent_messages(doc: Document, key: str) -> list[Message]:
    out: list[Message] = []
    for record in _records(doc, key):
        try:
            out.append(keep_schema_keys(_message_record(record)))
        except ConversionError as err:
            raise ConversionError(f"{record.where}: {err.problem}") from None
    return out


def _convert_mini(doc: Document, notes: Notes) -> list[Message]:
    return _convert_agent_messages(doc, "messages")


MINI_SWE_AGENT = Reader(
    "mini-swe-agent",
    "a mini-swe-agent trajectory",
    "a .traj.json list of messages, or an object with 'messages' and mini-swe-agent's "
    "'trajectory_format' or 'info.mini_version'",
    _check_mini,
    _convert_mini,
)

# -- swe-agent -----------------------------------------------------------------------------


def _check_swe_agent(doc: Document) -> Fit:
    value = doc.value
    if doc.shape != "json" or not isinstance(value, Mapping):
        return NONE
    history = value.get("history")
    if not isinstance(history, list):
        return NONE
    if not history:
        return FULL  # an empty history: the loader says it holds no messages
    problem = first_failure(
        [Record(f"history[{i}]", v) for i, v in enumerate(history)],
        _has_role,
        "a SWE-agent history item is a message with a 'role'",
    )
    return partial(problem) if problem else FULL


def _convert_swe_agent(doc: Document, notes: Notes) -> list[Message]:
    history = doc.value["history"]
    messages = _convert_agent_messages(doc, "history")
    # SWE-agent says what each history item is (``message_type``: system_prompt,
    # demonstration, observation, action) and marks demonstrations ``is_demo``. Providers
    # reject those keys, but the reading needs them (the task and every observation are
    # user messages of type "observation"), so they travel as internal ``_`` keys, which
    # for_provider/dump_transcript strip.
    for item, message in zip(history, messages, strict=True):
        message_type = item.get("message_type")
        if isinstance(message_type, str) and message_type:
            message[MESSAGE_TYPE_KEY] = message_type
        if item.get("is_demo") is True:
            message[IS_DEMO_KEY] = True
    return messages


SWE_AGENT = Reader(
    "swe-agent",
    "a SWE-agent trajectory",
    "a JSON object whose 'history' is a list of messages (objects with a 'role')",
    _check_swe_agent,
    _convert_swe_agent,
)
