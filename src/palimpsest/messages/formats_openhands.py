"""OpenHands event histories to chat-completions messages.

OpenHands (``openhands/events/serialization/event.py``) writes every step as an event dict:
``id``, ``source`` (``user``/``agent``/``environment``), and either ``action`` with ``args``
or ``observation`` with ``content`` and ``extras``; a step the model chose through native
function calling carries ``tool_call_metadata`` (``function_name``, ``tool_call_id``,
``model_response``: the LiteLLM response, ``total_calls_in_response``). Two files hold them:

- an evaluation record (a line of ``output.jsonl``): ``instance_id``, ``instruction``,
  ``metadata``, ``test_result`` and ``history``, the list of events (older versions wrote
  ``[action, observation]`` pairs);
- a saved trajectory / event stream: a plain JSON list of events.

Events map to messages the way OpenHands itself builds its prompts
(``openhands/memory/conversation_memory.py``):

- ``system`` actions become system messages; ``message`` actions user or assistant messages
  by ``source``;
- an action with ``tool_call_metadata`` becomes a tool call (id from the metadata, arguments
  from the model response's call with that id, else from ``args``); actions of one model
  response join one assistant message whose text is the response's own text (or the
  action's ``thought``);
- an action without it (CodeAct runs before native function calling) becomes assistant text
  with the call in OpenHands' text form (``<function=execute_bash><parameter=command>…``);
- an observation that answers a call (its metadata, or its ``cause`` naming the action)
  becomes a ``tool`` message; one that answers a text action, or a call the history does
  not hold, a user message ``EXECUTION RESULT of [tool]:``; a command's exit code (``extras.metadata.exit_code``) is
  appended as ``[The command completed with exit code N.]``, and an ``error`` observation is
  marked ``_is_error``;
- ``finish`` (and ``reject``) is the final assistant message: its ``final_thought`` /
  ``thought`` and the response's text, no call;
- ``condensation`` actions and ``condense`` observations are kept as a user message marked as
  a summary (``_summary_source: "openhands"``);
- state changes, ``null`` events, ``condensation_request``, ``recall`` and the
  environment's own actions are not conversation and are dropped; an event of a type not
  listed here is dropped and counted in the load's notes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .content import Message
from .formats_common import Notes, Record, to_json_text
from .formats_parse import Document
from .formats_spec import FULL, NONE, Fit, Reader, first_failure, partial
from .reading_types import SUMMARY_SOURCE_KEY

__all__ = ["OPENHANDS", "check_openhands", "convert_openhands", "is_event"]

_DROPPED_ACTIONS = frozenset(
    {"change_agent_state", "null", "pause", "resume", "stop", "recall", "start",
     "condensation_request", "push", "send_pr"}
)  # fmt: skip
_DROPPED_OBSERVATIONS = frozenset({"agent_state_changed", "null", "recall", "success"})
_TOOL_ACTIONS = frozenset(
    {"run", "run_ipython", "read", "write", "edit", "browse", "browse_interactive",
     "delegate", "think", "mcp", "task_tracking"}
)  # fmt: skip
_OBSERVATIONS = frozenset(
    {"run", "run_ipython", "read", "write", "edit", "browse", "delegate", "think", "error",
     "user_rejected", "mcp", "download", "task_tracking", "chat", "message", "loop_recovery"}
)  # fmt: skip
_FINISH_ACTIONS = frozenset({"finish", "reject"})
_ARG_NOISE = frozenset({"thought", "security_risk", "confirmation_state", "is_confirmed",
                        "hidden", "blocking", "is_input", "impl_source", "include_extra"})  # fmt: skip


def is_event(value: Any) -> bool:
    """True for one serialized OpenHands event: an object with a string action or observation."""
    return isinstance(value, Mapping) and (
        isinstance(value.get("action"), str) or isinstance(value.get("observation"), str)
    )


def _is_pair(value: Any) -> bool:
    return (
        isinstance(value, list) and len(value) == 2 and all(isinstance(v, Mapping) for v in value)
    )


def _is_history_item(value: Any) -> bool:
    return is_event(value) or (_is_pair(value) and any(is_event(v) for v in value))


def _v1_kind(value: Any) -> str | None:
    """The ``kind`` of an OpenHands V1 (software-agent-sdk) event, which this reader does not read."""
    kind = value.get("kind") if isinstance(value, Mapping) else None
    return kind if isinstance(kind, str) and kind.endswith("Event") else None


def _history_fit(items: list[Any], where: str) -> Fit:
    if not items:
        return NONE
    if not any(_is_history_item(v) for v in items):
        kind = _v1_kind(items[0])
        if kind is not None:
            return partial(
                f"{where}[0] is an OpenHands V1 (software-agent-sdk) event ('kind': "
                f"{kind!r}); this reader reads the V0 events of openhands/events "
                "('action' / 'observation')"
            )
        return NONE
    records = [Record(f"{where}[{i}]", v) for i, v in enumerate(items)]
    problem = first_failure(
        records,
        _is_history_item,
        "an OpenHands event is an object with an 'action' or an 'observation'",
    )
    return partial(problem) if problem else FULL


def _is_record(value: Any) -> bool:
    return isinstance(value, Mapping) and isinstance(value.get("history"), list)


def check_openhands(doc: Document) -> Fit:
    """An evaluation record with a ``history`` of events, or a list of events."""
    if doc.shape == "json":
        value = doc.value
        if isinstance(value, Mapping) and isinstance(value.get("history"), list):
            return _history_fit(value["history"], "history")
        if isinstance(value, list):
            return _history_fit(value, "item")
        return NONE
    if doc.shape != "jsonl":
        return NONE
    records = list(doc.records)
    if all(_is_record(r.value) for r in records):
        if not any(_history_fit(r.value["history"], "history").level != "none" for r in records):
            return NONE
        if len(records) > 1:
            ids = ", ".join(str(r.value.get("instance_id", "?")) for r in records[:3])
            more = ", ..." if len(records) > 3 else ""
            return partial(
                f"the file holds {len(records):,} evaluation records (instance_id {ids}{more}), "
                "and a transcript is one run: write each line to its own file"
            )
        return _history_fit(records[0].value["history"], "line 1: history")
    if not records or not is_event(records[0].value):
        return NONE  # JSONL of events starts with one (other JSONL logs are not scanned)
    return _history_fit([r.value for r in records], "line")


def _events(doc: Document) -> list[Mapping[str, Any]]:
    if doc.shape == "json":
        value = doc.value
        items = value["history"] if isinstance(value, Mapping) else value
    elif len(doc.records) == 1 and _is_record(doc.records[0].value):
        items = doc.records[0].value["history"]
    else:
        items = [r.value for r in doc.records]
    events: list[Mapping[str, Any]] = []
    for item in items:
        if _is_pair(item):
            events.extend(v for v in item if is_event(v))
        elif is_event(item):
            events.append(item)
    return events


# -- conversion ----------------------------------------------------------------------------


def _text_of(value: Any) -> str:
    """Text of an event field that OpenHands writes as a string or a ``{"text"}`` thought."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("text"), str):
        return str(value["text"])
    return ""


def _response_message(metadata: Mapping[str, Any]) -> Mapping[str, Any]:
    response = metadata.get("model_response")
    if not isinstance(response, Mapping):
        return {}
    choices = response.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        return {}
    message = choices[0].get("message")
    return message if isinstance(message, Mapping) else {}


def _response_id(metadata: Mapping[str, Any]) -> str | None:
    response = metadata.get("model_response")
    if isinstance(response, Mapping) and isinstance(response.get("id"), str):
        return str(response["id"])
    return None


def _response_text(metadata: Mapping[str, Any]) -> str:
    content = _response_message(metadata).get("content")
    if isinstance(content, list):
        return "\n".join(_text_of(p) for p in content if _text_of(p))
    return content if isinstance(content, str) else ""


def _clean_args(args: Any) -> dict[str, Any]:
    if not isinstance(args, Mapping):
        return {}
    return {k: v for k, v in args.items() if k not in _ARG_NOISE and v not in (None, "")}


def _arguments(metadata: Mapping[str, Any], call_id: str, args: Any) -> str:
    calls = _response_message(metadata).get("tool_calls")
    if isinstance(calls, list):
        for call in calls:
            if isinstance(call, Mapping) and call.get("id") == call_id:
                function = call.get("function")
                if isinstance(function, Mapping):
                    arguments = function.get("arguments")
                    if isinstance(arguments, str):
                        return arguments
                    if isinstance(arguments, Mapping):
                        return to_json_text(arguments)
    return to_json_text(_clean_args(args))


_TEXT_TOOLS = {
    "run": ("execute_bash", ("command",)),
    "run_ipython": ("execute_ipython_cell", ("code",)),
    "browse": ("web_read", ("url",)),
    "browse_interactive": ("browser", ("browser_actions",)),
    "think": ("think", ("thought",)),
}


def _text_call(action: str, args: Any) -> tuple[str, dict[str, Any]]:
    """The tool name and parameters OpenHands' text form shows for an action."""
    raw = args if isinstance(args, Mapping) else {}
    if action in _TEXT_TOOLS:
        name, keys = _TEXT_TOOLS[action]
        return name, {k: raw[k] for k in keys if raw.get(k) not in (None, "")}
    if action == "read":
        return "str_replace_editor", {"command": "view", "path": raw.get("path", "")}
    if action == "write":
        params = {"command": "create", "path": raw.get("path", ""), "file_text": raw.get("content")}
        return "str_replace_editor", {k: v for k, v in params.items() if v is not None}
    if action == "edit":
        params = _clean_args(raw)
        if "command" in params or "old_str" in params:  # the ACI editor
            params.setdefault("command", "str_replace")
            return "str_replace_editor", params
        return "edit_file", params  # the LLM-based editor: path, content, start, end
    return action, _clean_args(raw)


def _render_text_call(name: str, params: Mapping[str, Any]) -> str:
    lines = [f"<function={name}>"]
    for key, value in params.items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        lines.append(f"<parameter={key}>{shown}</parameter>")
    lines.append("</function>")
    return "\n".join(lines)


def _observation_text(event: Mapping[str, Any]) -> str:
    content = event.get("content")
    text = (
        content if isinstance(content, str) else ("" if content is None else to_json_text(content))
    )
    extras = event.get("extras")
    if event.get("observation") == "run" and isinstance(extras, Mapping):
        metadata = extras.get("metadata")
        code = metadata.get("exit_code") if isinstance(metadata, Mapping) else None
        if code is None:
            code = extras.get("exit_code")
        if isinstance(code, int) and not isinstance(code, bool) and "exit code" not in text[-200:]:
            text = f"{text.rstrip()}\n[The command completed with exit code {code}.]"
    return text


class _Builder:
    """The state of one pass over the events."""

    def __init__(self, notes: Notes) -> None:
        self.notes = notes
        self.out: list[Message] = []
        self.call_of_action: dict[Any, str] = {}
        self.call_ids: set[str] = set()
        self.text_tool_of_action: dict[Any, str] = {}
        # (response id, index of its assistant message) while only tool results follow it.
        self.open_response: tuple[str, int] | None = None

    def add(self, message: Message) -> None:
        self.out.append(message)
        if message["role"] != "tool":
            self.open_response = None

    def action(self, event: Mapping[str, Any]) -> None:
        kind = str(event["action"])
        source = event.get("source")
        args = event.get("args")
        raw = args if isinstance(args, Mapping) else {}
        if kind in _DROPPED_ACTIONS or (source == "environment" and kind != "system"):
            return
        if kind == "system":
            self.add({"role": "system", "content": _text_of(raw.get("content"))})
        elif kind == "message":
            text = _text_of(raw.get("content")) or _text_of(event.get("message"))
            self.add({"role": "user" if source == "user" else "assistant", "content": text})
        elif kind == "condensation":
            self.add(self._condensation(raw))
        elif kind in _FINISH_ACTIONS:
            self._finish(event, raw)
        elif source == "user" and not isinstance(event.get("tool_call_metadata"), Mapping):
            command = raw.get("command") or raw.get("code") or raw.get("path") or kind
            self.add({"role": "user", "content": f"User executed the command:\n{command}"})
        elif kind in _TOOL_ACTIONS or isinstance(event.get("tool_call_metadata"), Mapping):
            self._tool_action(event, kind, raw)
        else:
            self.notes.skip(f"action {kind}")

    def _condensation(self, args: Mapping[str, Any]) -> Message:
        summary = _text_of(args.get("summary"))
        start, end = args.get("forgotten_events_start_id"), args.get("forgotten_events_end_id")
        ids = args.get("forgotten_event_ids")
        if start is not None and end is not None:
            what = f"events {start}-{end}"
        elif isinstance(ids, list):
            what = f"{len(ids)} events"
        else:
            what = "earlier events"
        text = f"[OpenHands condensed the history: {what} forgotten]"
        if summary:
            text = f"{text}\n{summary}"
        return {"role": "user", "content": text, SUMMARY_SOURCE_KEY: "openhands"}

    def _finish(self, event: Mapping[str, Any], args: Mapping[str, Any]) -> None:
        parts = [
            _text_of(args.get("final_thought")) or _text_of(args.get("thought")),
        ]
        metadata = event.get("tool_call_metadata")
        if isinstance(metadata, Mapping):
            parts.append(_response_text(metadata))
        outputs = args.get("outputs")
        if not any(parts) and isinstance(outputs, Mapping) and outputs:
            parts.append(to_json_text(outputs))
        text = "\n".join(dict.fromkeys(p for p in parts if p))
        self.add(
            {"role": "assistant" if event.get("source") != "user" else "user", "content": text}
        )

    def _tool_action(self, event: Mapping[str, Any], kind: str, args: Mapping[str, Any]) -> None:
        metadata = event.get("tool_call_metadata")
        thought = _text_of(args.get("thought"))
        if not isinstance(metadata, Mapping) or not isinstance(metadata.get("tool_call_id"), str):
            name, params = _text_call(kind, args)
            self.text_tool_of_action[_event_key(event.get("id"))] = name
            body = _render_text_call(name, params)
            self.add({"role": "assistant", "content": f"{thought}\n{body}" if thought else body})
            return
        call_id = str(metadata["tool_call_id"])
        function_name = metadata.get("function_name")
        call = {
            "id": call_id,
            "type": "function",
            "function": {
                "name": function_name if isinstance(function_name, str) and function_name else kind,
                "arguments": _arguments(metadata, call_id, args),
            },
        }
        self.call_of_action[_event_key(event.get("id"))] = call_id
        self.call_ids.add(call_id)
        response_id = _response_id(metadata)
        if response_id is not None and self.open_response and self.open_response[0] == response_id:
            self.out[self.open_response[1]]["tool_calls"].append(call)
            return
        text = _response_text(metadata) or thought
        self.add({"role": "assistant", "content": text or None, "tool_calls": [call]})
        if response_id is not None:
            self.open_response = (response_id, len(self.out) - 1)

    def observation(self, event: Mapping[str, Any]) -> None:
        kind = str(event["observation"])
        if kind in _DROPPED_OBSERVATIONS:
            return
        if kind == "condense":
            text = _text_of(event.get("content"))
            self.add({"role": "user", "content": text, SUMMARY_SOURCE_KEY: "openhands"})
            return
        if kind not in _OBSERVATIONS:
            self.notes.skip(f"observation {kind}")
            return
        text = _observation_text(event)
        metadata = event.get("tool_call_metadata")
        call_id = metadata.get("tool_call_id") if isinstance(metadata, Mapping) else None
        if not isinstance(call_id, str):
            call_id = self.call_of_action.get(_event_key(event.get("cause")))
        if isinstance(call_id, str) and call_id in self.call_ids:
            message: Message = {"role": "tool", "tool_call_id": call_id, "content": text}
        else:  # answers a text action, or a call this history does not hold
            tool = self.text_tool_of_action.get(_event_key(event.get("cause")), kind)
            message = {"role": "user", "content": f"EXECUTION RESULT of [{tool}]:\n{text}"}
        if kind == "error":
            message["_is_error"] = True
        self.add(message)


def convert_openhands(events: list[Mapping[str, Any]], notes: Notes | None = None) -> list[Message]:
    """Messages of an OpenHands run, in event order."""
    builder = _Builder(notes if notes is not None else Notes())
    for event in events:
        if isinstance(event.get("action"), str):
            builder.action(event)
        else:
            builder.observation(event)
    return builder.out


def _convert(doc: Document, notes: Notes) -> list[Message]:
    return convert_openhands(_events(doc), notes)


OPENHANDS = Reader(
    "openhands",
    "an OpenHands run",
    'an evaluation record ({"instance_id", "history": [events]}, one per file) or a JSON '
    "list of events, each an object with an 'action' or an 'observation'",
    check_openhands,
    _convert,
)


def _event_key(value: object) -> int | str | None:
    """An event's ``id`` or ``cause`` as a key: a number or a string; anything else (a list
    in a damaged file) links nothing, instead of failing the read with a TypeError."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    return value
