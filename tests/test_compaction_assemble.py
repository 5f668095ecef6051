"""Summary role, merging, the system note, and tool-pair sanitizing (CC-88, CC-93..CC-105)."""

from __future__ import annotations

import pytest

from compaction_helpers import asst, call, sys_, tool, user
from palimpsest.compaction.assemble import (
    STRIPPED_CALL_TEXT,
    add_compaction_note,
    assemble,
    choose_summary_role,
    sanitize_tool_pairs,
)
from palimpsest.compaction.markers import (
    COMPACTION_NOTE,
    COMPACTION_STUB_RESULT,
    END_MARKER,
    SUMMARY_PREFIX,
)

S = SUMMARY_PREFIX + "\nS"


@pytest.mark.parametrize(
    ("head", "tail", "role", "merge"),
    [
        ("assistant", "user", "user", True),
        ("assistant", "assistant", "user", False),
        ("assistant", None, "user", False),
        ("tool", "user", "assistant", False),
        ("tool", "assistant", "user", False),
        ("user", "user", "assistant", False),
        ("user", "assistant", "assistant", True),
        ("system", "assistant", "user", False),
        ("system", "user", "user", True),  # CC-95 forced user-leading, prepended
        (None, "user", "user", True),
    ],
)
def test_truth_table(head: str | None, tail: str | None, role: str, merge: bool) -> None:
    assert choose_summary_role(head, tail) == (role, merge)


def test_forced_user_when_no_user_survives() -> None:
    assert choose_summary_role("assistant", "assistant", force_user=True) == ("user", False)
    assert choose_summary_role("tool", "user", force_user=True) == ("user", True)


def test_note_appended_once_in_every_content_shape() -> None:
    assert add_compaction_note(sys_("base"))["content"] == "base\n\n" + COMPACTION_NOTE
    assert add_compaction_note({"role": "system", "content": None})["content"] == COMPACTION_NOTE
    listed = add_compaction_note({"role": "system", "content": [{"type": "text", "text": "a"}]})
    assert listed["content"][-1] == {"type": "text", "text": COMPACTION_NOTE}
    once = add_compaction_note(sys_("base"))
    assert add_compaction_note(once) is once


def test_merge_into_string_list_and_none_tails() -> None:
    for content, check in [
        ("Fix it", lambda c: c == S + "\n\n" + END_MARKER + "\n\nFix it"),
        (
            [{"type": "text", "text": "Fix"}],
            lambda c: c[0]["text"].startswith(SUMMARY_PREFIX) and c[1]["text"] == "Fix",
        ),
        (None, lambda c: c == S + "\n\n" + END_MARKER),
    ]:
        tail = [{"role": "user", "content": content}, asst("a")]
        out = assemble([sys_(), user("u"), asst("a")], S, tail, has_user_turn=True)
        assert out.merged and out.messages[3]["role"] == "user"
        assert check(out.messages[3]["content"])
        assert out.messages[3]["_compressed_summary"] is True


def test_inputs_are_not_modified() -> None:
    head = [sys_("base"), user("u"), asst("a")]
    tail = [user("t"), asst("b")]
    snapshot = ([dict(m) for m in head], [dict(m) for m in tail])
    assemble(head, S, tail, has_user_turn=True)
    assert (head, tail) == snapshot


def test_example_13_orphan_removed_and_stub_inserted() -> None:
    msgs = [user("u"), asst(None, [call("x1")]), tool("x9", "stray"), user("next")]
    out, report = sanitize_tool_pairs(msgs)
    assert [m["role"] for m in out] == ["user", "assistant", "tool", "user"]
    assert out[2] == {"role": "tool", "tool_call_id": "x1", "content": COMPACTION_STUB_RESULT}
    assert (report.removed_results, report.stubbed_calls) == (1, 1)


def test_strip_policy_removes_the_call() -> None:
    msgs = [user("u"), asst(" ", [call("x1")]), user("next")]
    out, report = sanitize_tool_pairs(msgs, "strip")
    assert "tool_calls" not in out[1] and out[1]["content"] == STRIPPED_CALL_TEXT
    assert report.stripped_calls == 1


def test_result_without_id_removed_when_no_call_lacks_an_id() -> None:
    msgs = [user("u"), asst("a"), {"role": "tool", "content": "lost"}, asst("b")]
    out, _ = sanitize_tool_pairs(msgs)
    assert all(m["role"] != "tool" for m in out)


def test_stubs_follow_existing_results_in_call_order() -> None:
    msgs = [asst(None, [call("a"), call("b"), call("c")]), tool("b", "rb"), user("u")]
    out, _ = sanitize_tool_pairs(msgs)
    assert [m.get("tool_call_id") for m in out[1:4]] == ["b", "a", "c"]


def test_duplicate_result_is_dropped() -> None:
    msgs = [asst(None, [call("a")]), tool("a", "1"), tool("a", "2"), user("u")]
    out, report = sanitize_tool_pairs(msgs)
    assert [m.get("content") for m in out] == [None, "1", "u"]
    assert report.removed_results == 1


def test_removed_orphan_does_not_leave_two_user_messages_adjacent() -> None:
    msgs = [asst("a"), user("one"), tool("ghost", "r"), user("two"), asst("b")]
    out, _ = sanitize_tool_pairs(msgs)
    assert [m["role"] for m in out] == ["assistant", "user", "assistant"]
    assert out[1]["content"] == "one\n\ntwo"


def test_existing_same_role_neighbours_are_left_alone() -> None:
    msgs = [sys_(), user("a"), user("b"), asst("c")]
    out, _ = sanitize_tool_pairs(msgs)
    assert out == msgs
