"""A recorded transcript cut into runs of the agent, and tools that replay its results.

:func:`build_script` reads a transcript (OpenAI shape, as :func:`palimpsest.load_transcript`
returns it) once with :func:`palimpsest.messages.reading.read_transcript` and cuts it into
:class:`ReplayTurn` s: the user message that starts an ``Agent.run`` (a person's request, or
a text action's observation sent back as the next user message, as SWE-agent and
mini-swe-agent did) and the assistant replies that answered it. :func:`replay_tools` gives
the agent one tool per recorded tool name, so native tool calls (OpenAI ``tool_calls``,
Claude Code, Codex, SWE-agent function calling) get their recorded results back through
the loop's ordinary tool round. :mod:`.replay_model` serves the replies.

Nothing is invented: every user text and reply is the recorded one; what cannot be placed
is counted in :attr:`ReplayScript.skipped`.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..messages.content import (
    arguments_object,
    call_arguments,
    call_id,
    call_name,
    content_text,
    role_of,
    tool_calls_of,
)
from ..messages.reading import read_transcript
from .registry import ToolRegistry
from .tools import Tool, ToolContext

__all__ = [
    "NO_RECORDED_RESULT",
    "ReplayScript",
    "ReplayTurn",
    "TurnKind",
    "build_script",
    "replay_tools",
]

NO_RECORDED_RESULT = "(the transcript recorded no result for this call)"
"""What a replay tool returns for a call whose result is missing from the transcript."""

TurnKind = Literal["request", "observation", "noise", "summary"]


@dataclass(frozen=True)
class ReplayTurn:
    """One ``Agent.run``: the user message that starts it and the replies that answer it.

    ``kind`` is how the reading classes the user message (a person's ``request``, a text
    action's ``observation``, host ``noise``, an earlier ``summary``). ``index`` is the
    transcript index of that user message. ``replies`` are assistant messages in OpenAI
    shape; a native turn has several (one per tool round), a text-action turn usually one.
    """

    user: str
    kind: TurnKind
    index: int
    replies: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class ReplayScript:
    """A transcript cut into turns, with the recorded tool results keyed by call id."""

    system: str | None
    turns: tuple[ReplayTurn, ...]
    tool_results: Mapping[str, tuple[str, ...]]
    """Recorded results by call id, in order: some agents reuse an id for several calls."""
    skipped: int = 0
    """Messages that could not be placed: assistant text before any user message, system
    messages after the first, tool results whose call was never made."""

    @property
    def replies(self) -> list[dict[str, Any]]:
        """Every reply of every turn, in order (what ``chat --model replay:`` plays)."""
        return [reply for turn in self.turns for reply in turn.replies]

    @property
    def tool_names(self) -> list[str]:
        """Names of the tools the recorded assistant called, first use first."""
        seen: dict[str, None] = {}
        for reply in self.replies:
            for call in tool_calls_of(reply):
                seen.setdefault(call_name(call), None)
        return list(seen)

    @property
    def native(self) -> bool:
        """True when the transcript acts through native tool calls."""
        return bool(self.tool_names)


def _normal_call(call: Any, position: int) -> dict[str, Any]:
    ident = call_id(call) or f"replay_call_{position}"
    return {
        "id": ident,
        "type": "function",
        "function": {"name": call_name(call), "arguments": call_arguments(call) or "{}"},
    }


def _reply(message: Mapping[str, Any], position: int) -> dict[str, Any]:
    """A recorded assistant message reduced to what a provider would answer."""
    text = content_text(message.get("content"))
    reply: dict[str, Any] = {"role": "assistant", "content": text or None}
    calls = [_normal_call(c, position * 100 + i) for i, c in enumerate(tool_calls_of(message))]
    if calls:
        reply["tool_calls"] = calls
    return reply


def _merge(earlier: dict[str, Any], later: dict[str, Any]) -> dict[str, Any]:
    """Two assistant messages in a row, the first without calls, as one reply (the agent
    ends its turn on a reply without calls, so it could never send the second)."""
    texts = [t for t in (earlier.get("content"), later.get("content")) if t]
    merged: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(texts) or None}
    if later.get("tool_calls"):
        merged["tool_calls"] = later["tool_calls"]
    return merged


def _turn_kind(kind: str) -> TurnKind:
    if kind == "observation":
        return "observation"
    if kind == "noise":
        return "noise"
    if kind == "summary":
        return "summary"
    return "request"


class _ScriptBuilder:
    def __init__(self) -> None:
        self.system: str | None = None
        self.turns: list[ReplayTurn] = []
        self.results: dict[str, list[str]] = {}
        self.called: set[str] = set()
        self.skipped = 0
        self._user: list[str] = []
        self._kind: TurnKind = "request"
        self._index = 0
        self._replies: list[dict[str, Any]] = []

    def _close(self) -> None:
        if self._user:
            text = "\n\n".join(self._user)
            self.turns.append(ReplayTurn(text, self._kind, self._index, tuple(self._replies)))
        self._user, self._replies = [], []

    def user(self, index: int, text: str, kind: str) -> None:
        if self._replies or not self._user:
            self._close()
            self._index = index
            self._kind = _turn_kind(kind)
        self._user.append(text)

    def assistant(self, message: Mapping[str, Any], index: int) -> None:
        if not self._user:
            self.skipped += 1
            return
        reply = _reply(message, index)
        self.called.update(call_id(c) for c in reply.get("tool_calls", ()))
        if self._replies and not self._replies[-1].get("tool_calls"):
            self._replies[-1] = _merge(self._replies[-1], reply)
        else:
            self._replies.append(reply)

    def tool(self, message: Mapping[str, Any]) -> None:
        ident = message.get("tool_call_id")
        if isinstance(ident, str) and ident in self.called:
            self.results.setdefault(ident, []).append(content_text(message.get("content")))
        else:
            self.skipped += 1

    def script(self) -> ReplayScript:
        self._close()
        results = {ident: tuple(texts) for ident, texts in self.results.items()}
        return ReplayScript(self.system, tuple(self.turns), results, self.skipped)


def build_script(messages: Sequence[Mapping[str, Any]]) -> ReplayScript:
    """Cut ``messages`` (OpenAI shape, as :func:`palimpsest.load_transcript` returns them)
    into replay turns.

    Consecutive user messages start one run together (joined by a blank line); an assistant
    message without tool calls followed by another assistant message is merged into it; the
    first system message becomes :attr:`ReplayScript.system`. Nothing is invented: a turn's
    user text and replies are the recorded text.
    """
    readings = read_transcript(messages)
    builder = _ScriptBuilder()
    for index, (message, reading) in enumerate(zip(messages, readings, strict=True)):
        role = role_of(message)
        if role == "system":
            if builder.system is None and not builder.turns and not builder._user:
                builder.system = content_text(message.get("content"))
            else:
                builder.skipped += 1
        elif role == "user":
            builder.user(index, content_text(message.get("content")), reading.kind)
        elif role == "assistant":
            builder.assistant(message, index)
        elif role in ("tool", "function"):
            builder.tool(message)
        else:
            builder.skipped += 1
    return builder.script()


_ANY_ARGUMENTS: dict[str, Any] = {"type": "object", "additionalProperties": True}


class _RecordedResults:
    """Hands out recorded results: by the call's id when the agent passes it on, else the
    next unplayed call of that tool with the same arguments (else simply the next one of
    that tool). Thread-safe: the agent may run a message's calls in parallel, in any order.
    """

    def __init__(self, script: ReplayScript) -> None:
        self._by_id = {ident: deque(texts) for ident, texts in script.tool_results.items()}
        self._order: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        for reply in script.replies:
            for call in tool_calls_of(reply):
                entry = (call_id(call), arguments_object(call_arguments(call)))
                self._order.setdefault(call_name(call), []).append(entry)
        self._lock = threading.Lock()

    def _take(self, name: str, ident: str | None, arguments: dict[str, Any]) -> str | None:
        order = self._order.get(name, [])
        for matches in (
            lambda entry: bool(ident) and entry[0] == ident,
            lambda entry: entry[1] == arguments,
            lambda entry: True,
        ):
            for position, entry in enumerate(order):
                if matches(entry):
                    del order[position]
                    return entry[0]
        return None

    def answer(self, name: str, ident: str | None, arguments: dict[str, Any]) -> str:
        with self._lock:
            taken = self._take(name, ident, arguments)
            results = self._by_id.get(taken or "")
            return results.popleft() if results else NO_RECORDED_RESULT


def _answerer(results: _RecordedResults, name: str) -> Any:
    def answer(context: ToolContext, **arguments: Any) -> str:
        return results.answer(name, context.call_id, arguments)

    return answer


def _registrable(item: Tool) -> bool:
    """Whether the registry accepts the tool (its name rule is the registry's to keep)."""
    try:
        ToolRegistry([item])
    except ValueError:
        return False
    return True


def replay_tools(script: ReplayScript) -> list[Tool]:
    """One tool per tool name the recorded assistant called; each answers a call with the
    next result the transcript recorded under the call's id (or, when the agent does not
    pass the id on, the next recorded call of that tool with those arguments), and
    :data:`NO_RECORDED_RESULT` when there is none. Their schemas accept any arguments: the
    recording already happened.

    A recorded name no tool may have (the registry allows letters, digits, ``_`` and ``-``)
    gets no replay tool: the agent answers those calls as calls of an unknown tool.
    """
    results = _RecordedResults(script)
    tools = [
        Tool(
            name=name,
            description=f"Replays the recorded results of the transcript's {name!r} calls.",
            parameters=dict(_ANY_ARGUMENTS),
            function=_answerer(results, name),
        )
        for name in script.tool_names
    ]
    return [item for item in tools if _registrable(item)]
