"""Checks and repairs at the door of compress: each fuzz finding of issue 8 has its case."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from compaction_helpers import asst, call, sys_, tool, user
from palimpsest.compaction.compressor import ContextCompressor
from palimpsest.compaction.repair import check_messages, normalize_messages
from palimpsest.errors import TranscriptError
from palimpsest.messages import validate_transcript
from palimpsest.tokens import ExactCounter

EXACT = ExactCounter()


def compress(messages: list[Any], window: int = 200_000, **kw: Any) -> list[dict[str, Any]]:
    original = copy.deepcopy(messages)
    out = ContextCompressor(window, quiet_mode=True, **kw).compress(messages, force=True)
    assert messages == original
    validate_transcript(out, strict=True)
    assert EXACT.count_messages(out) <= EXACT.count_messages(messages)
    return out


@pytest.mark.parametrize(
    ("messages", "index", "phrase"),
    [
        ([user("hi"), "hello"], 1, "must be a JSON object (dict), got str"),
        ([user("hi"), None], 1, "got NoneType"),
        ([{"content": "x"}], 0, "has no 'role'"),
        ([user("a"), {"role": 3, "content": "x"}], 1, "'role' must be a string, got int"),
        ([{"role": "bot", "content": "x"}], 0, "unknown role 'bot'"),
        ([asst(None) | {"tool_calls": "ls"}], 0, "'tool_calls' must be a list or null"),
        ([asst(None) | {"tool_calls": [5]}], 0, "tool call 0 must be an object"),
    ],
)
def test_malformed_elements_raise_transcript_error_naming_the_index(
    messages: list[Any], index: int, phrase: str
) -> None:
    """Issue 8: a non-dict element raised AttributeError from deep inside compress."""
    for run in (
        check_messages,
        lambda m: ContextCompressor(1_000).compress(m),
        lambda m: ContextCompressor(1_000).has_content_to_compress(m),
    ):
        with pytest.raises(TranscriptError) as info:
            run(messages)
        assert info.value.index == index and phrase in str(info.value)


def test_not_a_list_is_refused() -> None:
    with pytest.raises(TranscriptError, match="must be a list"):
        check_messages({"role": "user"})


def test_clean_input_passes_through_as_the_same_objects() -> None:
    msgs = [sys_(), user("go"), asst(None, [call("a")]), tool("a", "ok"), asst("done")]
    out, report = normalize_messages(msgs)
    assert report.clean and all(a is b for a, b in zip(out, msgs, strict=True))


def test_tool_calls_null_is_kept_and_valid() -> None:
    msgs = [user("go") | {"tool_calls": None}, asst("ok") | {"tool_calls": None}]
    out = compress(msgs)
    assert out[0]["tool_calls"] is None


def test_call_without_id_gets_a_deterministic_id_never_an_empty_one() -> None:
    """Issue 8: a call with no id got a stub result with tool_call_id ""."""
    msgs = [
        user("go"),
        asst(None, [{"type": "function", "function": {"name": "ls", "arguments": "{}"}}]),
    ]
    out, _ = normalize_messages(msgs)
    assert out[1]["tool_calls"][0]["id"] == "call_1_0"
    again, _ = normalize_messages(msgs)
    assert again == out
    result = ContextCompressor(200_000, quiet_mode=True).compress(msgs)
    assert all(m.get("tool_call_id") != "" for m in result)
    validate_transcript(result, strict=True)


def test_duplicate_ids_are_renamed_with_their_results() -> None:
    msgs = [user("go"), asst(None, [call("x", cmd="a"), call("x", cmd="b")])]
    msgs += [tool("x", "first"), tool("x", "second"), asst("done")]
    out, report = normalize_messages(msgs)
    ids = [c["id"] for c in out[1]["tool_calls"]]
    assert ids == ["x", "x_2"] and report.ids_added == 1
    assert [m["tool_call_id"] for m in out[2:4]] == ["x", "x_2"]
    assert [m["content"] for m in out[2:4]] == ["first", "second"]
    validate_transcript(out, strict=True)


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"path": "a.py"}, '{"path": "a.py"}'),
        (None, "{}"),
        ("", "{}"),
        ("not json {", '{"raw_arguments": "not json {"}'),
        ('{"ok": 1}', '{"ok": 1}'),
    ],
)
def test_arguments_become_json_strings(arguments: Any, expected: str) -> None:
    """Issue 8: dict arguments passed into the result."""
    msgs = [
        user("go"),
        asst(
            None,
            [{"id": "c", "type": "function", "function": {"name": "f", "arguments": arguments}}],
        ),
    ]
    out, _ = normalize_messages(msgs)
    assert out[1]["tool_calls"][0]["function"]["arguments"] == expected


def test_non_string_content_and_bare_string_parts() -> None:
    """Issue 8: non-string content passed into the result."""
    msgs = [
        {"role": "user", "content": 42},
        {"role": "assistant", "content": {"a": 1}},
        {"role": "user", "content": ["plain", {"text": "untyped"}, 7]},
        {"role": "assistant", "content": None},
    ]
    out, _ = normalize_messages(msgs)
    assert out[0]["content"] == "42" and out[1]["content"] == '{"a": 1}'
    assert out[2]["content"] == [
        {"type": "text", "text": "plain"},
        {"text": "untyped", "type": "text"},
        {"type": "text", "text": "7"},
    ]
    assert out[3]["content"] == ""
    validate_transcript(out, strict=True)


def test_tool_calls_on_a_user_message_are_removed() -> None:
    """Issue 8: tool_calls on a user message passed into the result."""
    msgs = [user("go") | {"tool_calls": [call("u")]}, tool("u", "r"), asst("ok")]
    out = compress(msgs)
    assert "tool_calls" not in out[0]
    assert not any(m["role"] == "tool" for m in out)


def test_legacy_function_pair_becomes_a_tool_call_and_result() -> None:
    """Issue 8: role "function" passed into the result."""
    legacy = {
        "role": "assistant",
        "content": None,
        "function_call": {"name": "ls", "arguments": "{}"},
    }
    msgs = [
        user("list"),
        legacy,
        {"role": "function", "name": "ls", "content": "a.py"},
        asst("a.py"),
    ]
    out, _ = normalize_messages(msgs)
    assert "function_call" not in out[1]
    cid = out[1]["tool_calls"][0]["id"]
    assert out[2] == {"role": "tool", "tool_call_id": cid, "content": "a.py"}
    validate_transcript(out, strict=True)


def test_a_function_result_without_its_call_is_removed() -> None:
    msgs = [user("list"), {"role": "function", "name": "ls", "content": "a.py"}, asst("ok")]
    out, report = normalize_messages(msgs)
    assert [m["role"] for m in out] == ["user", "assistant"] and report.messages_dropped == 1


def test_empty_tool_calls_list_is_removed() -> None:
    out, _ = normalize_messages([user("a"), asst("b") | {"tool_calls": []}])
    assert "tool_calls" not in out[1]


def test_no_op_repairs_that_would_grow_fall_back_to_removal() -> None:
    """A stub result costs more than the stray result it replaces: the repair must not grow."""
    msgs = [user("q"), asst("fix", [call("c0", path="a.py")]), tool("ghost", "stray"), asst("fix")]
    out = compress(msgs, window=1_500)
    assert not any(m["role"] == "tool" for m in out)


def test_compaction_growth_is_confirmed_with_the_exact_counter() -> None:
    """Issue 8: 9 fuzzed results had more o200k tokens than their input, the rough count fewer.

    Tool-call JSON is heavy by chars/4 and light in real tokens: a summary that replaces
    sixteen tiny call groups is smaller by the rough rule (577 against 238 exact tokens
    when only the rough rule decides) and must be refused.
    """
    msgs = [sys_("s"), user("开始"), asst("好"), user("修复解析器中的错误并运行测试")]
    for i in range(16):
        msgs += [asst(None, [call(f"c{i}")]), tool(f"c{i}", "")]
    msgs += [asst("好"), user("继续"), asst("好")]
    compressor = ContextCompressor(1_500, quiet_mode=True)
    rough_after = compressor.compress(msgs, force=True)
    assert compressor.last_compress_refused_would_grow
    assert EXACT.count_messages(rough_after) <= EXACT.count_messages(msgs)
    compress(msgs, window=1_500)


def test_numeric_ids_become_strings() -> None:
    msgs = [
        user("go"),
        asst(None, [{"id": 7, "type": "function", "function": {"name": "f", "arguments": "{}"}}]),
    ]
    msgs.append({"role": "tool", "tool_call_id": 7, "content": "r"})
    out, _ = normalize_messages(msgs)
    assert out[1]["tool_calls"][0]["id"] == "7" and out[2]["tool_call_id"] == "7"
    validate_transcript(out, strict=True)
    assert json.loads(json.dumps(out)) == out


def test_unmeasurable_values_are_transcript_errors_naming_the_message() -> None:
    """Python's 4,300-digit limit raised ValueError from the token counter."""
    import sys

    sys.set_int_max_str_digits(0)
    big = 10**5_000
    sys.set_int_max_str_digits(4_300)
    deep: Any = "x"
    for _ in range(5_000):
        deep = [deep]
    for value in (big, deep):
        msgs = [user("hi"), {"role": "user", "content": value}, asst("ok")]
        with pytest.raises(TranscriptError) as info:
            ContextCompressor(1_000).compress(msgs)
        assert info.value.index == 1
