"""palimpsest.integrations.pydantic_ai_messages: pydantic-ai messages to our dicts and back, without loss."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import (
    BinaryContent,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryInfo,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.usage import RequestUsage

from palimpsest.integrations.keeper import storable
from palimpsest.integrations.pydantic_ai_messages import dicts_to_messages, messages_to_dicts

_when = st.datetimes(timezones=st.just(UTC)).map(lambda d: d.replace(microsecond=0))
_text = st.text(max_size=30)
_ids = st.text("abcdef0123456789", min_size=1, max_size=8)
_args = st.dictionaries(st.text(min_size=1, max_size=6), st.integers() | _text, max_size=3)
_user_item = (
    _text
    | st.builds(ImageUrl, url=st.just("https://example.com/a.png"))
    | st.just(BinaryContent(data=b"\x89PNG", media_type="image/png"))
)
_request_part = st.one_of(
    st.builds(SystemPromptPart, content=_text, timestamp=_when),
    st.builds(UserPromptPart, content=_text | st.lists(_user_item, max_size=3), timestamp=_when),
    st.builds(ToolReturnPart, tool_name=_text, content=_text, tool_call_id=_ids, timestamp=_when),
    st.builds(
        ToolReturnPart,
        tool_name=_text,
        content=_text,
        tool_call_id=_ids,
        timestamp=_when,
        outcome=st.just("retried"),
    ),
    st.builds(
        RetryFeedbackPart,
        content=_text,
        retry=st.builds(RetryInfo, cause=st.just("model_retry")),
        timestamp=_when,
    ),
)
_response_part = st.one_of(
    st.builds(TextPart, content=_text),
    st.builds(ToolCallPart, tool_name=_text, args=_args, tool_call_id=_ids),
    st.builds(ThinkingPart, content=_text),
)
_message = st.one_of(
    st.builds(ModelRequest, parts=st.lists(_request_part, min_size=1, max_size=3), timestamp=_when),
    st.builds(
        ModelResponse,
        parts=st.lists(_response_part, max_size=3),
        model_name=st.none() | _text,
        timestamp=_when,
        usage=st.builds(RequestUsage, input_tokens=st.integers(0, 999)),
    ),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_message, max_size=5))
def test_messages_round_trip_through_our_dicts(messages: list[ModelMessage]) -> None:
    assert dicts_to_messages(messages_to_dicts(messages)) == messages


def test_visible_fields_alone_keep_text_calls_results_and_images() -> None:
    when = datetime(2026, 1, 1, tzinfo=UTC)
    image = BinaryContent(data=b"\x89PNG", media_type="image/png")
    messages: list[ModelMessage] = [
        ModelRequest(
            parts=[
                SystemPromptPart("be brief", timestamp=when),
                UserPromptPart(["look", image], timestamp=when),
            ]
        ),
        ModelResponse(parts=[ToolCallPart("grep", '{"q": "x"}', "c1")], timestamp=when),
        ModelRequest(parts=[ToolReturnPart("grep", "found", "c1", timestamp=when)]),
    ]
    bare = [
        {k: v for k, v in d.items() if not k.startswith("_")} for d in messages_to_dicts(messages)
    ]
    assert bare[1]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    back = dicts_to_messages(bare)
    assert [type(m) for m in back] == [ModelRequest, ModelResponse, ModelRequest]
    text, picture = back[0].parts[1].content
    assert text == "look" and isinstance(picture, BinaryContent)
    assert (picture.data, picture.media_type) == (image.data, image.media_type)
    call = back[1].parts[0]
    assert (
        isinstance(call, ToolCallPart)
        and call.args_as_dict() == {"q": "x"}
        and call.tool_call_id == "c1"
    )
    result = back[2].parts[0]
    assert (
        isinstance(result, ToolReturnPart)
        and result.content == "found"
        and result.tool_name == "grep"
    )


def test_messages_read_back_from_the_store_come_back_from_their_json() -> None:
    """The store keeps the JSON record, not the live object: that is enough."""
    when = datetime(2026, 1, 1, tzinfo=UTC)
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("hi", timestamp=when)], timestamp=when),
        ModelResponse(
            parts=[TextPart("hello"), ToolCallPart("grep", {"q": "x"}, "c1")],
            model_name="gpt-test",
            timestamp=when,
            usage=RequestUsage(input_tokens=12, output_tokens=3),
        ),
    ]
    stored = storable(messages_to_dicts(messages))
    assert all("object" not in d.get("_pydantic_ai", {}) for d in stored)
    assert dicts_to_messages(json.loads(json.dumps(stored))) == messages
