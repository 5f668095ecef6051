"""The agent's side of the engine contract: accepted arguments, facts, the short-head retry."""

from __future__ import annotations

from typing import Any

from agent_helpers import compressor, user
from palimpsest.agent.engine_call import (
    SHORT_HEAD,
    accepted_kwargs,
    compress_with_a_short_head,
    engine_facts,
    head_and_tail_are_everything,
)
from palimpsest.compaction.markers import is_compaction_summary_message
from palimpsest.tokens import estimate_messages_tokens_rough


class _Narrow:
    """A plugin engine whose ``compress`` takes one optional keyword only."""

    def compress(
        self,
        messages: list[dict[str, Any]],
        current_tokens: int | None = None,
        focus_topic: str | None = None,
    ) -> list[dict[str, Any]]:
        return messages


class _Open(_Narrow):
    def compress(  # type: ignore[override]
        self, messages: list[dict[str, Any]], *args: Any, **kwargs: Any
    ) -> list[dict[str, Any]]:
        return messages


def test_only_the_keywords_compress_accepts_are_passed() -> None:
    wanted = {"focus_topic": "auth", "memory_context": "m", "force": True}
    assert accepted_kwargs(_Narrow(), wanted) == {"focus_topic": "auth"}  # type: ignore[arg-type]
    assert accepted_kwargs(_Open(), wanted) == wanted  # type: ignore[arg-type]


def test_facts_default_for_an_engine_without_per_call_fields() -> None:
    assert engine_facts(_Narrow()) == {  # type: ignore[arg-type]
        "fallback_used": False,
        "aborted": False,
        "dropped_count": None,
        "failure_reason": None,
        "refused_would_grow": False,
    }


def _big() -> list[dict[str, Any]]:
    return [
        user(f"Log {i}: " + "numbers 12345 67890 " * 75)
        if i % 2 == 0
        else {"role": "assistant", "content": f"Answer {i}: " + "looked at it " * 40}
        for i in range(7)
    ] + [user("And this one? " + "numbers 12345 " * 40)]


def test_a_head_and_tail_that_hold_everything_are_compacted_with_a_one_message_head() -> None:
    engine = compressor(4_000, protect_last_n=3)
    messages = _big()
    tokens = estimate_messages_tokens_rough(messages)
    assert tokens > engine.threshold_tokens
    assert engine.compress(messages, tokens) == messages  # head 3 + tail 3 leave two messages
    assert head_and_tail_are_everything(engine)
    strikes = engine.ineffective_compression_count
    out = compress_with_a_short_head(engine, messages, tokens, {})
    assert out[0] == messages[0]
    assert is_compaction_summary_message(out[SHORT_HEAD])
    assert len(out) < len(messages)
    assert engine.protect_first_n == 3  # the engine's own setting is back
    assert engine.ineffective_compression_count <= strikes + 1
    assert not head_and_tail_are_everything(engine)  # it did compact


def test_a_head_already_at_one_message_is_not_retried() -> None:
    few = _big()[:3]
    tokens = estimate_messages_tokens_rough(few)
    for protect, retried in ((3, True), (SHORT_HEAD, False)):
        engine = compressor(4_000, protect_first_n=protect, protect_last_n=3)
        assert engine.compress(few, tokens) == few
        assert engine.last_stats.reason == "too few messages"
        assert head_and_tail_are_everything(engine) is retried
