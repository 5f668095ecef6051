"""The types of the one reading: what a message is, the actions it takes, their outputs.

They live apart from the reader (:mod:`palimpsest.messages.reading`, which re-exports them)
so the helpers that build them (native calls in :mod:`.reading_calls`) need not import the
reader itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "HOST_OUTPUT_KEY",
    "IS_DEMO_KEY",
    "MESSAGE_TYPE_KEY",
    "NOISE_KEY",
    "SUMMARY_SOURCE_KEY",
    "Action",
    "ActionStyle",
    "Kind",
    "MessageReading",
    "Observation",
]

MESSAGE_TYPE_KEY = "_message_type"
"""Internal key where the SWE-agent loader keeps a history item's ``message_type``."""

IS_DEMO_KEY = "_is_demo"
"""Internal key where the SWE-agent loader keeps ``is_demo: true``."""

NOISE_KEY = "_noise"
"""Internal key a reader sets on a user message its format marks as host-written (Claude
Code's ``isMeta``); the value is the reason, and the reading reads the message as noise."""

SUMMARY_SOURCE_KEY = "_summary_source"
"""Internal key a reader sets on a message its format marks as a compaction summary (Claude
Code's ``isCompactSummary``, OpenHands' condensation); the value names the agent."""

HOST_OUTPUT_KEY = "_host_output"
"""Internal key a reader sets on a user message that holds an agent host's own output (Aider's
``>`` lines); the value names the host, and the reading reads the message as an observation."""

Kind = Literal["system", "request", "assistant", "observation", "summary", "noise"]

ActionStyle = Literal[
    "tool_call",  # OpenAI tool_calls (also converted Anthropic tool_use, Codex function calls)
    "function_call",  # legacy OpenAI function_call on an assistant message
    "fenced",  # a fenced block in assistant text (SWE-agent, mini-swe-agent)
    "command_tag",  # <command>...</command> (SWE-agent xml parser)
    "xml_function",  # <function=NAME><parameter=KEY>...</parameter></function>
]


@dataclass(frozen=True, slots=True)
class Action:
    """One action an assistant message takes.

    ``tool`` is the tool or command name as the agent wrote it (``bash``,
    ``str_replace_editor``, ``edit``, ``open``, ``execute_bash``); a plain shell block is
    ``bash``. ``arguments`` are the parsed arguments (``{"command": ...}`` for a shell
    block; for a SWE-agent command such as ``edit 1:1`` the whole command text is under
    ``command``). ``command`` is the shell or agent command line when there is one.
    ``call_id`` is the native call id, ``None`` for text actions.
    """

    tool: str
    arguments: Mapping[str, Any]
    command: str | None
    call_id: str | None
    style: ActionStyle


@dataclass(frozen=True, slots=True)
class Observation:
    """The output of an action, with its envelope removed.

    ``output`` is the text without ``OBSERVATION:``/``EXECUTION RESULT of [..]:`` prefixes,
    ``<returncode>``/``<output>`` tags and SWE-agent's ``(Open file: ..)``/``(Current
    directory: ..)``/``bash-$`` trailer. ``exit_code`` is set only where the format states
    it. ``action_index`` is the index of the message whose action this answers, when known;
    ``call_id`` the native ``tool_call_id``.
    """

    output: str
    exit_code: int | None = None
    call_id: str | None = None
    action_index: int | None = None
    tool: str | None = None


@dataclass(frozen=True, slots=True)
class MessageReading:
    """What one message is.

    ``text`` is the message's prose: for a request, the request; for assistant text, the
    text with action blocks removed; for an observation, the output; for a summary, its
    body. ``actions`` is non-empty only for assistant messages that act. An assistant
    message that both talks and acts has kind ``assistant`` and non-empty ``actions``.

    ``extra`` holds what only some formats say (read-only; often a shared empty mapping):
    ``message_type`` (SWE-agent's), ``noise`` (why a message is chatter),
    ``summary_source`` (``palimpsest``, ``claude-code``, ``codex``), ``original_content``
    (a merged summary's own message content), ``observations`` (every result of an Anthropic
    ``tool_result`` message, in order), ``is_error``, ``truncated``, ``no_output``,
    ``open_file`` and ``cwd`` (SWE-agent's state trailer), ``malformed`` (not a dict),
    ``unknown_role``, ``host_output`` (the host whose own output a user message holds).
    """

    index: int
    role: str
    kind: Kind
    text: str
    actions: tuple[Action, ...] = ()
    observation: Observation | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
