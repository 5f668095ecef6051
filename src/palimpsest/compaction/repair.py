"""Any list in, a provider-valid list out: the checks and repairs at the door of ``compress``.

Hosts hand the compressor whatever their loop accumulated. Three layers deal with it:

- :func:`check_messages` refuses what is not a transcript at all, with a
  :class:`~palimpsest.errors.TranscriptError` naming the index: a non-list, an element that
  is not an object, a missing or non-string role, a role no provider knows, ``tool_calls``
  that is neither a list nor ``null``, a tool call that is not an object.
  A list the token counter cannot measure (an integer over 4,300 digits, nesting past the
  recursion limit) is refused the same way (:func:`unmeasurable`).
- :func:`normalize_messages` rewrites only what a provider would reject, and nothing else
  (``docs/transcripts.md`` lists it): non-string content becomes its JSON text, content
  parts become typed objects, a missing content becomes ``""``; ``tool_calls`` on a
  non-assistant message and empty ``tool_calls`` lists are removed; a call without an id
  gets a deterministic one (``call_<message>_<position>``), a repeated id in one message
  gets a suffix (and the matching repeated result follows it), a numeric id becomes a
  string; ``arguments`` become a JSON string (objects serialized, non-JSON text wrapped as
  ``{"raw_arguments": ...}``, nothing as ``{}``); a call without a name is named
  ``unknown``; legacy ``function_call`` + ``role: function`` pairs become a tool call and
  its ``tool`` result. ``tool_calls: null`` is left as it is: providers accept it.
  Tool pairing itself (orphans, stubs) stays with ``assemble.sanitize_tool_pairs``.
- :func:`~palimpsest.compaction.repair_lean.lean_repair` is the fallback when those repairs would make the result *larger*
  than the input by the exact counter: it repairs by removal only (calls it cannot keep,
  unanswered calls, orphan results, legacy function messages, parts without a type), so it
  can never add a token.

Nothing here modifies its input; unchanged messages are passed through as the same objects.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import TranscriptError
from ..messages.content import role_of
from ..messages.validate import VALID_ROLES, is_json_text

__all__ = [
    "LEGACY_FUNCTION_ROLE",
    "RepairReport",
    "RepairWalk",
    "check_messages",
    "normalize_messages",
    "unmeasurable",
]

LEGACY_FUNCTION_ROLE = "function"
"""The pre-tools OpenAI result role; read, then converted to ``tool`` (or removed)."""

_ACCEPTED_ROLES = frozenset((*VALID_ROLES, LEGACY_FUNCTION_ROLE))
_NEEDS_CONTENT = frozenset({"system", "developer", "user", "tool", LEGACY_FUNCTION_ROLE})
_SCALARS = (str, int, float, bool, type(None), list, tuple)

Mode = Literal["faithful", "lean"]


@dataclass
class RepairReport:
    """What :func:`normalize_messages` changed; ``changed`` is the number of messages."""

    changed: int = 0
    ids_added: int = 0
    calls_dropped: int = 0
    messages_dropped: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (self.changed or self.messages_dropped)


def check_messages(messages: Any) -> None:
    """Raise :class:`TranscriptError` (with the index) when ``messages`` is not a transcript."""
    if not isinstance(messages, list | tuple):
        kind = type(messages).__name__
        raise TranscriptError(f"a transcript must be a list of messages, got {kind}")
    for index, message in enumerate(messages):
        problem = _structural_problem(message)
        if problem:
            raise TranscriptError(problem, index=index)


def _structural_problem(message: Any) -> str:
    if not isinstance(message, Mapping):
        return f"a message must be a JSON object (dict), got {type(message).__name__}"
    role = message.get("role")
    if role is None:
        return "message has no 'role'"
    if not isinstance(role, str):
        return f"'role' must be a string, got {type(role).__name__}"
    if role not in _ACCEPTED_ROLES:
        allowed = ", ".join(sorted(_ACCEPTED_ROLES))
        return f"unknown role {role!r} (allowed: {allowed})"
    calls = message.get("tool_calls")
    if calls is None:
        return ""
    if not isinstance(calls, list | tuple):
        return f"'tool_calls' must be a list or null, got {type(calls).__name__}"
    for i, call in enumerate(calls):
        if isinstance(call, _SCALARS):
            return f"tool call {i} must be an object, got {type(call).__name__}"
    return ""


def unmeasurable(
    messages: Sequence[Mapping[str, Any]],
    count: Callable[[Sequence[Mapping[str, Any]]], int],
    error: Exception,
) -> TranscriptError:
    """The error for a list the token counter cannot measure, naming the first bad message.

    Two things stop a serializer: an integer over Python's 4,300-digit conversion limit and
    nesting deeper than the recursion limit. Neither is a transcript.
    """
    for index, message in enumerate(messages):
        try:
            count([message])
        except (ValueError, RecursionError):
            kind = "nested too deeply" if isinstance(error, RecursionError) else str(error)
            return TranscriptError(f"a value cannot be measured ({kind})", index=index)
    return TranscriptError(f"the transcript cannot be measured: {error}")


# -- content ---------------------------------------------------------------------------


def _json_text(value: Any) -> str:
    # The same serialization ExactCounter uses for non-string content, so the repair
    # never changes a count.
    return json.dumps(value, ensure_ascii=False, default=str)


def _part(part: Any, mode: Mode) -> Any:
    """A content part as a typed object, or ``None`` to drop it (lean mode)."""
    if isinstance(part, str):
        return {"type": "text", "text": part}
    if isinstance(part, Mapping):
        kind = part.get("type")
        if isinstance(kind, str) and kind:
            return part
        if isinstance(part.get("text"), str):
            return {**part, "type": "text"}
    return None if mode == "lean" else {"type": "text", "text": _json_text(part)}


def _content(content: Any, role: str, has_calls: bool, mode: Mode) -> Any:
    if isinstance(content, str):
        return content
    if content is None:
        return content if role == "assistant" and has_calls else ""
    if isinstance(content, list | tuple):
        parts = [p for p in (_part(p, mode) for p in content) if p is not None]
        if parts:
            return parts
        return None if role == "assistant" and has_calls else ""
    return _json_text(content)


# -- tool calls ------------------------------------------------------------------------


def _arguments(value: Any, mode: Mode) -> str | None:
    """``arguments`` as a JSON string; ``None`` when lean mode must drop the call."""
    if isinstance(value, str):
        if not value.strip():
            return None if mode == "lean" else "{}"
        if not is_json_text(value):
            return None if mode == "lean" else _json_text({"raw_arguments": value})
        return value
    if value is None:
        return None if mode == "lean" else "{}"
    return _json_text(value)


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, Mapping) else getattr(obj, key, None)


class _Ids:
    """Call ids of one assistant message, made present and unique."""

    def __init__(self, message_index: int) -> None:
        self.prefix = f"call_{message_index}_"
        self.used: set[str] = set()
        self.by_original: dict[str, list[str]] = {}

    def assign(self, original: Any, position: int, mode: Mode) -> str | None:
        if isinstance(original, int | float) and not isinstance(original, bool):
            original = str(original)
        if not isinstance(original, str) or not original:
            if mode == "lean":
                return None
            new = self._fresh(f"{self.prefix}{position}")
            return new
        if original in self.used:
            if mode == "lean":
                return None
            new = self._fresh(f"{original}_{len(self.by_original[original]) + 1}")
            self.by_original[original].append(new)
            return new
        self.used.add(original)
        self.by_original[original] = [original]
        return original

    def _fresh(self, base: str) -> str:
        new, n = base, 1
        while new in self.used:
            n += 1
            new = f"{base}_{n}"
        self.used.add(new)
        return new


def _call(call: Any, cid: str, mode: Mode) -> Any:
    """One call with a string id, a name and JSON arguments; ``None`` to drop it (lean)."""
    function = _get(call, "function")
    name = _get(function, "name") if function is not None else _get(call, "name")
    raw_args = _get(function, "arguments") if function is not None else _get(call, "arguments")
    args = _arguments(raw_args, mode)
    has_name = isinstance(name, str) and bool(name)
    if mode == "lean" and (args is None or not has_name):
        return None
    if (
        isinstance(call, Mapping)
        and call.get("id") == cid
        and call.get("call_id") in (None, cid)
        and isinstance(function, Mapping)
        and has_name
        and raw_args == args
    ):
        return call  # already valid: the same object goes through
    if not isinstance(call, Mapping):
        dump = getattr(call, "model_dump", None)
        call = dump(exclude_none=True) if callable(dump) else {"type": "function"}
    fn = dict(function) if isinstance(function, Mapping) else {}
    fn["name"] = name if has_name else "unknown"
    fn["arguments"] = args if args is not None else "{}"
    out = {k: v for k, v in call.items() if k not in ("call_id", "name", "arguments")}
    return {**out, "id": cid, "function": fn}


def _valid_calls(message: Mapping[str, Any]) -> bool:
    """True when the message's content and calls need no repair (checked without copies)."""
    calls = message.get("tool_calls")
    content = message.get("content")
    if type(calls) is not list or not calls:
        return False
    if content is not None and not isinstance(content, str):
        return False
    seen: set[str] = set()
    for call in calls:
        if type(call) is not dict:
            return False
        cid = call.get("id")
        fn = call.get("function")
        if type(cid) is not str or not cid or cid in seen or call.get("call_id") not in (None, cid):
            return False
        seen.add(cid)
        if type(fn) is not dict:
            return False
        name, args = fn.get("name"), fn.get("arguments")
        if type(name) is not str or not name or type(args) is not str or not is_json_text(args):
            return False
    return True


# -- the walk --------------------------------------------------------------------------


class RepairWalk:
    """One pass over the list, tracking the open tool group as providers pair results."""

    def __init__(self, mode: Mode) -> None:
        self.mode = mode
        self.out: list[Any] = []
        self.report = RepairReport()
        self.group_ids: _Ids | None = None
        self.answered: dict[str, int] = {}
        self.legacy: list[str] = []  # ids given to legacy function_call entries, unanswered

    def emit(self, original: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        if new is not original:
            self.report.changed += 1
        self.out.append(new)

    def drop(self, note: str) -> None:
        self.report.messages_dropped += 1
        self.report.notes.append(note)

    def message(self, index: int, message: Mapping[str, Any]) -> None:
        role = role_of(message)
        if role in ("tool", LEGACY_FUNCTION_ROLE):
            self.result(index, message, role)
            return
        self.group_ids, self.answered, self.legacy = None, {}, []
        if (
            isinstance(message.get("content"), str)
            and message.get("tool_calls") is None
            and "function_call" not in message
        ):
            self.out.append(message)  # the common case, checked without a copy
            return
        if role == "assistant" and "function_call" not in message and _valid_calls(message):
            self.out.append(message)  # unique ids: results need no renaming
            return
        new = dict(message)
        calls = message.get("tool_calls")
        if role == "assistant":
            self.assistant_calls(index, message, new)
        else:
            new.pop("function_call", None)
            if calls is not None:
                del new["tool_calls"]  # only assistant messages may call tools
                self.report.calls_dropped += len(calls)
        has_calls = bool(new.get("tool_calls"))
        new["content"] = _content(message.get("content"), role, has_calls, self.mode)
        if "content" not in message and new["content"] is None:
            del new["content"]
        self.emit(message, message if new == message else new)

    def assistant_calls(self, index: int, message: Mapping[str, Any], new: dict[str, Any]) -> None:
        calls = list(message.get("tool_calls") or [])
        legacy = message.get("function_call")
        if legacy is not None:
            del new["function_call"]
            if self.mode == "faithful" and isinstance(legacy, Mapping):
                calls.append({"type": "function", "function": legacy, "_legacy": True})
        if not calls:
            if message.get("tool_calls") is not None and isinstance(message["tool_calls"], list):
                del new["tool_calls"]  # an empty list is rejected; absent is not
            return
        ids = _Ids(index)
        fixed: list[Any] = []
        for position, call in enumerate(calls):
            cid = ids.assign(_get(call, "id") or _get(call, "call_id"), position, self.mode)
            if cid is None:
                self.report.calls_dropped += 1
                continue
            if isinstance(call, Mapping) and call.get("_legacy"):
                call = {k: v for k, v in call.items() if k != "_legacy"}
                self.legacy.append(cid)
            done = _call(call, cid, self.mode)
            if done is None:
                self.report.calls_dropped += 1
                continue
            if done is not call or cid != _get(call, "id"):
                self.report.ids_added += cid != _get(call, "id")
            fixed.append(done)
        if fixed:
            new["tool_calls"] = fixed
        else:
            new.pop("tool_calls", None)
        self.group_ids = ids

    def result(self, index: int, message: Mapping[str, Any], role: str) -> None:
        ids = self.group_ids
        cid = message.get("tool_call_id")
        if (
            role == "tool"
            and isinstance(message.get("content"), str)
            and isinstance(cid, str)
            and (ids is None or len(ids.by_original.get(cid, ())) < 2)
            and message.get("tool_calls") is None
            and "function_call" not in message
        ):
            self.out.append(message)  # the common case, checked without a copy
            return
        if role == LEGACY_FUNCTION_ROLE:
            if self.mode == "lean" or not self.legacy:
                self.drop(f"message {index}: a legacy function result with no call was removed")
                return
            legacy_id = self.legacy.pop(0)
            new = {k: v for k, v in message.items() if k not in ("role", "name")}
            new = {"role": "tool", "tool_call_id": legacy_id, **new}
        else:
            new = dict(message)
            original = message.get("tool_call_id")
            if isinstance(original, int | float) and not isinstance(original, bool):
                if self.mode == "lean":
                    self.drop(f"message {index}: a result with a numeric call id was removed")
                    return
                new["tool_call_id"] = str(original)
            rid = new.get("tool_call_id")
            if ids is not None and isinstance(rid, str) and rid in ids.by_original:
                # The k-th result carrying a repeated id answers the k-th call that had it.
                k = self.answered.get(rid, 0)
                self.answered[rid] = k + 1
                renamed = ids.by_original[rid]
                if 0 < k < len(renamed):
                    new["tool_call_id"] = renamed[k]
        if new.get("tool_calls") is not None:
            del new["tool_calls"]  # only assistant messages may call tools
        new.pop("function_call", None)
        new["content"] = _content(message.get("content"), "tool", False, self.mode)
        self.emit(message, message if new == message else new)


def normalize_messages(
    messages: Sequence[Mapping[str, Any]],
) -> tuple[list[dict[str, Any]], RepairReport]:
    """The faithful repairs of the module docstring; call :func:`check_messages` first."""
    walk = RepairWalk("faithful")
    for index, message in enumerate(messages):
        walk.message(index, message)
    return walk.out, walk.report
