"""palimpsest.integrations.langchain_messages: LangChain messages to our dicts and back, without loss."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from palimpsest.integrations.langchain_messages import dicts_to_messages, messages_to_dicts

_text = st.text(max_size=40)
_ids = st.text("abcdef0123456789", min_size=1, max_size=8)
_args = st.dictionaries(st.text(min_size=1, max_size=8), st.integers() | _text, max_size=3)
_call = st.builds(lambda n, a, i: {"name": n, "args": a, "id": i}, _text, _args, _ids)
_image = st.builds(
    lambda url: {"type": "image_url", "image_url": {"url": url}},
    st.just("data:image/png;base64,AA"),
)
_blocks = st.lists(
    st.builds(lambda t: {"type": "text", "text": t}, _text)
    | _image
    | st.builds(lambda t: {"type": "reasoning", "reasoning": t}, _text),
    max_size=3,
)
_content = _text | _blocks
_meta = st.dictionaries(st.sampled_from(["model", "finish_reason"]), _text, max_size=2)
_message = st.one_of(
    st.builds(SystemMessage, content=_content),
    st.builds(HumanMessage, content=_content, id=st.none() | _ids, name=st.none() | _text),
    st.builds(
        AIMessage,
        content=_content,
        tool_calls=st.lists(_call, max_size=2),
        id=st.none() | _ids,
        response_metadata=_meta,
    ),
    st.builds(
        ToolMessage,
        content=_content,
        tool_call_id=_ids,
        name=st.none() | _text,
        status=st.sampled_from(["success", "error"]),
        artifact=st.none() | _args,
    ),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_message, max_size=6))
def test_messages_round_trip_through_our_dicts(messages: list[BaseMessage]) -> None:
    assert dicts_to_messages(messages_to_dicts(messages)) == messages


def test_visible_fields_alone_keep_text_calls_results_and_images() -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}
    messages = [
        SystemMessage("be brief"),
        HumanMessage([{"type": "text", "text": "look"}, image]),
        AIMessage("", tool_calls=[{"name": "grep", "args": {"q": "x"}, "id": "c1"}]),
        ToolMessage("found", tool_call_id="c1"),
    ]
    bare = [
        {k: v for k, v in m.items() if not k.startswith("_")} for m in messages_to_dicts(messages)
    ]
    assert bare[1]["content"][1] == image
    assert bare[2]["tool_calls"][0]["function"] == {"name": "grep", "arguments": '{"q": "x"}'}
    assert dicts_to_messages(bare) == messages
