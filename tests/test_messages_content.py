"""The content.py readers: every content shape and both tool-call shapes (dicts and objects)."""

from __future__ import annotations

import copy
import types
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import palimpsest.messages as messages_pkg
from palimpsest.messages import (
    append_text,
    call_arguments,
    call_id,
    call_name,
    content_text,
    for_provider,
    has_tool_calls,
    is_image_part,
    is_tool_result,
    message_text,
    parse_arguments,
    prepend_text,
    render_content,
    role_of,
    strip_internal_keys,
    tool_calls_of,
)

IMG_DATA = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
IMG_HTTP = {"type": "image_url", "image_url": {"url": "https://x.test/a.png"}}


def test_every_public_name_is_exported() -> None:
    # Submodules (formats_*, reading_*, history_files...) appear as attributes once imported.
    public = {
        n
        for n, value in vars(messages_pkg).items()
        if not n.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public == set(messages_pkg.__all__)


@pytest.mark.parametrize(
    ("content", "text"),
    [
        (None, ""),
        ("plain", "plain"),
        ([], ""),
        (["a", {"type": "text", "text": "b"}], "a\nb"),
        ([{"type": "input_text", "text": "in"}, {"type": "output_text", "text": "out"}], "in\nout"),
        ([{"text": "untyped"}], "untyped"),
        ([IMG_DATA, {"type": "text", "text": "after"}], "after"),
        ([{"type": "text", "text": None}], ""),
        ({"type": "text", "text": "single part"}, "single part"),
        (12, "12"),
    ],
)
def test_content_text(content: Any, text: str) -> None:
    assert content_text(content) == text
    assert message_text({"role": "user", "content": content}) == text


@pytest.mark.parametrize(
    ("content", "rendered"),
    [
        ("s", "s"),
        ([IMG_HTTP], "[image: https://x.test/a.png]"),
        ([IMG_DATA], "[image]"),
        (
            [{"type": "input_image", "image_url": "https://x.test/b.png"}],
            "[image: https://x.test/b.png]",
        ),
        ([{"type": "image", "source": {"type": "base64", "data": "AAAA"}}], "[image]"),
        ([{"type": "input_audio"}], "[input_audio]"),
        ([{"foo": 1}], "[attachment]"),
        (["a", IMG_DATA, {"type": "text", "text": "b"}], "a\n[image]\nb"),
        # An empty text part is text, not an attachment: it renders as nothing.
        ([{"type": "text", "text": ""}, "x"], "x"),
        (["", {"text": ""}, "y"], "y"),
    ],
)
def test_render_content_placeholders_never_copy_data_urls(content: Any, rendered: str) -> None:
    assert render_content(content) == rendered
    assert "base64" not in render_content(content)


def test_is_image_part() -> None:
    assert is_image_part(IMG_DATA)
    assert is_image_part({"type": "input_image"})
    assert is_image_part({"type": "image"})
    assert not is_image_part({"type": "text", "text": "x"})
    assert not is_image_part("image")


def dict_call(cid: str = "c1") -> dict[str, Any]:
    return {
        "id": cid,
        "type": "function",
        "function": {"name": "bash", "arguments": '{"cmd": "ls"}'},
    }


def object_call() -> Any:
    fn = SimpleNamespace(name="bash", arguments='{"cmd": "ls"}')
    return SimpleNamespace(id="c1", type="function", function=fn)


@pytest.mark.parametrize("call", [dict_call(), object_call()], ids=["dict", "object"])
def test_call_readers_accept_dicts_and_objects(call: Any) -> None:
    assert call_id(call) == "c1"
    assert call_name(call) == "bash"
    assert call_arguments(call) == '{"cmd": "ls"}'
    assert parse_arguments(call) == {"cmd": "ls"}


def test_call_readers_on_odd_calls() -> None:
    responses_style = {
        "type": "function_call",
        "call_id": "r1",
        "id": "fc_1",
        "name": "f",
        "arguments": {"a": 1},
    }
    assert call_id(responses_style) == "r1"
    assert call_name(responses_style) == "f"
    assert call_arguments(responses_style) == '{"a": 1}'
    empty: dict[str, Any] = {}
    assert (call_id(empty), call_name(empty), call_arguments(empty)) == ("", "unknown", "")
    assert parse_arguments(empty) == {}
    assert parse_arguments({"function": {"name": "f", "arguments": "not json"}}) == {}
    assert parse_arguments({"function": {"name": "f", "arguments": "[1, 2]"}}) == {}


def test_roles_and_tool_call_lists() -> None:
    asks = {"role": "assistant", "content": None, "tool_calls": (dict_call(),)}
    assert role_of(asks) == "assistant"
    assert role_of({"content": "x"}) == ""
    assert role_of({"role": 3}) == ""
    assert tool_calls_of(asks) == [dict_call()]
    assert tool_calls_of({"role": "assistant", "tool_calls": None}) == []
    assert has_tool_calls(asks)
    assert not has_tool_calls({"role": "user", "tool_calls": [dict_call()]})
    assert not has_tool_calls({"role": "assistant", "tool_calls": []})
    assert is_tool_result({"role": "tool", "tool_call_id": "c1", "content": ""})
    assert not is_tool_result(asks)


def test_internal_keys_are_stripped_without_touching_the_input() -> None:
    original: list[dict[str, Any]] = [
        {"role": "user", "content": "x", "_id": 4, "name": "n"},
        {"role": "tool", "_x": {}},
    ]
    snapshot = copy.deepcopy(original)
    assert strip_internal_keys(original[0]) == {"role": "user", "content": "x", "name": "n"}
    assert for_provider(original) == [
        {"role": "user", "content": "x", "name": "n"},
        {"role": "tool"},
    ]
    assert original == snapshot


@pytest.mark.parametrize(
    ("content", "appended", "prepended"),
    [
        (None, "T", "T"),
        ("", "T", "T"),
        ("body", "body\n\nT", "T\n\nbody"),
        (
            [IMG_DATA],
            [IMG_DATA, {"type": "text", "text": "T"}],
            [{"type": "text", "text": "T"}, IMG_DATA],
        ),
    ],
)
def test_append_and_prepend_text(content: Any, appended: Any, prepended: Any) -> None:
    snapshot = copy.deepcopy(content)
    assert append_text(content, "T") == appended
    assert prepend_text(content, "T") == prepended
    assert content == snapshot


def test_custom_separator() -> None:
    assert append_text("a", "b", sep=" | ") == "a | b"
    assert prepend_text("a", "b", sep="") == "ba"


@given(st.lists(st.text(max_size=20), max_size=5), st.text(max_size=20))
def test_append_keeps_all_text(pieces: list[str], extra: str) -> None:
    content: list[Any] = [{"type": "text", "text": p} for p in pieces]
    grown = append_text(content, extra)
    assert content_text(grown) == "\n".join(t for t in [*pieces, extra] if t)
    assert len(grown) == len(content) + 1


def test_arguments_object() -> None:
    from palimpsest.messages.content import arguments_object

    assert arguments_object('{"a": 1}') == {"a": 1}
    assert arguments_object({"b": 2}) == {"b": 2}
    assert arguments_object("[1]") == {} and arguments_object("{bad") == {}
    assert arguments_object(None) == {} and arguments_object("[" * 100_000) == {}
