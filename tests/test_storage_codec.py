"""The message codec: any OpenAI-format message survives the trip into a row and back."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from palimpsest.storage.codec import count_tool_calls, decode_row, encode_message

json_leaf = st.none() | st.booleans() | st.integers() | st.text(max_size=20)
json_value = st.recursive(
    json_leaf,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
roles = st.sampled_from(["system", "user", "assistant", "tool", "developer"])
content = (
    st.none()
    | st.text()
    | st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": st.text()}), max_size=3)
)
optional_keys = st.dictionaries(
    st.sampled_from(
        [
            "name", "tool_call_id", "tool_calls", "reasoning", "reasoning_details",
            "finish_reason", "_compressed_summary", "_compressed_summary_has_user_turn",
            "vendor_key", "codex_message_items",
        ]
    ),
    json_value,
    max_size=5,
)  # fmt: skip


@given(role=roles, body=content, extra=optional_keys, with_content=st.booleans())
def test_encode_then_decode_is_identity(
    role: str, body: Any, extra: dict[str, Any], with_content: bool
) -> None:
    message: dict[str, Any] = {"role": role, **extra}
    if with_content:
        message["content"] = body
    assert decode_row(encode_message(message)) == message


def test_a_derived_tool_name_is_indexed_but_not_exported() -> None:
    message = {"role": "tool", "tool_call_id": "c1", "content": "42"}
    row = encode_message(message, tool_name="calculator")
    assert row["tool_name"] == "calculator"
    assert decode_row(row) == message


def test_list_content_is_json_text_with_a_flag() -> None:
    row = encode_message({"role": "user", "content": [{"type": "text", "text": "hé"}]})
    assert row["content"] == '[{"type":"text","text":"hé"}]' and row["content_json"] == 1
    assert "\x00" not in row["content"]


def test_tool_call_counting() -> None:
    calls = [{"id": "a"}, {"id": "b"}]
    assert count_tool_calls({"role": "assistant", "tool_calls": calls}) == 2
    assert count_tool_calls({"role": "assistant", "tool_calls": {"id": "a"}}) == 1
    assert count_tool_calls({"role": "tool", "tool_calls": calls}) == 0
    assert count_tool_calls({"role": "assistant"}) == 0
