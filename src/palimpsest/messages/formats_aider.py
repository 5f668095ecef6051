"""Aider chat histories (``.aider.chat.history.md``) to chat-completions messages.

Aider appends every session to one markdown file (``aider/io.py``): a session opens with
``# aider chat started at <time>``; what the person types is written as ``#### `` lines; the
model's reply follows as plain markdown (its SEARCH/REPLACE edit blocks in fenced code);
aider's own output (startup banner, ``Tokens: … sent``, ``Applied edit to <file>``,
``Commit <hash> <message>``, confirmations, warnings, lint and test output) is written as
``> `` lines, a multi-line one with ``> `` on its first line only.

The reader maps them as follows (docs/transcripts.md says the same):

- ``#### `` lines are the person's message (consecutive lines join); a line that is an
  aider command (``/add``, ``/run``, ``/commit``, ``/code …``) is aider's business, not a
  request to the model, and goes with aider's output;
- reply text is an assistant message, edit blocks kept in its text;
- each ``Applied edit to <file>`` becomes a call ``edit_file`` with ``{"path": <file>}`` on
  the reply that made it, answered by a ``tool`` message ``Applied edit to <file>``, so every
  later phase sees the edit as an edit of that file (ids ``aider_edit_<n>``);
- the rest of aider's output is a user message marked as the host's output
  (``_host_output: "aider"``), which the reading reads as an observation, never a request;
- every session in the file is read, in order; each one's first output message starts with
  ``aider chat started at <time>``, which marks where the session begins.

Lines inside a fenced block of a reply are reply text, whatever they start with.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .content import Message
from .formats_common import Notes, to_json_text
from .formats_parse import Document
from .formats_spec import FULL, NONE, Fit, Reader, partial
from .reading_types import HOST_OUTPUT_KEY

__all__ = ["AIDER", "check_aider", "convert_aider"]

_SESSION = re.compile(r"^# aider chat started at (.*)$")
_APPLIED = re.compile(r"^Applied edit to (.+?)\s*$")
_USER_PREFIX = "####"
_OUTPUT_PREFIX = ">"
_FENCE = re.compile(r"^\s*(```|~~~)")
EDIT_TOOL = "edit_file"


def check_aider(doc: Document) -> Fit:
    """Text with at least one ``# aider chat started at`` line."""
    if doc.shape != "text":
        return NONE
    lines = doc.text.split("\n")
    if any(_SESSION.match(line) for line in lines):
        return FULL
    if any(line.startswith("#### ") for line in lines) and any(
        line.startswith("> ") for line in lines
    ):
        return partial("'#### ' and '> ' lines but no '# aider chat started at' line")
    return NONE


@dataclass
class _Block:
    kind: str  # "user", "assistant", "output", "session" (output that opens a session)
    lines: list[str] = field(default_factory=list)


def _strip_break(line: str) -> str:
    """A line without the two trailing spaces aider writes as a markdown line break."""
    return line[:-2] if line.endswith("  ") else line


def _blocks(text: str) -> list[_Block]:
    """The file cut into user, assistant and output blocks, in order."""
    blocks: list[_Block] = []
    in_fence = False
    previous_output = False  # the line before was aider output (continuations have no '>')

    def current(kind: str) -> _Block:
        if kind == "output" and blocks and blocks[-1].kind == "session":
            return blocks[-1]
        if not blocks or blocks[-1].kind != kind:
            blocks.append(_Block(kind))
        return blocks[-1]

    for raw in text.replace("\r\n", "\n").split("\n"):
        line = _strip_break(raw)
        if in_fence:
            current("assistant").lines.append(raw)
            in_fence = not _FENCE.match(line)
            continue
        session = _SESSION.match(line)
        if session:
            blocks.append(_Block("session", [f"aider chat started at {session.group(1).strip()}"]))
            previous_output = True
            continue
        if line == _USER_PREFIX or line.startswith(_USER_PREFIX + " "):
            current("user").lines.append(line[len(_USER_PREFIX) + 1 :])
            previous_output = False
            continue
        if line == _OUTPUT_PREFIX or line.startswith(_OUTPUT_PREFIX + " "):
            current("output").lines.append(line[len(_OUTPUT_PREFIX) + 1 :])
            previous_output = True
            continue
        if not line.strip():
            previous_output = False
            if blocks and blocks[-1].kind == "assistant":
                blocks[-1].lines.append("")
            continue
        if previous_output:
            current("output").lines.append(line)  # a multi-line output's later lines
            continue
        current("assistant").lines.append(raw)
        in_fence = bool(_FENCE.match(line))
    return blocks


class _Builder:
    def __init__(self) -> None:
        self.out: list[Message] = []
        self.edits = 0
        self.reply_open = False  # the last assistant message may still take edit calls

    def user(self, lines: list[str]) -> None:
        text = "\n".join(lines).strip()
        if text == "<blank>":
            text = ""
        if text.startswith("/"):
            self.output([text])  # an aider command: aider's business, not the model's
            return
        self.out.append({"role": "user", "content": text})
        self.reply_open = False

    def assistant(self, lines: list[str]) -> None:
        text = "\n".join(lines).strip()
        if not text:
            return
        self.out.append({"role": "assistant", "content": text})
        self.reply_open = True

    def output(self, lines: list[str], *, session: bool = False) -> None:
        files = [m.group(1) for m in map(_APPLIED.match, lines) if m]
        rest = [line for line in lines if not _APPLIED.match(line)]
        if files:
            self._edits(files)
        text = "\n".join(rest).strip()
        if not text:
            return
        last = self.out[-1] if self.out else None
        if last is not None and last.get(HOST_OUTPUT_KEY) and not files and not session:
            last["content"] = f"{last['content']}\n{text}"  # a command and what it printed
        else:
            self.out.append({"role": "user", "content": text, HOST_OUTPUT_KEY: "aider"})
        self.reply_open = False

    def _edits(self, files: list[str]) -> None:
        if not self.reply_open:
            self.out.append({"role": "assistant", "content": None})
        reply = self.out[-1]
        calls = reply.setdefault("tool_calls", [])
        results: list[Message] = []
        for path in files:
            self.edits += 1
            call_id = f"aider_edit_{self.edits}"
            calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": EDIT_TOOL, "arguments": to_json_text({"path": path})},
                }
            )
            results.append(
                {"role": "tool", "tool_call_id": call_id, "content": f"Applied edit to {path}"}
            )
        self.out.extend(results)
        self.reply_open = False


def convert_aider(text: str, notes: Notes | None = None) -> list[Message]:
    """Messages of every session of an Aider chat history, in order."""
    builder = _Builder()
    for block in _blocks(text):
        if block.kind == "user":
            builder.user(block.lines)
        elif block.kind == "assistant":
            builder.assistant(block.lines)
        else:
            builder.output(block.lines, session=block.kind == "session")
    return builder.out


def _convert(doc: Document, notes: Notes) -> list[Message]:
    return convert_aider(doc.text, notes)


AIDER = Reader(
    "aider",
    "an Aider chat history",
    "a .aider.chat.history.md: markdown with '# aider chat started at' session lines, "
    "'#### ' user lines and '> ' aider output lines",
    check_aider,
    _convert,
)
