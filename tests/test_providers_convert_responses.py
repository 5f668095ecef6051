"""Chat messages and tools <-> Responses items, both ways, without touching the input."""

from __future__ import annotations

import copy
import json

from hypothesis import given
from hypothesis import strategies as st

from palimpsest.providers.convert_responses import (
    RESPONSES_ITEMS_KEY,
    messages_to_input,
    output_to_message_parts,
    responses_finish_reason,
    tools_to_responses,
)

CONVERSATION = [
    {"role": "system", "content": "You are terse."},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is in this picture?"},
            {
                "type": "image_url",
                "image_url": {"url": "data:image/png;base64,iVBOR", "detail": "low"},
            },
        ],
    },
    {
        "role": "assistant",
        "content": "Let me check the weather too.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"location":"Paris"}'},
            }
        ],
        RESPONSES_ITEMS_KEY: [{"type": "reasoning", "id": "rs_1", "encrypted_content": "opaque"}],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "18 C, cloudy"},
]


def test_messages_become_items_in_order() -> None:
    before = copy.deepcopy(CONVERSATION)
    items = messages_to_input(CONVERSATION)
    assert before == CONVERSATION  # pure
    assert items[0] == {"role": "system", "content": "You are terse."}
    assert items[1]["content"] == [
        {"type": "input_text", "text": "What is in this picture?"},
        {"type": "input_image", "image_url": "data:image/png;base64,iVBOR", "detail": "low"},
    ]
    # The opaque reasoning item goes back first, then the text, then the call.
    assert items[2] == {"type": "reasoning", "id": "rs_1", "encrypted_content": "opaque"}
    assert items[3] == {"role": "assistant", "content": "Let me check the weather too."}
    assert items[4] == {
        "type": "function_call",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": '{"location":"Paris"}',
    }
    assert items[5] == {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": "18 C, cloudy",
    }


def test_tools_are_flattened_and_builtin_tools_pass() -> None:
    chat = [
        {
            "type": "function",
            "function": {"name": "f", "description": "d", "parameters": {"type": "object"}},
        },
        {"type": "web_search"},
    ]
    assert tools_to_responses(chat) == [
        {"type": "function", "name": "f", "description": "d", "parameters": {"type": "object"}},
        {"type": "web_search"},
    ]


def test_output_items_read_back() -> None:
    output = [
        {"type": "compaction", "id": "cmp_1", "encrypted_content": "state"},
        {
            "type": "message",
            "content": [
                {"type": "output_text", "text": "Hi "},
                {"type": "output_text", "text": "there"},
            ],
        },
        {"type": "function_call", "call_id": "call_9", "name": "ls", "arguments": "{}"},
    ]
    text, calls, kept = output_to_message_parts(output)
    assert text == "Hi there"
    assert calls == [
        {"id": "call_9", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
    ]
    assert kept == [{"type": "compaction", "id": "cmp_1", "encrypted_content": "state"}]


def test_finish_reasons() -> None:
    assert responses_finish_reason({"status": "completed"}, False) == "stop"
    assert responses_finish_reason({"status": "completed"}, True) == "tool_calls"
    cut = {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}}
    assert responses_finish_reason(cut, False) == "length"


_text = st.text(max_size=20)
_call = st.builds(
    lambda i, name, args: {
        "id": f"call_{i}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    },
    st.integers(0, 999),
    st.from_regex(r"[a-z_]{1,12}", fullmatch=True),
    st.dictionaries(st.from_regex(r"[a-z]{1,5}", fullmatch=True), _text, max_size=3),
)


@given(st.lists(st.tuples(_text, st.lists(_call, max_size=3)), max_size=6))
def test_assistant_text_and_calls_survive_the_round_trip(
    turns: list[tuple[str, list[dict]]],
) -> None:
    """What an assistant turn says and calls comes back from its items unchanged."""
    for text, calls in turns:
        message = {"role": "assistant", "content": text, "tool_calls": calls}
        items = messages_to_input([message])
        output = [
            {"type": "message", "content": [{"type": "output_text", "text": i["content"]}]}
            if "role" in i
            else i
            for i in items
        ]
        back_text, back_calls, _ = output_to_message_parts(output)
        assert (back_text or "") == text
        assert back_calls == calls
