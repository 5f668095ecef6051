"""OpenAI <-> Anthropic Messages conversion: roles, tools, tool results, images, markers."""

from __future__ import annotations

import base64
import copy
import itertools
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from palimpsest.providers.convert import (
    anthropic_content_to_openai,
    anthropic_finish_reason,
    anthropic_to_openai,
    anthropic_tools_to_openai,
    image_part_to_anthropic,
    openai_to_anthropic,
    openai_tool_choice_to_anthropic,
    openai_tools_to_anthropic,
)

PNG = base64.b64encode(b"\x89PNG fake").decode()


def call(cid: str, name: str, args: str) -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


def test_system_tools_and_results() -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "developer", "content": "Use metric units."},
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {
            "role": "assistant",
            "content": "Checking both.",
            "tool_calls": [
                call("c1", "get_weather", '{"city": "Paris"}'),
                call("c2", "get_weather", '{"city": "Rome"}'),
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "18 C"},
        {"role": "tool", "tool_call_id": "c2", "content": "24 C"},
        {"role": "assistant", "content": "Paris 18 C, Rome 24 C."},
    ]
    before = copy.deepcopy(messages)
    system, out = openai_to_anthropic(messages)
    assert messages == before
    assert system == "Be brief.\n\nUse metric units."
    assert [m["role"] for m in out] == ["user", "assistant", "user", "assistant"]
    assistant = out[1]["content"]
    assert assistant[0] == {"type": "text", "text": "Checking both."}
    assert assistant[1] == {
        "type": "tool_use",
        "id": "c1",
        "name": "get_weather",
        "input": {"city": "Paris"},
    }
    assert assistant[2]["input"] == {"city": "Rome"}
    results = out[2]["content"]  # consecutive tool results merged into one user turn
    assert results == [
        {"type": "tool_result", "tool_use_id": "c1", "content": "18 C"},
        {"type": "tool_result", "tool_use_id": "c2", "content": "24 C"},
    ]


def test_consecutive_same_role_messages_merge_with_tool_results_first() -> None:
    messages = [
        {"role": "user", "content": "a"},
        {"role": "user", "content": "b"},
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "f", "{}")]},
        {"role": "tool", "tool_call_id": "c1", "content": "done"},
        {"role": "user", "content": "next"},
    ]
    _, out = openai_to_anthropic(messages)
    assert [m["role"] for m in out] == ["user", "assistant", "user"]
    assert [b["text"] for b in out[0]["content"]] == ["a", "b"]
    assert [b["type"] for b in out[2]["content"]] == ["tool_result", "text"]


def test_images_data_url_and_http_url() -> None:
    messages = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Compare these"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                {
                    "type": "image_url",
                    "image_url": {"url": "https://example.com/cat.jpg", "detail": "high"},
                },
            ],
        }
    ]
    _, out = openai_to_anthropic(messages)
    blocks = out[0]["content"]
    assert blocks[1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": PNG},
    }
    assert blocks[2] == {
        "type": "image",
        "source": {"type": "url", "url": "https://example.com/cat.jpg"},
    }


def test_non_base64_data_url_is_encoded() -> None:
    block = image_part_to_anthropic(
        {"type": "image_url", "image_url": {"url": "data:image/svg+xml,%3Csvg%3E"}}
    )
    assert block is not None
    assert base64.b64decode(block["source"]["data"]) == b"<svg>"
    assert (
        image_part_to_anthropic({"type": "image_url", "image_url": {"url": "file:///x.png"}})
        is None
    )


def test_tool_result_with_image_content() -> None:
    messages = [
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "screenshot", "{}")]},
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": [
                {"type": "text", "text": "screen:"},
                {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{PNG}"}},
            ],
        },
    ]
    _, out = openai_to_anthropic(messages)
    result = out[1]["content"][0]
    assert result["type"] == "tool_result"
    assert result["content"][1]["source"]["media_type"] == "image/jpeg"


def test_cache_markers_survive_conversion() -> None:
    marker = {"type": "ephemeral"}
    messages = [
        {"role": "system", "content": [{"type": "text", "text": "sys", "cache_control": marker}]},
        {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": marker}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("c1", "f", "{}")],
            "cache_control": marker,
        },
        {"role": "tool", "tool_call_id": "c1", "content": "r", "cache_control": marker},
    ]
    system, out = openai_to_anthropic(messages)
    assert system == [{"type": "text", "text": "sys", "cache_control": marker}]
    assert out[0]["content"][0]["cache_control"] == marker
    assert out[1]["content"][-1] == {
        "type": "tool_use",
        "id": "c1",
        "name": "f",
        "input": {},
        "cache_control": marker,
    }
    assert out[2]["content"][0]["cache_control"] == marker


def test_empty_messages_are_dropped_and_invalid_arguments_become_empty_input() -> None:
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": ""},
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "f", "{not json")]},
    ]
    _, out = openai_to_anthropic(messages)
    assert len(out) == 2
    assert out[1]["content"] == [{"type": "tool_use", "id": "c1", "name": "f", "input": {}}]


def test_reply_blocks_to_openai() -> None:
    content, calls = anthropic_content_to_openai(
        [
            {"type": "text", "text": "Let me check. "},
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "get_weather",
                "input": {"location": "Zürich"},
            },
            {"type": "text", "text": "One moment."},
        ]
    )
    assert content == "Let me check. One moment."
    assert calls == [
        {
            "id": "toolu_1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"location": "Zürich"}'},
        }
    ]
    assert anthropic_content_to_openai([]) == (None, [])
    assert anthropic_finish_reason("tool_use") == "tool_calls"
    assert anthropic_finish_reason("max_tokens") == "length"
    assert anthropic_finish_reason("end_turn") == "stop"
    assert anthropic_finish_reason("refusal") == "refusal"


def test_anthropic_to_openai_inverse() -> None:
    openai_messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [call("c1", "get_weather", '{"city": "Paris"}')],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "18 C"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "And this?"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
            ],
        },
    ]
    system, anthropic_messages = openai_to_anthropic(openai_messages)
    back = anthropic_to_openai(anthropic_messages, system)
    assert back[0] == {"role": "system", "content": "Be brief."}
    assert back[1] == {"role": "user", "content": "Weather?"}
    assert back[2]["tool_calls"][0]["function"]["name"] == "get_weather"
    assert json.loads(back[2]["tool_calls"][0]["function"]["arguments"]) == {"city": "Paris"}
    assert back[3] == {"role": "tool", "tool_call_id": "c1", "content": "18 C"}
    assert back[4]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": f"data:image/png;base64,{PNG}"},
    }


def test_tools_both_ways() -> None:
    tool = {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Find things.",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        },
    }
    converted = openai_tools_to_anthropic([tool])
    assert converted == [
        {
            "name": "search",
            "description": "Find things.",
            "input_schema": tool["function"]["parameters"],
        }
    ]
    assert anthropic_tools_to_openai(converted) == [tool]
    bare = openai_tools_to_anthropic([{"name": "noop"}])
    assert bare == [{"name": "noop", "input_schema": {"type": "object", "properties": {}}}]
    native = {"name": "x", "input_schema": {"type": "object"}}
    assert openai_tools_to_anthropic([native]) == [native]


def test_tool_choice() -> None:
    assert openai_tool_choice_to_anthropic("auto") == {"type": "auto"}
    assert openai_tool_choice_to_anthropic("required") == {"type": "any"}
    assert openai_tool_choice_to_anthropic("none") == {"type": "none"}
    assert openai_tool_choice_to_anthropic({"type": "function", "function": {"name": "f"}}) == {
        "type": "tool",
        "name": "f",
    }
    assert openai_tool_choice_to_anthropic(None) is None


texts = st.text(min_size=1, max_size=8)
simple = st.lists(
    st.one_of(
        st.builds(lambda t: {"role": "user", "content": t}, texts),
        st.builds(lambda t: {"role": "assistant", "content": t}, texts),
        st.builds(lambda t: {"role": "system", "content": t}, texts),
    ),
    max_size=10,
)


@given(simple)
def test_roles_alternate_and_text_survives(messages: list[dict[str, Any]]) -> None:
    system, out = openai_to_anthropic(messages)
    roles = [m["role"] for m in out]
    assert all(a != b for a, b in itertools.pairwise(roles))
    sent = [b["text"] for m in out for b in m["content"]]
    assert sent == [m["content"] for m in messages if m["role"] != "system"]
    expected_system = [m["content"] for m in messages if m["role"] == "system"]
    assert system == ("\n\n".join(expected_system) if expected_system else None)
