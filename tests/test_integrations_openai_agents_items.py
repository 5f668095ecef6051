"""palimpsest.integrations.openai_agents_items: Agents SDK items to our dicts and back, without loss."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from palimpsest.integrations.openai_agents_items import dicts_to_items, items_to_dicts

_text = st.text(max_size=30)
_ids = st.text("abcdef0123456789", min_size=1, max_size=8)
_input_message = st.builds(
    lambda role, content: {"role": role, "content": content},
    st.sampled_from(["user", "system", "developer"]),
    _text
    | st.lists(
        st.builds(lambda t: {"type": "input_text", "text": t}, _text)
        | st.just(
            {"type": "input_image", "image_url": "data:image/png;base64,AA", "detail": "auto"}
        ),
        max_size=2,
    ),
)
_output_message = st.builds(
    lambda text, i: {
        "type": "message",
        "id": f"msg_{i}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    },
    _text,
    _ids,
)
_call = st.builds(
    lambda i, name: {"type": "function_call", "call_id": i, "name": name, "arguments": "{}"},
    _ids,
    _text,
)
_output = st.builds(
    lambda i, out: {"type": "function_call_output", "call_id": i, "output": out}, _ids, _text
)
_reasoning = st.builds(
    lambda i, t: {
        "type": "reasoning",
        "id": f"rs_{i}",
        "summary": [{"type": "summary_text", "text": t}],
    },
    _ids,
    _text,
)


@settings(max_examples=80, deadline=None)
@given(st.lists(_input_message | _output_message | _call | _output | _reasoning, max_size=8))
def test_items_round_trip_through_our_dicts(items: list[dict[str, Any]]) -> None:
    assert dicts_to_items(items_to_dicts(items)) == items


def test_visible_fields_alone_keep_text_calls_results_and_images() -> None:
    items = [
        {"role": "developer", "content": "be brief"},
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "look"},
                {"type": "input_image", "image_url": "data:image/png;base64,AA", "detail": "auto"},
            ],
        },
        {"role": "assistant", "content": "checking"},
        {"type": "function_call", "call_id": "c1", "name": "grep", "arguments": '{"q": "x"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "found"},
    ]
    bare = [{k: v for k, v in d.items() if not k.startswith("_")} for d in items_to_dicts(items)]
    assert [d["role"] for d in bare] == ["system", "user", "assistant", "tool"]
    assert bare[2]["tool_calls"][0] == {
        "id": "c1",
        "type": "function",
        "function": {"name": "grep", "arguments": '{"q": "x"}'},
    }
    back = dicts_to_items(bare)
    assert back[1] == items[1] and back[2:] == items[2:]
    assert back[0] == {"role": "system", "content": "be brief"}
