"""Transcripts cut into agent runs, and tools that give recorded results back."""

from __future__ import annotations

from agent_helpers import NATIVE_TRANSCRIPT as NATIVE
from agent_helpers import call as tool_call
from conftest import REAL_TRANSCRIPTS
from palimpsest import load_transcript
from palimpsest.agent.replay_script import NO_RECORDED_RESULT, build_script, replay_tools
from palimpsest.agent.tools import ToolContext


class TestBuildScript:
    def test_native_transcript_becomes_one_run_per_user_message(self) -> None:
        script = build_script(NATIVE)
        assert script.system == "You are a coding agent."
        assert [t.user for t in script.turns] == ["List the files", "Thanks"]
        assert [len(t.replies) for t in script.turns] == [2, 1]
        first = script.turns[0].replies[0]
        assert first["content"] == "Looking."
        assert first["tool_calls"][0]["function"] == {"name": "shell", "arguments": '{"cmd": "ls"}'}
        assert script.tool_results == {"c1": ("a.py\nb.py",)}
        assert script.tool_names == ["shell"]
        assert script.native
        assert script.skipped == 0

    def test_text_actions_make_the_observation_the_next_user_message(self) -> None:
        path = REAL_TRANSCRIPTS / "mini-swe-agent" / "local.traj.json"
        messages = load_transcript(path)
        script = build_script(messages)
        assert not script.native
        assert script.turns[0].kind == "request"
        assert {t.kind for t in script.turns[1:]} == {"observation"}
        # every recorded assistant message is replayed, none invented
        recorded = [m for m in messages if m["role"] == "assistant"]
        assert len(script.replies) == len(recorded)
        users = [m for m in messages if m["role"] == "user"]
        assert script.turns[1].user == users[1]["content"]

    def test_consecutive_user_messages_start_one_run(self) -> None:
        script = build_script(
            [
                {"role": "user", "content": "first"},
                {"role": "user", "content": "second"},
                {"role": "assistant", "content": "ok"},
            ]
        )
        assert [t.user for t in script.turns] == ["first\n\nsecond"]

    def test_an_answer_followed_by_more_assistant_text_is_one_reply(self) -> None:
        script = build_script(
            [
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": "thinking"},
                {
                    "role": "assistant",
                    "content": "acting",
                    "tool_calls": [tool_call("t", cid="x", arguments={})],
                },
                {"role": "tool", "tool_call_id": "x", "content": "done"},
                {"role": "assistant", "content": "finished"},
            ]
        )
        replies = script.turns[0].replies
        assert [r["content"] for r in replies] == ["thinking\n\nacting", "finished"]
        assert replies[0]["tool_calls"][0]["id"] == "x"

    def test_messages_that_cannot_be_placed_are_counted_not_invented(self) -> None:
        script = build_script(
            [
                {"role": "assistant", "content": "before any user"},
                {"role": "tool", "tool_call_id": "nobody", "content": "orphan"},
                {"role": "user", "content": "hi"},
                {"role": "system", "content": "late system"},
                {"role": "assistant", "content": "hello"},
            ]
        )
        assert script.skipped == 3
        assert [t.user for t in script.turns] == ["hi"]
        assert script.replies == [{"role": "assistant", "content": "hello"}]

    def test_reused_call_ids_keep_every_result_in_order(self) -> None:
        path = REAL_TRANSCRIPTS / "swe-agent" / "marshmallow-1867__function_calling.traj"
        messages = load_transcript(path)
        script = build_script(messages)
        recorded = [m["content"] for m in messages if m["role"] == "tool"]
        assert sum(len(v) for v in script.tool_results.values()) == len(recorded)
        tools = {t.name: t for t in replay_tools(script)}
        answers = []
        for reply in script.replies:
            for call in reply.get("tool_calls", ()):
                name = call["function"]["name"]
                answers.append(tools[name].function(context=ToolContext(call_id=call["id"])))
        assert answers == recorded


class TestReplayTools:
    def test_without_the_call_id_results_come_in_recorded_order_per_tool(self) -> None:
        script = build_script(
            [
                {"role": "user", "content": "go"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        tool_call("look", cid="a", arguments={}),
                        tool_call("look", cid="b", arguments={}),
                    ],
                },
                {"role": "tool", "tool_call_id": "a", "content": "first"},
                {"role": "tool", "tool_call_id": "b", "content": "second"},
            ]
        )
        (look,) = replay_tools(script)
        assert look.function(context=ToolContext(call_id="b")) == "second"
        assert look.function(context=ToolContext()) == "first"
        assert look.function(context=ToolContext()) == NO_RECORDED_RESULT

    def test_parallel_calls_without_ids_are_matched_by_arguments(self) -> None:
        calls = [
            tool_call("read", cid="a", arguments={"path": "x"}),
            tool_call("read", cid="b", arguments={"path": "y"}),
        ]
        script = build_script(
            [
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": None, "tool_calls": calls},
                {"role": "tool", "tool_call_id": "a", "content": "contents of x"},
                {"role": "tool", "tool_call_id": "b", "content": "contents of y"},
            ]
        )
        (read,) = replay_tools(script)
        assert read.function(context=ToolContext(), path="y") == "contents of y"
        assert read.function(context=ToolContext(), path="x") == "contents of x"

    def test_a_call_with_no_recorded_result_says_so(self) -> None:
        script = build_script(
            [
                {"role": "user", "content": "go"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [tool_call("look", cid="k", arguments={})],
                },
            ]
        )
        (look,) = replay_tools(script)
        assert look.name == "look"
        assert look.parameters["additionalProperties"] is True
        assert look.function(context=ToolContext(call_id="k"), anything=1) == NO_RECORDED_RESULT
        assert look.schema()["function"]["name"] == "look"

    def test_a_name_no_tool_may_have_gets_no_replay_tool(self) -> None:
        script = build_script(
            [
                {"role": "user", "content": "go"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        tool_call("functions.bash", cid="a", arguments={}),
                        tool_call("bash", cid="b", arguments={}),
                    ],
                },
            ]
        )
        assert script.tool_names == ["functions.bash", "bash"]
        assert [t.name for t in replay_tools(script)] == ["bash"]
