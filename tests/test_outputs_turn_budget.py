"""turn_budget.py: spilling the largest results of a turn until the turn fits (TR-17, TR-18)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.outputs.budget import BudgetConfig
from palimpsest.outputs.preview import PERSISTED_OPEN, extract_persisted_path, persisted_block
from palimpsest.outputs.sandbox import LocalSandbox
from palimpsest.outputs.turn_budget import BUDGET_TOOL_NAME, enforce_turn_budget, message_size

SMALL = BudgetConfig(default_result_size=1_000, turn_budget=2_000, preview_size=100)


def tool(content: Any, call_id: str | None = None, name: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "tool", "content": content}
    if call_id is not None:
        message["tool_call_id"] = call_id
    if name is not None:
        message["name"] = name
    return message


class Recorder:
    """A persistence function that records its calls and returns a short stand-in."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str]] = []

    def __call__(self, content: str, tool_name: str, call_id: str) -> str:
        self.calls.append((content, tool_name, call_id))
        return f"{PERSISTED_OPEN}{call_id}</persisted-output>"


def test_message_size() -> None:
    assert message_size(tool("abc")) == 3
    assert message_size(tool(None)) == 0
    parts = [{"type": "text", "text": "ab"}, {"type": "image_url", "image_url": {}}, "cde"]
    assert message_size(tool(parts)) == 5  # text parts summed, no separators


def test_within_budget_nothing_changes(tmp_path: Path) -> None:
    messages = [tool("a" * 900, "c1"), tool("b" * 1_100, "c2")]
    before = copy.deepcopy(messages)
    result = enforce_turn_budget(messages, LocalSandbox(tmp_path), SMALL)
    assert result is messages and messages == before
    assert not (tmp_path / "tool-results").exists()


def test_empty_list_is_returned_as_is() -> None:
    messages: list[dict[str, Any]] = []
    assert enforce_turn_budget(messages) is messages


def test_spills_largest_first_until_it_fits() -> None:
    sizes = [700, 700, 1_200, 900, 700, 800]  # 5,000 > 2,000
    messages = [tool("x" * size, f"c{i}") for i, size in enumerate(sizes)]
    recorder = Recorder()
    enforce_turn_budget(messages, None, SMALL, persist=recorder)
    order = [cid for _, _, cid in recorder.calls]
    # 5,000 -> 1,200, 900 and 800 out (each ~24 in) -> 2,172; then c0 (equal sizes: earlier
    # first) -> 1,496, and it stops.
    assert order == ["c2", "c3", "c5", "c0"]
    assert sum(message_size(m) for m in messages) <= 2_000
    assert messages[1]["content"] == "x" * 700


def test_spilled_results_are_saved_under_their_call_ids(tmp_path: Path) -> None:
    messages = [tool(c * 1_500, f"c{i}") for i, c in enumerate("abcd")]  # 6,000 > 4,000
    config = BudgetConfig(turn_budget=4_000, preview_size=100)
    enforce_turn_budget(messages, LocalSandbox(tmp_path), config)
    assert sum(message_size(m) for m in messages) <= 4_000
    spilled = [i for i, m in enumerate(messages) if PERSISTED_OPEN in m["content"]]
    assert spilled == [0, 1]  # each block is ~450 characters: two spills are enough
    for i in spilled:
        path = extract_persisted_path(messages[i]["content"])
        assert path is not None and Path(path).name == f"c{i}.txt"
        assert Path(path).read_text() == "abcd"[i] * 1_500


def test_missing_call_id_uses_the_index(tmp_path: Path) -> None:
    messages = [tool("x" * 100, "c0"), tool("y" * 2_500)]
    enforce_turn_budget(messages, LocalSandbox(tmp_path), SMALL)
    path = extract_persisted_path(messages[1]["content"])
    assert path is not None and Path(path).read_text() == "y" * 2_500
    assert Path(path).name == "budget_1.txt"


def test_already_persisted_messages_are_skipped() -> None:
    block = persisted_block(path="/p", total_chars=9_999, preview="p" * 1_500, has_more=True)
    messages = [tool(block, "old"), tool("x" * 1_000, "new")]
    recorder = Recorder()
    enforce_turn_budget(messages, None, SMALL, persist=recorder)
    assert [call[2] for call in recorder.calls] == ["new"]
    assert messages[0]["content"] == block


def test_custom_persist_gets_the_message_name() -> None:
    recorder = Recorder()
    messages = [tool("a" * 1_500, "c0", name="terminal"), tool("b" * 1_400, "c1")]
    enforce_turn_budget(messages, None, SMALL, persist=recorder)
    assert [(name, cid) for _, name, cid in recorder.calls] == [("terminal", "c0")]
    assert recorder.calls[0][0] == "a" * 1_500


def test_default_persist_runs_under_the_budget_name(tmp_path: Path) -> None:
    # read_file is pinned for layer 2, but layer 3 persists it anyway (threshold 0).
    config = BudgetConfig(turn_budget=100, tool_overrides={BUDGET_TOOL_NAME: 10**9})
    messages = [tool("r" * 5_000, "c0", name="read_file")]
    enforce_turn_budget(messages, LocalSandbox(tmp_path), config)
    assert messages[0]["content"].startswith(PERSISTED_OPEN)


def test_no_environment_keeps_the_preview_and_states_the_loss() -> None:
    messages = [tool("z" * 3_000, "c0")]
    enforce_turn_budget(messages, None, SMALL)
    assert messages[0]["content"].startswith("z" * 100)
    assert "[Truncated: tool response was 3,000 chars." in messages[0]["content"]


def test_a_replacement_that_is_not_smaller_is_skipped() -> None:
    calls: list[str] = []

    def stubborn(content: str, tool_name: str, call_id: str) -> str:
        calls.append(call_id)
        return content + "!" if call_id == "c0" else "short"

    messages = [tool("a" * 1_500, "c0"), tool("b" * 1_000, "c1")]
    enforce_turn_budget(messages, None, SMALL, persist=stubborn)
    assert calls == ["c0", "c1"]  # each candidate once, no retry loop
    assert messages[0]["content"] == "a" * 1_500 and messages[1]["content"] == "short"


class TestListContent:
    def test_largest_text_part_is_spilled(self, tmp_path: Path) -> None:
        image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
        parts: list[Any] = [
            {"type": "text", "text": "small"},
            {"type": "text", "text": "L" * 2_500, "extra": 1},
            image,
        ]
        original = copy.deepcopy(parts)
        messages = [tool(parts, "c0")]
        enforce_turn_budget(messages, LocalSandbox(tmp_path), SMALL)
        new_parts = messages[0]["content"]
        assert parts == original  # the caller's list object is not edited
        assert new_parts[0] == {"type": "text", "text": "small"}
        assert new_parts[1]["text"].startswith(PERSISTED_OPEN) and new_parts[1]["extra"] == 1
        assert new_parts[2] == image
        path = extract_persisted_path(new_parts[1]["text"])
        assert path is not None and Path(path).read_text() == "L" * 2_500

    def test_list_messages_are_always_candidates(self) -> None:
        block = persisted_block(path="/p", total_chars=5, preview="x", has_more=False)
        parts: list[Any] = [block, "B" * 2_100]
        messages = [tool(parts, "c0")]
        recorder = Recorder()
        enforce_turn_budget(messages, None, SMALL, persist=recorder)
        assert [c[0] for c in recorder.calls] == ["B" * 2_100]
        assert messages[0]["content"][0] == block  # bare string parts stay strings
        assert messages[0]["content"][1].startswith(PERSISTED_OPEN)

    def test_list_without_text_is_left_alone(self) -> None:
        parts = [{"type": "image_url", "image_url": {"url": "x"}}]
        messages = [tool(parts, "c0"), tool("t" * 2_500, "c1")]
        recorder = Recorder()
        enforce_turn_budget(messages, None, SMALL, persist=recorder)
        assert [c[2] for c in recorder.calls] == ["c1"]


def test_non_dict_message_is_refused() -> None:
    with pytest.raises(TypeError, match=r"tool_messages\[1\]"):
        enforce_turn_budget([tool("x"), "oops"])  # type: ignore[list-item]


@given(
    st.lists(
        st.tuples(st.integers(0, 3_000), st.booleans()),
        max_size=12,
    ),
    st.integers(1, 6_000),
)
def test_fits_whenever_spilling_can_make_it_fit(shape: list[tuple[int, bool]], budget: int) -> None:
    block = f"{PERSISTED_OPEN}/p</persisted-output>"
    messages = [
        tool(block if persisted else "x" * size, f"c{i}")
        for i, (size, persisted) in enumerate(shape)
    ]
    config = BudgetConfig(turn_budget=budget)
    recorder = Recorder()
    enforce_turn_budget(messages, None, config, persist=recorder)
    total = sum(message_size(m) for m in messages)
    spilled = {cid for _, _, cid in recorder.calls}
    floor = sum(
        len(block) if persisted else min(size, len(f"{PERSISTED_OPEN}c{i}</persisted-output>"))
        for i, (size, persisted) in enumerate(shape)
    )
    # Either it fits, or every candidate was spilled as far as it could be.
    assert total <= budget or total == floor
    for i, (_, persisted) in enumerate(shape):
        if persisted:
            assert messages[i]["content"] == block and f"c{i}" not in spilled
