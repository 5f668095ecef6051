"""Issue 9 acceptance: a 300-turn session built from real transcript turns, in a 16K window.

Only the model is scripted. Its turns come from the real runs in tests/data/transcripts
(SWE-agent and mini-swe-agent): each user turn asks for the next step, the model answers
with the recorded thought and one tool call, then a short final answer. Shell commands run
through a ``bash`` tool that replays the recorded observation (running the recorded
commands for real would need the original repositories and, for some, the network); edits
and file creations go through the real workspace ``write_file`` tool into a temporary
directory, with the recorded replacement text as content. Store, memory files, compressor
and tools are the real ones.

What must hold: no request ever exceeds the window; every compaction starts a
continuation session; the memory flush ran before every compaction, including the reactive
one forced by an overflow error from the model; after the last compaction the ledger names
every file modified in the whole session and the last failing command; the anti-thrashing
state survives a restart of the agent.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from agent_helpers import ROTATION
from palimpsest import ContextOverflowError, ScriptedChatModel, load_transcript
from palimpsest.agent.events import CompactionEvent, TurnEnd
from palimpsest.agent.flush import FLUSH_MESSAGE
from palimpsest.agent.loop import Agent
from palimpsest.agent.persistence import save_guards
from palimpsest.agent.tools import Tool
from palimpsest.memory.manager import MemoryManager
from palimpsest.memory.store import MemoryStore
from palimpsest.messages import validate_transcript
from palimpsest.messages.markers import LEDGER_HEADER, REHYDRATION_HEADER, TODO_SNAPSHOT_HEADER
from palimpsest.messages.reading import read_transcript
from palimpsest.providers.base import Completion
from palimpsest.storage.sessions import SessionStore
from palimpsest.tokens import ExactCounter
from palimpsest.usage import CanonicalUsage

DATA = Path(__file__).parent / "data" / "transcripts"
WINDOW = 16_000
TURNS = 300
OVERFLOW_AT = 150
"""From this user turn on, the first request over 60% of the window is refused with a
context overflow (a provider whose real limit is lower than the one configured)."""


def _real_steps() -> list[dict[str, Any]]:
    """(thought, tool, arguments, recorded output, exit code) of every real action."""
    steps: list[dict[str, Any]] = []
    files = sorted(DATA.glob("swe-agent/*.traj")) + sorted(DATA.glob("mini-swe-agent/*.json"))
    for path in files:
        messages = load_transcript(path)
        readings = read_transcript(messages)
        outputs = {
            r.observation.action_index: r.observation
            for r in readings
            if r.kind == "observation" and r.observation is not None
        }
        for reading in readings:
            if reading.kind != "assistant" or not reading.actions:
                continue
            action = reading.actions[0]
            observation = outputs.get(reading.index)
            output = observation.output if observation is not None else ""
            thought = (reading.text or "").strip()[:1_500] or "Next step."
            arguments = dict(action.arguments) if action.arguments else {}
            text = next(
                (
                    v
                    for k, v in arguments.items()
                    if k in ("replacement_text", "file_text", "new_str", "text")
                    and isinstance(v, str)
                ),
                None,
            )
            command = action.command or ""
            if text is None and action.tool in ("edit", "insert") and "\n" in command:
                # SWE-agent's text edit: "edit 1:1\n<replacement>\nend_of_edit"
                text = command.split("\n", 1)[1].removesuffix("end_of_edit").rstrip("\n")
            if action.tool in ("edit", "create", "insert") and text:
                steps.append({"thought": thought, "kind": "write", "content": text})
            elif action.command:
                code = observation.exit_code if observation is not None else None
                steps.append(
                    {
                        "thought": thought,
                        "kind": "shell",
                        "command": action.command[:2_000],
                        "output": output[:6_000],
                        "exit": code if code is not None else 0,
                    }
                )
    return steps


# Paths that the real runs created or edited (SWE-agent marshmallow and pydicom, the CTF
# runs, mini-swe-agent); each write step writes one of them, in turn.
REAL_PATHS = (
    "reproduce.py",
    "src/marshmallow/fields.py",
    "pydicom/pixel_data_handlers/numpy_handler.py",
    "tests/test_fields.py",
    "exploit.py",
    "solve.py",
    "main.py",
    "test_fix.py",
)


def _bash_tool() -> Tool:
    """Replays a recorded command's output; the exit status comes as the workspace shell
    writes it (``exit code: N`` on the last line)."""

    def bash(command: str, output: str = "", exit: int = 0) -> str:
        return f"{output}\nexit code: {exit}"

    return Tool(
        name="bash",
        description="Run a shell command (replayed from a recorded run).",
        parameters={
            "type": "object",
            "properties": {
                "command": {"type": "string"},
                "output": {"type": "string"},
                "exit": {"type": "integer"},
            },
            "required": ["command"],
        },
        function=bash,
    )


class Script:
    """The model: the next real step for each user turn, a memory note in each flush, one
    overflow error at turn ``OVERFLOW_AT``."""

    def __init__(self, steps: Sequence[dict[str, Any]]) -> None:
        self.steps = steps
        self.exact = ExactCounter("o200k_base")
        self.turn = 0
        self.log: list[str] = []
        self.written: list[str] = []
        self.failures: list[str] = []
        self.overflowed = False
        self.flushes = 0
        self.schema_tokens = 0  # the tool schemas' share of every request, set once known

    def __call__(self, messages: list[dict[str, Any]]) -> Completion:
        reply = self._reply(messages)
        # usage as a real provider reports it: the prompt's real size (exact o200k here),
        # tool schemas included (the callable sees only the messages)
        reply.usage = CanonicalUsage(
            input_tokens=self.exact.count_messages(messages) + self.schema_tokens,
            output_tokens=50,
            raw_usage={},
        )
        return reply

    def _reply(self, messages: list[dict[str, Any]]) -> Completion:
        last = messages[-1]
        if last.get("role") == "user" and str(last.get("content", "")).startswith(
            FLUSH_MESSAGE[:30]
        ):
            self.flushes += 1
            self.log.append("flush")
            note = {"action": "add", "target": "memory", "content": f"flush note {self.flushes}"}
            return _calls(("memory", note, f"m{self.flushes}"))
        synthetic = str(last.get("content", "")).startswith(
            (LEDGER_HEADER, REHYDRATION_HEADER, TODO_SNAPSHOT_HEADER)
        )  # what the agent re-injects after a compaction is not a new request
        if last.get("role") == "user" and not synthetic:
            if (
                self.turn >= OVERFLOW_AT
                and not self.overflowed
                and self.exact.count_messages(messages) > WINDOW * 0.6
            ):
                self.overflowed = True
                self.log.append("overflow")
                raise ContextOverflowError(
                    f"This model's maximum context length is {WINDOW} tokens.", limit=WINDOW
                )
            step = self.steps[self.turn % len(self.steps)]
            cid = f"t{self.turn}"
            if step["kind"] == "write":
                path = REAL_PATHS[len(self.written) % len(REAL_PATHS)]
                self.written.append(path)
                return _calls(
                    ("write_file", {"path": path, "content": step["content"]}, cid),
                    text=step["thought"],
                )
            arguments = {"command": step["command"], "output": step["output"], "exit": step["exit"]}
            if step["exit"]:
                self.failures.append(step["command"])
            return _calls(("bash", arguments, cid), text=step["thought"])
        # after the tool result: a short final answer
        return Completion(content=f"Done with step {self.turn}.", finish_reason="stop")


def _calls(*items: tuple[str, dict[str, Any], str], text: str | None = None) -> Completion:
    return Completion(
        content=text,
        tool_calls=[
            {
                "id": cid,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for name, args, cid in items
        ],
        usage=CanonicalUsage(),
        finish_reason="tool_calls",
    )


@pytest.fixture(scope="module")
def steps() -> list[dict[str, Any]]:
    found = _real_steps()
    assert sum(s["kind"] == "write" for s in found) >= 5
    assert sum(s["kind"] == "shell" and s["exit"] for s in found) >= 1
    return found


def test_three_hundred_turns_in_a_16k_window(tmp_path: Path, steps: list[dict[str, Any]]) -> None:
    script = Script(steps)
    model = ScriptedChatModel(default=script)
    db = tmp_path / "state.db"
    workdir = tmp_path / "work"
    workdir.mkdir()
    store = SessionStore(db)
    home = tmp_path / "home"
    memory = MemoryManager(MemoryStore(home), home=home)
    agent = Agent(
        model,
        tools=[_bash_tool()],
        store=store,
        memory=memory,
        context_length=WINDOW,
        workdir=workdir,
        settings=ROTATION,  # the chain of continuations is checked below
    )
    script.schema_tokens = script.exact.count_request([], tools=agent.tools.schemas())
    first_session = agent.session_id
    compactions: list[CompactionEvent] = []
    ends: list[TurnEnd] = []
    for turn in range(TURNS):
        script.turn = turn
        for event in agent.run(f"Turn {turn}: carry on with the next step of the task."):
            if isinstance(event, CompactionEvent):
                script.log.append(f"compaction:{event.path}:{event.compacted}")
                compactions.append(event)
            elif isinstance(event, TurnEnd):
                ends.append(event)
    assert len(ends) == TURNS
    assert all(end.completed for end in ends), [e.error for e in ends if not e.completed][:3]

    # No request ever exceeded the window: its real size (the exact o200k count of messages
    # and tool schemas, which the scripted provider also reports as usage) plus nothing
    # else; the rough estimate is calibrated from that usage, so it is not the yardstick.
    exact = ExactCounter("o200k_base")
    for index, (messages, tools, max_tokens, _options) in enumerate(model.calls):
        real = exact.count_request(messages, tools=tools)
        where = (index, len(messages), max_tokens, str(messages[-1].get("content"))[:60])
        assert real <= WINDOW, (real, where)

    done = [c for c in compactions if c.compacted]
    assert len(done) >= 5, script.log[-20:]
    assert any(c.path == "reactive" for c in done)
    # The flush ran before every compaction, on every path.
    for position, entry in enumerate(script.log):
        if entry.startswith("compaction:") and entry.endswith(":True"):
            assert script.log[position - 1] == "flush", script.log[position - 3 : position + 1]
    assert script.flushes >= len(done)
    assert "flush note 1" in (home / "memories" / "MEMORY.md").read_text(encoding="utf-8")

    # Every compaction created a continuation, each the child of the one before.
    chain = store.compression_chain(agent.session_id)
    assert chain[0] == first_session and chain[-1] == agent.session_id
    assert len(chain) == len(done) + 1
    for parent, child in itertools.pairwise(chain):
        row = store.get_session(child)
        assert row is not None and row["parent_session_id"] == parent
        assert store.get_session(parent)["end_reason"] == "compression"  # type: ignore[index]
        validate_transcript(store.get_messages(child))
    assert store.get_messages(chain[-1]) == agent.messages  # the store holds the live history

    # After the last compaction the ledger names every file modified and the last failure.
    assert set(script.written) <= set(agent.ledger.files_modified())
    failure = agent.ledger.last_failure()
    assert failure is not None and script.failures
    shown = failure.command.strip().strip("`")
    assert shown == script.failures[-1].strip()[: len(shown)]
    injected = "\n".join(str(m.get("content")) for m in agent.messages if m.get("role") == "user")
    for path in set(script.written):
        assert path in injected, path
    # the newest compaction's ledger only, never a stale copy
    assert len([m for m in agent.messages if m.get("_agent_ledger")]) == 1

    # The anti-thrashing state survives a restart of the agent.
    # (the count as the agent writes it on change; tests/test_agent_persistence.py drives a
    # real thrash of two ineffective compactions through the same path)
    agent.compressor.ineffective_compression_count = 2  # type: ignore[attr-defined]
    save_guards(store, agent.session_id, agent.compressor, None)
    agent.close()
    store.close()
    store2 = SessionStore(db)
    again = Agent(
        ScriptedChatModel(default="ok"),
        store=store2,
        memory=MemoryManager(MemoryStore(home), home=home),
        context_length=WINDOW,
        session_id=chain[-1],
        settings=ROTATION,
    )
    assert again.session_id == chain[-1]
    assert again.compressor.ineffective_compression_count == 2  # type: ignore[attr-defined]
    assert not again.compressor.should_compress(WINDOW)
    again.close()
    store2.close()
