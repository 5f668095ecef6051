"""Tool rounds under the output budgets: a long scripted session on real tools and files.

The acceptance run of issue 10: 100 turns whose tool outputs range from 5 KB to 500 KB.
Every turn's results stay within the per-result threshold and the turn budget, every saved
output reads back whole through ``read_output``, and re-runnable outputs (``cat`` of a file,
an unchanged ``read_file``) are pointed at, never saved.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest

from agent_helpers import answer, call, calls
from palimpsest import ScriptedChatModel
from palimpsest.agent.loop import Agent
from palimpsest.agent.registry import tool
from palimpsest.config import Settings
from palimpsest.outputs.guard import POINTER_OPEN
from palimpsest.outputs.preview import PERSISTED_OPEN, extract_persisted_path
from palimpsest.outputs.retention import RetentionPolicy, live_digests
from palimpsest.outputs.store import OutputStore
from palimpsest.storage.sessions import SessionStore

RESULT_LIMIT = 100_000
TURN_BUDGET = 200_000


def _payload(seed: int, size: int) -> str:
    """Text of exactly ``size`` characters in numbered lines, different for every seed."""
    rng = random.Random(seed)
    words = ["alpha", "beta", "gamma", "delta", "fixture", "parser", "token", "ERROR", "ok"]
    block = [" ".join(rng.choice(words) for _ in range(10)) for _ in range(64)]
    # Numbered lines only until ``size`` is covered (every line is over 20 characters):
    # the same text as joining size // 20 + 1 of them and cutting, at a third of the cost.
    lines: list[str] = []
    length = -1
    for n in range(size // 20 + 1):
        if length >= size:
            break
        lines.append(f"{seed}:{n} {block[n % 64]}")
        length += len(lines[-1]) + 1
    return "\n".join(lines)[:size]


def _read_back(agent: Agent, name: str) -> str:
    """A saved output read whole through the model's own tool, window by window."""
    parts: list[str] = []
    offset = 0
    while True:
        outcome = agent.tools.call(
            "read_output", {"name": name, "offset": offset, "limit": 100_000}
        )
        assert not outcome.is_error, outcome.content
        header, _, body = outcome.content.partition("\n")
        found = re.search(r"bytes ([\d,]+)-([\d,]+) of ([\d,]+)\]$", header)
        assert found is not None, header
        end, total = (int(found.group(i).replace(",", "")) for i in (2, 3))
        if end < total:
            body, _, _ = body.rpartition("\n[read on with offset=")
        parts.append(body)
        if end >= total:
            return "".join(parts)
        offset = end


@pytest.mark.slow
def test_a_hundred_turns_of_large_outputs_stay_within_budget(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    rng = random.Random(10)
    produced: dict[str, str] = {}

    @tool
    def fetch_report(report: int, size: int) -> str:
        """Fetch a report from the (simulated) remote service: not repeatable.

        report: report number
        size: characters
        """
        text = _payload(10_000 + report, size)
        produced[f"fetch_{report}"] = text
        return text

    script: list[Any] = []
    expected_kinds: dict[str, str] = {}
    for turn in range(100):
        sizes = [rng.randint(5_000, 500_000) for _ in range(3)]
        name = f"data_{turn}.txt"
        (work / name).write_text(_payload(turn, sizes[0]), encoding="utf-8")
        # one shell call a turn (each costs a login shell): re-runnable and not, in turn
        shell = (
            call("run_shell", {"command": f"cat {name}"}, f"cat_{turn}")
            if turn % 2 == 0
            else call(
                "run_shell",
                {"command": f"yes 'line of turn {turn}' | head -c {sizes[2]}"},
                f"yes_{turn}",
            )
        )
        round_calls = [
            shell,
            call("fetch_report", {"report": turn, "size": sizes[1]}, f"fetch_{turn}"),
            call("read_file", {"path": name, "limit": 5_000}, f"read_{turn}"),
        ]
        expected_kinds.update(
            {
                f"cat_{turn}": "cat",
                f"yes_{turn}": "yes",
                f"fetch_{turn}": "fetch",
                f"read_{turn}": "read",
            }
        )
        script += [calls(*round_calls), answer(f"turn {turn} done")]

    settings = Settings()
    settings.compression.enabled = False
    outputs = OutputStore(tmp_path / "outputs")
    with SessionStore(tmp_path / "state.db") as store:
        agent = Agent(
            ScriptedChatModel(script),
            tools=[fetch_report],
            store=store,
            context_length=1_000_000,
            workdir=work,
            settings=settings,
            outputs=outputs,
        )
        for turn in range(100):
            list(agent.run(f"turn {turn}: gather the data"))
        tool_messages = [m for m in agent.messages if m.get("role") == "tool"]
        agent.close()

    assert len(tool_messages) == 300
    assert all(
        "tool result was too large" not in m["content"]
        for m in tool_messages
        if m["tool_call_id"].startswith("read_")
    )
    by_turn: dict[int, list[dict[str, Any]]] = {}
    for message in tool_messages:
        turn = int(message["tool_call_id"].rsplit("_", 1)[1])
        by_turn.setdefault(turn, []).append(message)
    saved_digests: set[str] = set()
    for turn, messages in by_turn.items():
        assert sum(len(m["content"]) for m in messages) <= TURN_BUDGET, turn
        for message in messages:
            content = message["content"]
            assert len(content) <= RESULT_LIMIT
            kind = expected_kinds[message["tool_call_id"]]
            if kind in ("cat", "read"):
                if len(content) > 5_000 and POINTER_OPEN in content:
                    assert PERSISTED_OPEN not in content
                    assert f"data_{turn}.txt" in content
                assert extract_persisted_path(content) is None  # re-runnable: never saved
                continue
            path = extract_persisted_path(content)
            if path is None:  # small enough to stay whole
                continue
            stored = outputs.resolve(path)
            assert stored is not None
            saved_digests.add(stored.digest)
            text = _read_back(agent, stored.digest)
            if kind == "fetch":
                assert text == produced[message["tool_call_id"]]
            else:
                assert text.rstrip("\n").endswith("exit code: 0")
    listed = {item.digest for item in outputs.list()}
    assert saved_digests and saved_digests <= listed
    # nothing re-runnable was written: every stored object is one a message points at
    assert listed == saved_digests
    stats = agent.output_guard.stats
    assert stats.pointers > 0 and stats.saved == len(saved_digests)
    assert stats.chars_kept_out_of_context > 0 and stats.bytes_not_written > 0


def test_an_output_the_agent_saved_survives_gc_while_its_session_is_open(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    command = "yes 'FAILED test_parse' | head -n 20000; echo '1 failed'"
    script = [calls(call("run_shell", {"command": command}, "c1")), answer("one test fails")]
    outputs = OutputStore(tmp_path / "outputs")
    with SessionStore(tmp_path / "state.db") as store:
        agent = Agent(
            ScriptedChatModel(script),
            store=store,
            context_length=32_000,
            workdir=work,
            outputs=outputs,
        )
        list(agent.run("run the tests"))
        block = next(m["content"] for m in agent.messages if m.get("role") == "tool")
        saved = outputs.resolve(extract_persisted_path(block) or "")
        assert saved is not None
        found = agent.tools.call("read_output", {"name": saved.digest[:12], "pattern": "1 failed"})
        assert "line 20001" in found.content
        tiny = RetentionPolicy(max_total_bytes=1, max_age_seconds=1)
        later = saved.created + 86_400
        kept = outputs.gc(tiny, live=live_digests(store, outputs), now=later)
        assert kept.removed_count == 0 and saved.path.exists()
        store.end_session(agent.session_id or "", "user_exit")
        gone = outputs.gc(tiny, live=live_digests(store, outputs), now=later)
        assert gone.removed_count == 1 and not saved.path.exists()
        agent.close()
