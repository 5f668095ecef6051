"""What happened in a stretch of transcript, read by the eval itself.

:func:`read_steps` walks a message list once and pairs each action (:mod:`.actions`) with
its outcome: a ``tool`` result (by call id), an Anthropic ``tool_result`` block, or, for
text actions, the user message that follows (SWE-agent ``OBSERVATION:`` and trailers,
mini-swe-agent ``<returncode>``). It tracks the file SWE-agent has open
(``[File: /path (N lines total)]``, ``(Open file: /path)``) because ``edit N:M`` changes that
file. :func:`user_requests` finds the messages a person wrote, leaving out observations,
demonstrations, earlier summaries and host chatter.

Failure comes from an explicit exit status when the format states one (``<returncode>``,
``Exit code N``, ``///PROCESS-DONE:N``, ``is_error``), else from the output's own words:
a traceback, an exception line, an error line any program prints (``Error: …``,
``fatal: …``, ``x failed with: TypeError``, ``file:12: error``, pytest's ``E   …Error``),
SWE-agent's rejected-edit notice, ``command not found``. The word "error" in a file name
or a success message is not a failure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..messages.content import content_text
from .actions import Action, action_targets, actions_of, is_shell_action

__all__ = ["Outcome", "Step", "is_observation_text", "read_outcome", "read_steps", "user_requests"]

_RETURNCODE_RE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
_EXIT_LINE_RE = re.compile(
    r"^\s*(?:Exit code|exit code:?|Process exited with code)\s*:?\s*(-?\d+)", re.M
)
_EXIT_JSON_RE = re.compile(r'"exit_code"\s*:\s*(-?\d+)')
_PROCESS_DONE_RE = re.compile(r"///PROCESS-DONE:(-?\d+):PROCESS-DONE///")
_FILE_HEADER_RE = re.compile(r"\[File: (\S+?) \(\d+ lines total\)\]")
_OPEN_FILE_RE = re.compile(r"\(Open file: ([^)\n]+)\)")
_TRAILER_RE = re.compile(
    r"^\s*(?:\(Open file: [^\n]*\)|\(Current directory: [^\n]*\)|bash-\$)\s*$", re.M
)
_EXCEPTION_RE = re.compile(r"\b(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Interrupt)\b:(?: |$)")
# An error line printed by any program, recognised by its shape (the word "error" inside a
# file name such as reproduce_error.py, or in "File created successfully", is not one).
_PRINTED_ERROR_RES = (
    re.compile(r"^(?:error|fatal|ERROR|FATAL|Error|Fatal)(?:\[\w+\])?: *\S", re.M),
    re.compile(r"^[\w./-]+: (?:error|fatal):", re.M),  # argparse, git: "prog: error: ..."
    re.compile(r"^[^\s:]+:\d+(?::\d+)?: (?:fatal )?error\b", re.M),  # compiler diagnostics
    re.compile(r"\bfailed with:? +[A-Z]\w*(?:Error|Exception)\b"),  # "X failed with: TypeError"
    re.compile(r"^\s*(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)(?:: |$)", re.M),
    re.compile(r"^E {2,}[A-Z]\w*(?:Error|Exception)\b", re.M),  # pytest's failure detail
)
_FAILURE_CUES = (
    re.compile(r"Traceback \(most recent call last\)"),
    re.compile(r"Your proposed edit has introduced new syntax error"),
    re.compile(r"Your changes have NOT been applied"),
    re.compile(r"No replacement was performed"),
    re.compile(r"did not appear verbatim"),
    re.compile(r": command not found\b"),
    re.compile(r"No such file or directory"),
    re.compile(r"^FAILED\b|=+ .*\b\d+ failed\b", re.M),
    re.compile(r"^Segmentation fault", re.M),
    re.compile(r"^(?:ERROR|Error|error):[ \t]*\n[ \t]*\S", re.M),  # the label, its text below
    *_PRINTED_ERROR_RES,
)
_ERROR_WORD_RE = re.compile(
    r"(?i)\b(?:error|fatal|failed|failure|not found|no such file|denied|invalid|cannot)\b"
)
# "ERROR:" alone names no error: its text is on the next line (OpenHands' editor answers
# "ERROR:\nInvalid `path` parameter: ..."), and a probe of just the label checks nothing.
_BARE_LABEL_RE = re.compile(r"(?i)^(?:error|fatal|failed|failure|exception)\s*:?$")
_OBSERVATION_STARTS = (
    "OBSERVATION:",
    "EXECUTION RESULT of [",
    "[File: ",
    "Your command ran successfully",
)
_NOT_A_REQUEST_RE = re.compile(
    r"^\s*(?:<system-reminder>|<command-name>|<command-message>|<local-command-stdout>|"
    r"<environment_context>|<user_instructions>|<user-prompt-submit-hook>|Caveat: The messages below|"
    r"\[CONTEXT COMPACTION|\[CONTEXT SUMMARY\]|Here is a demonstration|"
    r"This session is being continued|This is a session continuation summary|"
    r"Your output was not formatted correctly|Please always provide EXACTLY ONE action|"
    r"Your last output did not use any tool calls|Your last output included multiple|"
    r"Your action could not be parsed|\[Request interrupted)"
)


@dataclass(frozen=True, slots=True)
class Outcome:
    """An action's output without its envelope; ``failed`` by status or by its own words."""

    text: str
    failed: bool
    exit_code: int | None
    error_line: str | None


@dataclass(frozen=True, slots=True)
class Step:
    """One action at message ``index`` with its outcome (``None`` when none came back).

    ``targets`` are the files it would write; ``writes`` those it did: a rejected edit
    changes nothing, but a shell command's redirections and ``sed -i`` have written even
    when a later part of the line failed (``sed -i .. f && pytest``).
    """

    index: int
    action: Action
    outcome: Outcome | None
    targets: tuple[str, ...]

    @property
    def failed(self) -> bool:
        return self.outcome is not None and self.outcome.failed

    @property
    def writes(self) -> tuple[str, ...]:
        if self.failed and not is_shell_action(self.action):
            return ()
        return self.targets


def is_observation_text(text: str) -> bool:
    """True when a user message's text is an action's output by its own envelope."""
    head = text.lstrip()
    return (
        head.startswith(_OBSERVATION_STARTS)
        or _RETURNCODE_RE.search(text) is not None
        or _PROCESS_DONE_RE.search(text) is not None
        or bool(re.search(r"\(Current directory: [^\n]*\)\s*(?:\nbash-\$)?\s*$", text))
    )


def _exit_code(text: str) -> int | None:
    for pattern in (_RETURNCODE_RE, _PROCESS_DONE_RE, _EXIT_LINE_RE, _EXIT_JSON_RE):
        match = pattern.search(text)
        if match:
            return int(match.group(1))
    return None


def _json_body(text: str) -> str:
    """A tool answer written as JSON (Codex: ``{"output": ..., "metadata": {"exit_code":
    N}}``, or with ``stderr``/``error`` fields) as the text it carries."""
    if not text.lstrip().startswith("{"):
        return text
    try:
        value = json.loads(text)
    except ValueError:
        return text
    if not isinstance(value, dict) or not isinstance(value.get("output"), str):
        return text
    extra = [value.get(k) for k in ("stderr", "error")]
    return "\n".join([value["output"], *(e for e in extra if isinstance(e, str) and e)])


def _strip_envelope(text: str) -> str:
    text = _json_body(text)
    text = re.sub(r"^\s*OBSERVATION:\s*", "", text)
    text = _RETURNCODE_RE.sub("", text)
    text = re.sub(r"</?output(?:_head|_tail)?>", "", text)
    text = _PROCESS_DONE_RE.sub("", text)
    text = _EXIT_LINE_RE.sub("", text)
    return _TRAILER_RE.sub("", text).strip()


def _error_line(text: str) -> str | None:
    """The last exception or printed error line; else the first line with an error word.

    A bare label (``ERROR:``) is read together with the line after it; a text whose only
    error line is a bare label has no error line (``None``): there is nothing to quote.
    """
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    joined: list[str] = []
    for i, line in enumerate(lines):
        if _BARE_LABEL_RE.match(line):
            if i + 1 < len(lines):
                joined.append(f"{line} {lines[i + 1]}")
            continue
        joined.append(line)
    exceptions = [
        line
        for line in joined
        if _EXCEPTION_RE.search(line) or any(p.search(line) for p in _PRINTED_ERROR_RES)
    ]
    if exceptions:
        return exceptions[-1]
    for line in joined:
        if _ERROR_WORD_RE.search(line) and not line.startswith("Your changes have NOT"):
            return line
    return joined[0] if joined else None


def read_outcome(raw: str, *, is_error: bool = False) -> Outcome:
    """An outcome from an output text; ``is_error`` is a format's own error flag."""
    code = _exit_code(raw)
    text = _strip_envelope(raw)
    if code is not None:
        failed = code != 0 or is_error
    else:
        failed = is_error or any(cue.search(text) for cue in _FAILURE_CUES)
    return Outcome(text, failed, code, _error_line(text) if failed else None)


def _tool_results(message: Mapping[str, Any]) -> list[tuple[str | None, str, bool]]:
    """``(call id, text, is_error)`` of a ``tool`` message or a user's tool_result blocks."""
    if message.get("role") in ("tool", "function"):
        cid = message.get("tool_call_id")
        error = bool(message.get("_is_error") or message.get("is_error"))
        return [(str(cid) if cid else None, content_text(message.get("content")), error)]
    out: list[tuple[str | None, str, bool]] = []
    content = message.get("content")
    if isinstance(content, list):
        for part in content:
            if isinstance(part, Mapping) and part.get("type") == "tool_result":
                inner = part.get("content")
                text = inner if isinstance(inner, str) else content_text(inner)
                out.append(
                    (str(part.get("tool_use_id") or "") or None, text, bool(part.get("is_error")))
                )
    return out


def _opened(text: str, current: str | None) -> str | None:
    trailer = _OPEN_FILE_RE.findall(text)
    if trailer:
        value = trailer[-1].strip()
        return None if value == "n/a" else value
    header = _FILE_HEADER_RE.search(text)
    return header.group(1) if header else current


def read_steps(messages: Sequence[Mapping[str, Any]]) -> list[Step]:
    """Every action in ``messages`` with its outcome, in order."""
    steps: list[Step] = []
    pending: dict[int, tuple[Action, tuple[str, ...]]] = {}  # step slot -> action
    by_id: dict[str, int] = {}
    text_slot: int | None = None
    open_file: str | None = None
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "assistant":
            text_slot = None
            for action in actions_of(message):
                slot = len(steps)
                targets = tuple(action_targets(action, open_file))
                steps.append(Step(index, action, None, targets))
                pending[slot] = (action, targets)
                if action.call_id:
                    by_id[action.call_id] = slot
                elif action.style in ("fenced", "command_tag", "xml_function"):
                    text_slot = slot
            continue
        results = _tool_results(message)
        if results:
            for cid, text, error in results:
                found: int | None = by_id.pop(cid, None) if cid else None
                if found is None and pending:
                    found = min(pending)  # a result without an id answers the oldest call
                if found is not None and found in pending:
                    slot = found
                    pending.pop(slot)
                    steps[slot] = _with_outcome(steps[slot], read_outcome(text, is_error=error))
                open_file = _opened(text, open_file)
            continue
        if role == "user" and text_slot is not None:
            text = content_text(message.get("content"))
            pending.pop(text_slot, None)
            steps[text_slot] = _with_outcome(steps[text_slot], read_outcome(text))
            open_file = _opened(text, open_file)
            text_slot = None
    return steps


def _with_outcome(step: Step, outcome: Outcome) -> Step:
    return Step(step.index, step.action, outcome, step.targets)


def user_requests(messages: Sequence[Mapping[str, Any]]) -> list[tuple[int, str]]:
    """``(index, text)`` of every user message a person wrote.

    A user message right after a text action is that action's observation, whatever it
    says; so are messages marked ``message_type: observation`` or carrying an output
    envelope. Demonstrations, summaries, reminders and format nags are not requests.
    """
    found: list[tuple[int, str]] = []
    after_text_action = False
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "assistant":
            after_text_action = any(a.call_id is None for a in actions_of(message))
            continue
        if role != "user":
            continue
        observation = after_text_action
        after_text_action = False
        if observation or message.get("message_type") in ("observation", "demonstration"):
            continue
        if message.get("is_demo") or _tool_results(message):
            continue
        text = content_text(message.get("content")).strip()
        if not text or is_observation_text(text) or _NOT_A_REQUEST_RE.match(text):
            continue
        found.append((index, text))
    return found
