"""exact_saving: exact o200k difference, counting only the messages that changed."""

from __future__ import annotations

from compaction_helpers import asst, user
from palimpsest.compaction.growth import exact_saving, would_grow
from palimpsest.tokens import ExactCounter


def test_unchanged_messages_are_never_tokenized() -> None:
    counter = ExactCounter()
    before = [user(f"message {i} " * 50) for i in range(200)]
    after = [dict(m) for m in before[:100]] + [user("summary")]  # shallow copies share values
    saving = exact_saving(before, after, counter)
    assert saving > 0
    # Only the summary and enough removed messages to outweigh it were counted.
    assert counter.encoded_messages <= 3


def test_a_growth_is_measured_exactly() -> None:
    counter = ExactCounter()
    before = [user("hi"), asst("short")]
    after = [before[0], asst("a much longer reply than the one it replaces")]
    expected = counter.count_messages(before) - counter.count_messages(after)
    assert expected < 0
    assert exact_saving(before, after, counter) == expected


def test_empty_lists_count_their_framing() -> None:
    counter = ExactCounter()
    before = [user("hi")]
    assert exact_saving(before, [], counter) == counter.count_messages(before)
    assert exact_saving([], before, counter) == -counter.count_messages(before)
    assert exact_saving(before, list(before), counter) == 0


def test_a_rough_saving_on_non_text_parts_is_confirmed_exactly() -> None:
    # chars/4 counts the JSON of a part that is not text; the exact counter does not count
    # it at all. A summary replacing such a message looks like a big rough saving and is
    # an exact growth (found by the fuzzed-list property test).
    opaque = {"role": "user", "content": [{"not text": "P" * 4_000}]}
    before = [opaque, asst("ok")]
    summary = {"role": "user", "content": "summary " * 200, "_compressed_summary": True}
    after = [summary, before[1]]
    counter = ExactCounter()
    assert exact_saving(before, after, counter) < 0
    assert would_grow(
        before, after, after=10, before=1_000, exact_counter=lambda: counter, counted_exactly=False
    )
    text_only = [user("P " * 2_000), before[1]]
    assert not would_grow(
        text_only,
        after,
        after=10,
        before=1_000,
        exact_counter=lambda: counter,
        counted_exactly=False,
    )


def test_a_rough_saving_made_of_structure_is_confirmed_exactly() -> None:
    # chars/4 also counts keys, ids and empty tool calls, which the exact counter never
    # reads: a transcript made mostly of them halves by the rough count when a summary
    # replaces it, and grows in real tokens (found by the fuzzed-list property test).
    call = {"id": "a", "type": "function", "function": {"name": "", "arguments": ""}}
    noisy = {
        "role": "assistant",
        "content": "",
        "tool_calls": [call] * 40,
        "function_call": {"name": "", "arguments": "{}"},
    }
    before = [noisy, asst("ok")]
    summary = {"role": "user", "content": "summary " * 60, "_compressed_summary": True}
    after = [summary, before[1]]
    counter = ExactCounter()
    assert exact_saving(before, after, counter) < 0
    assert would_grow(
        before, after, after=80, before=1_000, exact_counter=lambda: counter, counted_exactly=False
    )
    # the same rough figures on a transcript of text are trusted without the tokenizer
    wordy = [user("word " * 1_000), before[1]]

    def unused() -> ExactCounter:
        raise AssertionError("a clear saving on text needs no exact count")

    assert not would_grow(
        wordy, after, after=80, before=1_000, exact_counter=unused, counted_exactly=False
    )
