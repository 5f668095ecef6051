"""The agent's "has this conversation used native tool calls?" answer, one scan per message."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from palimpsest.agent.native_traffic import NativeTraffic
from palimpsest.messages.reading import has_native_traffic

KINDS = {
    "user": {"role": "user", "content": "run it"},
    "text": {"role": "assistant", "content": "```bash\nls\n```"},
    "call": {"role": "assistant", "content": "", "tool_calls": [{"id": "a", "type": "function"}]},
    "tool": {"role": "tool", "tool_call_id": "a", "content": "ok"},
}


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["add", "pop", "new_list"]), st.sampled_from(sorted(KINDS))))
)
def test_it_agrees_with_a_full_scan_through_appends_pops_and_new_lists(
    edits: list[tuple[str, str]],
) -> None:
    tracker = NativeTraffic()
    history: list[dict[str, Any]] = []
    for edit, kind in edits:
        if edit == "add":
            history.append(dict(KINDS[kind]))
        elif edit == "pop" and history:
            history.pop()
        elif edit == "new_list":  # a compaction or a resumed session
            history = [dict(KINDS[kind])]
        assert tracker.of(history) == has_native_traffic(history)


def test_only_new_messages_are_scanned(monkeypatch: Any) -> None:
    import palimpsest.agent.native_traffic as module

    scanned: list[int] = []

    def counting(messages: Any) -> bool:
        scanned.append(len(messages))
        return has_native_traffic(messages)

    monkeypatch.setattr(module, "has_native_traffic", counting)
    tracker = NativeTraffic()
    history = [dict(KINDS["user"]), dict(KINDS["text"])] * 50
    assert tracker.of(history) is False
    history.append(dict(KINDS["user"]))
    assert tracker.of(history) is False
    history.append(dict(KINDS["call"]))
    assert tracker.of(history) is True
    history.append(dict(KINDS["text"]))
    assert tracker.of(history) is True
    assert scanned == [100, 1, 1]  # each message once; nothing after the first call
