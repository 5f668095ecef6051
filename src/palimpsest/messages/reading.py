"""One reading of every agent's transcript: what each message *is*.

Agents write the same things in many shapes. A command can be an OpenAI ``tool_calls``
entry, a legacy ``function_call``, an Anthropic ``tool_use`` block converted at the edge, a
fenced block in the assistant's text (SWE-agent, mini-swe-agent), a ``<command>`` tag
(SWE-agent's xml parser), or an XML function call (``<function=bash><parameter=command>``,
SWE-agent's xml_function_calling and OpenHands). Its output can come back as a ``tool`` (or
legacy ``function``) message, or as a *user* message that starts with ``OBSERVATION:``,
``EXECUTION RESULT of [...]``, or carries ``<returncode>``/``<output>``.

:func:`read_transcript` reads a list once and says, for each message, which of these it is
and what it carries (the command, the output, the exit status). Pruning, boundaries, the
summarizers and validation all work from this reading, so no phase re-guesses what a
message is. The reading never changes the messages: a caller's messages keep their own
format.

CONTRACT (other modules rely on these names; extend, do not rename):

- ``Kind``: ``"system" | "request" | "assistant" | "observation" | "summary" | "noise"``.
  ``request`` is a real user request written by a person (or the task an agent framework
  hands over as the first user message). ``noise`` is host chatter: demonstrations,
  reminders, format-error nags, local-command echoes, environment context blocks.
- :class:`Action`: one action an assistant message takes.
- :class:`Observation`: the output of an action.
- :class:`MessageReading`: one message's reading.
- :func:`read_transcript` ``(messages) -> list[MessageReading]``, same length and order.

The pieces: the types in :mod:`.reading_types`, native calls in :mod:`.reading_calls`,
text actions in :mod:`.reading_text`, observation envelopes in :mod:`.reading_observation`,
host chatter in :mod:`.reading_noise`, summary prefixes in :mod:`.markers`. This module is
the one left-to-right pass that ties them together (which action an output answers, whether
a user message is the task, a request or an observation).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import islice
from typing import Any

from .content import content_text, part_type
from .markers import (
    SUMMARY_FLAG,
    foreign_summary_source,
    is_compaction_summary_message,
    split_summary_content,
)
from .reading_calls import call_action, tool_use_action
from .reading_noise import clean_request, is_demonstration, noise_reason
from .reading_observation import (
    looks_like_observation,
    opens_like_observation,
    parse_observation,
    strip_state_trailer,
)
from .reading_text import parse_text_actions
from .reading_types import (
    HOST_OUTPUT_KEY,
    IS_DEMO_KEY,
    MESSAGE_TYPE_KEY,
    NOISE_KEY,
    SUMMARY_SOURCE_KEY,
    Action,
    ActionStyle,
    Kind,
    MessageReading,
    Observation,
)

__all__ = [
    "IS_DEMO_KEY",
    "MESSAGE_TYPE_KEY",
    "Action",
    "ActionStyle",
    "Kind",
    "MessageReading",
    "Observation",
    "has_native_traffic",
    "read_from",
    "read_transcript",
    "read_user_turn",
]


def read_transcript(messages: Sequence[Any]) -> list[MessageReading]:
    """Read ``messages`` once, oldest first; the result has one reading per message.

    Never raises on odd input: an element that is not a message reads as ``noise`` with
    ``extra["malformed"]``; missing ids, non-string content and ``tool_calls: null`` are
    read as far as they go. The messages are not changed.
    """
    reader = _Reader(text_mode=not _has_native_traffic(messages))
    return [reader.read(i, m) for i, m in enumerate(messages)]


def read_user_turn(message: Any) -> MessageReading:
    """Read one message on its own, as if it came mid-conversation after an assistant turn.

    Without its neighbours a message can only be judged by what it carries: a user message
    with an observation envelope, SWE-agent's ``message_type: observation`` or an earlier
    prune's one-liner reads as an observation, chatter as noise, a summary as a summary.
    Use :func:`read_transcript` whenever the whole list is at hand.
    """
    reader = _Reader(text_mode=True)
    reader.assistant_since_system = True
    return reader.read(0, message)


def read_from(
    messages: Sequence[Any], start: int, *, native: bool | None = None
) -> list[MessageReading]:
    """The readings of ``messages[start:]`` (indices as in the whole list), read cheaply.

    For callers that need only the newest messages' kinds (where the newest request is) and
    must not pay for the whole list on every turn. Reading starts at the nearest assistant
    message at or before ``start``, so a text action's observation still finds its action;
    whether anything acted before is found by a forward scan that stops at the first
    assistant message. Kinds equal :func:`read_transcript`'s, except where an answer depends
    on something further back: which earlier call a result answers (``action_index`` and
    ``tool`` of a result whose call lies before the window are ``None``).
    """
    n = len(messages)
    start = min(max(start, 0), n)
    if start == n:
        return []
    begin = start
    while begin > 0 and not _is_assistant(messages[begin]):
        begin -= 1
    # Stops at the first native call: cheap in tool-using transcripts, a plain role scan in
    # text-action ones, and it keeps the window's kinds equal to the whole list's.
    if native is None:  # a caller that tracks it per message passes it (the agent does)
        native = _has_native_traffic(messages)
    reader = _Reader(text_mode=not native)
    # any() stops at the first assistant message, a few messages into any transcript.
    reader.assistant_since_system = any(_is_assistant(m) for m in islice(messages, begin))
    readings = [reader.read(i, messages[i]) for i in range(begin, n)]
    return readings[start - begin :]


def _is_assistant(message: Any) -> bool:
    return isinstance(message, Mapping) and message.get("role") == "assistant"


def has_native_traffic(messages: Sequence[Any]) -> bool:
    """True when ``messages`` act through native calls (tool roles, ``tool_calls``, tool
    parts): then fenced code is just code. What :func:`read_from` decides its mode by."""
    return _has_native_traffic(messages)


def _has_native_traffic(messages: Sequence[Any]) -> bool:
    """True when the transcript acts through native calls (then fenced code is just code)."""
    for message in messages:
        if not isinstance(message, Mapping):
            continue
        role = message.get("role")
        if role == "tool" or role == "function":
            return True
        if role == "assistant" and (message.get("tool_calls") or message.get("function_call")):
            return True
        content = message.get("content")
        if isinstance(content, list):
            for part in content:
                if part_type(part) in ("tool_use", "tool_result"):
                    return True
    return False


_EMPTY: Mapping[str, Any] = {}

_NO_OBSERVATION_TOOLS = frozenset({"finish"})
"""Text actions that end the run without an observation (OpenHands' ``finish``), so the
user message after them is the person's next request."""


class _Reader:
    """The state one pass carries from message to message."""

    def __init__(self, *, text_mode: bool) -> None:
        self.text_mode = text_mode
        self.calls: dict[str, tuple[int, Action]] = {}
        self.legacy: list[tuple[int, Action]] = []
        # The assistant message whose text actions still await their observation.
        self.pending: tuple[int, tuple[Action, ...]] | None = None
        self.last_assistant: int | None = None
        self.assistant_since_system = False

    def read(self, index: int, message: Any) -> MessageReading:
        if type(message) is not dict and not isinstance(message, Mapping):
            return MessageReading(index, "", "noise", "", extra={"malformed": True})
        role = message.get("role")
        role = role if isinstance(role, str) else ""
        if role == "assistant":
            return self._assistant(index, message)
        if role == "user":
            return self._user(index, message)
        if role == "tool":
            return self._tool(index, message)
        if role == "function":
            return self._function(index, message)
        if role in ("system", "developer"):
            summary = _palimpsest_summary(index, role, message)
            if summary is not None:
                self.assistant_since_system = True
                return summary
            self.assistant_since_system = False
            self.pending = None
            return MessageReading(index, role, "system", _text(message))
        return MessageReading(index, role, "noise", _text(message), extra={"unknown_role": True})

    # -- assistant ---------------------------------------------------------------------

    def _assistant(self, index: int, message: Mapping[str, Any]) -> MessageReading:
        summary = _palimpsest_summary(index, "assistant", message)
        if summary is not None:
            self.assistant_since_system = True
            return summary
        self.last_assistant = index
        self.assistant_since_system = True
        self.pending = None
        actions = self._native_actions(index, message)
        text = _text(message)
        if actions:
            return MessageReading(index, "assistant", "assistant", text, actions)
        if not text:
            return MessageReading(index, "assistant", "assistant", "")
        found, thought = parse_text_actions(text, plain_fences=self.text_mode)
        if not found:
            return MessageReading(index, "assistant", "assistant", text)
        text_actions = tuple(
            Action(a.tool, a.arguments, a.command, None, a.style)  # type: ignore[arg-type]
            for a in found
        )
        if not all(a.tool in _NO_OBSERVATION_TOOLS for a in text_actions):
            self.pending = (index, text_actions)
        return MessageReading(index, "assistant", "assistant", thought, text_actions)

    def _native_actions(self, index: int, message: Mapping[str, Any]) -> tuple[Action, ...]:
        actions: list[Action] = []
        calls = message.get("tool_calls")
        if type(calls) is list or isinstance(calls, tuple):
            for call in calls:
                action = call_action(call, "tool_call")
                if action is None:
                    continue
                actions.append(action)
                if action.call_id:
                    self.calls[action.call_id] = (index, action)
        legacy = message.get("function_call")
        if isinstance(legacy, Mapping):
            action = call_action({"function": dict(legacy)}, "function_call")
            if action is not None:
                actions.append(action)
                self.legacy.append((index, action))
        content = message.get("content")
        if isinstance(content, list):
            for part in content:
                if part_type(part) == "tool_use":
                    action = tool_use_action(part)
                    actions.append(action)
                    if action.call_id:
                        self.calls[action.call_id] = (index, action)
        return tuple(actions)

    # -- results -----------------------------------------------------------------------

    def _tool(self, index: int, message: Mapping[str, Any]) -> MessageReading:
        raw_id = message.get("tool_call_id")
        call_id = str(raw_id) if raw_id else None
        matched = self.calls.get(call_id) if call_id else None
        return self._result(index, "tool", _text(message), call_id, matched, message)

    def _function(self, index: int, message: Mapping[str, Any]) -> MessageReading:
        # Legacy results carry no id: match by name, else answer the oldest open call.
        name = message.get("name")
        matched: tuple[int, Action] | None = None
        for pos, (_, action) in enumerate(self.legacy):
            if action.tool == name:
                matched = self.legacy.pop(pos)
                break
        if matched is None and self.legacy:
            matched = self.legacy.pop(0)
        return self._result(index, "function", _text(message), None, matched, message)

    def _result(
        self,
        index: int,
        role: str,
        text: str,
        call_id: str | None,
        matched: tuple[int, Action] | None,
        message: Mapping[str, Any],
    ) -> MessageReading:
        tool = matched[1].tool if matched else None
        if tool is None and role == "function":
            name = message.get("name")
            tool = name if isinstance(name, str) and name else None
        parsed = parse_observation(text, tool)
        observation = Observation(
            parsed.output,
            parsed.exit_code,
            call_id,
            matched[0] if matched else None,
            tool or parsed.tool,
        )
        extra: Mapping[str, Any] = parsed.extra or _EMPTY
        if message.get("_is_error") is True or message.get("is_error") is True:
            extra = {**extra, "is_error": True}
        return MessageReading(index, role, "observation", parsed.output, (), observation, extra)

    # -- user --------------------------------------------------------------------------

    def _user(self, index: int, message: Mapping[str, Any]) -> MessageReading:
        content = message.get("content")
        if isinstance(content, list) and any(part_type(p) == "tool_result" for p in content):
            return self._anthropic_results(index, content)
        summary = _palimpsest_summary(index, "user", message)
        if summary is not None:
            # Work happened before a summary: what follows it is no longer the task.
            self.assistant_since_system = True
            return summary
        marked = self._marked_by_reader(index, message)
        if marked is not None:
            return marked
        text = _text(message)
        source = foreign_summary_source(text) if text else None
        if source is not None:
            self.assistant_since_system = True
            return MessageReading(
                index, "user", "summary", text.strip(), extra={"summary_source": source}
            )
        message_type = message.get(MESSAGE_TYPE_KEY, message.get("message_type"))
        extra: dict[str, Any] = {}
        if isinstance(message_type, str):
            extra["message_type"] = message_type
        if is_demonstration(message_type, message.get(IS_DEMO_KEY, message.get("is_demo"))):
            extra["noise"] = "demonstration"
            return MessageReading(index, "user", "noise", text, extra=extra)
        reason = noise_reason(text) if text else None
        if reason is not None:
            extra["noise"] = reason
            return MessageReading(index, "user", "noise", text, extra=extra)
        if not self.assistant_since_system:
            # Nothing has acted yet: this is the task (SWE-agent types it "observation"
            # and may end it with the same state trailer its observations carry). Only an
            # explicit header says otherwise, as in a slice that starts mid-run.
            if opens_like_observation(text):
                return self._user_observation(index, text, None, None, extra)
            return self._request(index, text, content, extra)
        if self.pending is not None:
            action_index, actions = self.pending
            self.pending = None
            return self._user_observation(index, text, action_index, actions[0].tool, extra)
        if (
            looks_like_observation(text)
            or message_type == "observation"
            or _is_prune_one_liner(text)
        ):
            return self._user_observation(index, text, self.last_assistant, None, extra)
        return self._request(index, text, content, extra)

    def _marked_by_reader(self, index: int, message: Mapping[str, Any]) -> MessageReading | None:
        """The reading a format's reader already stated (internal keys), or ``None``."""
        source = message.get(SUMMARY_SOURCE_KEY)
        if isinstance(source, str) and source:
            self.assistant_since_system = True
            extra = {"summary_source": source}
            return MessageReading(index, "user", "summary", _text(message).strip(), extra=extra)
        reason = message.get(NOISE_KEY)
        if isinstance(reason, str) and reason:
            return MessageReading(index, "user", "noise", _text(message), extra={"noise": reason})
        host = message.get(HOST_OUTPUT_KEY)
        if isinstance(host, str) and host:
            text = _text(message)
            self.pending = None  # the host's output is what became of a text action
            observation = Observation(text, None, None, self.last_assistant, host)
            extra = {"host_output": host}
            return MessageReading(index, "user", "observation", text, (), observation, extra)
        return None

    def _request(
        self, index: int, text: str, content: Any, extra: dict[str, Any]
    ) -> MessageReading:
        request = strip_state_trailer(clean_request(text)) if text else ""
        if not request and not _has_attachment(content):
            extra["noise"] = "empty"
            return MessageReading(index, "user", "noise", text, extra=extra)
        return MessageReading(index, "user", "request", request, extra=extra or _EMPTY)

    def _user_observation(
        self,
        index: int,
        text: str,
        action_index: int | None,
        tool: str | None,
        extra: dict[str, Any],
    ) -> MessageReading:
        parsed = parse_observation(text, tool)
        extra.update(parsed.extra)
        observation = Observation(
            parsed.output, parsed.exit_code, None, action_index, parsed.tool or tool
        )
        return MessageReading(
            index, "user", "observation", parsed.output, (), observation, extra or _EMPTY
        )

    def _anthropic_results(self, index: int, content: list[Any]) -> MessageReading:
        observations: list[Observation] = []
        errors = False
        for part in content:
            if part_type(part) != "tool_result":
                continue
            raw_id = part.get("tool_use_id")
            call_id = str(raw_id) if raw_id else None
            matched = self.calls.get(call_id) if call_id else None
            tool = matched[1].tool if matched else None
            parsed = parse_observation(content_text(part.get("content")), tool)
            observations.append(
                Observation(
                    parsed.output,
                    parsed.exit_code,
                    call_id,
                    matched[0] if matched else None,
                    tool,
                )
            )
            errors = errors or part.get("is_error") is True
        extra: dict[str, Any] = {"observations": tuple(observations)}
        if errors:
            extra["is_error"] = True
        text = "\n".join(o.output for o in observations if o.output)
        return MessageReading(index, "user", "observation", text, (), observations[0], extra)


_ONE_LINER_MARKERS = (" chars)", " chars result)")


def _is_prune_one_liner(text: str) -> bool:
    """An earlier prune's stand-in for an observation: ``[tool] … (N chars)``, one short line.

    Mirrors ``compaction.oneliners.is_pruned_content`` (this layer cannot import it), so a
    second compaction still reads a pruned observation as one.
    """
    return (
        text.startswith("[")
        and len(text) < 400
        and "\n" not in text
        and any(marker in text for marker in _ONE_LINER_MARKERS)
    )


def _text(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if type(content) is str:
        return content
    try:
        return content_text(content)
    except Exception:  # an object whose __str__ fails must not stop the reading
        return ""


def _has_attachment(content: Any) -> bool:
    return isinstance(content, list) and any(
        isinstance(p, Mapping) and part_type(p) not in ("text", "input_text", "output_text")
        for p in content
    )


def _palimpsest_summary(index: int, role: str, message: Mapping[str, Any]) -> MessageReading | None:
    """A palimpsest summary's reading, or ``None``; a cheap first-character test first."""
    if not message.get(SUMMARY_FLAG):
        content = message.get("content")
        if isinstance(content, str):
            if content.lstrip()[:1] != "[":
                return None
        elif not isinstance(content, list):
            return None
    if not is_compaction_summary_message(message):
        return None
    body, original = split_summary_content(message)
    extra: dict[str, Any] = {"summary_source": "palimpsest"}
    if original is not None:
        extra["original_content"] = original
    return MessageReading(index, role, "summary", body, extra=extra)
