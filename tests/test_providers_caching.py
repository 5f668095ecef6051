"""Anthropic cache_control placement (TK-33..TK-42): shapes, idempotency, no mutation."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from palimpsest.providers.caching import (
    apply_anthropic_cache_control,
    apply_cache_control,
    cache_marker,
    caching_enabled,
    count_cache_markers,
    effective_cache_ttl,
    strip_cache_control,
)

EPHEMERAL = {"type": "ephemeral"}


def conversation() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "u1"},
        {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "u2"},
        {"role": "assistant", "content": "a2"},
        {"role": "user", "content": "u3"},
    ]


def marked(message: dict[str, Any]) -> bool:
    return count_cache_markers([message]) > 0


def test_example_12_system_and_last_three() -> None:
    messages = conversation()
    before = copy.deepcopy(messages)
    out = apply_cache_control(messages, "5m")
    assert [marked(m) for m in out] == [True, False, False, True, True, True]
    assert count_cache_markers(out) == 4
    assert out[5]["content"] == [{"type": "text", "text": "u3", "cache_control": EPHEMERAL}]
    assert out[0]["content"] == [{"type": "text", "text": "sys", "cache_control": EPHEMERAL}]
    assert out[1] is messages[1] and out[2] is messages[2]  # unmarked: same objects
    assert out[5] is not messages[5]
    assert messages == before  # input list and dicts unchanged
    assert out is not messages


def test_example_13_three_applications_are_identical() -> None:
    once = apply_cache_control(conversation(), "5m")
    thrice = apply_cache_control(apply_cache_control(once, "5m"), "5m")
    assert thrice == once
    assert count_cache_markers(thrice) == 4


def test_rolling_window_moves_and_old_markers_go() -> None:
    first = apply_cache_control(conversation(), "5m")
    grown = [*first, {"role": "assistant", "content": "a3"}, {"role": "user", "content": "u4"}]
    second = apply_cache_control(grown, "5m")
    assert count_cache_markers(second) == 4
    assert second[3] == {"role": "user", "content": "u2"}  # marker removed, string restored
    assert [marked(m) for m in second] == [True, False, False, False, False, True, True, True]
    assert first[5]["content"][0]["cache_control"] == EPHEMERAL  # earlier output untouched


def test_example_14_tool_message_native_vs_proxied() -> None:
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "u1"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "result"},
        {"role": "user", "content": "u2"},
    ]
    native = apply_cache_control(messages, native_anthropic=True)
    assert native[3]["cache_control"] == EPHEMERAL
    assert native[3]["content"] == "result"
    proxied = apply_cache_control(messages, native_anthropic=False)
    assert proxied[3] is messages[3] and not marked(proxied[3])
    assert count_cache_markers(proxied) == 3  # the tool message's slot stays unused (seed)


def test_example_15_ttl() -> None:
    hour = apply_cache_control(conversation(), "1h")
    assert hour[5]["content"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert cache_marker("1h") == {"type": "ephemeral", "ttl": "1h"}
    assert cache_marker("1h", model="qwen3-coder-plus") == {"type": "ephemeral"}
    assert (
        cache_marker("1h", base_url="https://dashscope.aliyuncs.com/compatible-mode/v1")
        == EPHEMERAL
    )
    assert effective_cache_ttl(None) == "5m"
    assert effective_cache_ttl("") == "5m"
    assert effective_cache_ttl("1h", provider="anthropic") == "1h"
    assert cache_marker(None) == EPHEMERAL


def test_content_shapes() -> None:
    parts = [
        {"type": "text", "text": "look"},
        {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
    ]
    messages = [
        {"role": "user", "content": parts},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"role": "assistant", "content": ""},
        {"role": "user", "content": "plain"},
    ]
    out = apply_cache_control(messages)
    assert out[0]["content"][-1]["cache_control"] == EPHEMERAL  # list: last part
    assert "cache_control" not in out[0]["content"][0]
    assert out[1]["cache_control"] == EPHEMERAL  # None content: top level
    assert out[2]["cache_control"] == EPHEMERAL  # empty string: top level
    assert out[3]["content"][0]["cache_control"] == EPHEMERAL
    assert "cache_control" not in parts[-1]  # caller's part untouched
    assert count_cache_markers(out) == 4  # no system message: four rolling slots


def test_empty_input_is_returned() -> None:
    empty: list[dict[str, Any]] = []
    assert apply_anthropic_cache_control(empty) is empty


def test_skip_unmarkable_does_not_waste_slots() -> None:
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "u1"},
        {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "u2"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c", "content": "r"},
    ]
    seed = apply_cache_control(messages)
    refined = apply_cache_control(messages, skip_unmarkable=True)
    assert count_cache_markers(seed) == 3  # the proxied tool slot is lost
    assert count_cache_markers(refined) == 4
    assert refined[5]["content"] == [{"type": "text", "text": "r", "cache_control": EPHEMERAL}]
    assert not marked(refined[4])  # empty assistant content cannot carry on a proxy
    assert marked(refined[2])


def test_strip_restores_decorated_shapes_only() -> None:
    decorated = apply_cache_control(conversation())
    assert strip_cache_control(decorated) == conversation()
    user_list = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "a"},
                {"type": "text", "text": "b", "cache_control": EPHEMERAL},
            ],
        }
    ]
    assert strip_cache_control(user_list)[0]["content"] == [
        {"type": "text", "text": "a"},
        {"type": "text", "text": "b"},
    ]
    split_system = [
        {
            "role": "system",
            "content": [
                {"type": "text", "text": "static ", "cache_control": EPHEMERAL},
                {"type": "text", "text": "rest", "cache_control": EPHEMERAL},
            ],
        }
    ]
    assert strip_cache_control(split_system)[0]["content"] == "static rest"


def test_static_system_prefix_takes_two_breakpoints() -> None:
    messages = conversation()
    messages[0] = {"role": "system", "content": "You are Hermes.\nMemory: likes tea"}
    out = apply_cache_control(messages, static_system_prefix="You are Hermes.\n")
    assert out[0]["content"] == [
        {"type": "text", "text": "You are Hermes.\n", "cache_control": EPHEMERAL},
        {"type": "text", "text": "Memory: likes tea", "cache_control": EPHEMERAL},
    ]
    assert [marked(m) for m in out] == [True, False, False, False, True, True]
    assert count_cache_markers(out) == 4
    again = apply_cache_control(out, static_system_prefix="You are Hermes.\n")
    assert again == out
    assert strip_cache_control(out)[0] == messages[0]
    exact = apply_cache_control(messages, static_system_prefix=messages[0]["content"])
    assert len(exact[0]["content"]) == 1  # no empty second part
    assert count_cache_markers(exact) == 4


def test_caching_enabled_rule() -> None:
    assert caching_enabled("claude-sonnet-4-6", "anthropic", None)
    assert caching_enabled("anthropic/claude-3.5-sonnet", "openrouter", None)
    assert caching_enabled("anthropic/claude-3.5-sonnet", "openai", "https://openrouter.ai/api/v1")
    assert not caching_enabled("gpt-4o", "openrouter", None)
    assert not caching_enabled("claude-sonnet-4-6", "openai-compatible", "http://localhost:8000/v1")
    assert not caching_enabled(None, "anthropic", None)


# --- invariants -----------------------------------------------------------------------------

texts = st.text(alphabet="ab ", max_size=5)
contents = st.one_of(
    st.none(),
    texts,
    st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": texts}), max_size=3),
)
roles = st.sampled_from(["user", "assistant", "tool", "system"])
messages_strategy = st.lists(
    st.builds(lambda r, c: {"role": r, "content": c}, roles, contents), max_size=9
)


@given(messages_strategy, st.booleans(), st.sampled_from(["5m", "1h", None]), st.booleans())
def test_invariants(
    messages: list[dict[str, Any]], native: bool, ttl: str | None, skip: bool
) -> None:
    before = copy.deepcopy(messages)
    out = apply_anthropic_cache_control(messages, ttl, native, skip_unmarkable=skip)
    assert messages == before  # input never mutated
    assert count_cache_markers(out) <= 4
    assert len(out) == len(messages)
    again = apply_anthropic_cache_control(out, ttl, native, skip_unmarkable=skip)
    assert again == out  # idempotent
    for original, result in zip(messages, out, strict=True):
        if result is not original:
            assert result["role"] == original["role"]
