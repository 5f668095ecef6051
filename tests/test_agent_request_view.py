"""Provider copies made once per message, and the fence on the turn's user message."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from palimpsest.agent.history import attach_fence
from palimpsest.agent.request_view import RequestView, fenced
from palimpsest.messages import for_provider


def _msg(role: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"role": role, "content": text, **extra}


def test_copies_match_for_provider_and_are_made_once() -> None:
    history = [_msg("user", "hi", _internal=1), _msg("assistant", "hello")]
    view = RequestView()
    first = view.copies(history)
    assert first == for_provider(history) and "_internal" not in first[0]
    history.append(_msg("user", "more"))
    second = view.copies(history)
    assert second == for_provider(history)
    assert second[0] is first[0] and second[1] is first[1]  # not copied again
    assert second is not first  # the list itself is the caller's


def test_a_replaced_or_removed_message_drops_its_copy_and_later_ones() -> None:
    history = [_msg("user", "a"), _msg("assistant", "b"), _msg("user", "c")]
    view = RequestView()
    before = view.copies(history)
    history[1] = _msg("assistant", "B")  # replaced (as a compaction or undo does)
    after = view.copies(history)
    assert after == for_provider(history) and after[0] is before[0]
    assert after[1] is not before[1] and after[2] is not before[2]
    assert view.copies(history[:1]) == for_provider(history[:1])  # shorter (undo)
    assert view.copies([]) == []


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["keep", "add", "drop", "swap"]), st.integers(0, 9))))
def test_any_sequence_of_edits_gives_what_a_fresh_build_gives(edits: list[tuple[str, int]]) -> None:
    history: list[dict[str, Any]] = []
    view = RequestView()
    for n, (edit, at) in enumerate(edits):
        if edit == "add" or not history:
            history.append(_msg("user" if n % 2 else "assistant", f"m{n}", _k=n))
        elif edit == "drop":
            del history[at % len(history) :]
        elif edit == "swap":
            history[at % len(history)] = _msg("assistant", f"s{n}")
        assert view.copies(history) == for_provider(history)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["user", "assistant", "tool"]), st.sampled_from("abc"))),
    st.sampled_from(["", "FENCE"]),
    st.sampled_from([None, "a", "b", "z"]),
)
def test_the_fence_lands_where_attach_fence_puts_it(
    shape: list[tuple[str, str]], fence: str, target: str | None
) -> None:
    history = [_msg(role, text) for role, text in shape]
    before = [dict(m) for m in history]
    assert fenced(for_provider(history), fence, target) == attach_fence(history, fence, target)
    assert history == before  # the history is never touched


def test_the_fenced_message_is_a_fresh_copy() -> None:
    history = [_msg("user", "ask"), _msg("assistant", "ok"), _msg("user", "ask")]
    view = RequestView()
    request = fenced(view.copies(history), "RECALL", "ask")
    assert request[2]["content"] == "ask\n\nRECALL" and request[0]["content"] == "ask"
    assert view.copies(history)[2]["content"] == "ask"  # the kept copy is unfenced
    parts = [_msg("user", [{"type": "text", "text": "x"}])]  # type: ignore[arg-type]
    assert fenced(for_provider(parts), "F", None)[0]["content"][-1] == {"type": "text", "text": "F"}
