"""The seed's before/after example (seed 001): 45 messages, ~95K tokens, 200K context.

Sizes follow the seed where it gives them. One adjustment: the pytest log at [39] is long
(~29K tokens rather than "5KB"). With the seed's own budget (tail = 20K tokens, 1.5x soft
ceiling) the tail starts at "Fix the failing tests" exactly when [38]+[39] outweigh that
ceiling; with a 5KB log the budget would reach much further back than the seed shows.
"""

from __future__ import annotations

import copy

from compaction_helpers import asst, call, sys_, tool, user
from palimpsest.compaction.compressor import ContextCompressor
from palimpsest.compaction.markers import COMPACTION_NOTE, SUMMARY_PREFIX
from palimpsest.messages import validate_transcript
from palimpsest.tokens import estimate_messages_tokens_rough


def seed_transcript() -> list[dict]:
    msgs = [
        sys_("You are a helpful assistant with terminal and file tools."),
        user("Help me set up a FastAPI project"),
        asst(None, [call("c0", "terminal", command="mkdir project")]),
        tool("c0", "directory created"),
        asst(
            None,
            [
                call(
                    "c1", "write_file", path="main.py", content="from fastapi import FastAPI\n" * 80
                )
            ],
        ),
        tool("c1", "file written (2.3KB)"),
    ]
    # [6..37]: 16 rounds of editing, testing and debugging with large outputs.
    for i in range(16):
        cid = f"d{i}"
        if i % 3 == 0:
            msgs.append(asst(None, [call(cid, "read_file", path=f"app/module_{i}.py")]))
            msgs.append(
                tool(cid, f"# module {i}\n" + "def handler():\n    return {'ok': True}\n" * 420)
            )
        elif i % 3 == 1:
            msgs.append(
                asst(None, [call(cid, "patch", path=f"app/module_{i}.py", old="a", new="b")])
            )
            msgs.append(tool(cid, "patched\n" + "context line\n" * 1300))
        else:
            msgs.append(asst(None, [call(cid, "terminal", command="pytest -q")]))
            msgs.append(
                tool(cid, '{"exit_code": 1}\n' + "FAILED tests/test_api.py::test_x\n" * 480)
            )
    msgs.append(asst(None, [call("c38", "terminal", command="pytest")]))
    msgs.append(
        tool("c38", "8 passed, 2 failed\n" + "E   AssertionError: fixture mismatch\n" * 3200)
    )
    msgs.append(user("Fix the failing tests"))
    msgs.append(asst(None, [call("c41", "read_file", path="tests/test_api.py")]))
    msgs.append(tool("c41", "import pytest\n" + "x = 1\n" * 500))
    msgs.append(asst("I see the issue with the test fixtures..."))
    msgs.append(user("Great, also add error handling"))
    return msgs


def test_seed_before_after_example() -> None:
    msgs = seed_transcript()
    assert len(msgs) == 45
    tokens = estimate_messages_tokens_rough(msgs)
    assert 85_000 <= tokens <= 105_000, tokens
    original = copy.deepcopy(msgs)

    compressor = ContextCompressor(200_000, quiet_mode=True)
    out = compressor.compress(msgs)

    assert msgs == original
    validate_transcript(out)
    # Head kept: system (with the note once), the request, and the first tool round.
    assert out[0]["content"] == msgs[0]["content"] + "\n\n" + COMPACTION_NOTE
    assert out[1:4] == msgs[1:4]
    # The summary follows the head; after a tool result the right role is assistant,
    # because a user summary would collide with the "Fix the failing tests" user message.
    summary = out[4]
    assert summary["role"] == "assistant" and summary["_compressed_summary"] is True
    assert summary["content"].startswith(SUMMARY_PREFIX)
    # The tail starts at "Fix the failing tests" and is verbatim.
    assert out[5:] == msgs[40:]
    # Every tool call has its result.
    calls = {c["id"] for m in out for c in m.get("tool_calls", [])}
    results = {m["tool_call_id"] for m in out if m["role"] == "tool"}
    assert calls == results == {"c0", "c41"}
    assert compressor.last_stats.after_tokens < tokens / 2
    # The extractive summary carries the files that were written or patched.
    for path in ["main.py", "app/module_1.py", "app/module_4.py"]:
        assert path in summary["content"]
