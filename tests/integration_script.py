"""A long conversation built from real transcripts, for the framework adapter tests.

Each :class:`Turn` is one user message and the model's real answer to it, taken in order
from SWE-agent trajectories in tests/data/transcripts; every third turn the model first
calls a tool, with the arguments and the output a real function-calling trajectory
recorded. The frameworks' own fake models replay :func:`replies`; the one tool,
``terminal``, answers from :class:`ToolOutputs`. :func:`check_inputs` holds the checks the
acceptance asks of every model input.
"""

from __future__ import annotations

import functools
import itertools
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from palimpsest import (
    ExactCounter,
    is_compaction_summary_message,
    load_transcript,
    validate_transcript,
)
from palimpsest.messages.content import content_text

TRAJECTORIES = Path(__file__).parent / "data" / "transcripts" / "swe-agent"
CHAT_SOURCES = (
    "ctf_web_i_got_id_demo.traj",
    "ctf_crypto_katy.traj",
    "marshmallow-1867__xml_command_tags.traj",
)
TOOL_SOURCES = (
    "marshmallow-1867__function_calling.traj",
    "marshmallow-1867__function_calling_replace_from_source.traj",
)
WINDOW = 8_000
TURNS = 44
TOOL_NAME = "terminal"


@dataclass(frozen=True)
class ToolStep:
    """A recorded tool call: what the model said with it, its id, arguments and output."""

    text: str
    call_id: str
    command: str
    output: str


@dataclass(frozen=True)
class Turn:
    user: str
    reply: str
    tool: ToolStep | None = None


def _text(message: Mapping[str, Any]) -> str:
    return content_text(message.get("content"))


def system_prompt() -> str:
    return _text(load_transcript(TRAJECTORIES / TOOL_SOURCES[0])[0])


def _chat_pairs() -> list[tuple[str, str]]:
    pairs = []
    for name in CHAT_SOURCES:
        messages = load_transcript(TRAJECTORIES / name)
        for ask, answer in itertools.pairwise(messages):
            if ask["role"] == "user" and answer["role"] == "assistant":
                pairs.append((_text(ask), _text(answer)))
    return pairs


def _tool_steps() -> list[ToolStep]:
    """The recorded calls in order. Both sources are runs of one task and reuse some call
    ids; a repeated id gets a suffix, as ids are unique within one conversation."""
    steps: list[ToolStep] = []
    seen: set[str] = set()
    for name in TOOL_SOURCES:
        messages = load_transcript(TRAJECTORIES / name)
        outputs = {m.get("tool_call_id"): _text(m) for m in messages if m["role"] == "tool"}
        for message in messages:
            for call in message.get("tool_calls") or []:
                if call["id"] in outputs:
                    command = call["function"]["arguments"]
                    unique = call["id"] if call["id"] not in seen else f"{call['id']}_{len(steps)}"
                    seen.add(unique)
                    steps.append(ToolStep(_text(message), unique, command, outputs[call["id"]]))
    return steps


def conversation(turns: int = TURNS) -> list[Turn]:
    """``turns`` turns of real text; every third one with a real tool step first."""
    pairs, steps = _chat_pairs(), deque(_tool_steps())
    if len(pairs) < turns:
        raise ValueError(f"only {len(pairs)} user/assistant pairs in the sources")
    script = []
    for i, (user, reply) in enumerate(pairs[:turns]):
        tool = steps.popleft() if i % 3 == 2 and steps else None
        script.append(Turn(user, reply, tool))
    return script


class ToolOutputs:
    """The recorded outputs, answered in call order (the tool checks it got the command)."""

    def __init__(self, turns: Sequence[Turn]) -> None:
        self._queue = deque(t.tool for t in turns if t.tool is not None)

    def __call__(self, command: str) -> str:
        step = self._queue.popleft()
        if step.command != command:
            raise AssertionError(f"expected command {step.command!r}, got {command!r}")
        return step.output


@functools.cache
def exact_counter() -> ExactCounter:
    """One exact o200k counter for the tests (building one takes a fraction of a second)."""
    return ExactCounter("o200k_base")


@dataclass
class InputCheck:
    """What the acceptance asks of the inputs a fake model received."""

    inputs: int
    largest: int
    summaries: int


def check_inputs(
    inputs: Sequence[Sequence[Mapping[str, Any]]],
    turns: Sequence[Turn],
    window: int = WINDOW,
) -> InputCheck:
    """Every input under ``window`` by the exact o200k count and a valid transcript (tool
    calls and results paired); the turn's user message last among its user messages,
    verbatim; returns the figures for further assertions.

    ``inputs`` are our dicts of each model call in order; a call answering a tool result
    belongs to the same turn as the call before it."""
    counter = exact_counter()
    largest = summaries = 0
    turn = -1
    for messages in inputs:
        size = counter.count_messages(messages)
        assert size < window, f"a model input of {size} tokens, window {window}"
        largest = max(largest, size)
        # every tool result answers a call just before it, every call is answered
        validate_transcript(list(messages), strict=True)
        if any(is_compaction_summary_message(m) for m in messages):
            summaries += 1
        if messages[-1].get("role") == "user":
            turn += 1
        users = [m for m in messages if m.get("role") == "user"]
        assert users and _text(users[-1]) == turns[turn].user, f"turn {turn}: newest user message"
    assert turn == len(turns) - 1, f"{turn + 1} turns reached the model, expected {len(turns)}"
    return InputCheck(len(inputs), largest, summaries)
