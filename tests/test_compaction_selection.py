"""select_request: an engine's per-request selection, and how it fails open."""

from __future__ import annotations

import threading
from typing import Any

from compaction_helpers import asst, sys_, user
from palimpsest.compaction.compressor import ContextCompressor
from palimpsest.compaction.selection import select_request


class Picking(ContextCompressor):
    def __init__(self, pick: Any) -> None:
        super().__init__(100_000)
        self.pick = pick
        self.seen: dict[str, Any] = {}

    def select_context(
        self, request_messages, *, conversation_messages, incoming_message, budget_tokens
    ):  # type: ignore[no-untyped-def,override]
        self.seen = {"incoming": incoming_message, "budget": budget_tokens}
        request_messages[1]["content"] = "edited in place"  # must not reach the caller
        return self.pick(request_messages)


REQUEST = [sys_("S"), user("old"), asst("a"), user("new")]


def _run(pick: Any) -> tuple[list[dict[str, Any]], str | None, list[dict[str, Any]]]:
    request = [dict(m) for m in REQUEST]
    conversation = request[1:]
    engine = Picking(pick)
    out, problem = select_request(
        engine, request, conversation=conversation, incoming="new", budget_tokens=5
    )
    assert engine.seen == {"incoming": "new", "budget": 5}
    assert request == REQUEST  # copies only
    return out, problem, request


def test_a_selection_without_the_system_prompt_gets_it_back() -> None:
    out, problem, _ = _run(lambda r: [r[-1]])
    assert problem is None
    assert out == [sys_("S"), user("new")]


def test_none_leaves_the_request_as_built() -> None:
    out, problem, request = _run(lambda r: None)
    assert out is request and problem is None


def test_bad_selections_are_ignored_with_a_reason() -> None:
    for pick, words in [
        (lambda r: "nope", "not a message list"),
        (lambda r: [sys_("other"), r[-1]], "system prompt"),
        (lambda r: [{"role": "tool", "content": "x"}], "invalid"),
        (lambda r: [r[0]], "no messages"),
        (lambda r: 1 / 0, "ZeroDivisionError"),
    ]:
        out, problem, request = _run(pick)
        assert out is request
        assert problem is not None and words in problem


def test_the_default_engine_selects_nothing() -> None:
    engine = ContextCompressor(100_000)
    request = [sys_(), user("hi")]
    assert select_request(
        engine, request, conversation=request[1:], incoming="hi", budget_tokens=1
    ) == (
        request,
        None,
    )


def test_the_default_engine_is_not_asked_and_nothing_is_copied() -> None:
    # A history that cannot be deep-copied shows whether a copy was attempted.
    uncopyable = {"role": "user", "content": "hi", "extra": threading.Lock()}
    request = [sys_(), uncopyable]
    out, problem = select_request(
        ContextCompressor(100_000),
        request,
        conversation=[uncopyable],
        incoming="hi",
        budget_tokens=1,
    )
    assert out is request and problem is None
