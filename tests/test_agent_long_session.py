"""A 300-turn scripted session from real transcript turns, in a 16K window (issue 9).

The model is a script that answers from real SWE-agent turns: every third user turn it
writes a file (content taken from the transcript's tool outputs), now and then it runs a
shell command that fails, and it always ends with a real assistant message. One
call in the middle is refused with a context overflow, as a provider would. The test
checks the promises of the issue's acceptance:

* no request ever exceeds the window;
* every compaction starts a continuation, and the flush ran before every compaction,
  the reactive one included;
* after the last compaction the ledger names every file modified in the whole session
  and the last failing command;
* the anti-thrashing state survives a restart of the agent.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agent_helpers import call, calls, memory_manager
from conftest import SHARED_TRANSCRIPTS
from palimpsest import ScriptedChatModel
from palimpsest.agent.events import CompactionEvent, TurnEnd
from palimpsest.agent.flush import FLUSH_MESSAGE
from palimpsest.agent.loop import Agent
from palimpsest.errors import ContextOverflowError
from palimpsest.providers.base import Completion
from palimpsest.storage.sessions import SessionStore
from palimpsest.tokens import estimate_request_tokens_rough

WINDOW = 16_000
TURNS = 300
WRITE_EVERY = 3
FAIL_EVERY = 30
OVERFLOW_AT_TURN = 150

STEP = re.compile(r"\(step (\d+)\)$")
TRAJ = SHARED_TRANSCRIPTS / "swe-agent" / "marshmallow-1867__function_calling.traj"


def real_turns() -> tuple[list[str], list[str], list[str]]:
    history = json.loads(TRAJ.read_text())["history"]
    users = [str(m["content"])[:600] for m in history if m["role"] == "user"]
    answers = [str(m["content"]) for m in history if m["role"] == "assistant" and m["content"]]
    outputs = [str(m["content"])[:1_500] for m in history if m["role"] == "tool"]
    return users, answers, outputs


class Script:
    """Answers each request from the real turns; records what it was sent.

    Every ``WRITE_EVERY``-th user turn writes a file, every ``FAIL_EVERY``-th then runs
    a failing command; every turn ends with a real answer. The turn is read from the ``(step N)`` of the newest user request, since
    after a compaction the newest message may be the agent's own ledger or task list.
    """

    def __init__(self) -> None:
        self.users, self.answers, self.outputs = real_turns()
        self.step = -1
        self.turn = 0
        self.phase = "answered"
        self.largest = 0
        self.flushes = 0
        self.overflow_sent = False
        self.model: ScriptedChatModel | None = None

    def __call__(self, messages: list[dict[str, Any]]) -> Completion | str:
        assert self.model is not None
        tools = self.model.calls[-1][1]
        system = str(messages[0]["content"])
        self.largest = max(self.largest, estimate_request_tokens_rough(messages[1:], system, tools))
        if messages[-1]["role"] == "user" and messages[-1]["content"] == FLUSH_MESSAGE:
            self.flushes += 1
            return "Nothing new to save."
        step = max(
            int(found.group(1))
            for m in messages
            if m["role"] == "user" and (found := STEP.search(str(m["content"])))
        )
        if step != self.step:
            self.step, self.turn, self.phase = step, self.turn + 1, "new"
        if self.phase == "new":
            if self.turn == OVERFLOW_AT_TURN and not self.overflow_sent:
                self.overflow_sent = True
                raise ContextOverflowError("maximum context length is 16000 tokens", limit=WINDOW)
            self.phase = "wrote"
            if self.turn % WRITE_EVERY:
                self.phase = "answered"
                return (
                    self.answers[self.turn % len(self.answers)]
                    + " "
                    + self.outputs[self.turn % len(self.outputs)][:800]
                )
            content = self.outputs[self.turn % len(self.outputs)]
            path = f"src/mod_{self.turn}.py"
            return calls(call("write_file", {"path": path, "content": content}, f"w{self.turn}"))
        if self.phase == "wrote" and self.turn % FAIL_EVERY == 0:
            self.phase = "ran"
            command = f"python -c 'import sys; sys.exit({self.turn % 7 + 1})' # check {self.turn}"
            return calls(call("run_shell", {"command": command}, f"s{self.turn}"))
        self.phase = "answered"
        return self.answers[self.turn % len(self.answers)]


@pytest.mark.slow
def test_three_hundred_turns_in_a_16k_window(tmp_path: Path):
    script = Script()
    model = ScriptedChatModel(default=script)
    script.model = model
    db = tmp_path / "state.db"
    work = tmp_path / "work"
    work.mkdir()
    agent = Agent(
        model,
        store=SessionStore(db),
        memory=memory_manager(tmp_path / "home"),
        context_length=WINDOW,
        workdir=work,
    )
    first = agent.session_id
    compactions: list[CompactionEvent] = []
    for i in range(TURNS):
        events = list(agent.run(script.users[i % len(script.users)] + f" (step {i})"))
        compactions += [e for e in events if isinstance(e, CompactionEvent)]
        end = events[-1]
        assert isinstance(end, TurnEnd) and end.completed, end

    assert script.largest <= WINDOW
    done = [c for c in compactions if c.compacted]
    assert len(done) >= 5 and any(c.path == "reactive" for c in done)
    assert script.flushes == len(compactions)  # one flush before every compaction
    store = agent.store
    assert store is not None
    chain = store.compression_chain(agent.session_id)  # type: ignore[arg-type]
    assert chain[0] == first and len(chain) == len(done) + 1
    assert store.get_messages(chain[-1]) == agent.messages

    modified = set(agent.ledger.files_modified())
    assert modified == {f"src/mod_{t}.py" for t in range(WRITE_EVERY, TURNS + 1, WRITE_EVERY)}
    failure = agent.ledger.last_failure()
    assert failure is not None and f"# check {TURNS}" in failure.command
    rendered = agent.ledger.render() or ""
    assert f"Files modified ({TURNS // WRITE_EVERY})" in rendered and f"check {TURNS}" in rendered
    injected = [m for m in agent.messages if m.get("_agent_ledger")]
    assert len(injected) == 1  # the newest compaction's ledger, never a stale copy

    # the anti-thrashing state survives a restart
    agent.compressor.ineffective_compression_count = 2  # type: ignore[attr-defined]
    from palimpsest.agent.persistence import save_guards

    save_guards(store, agent.session_id, agent.compressor, None)
    sid = agent.session_id
    agent.close()
    store.close()
    again = Agent(
        ScriptedChatModel(default="ok"),
        store=SessionStore(db),
        session_id=sid,
        context_length=WINDOW,
    )
    assert again.session_id == sid
    assert again.compressor.ineffective_compression_count == 2  # type: ignore[attr-defined]
