"""The pure decisions of reactive recovery (AL-06, AL-09, AL-12)."""

from __future__ import annotations

import pytest

from palimpsest.agent.recovery import (
    RecoveryState,
    cannot_compress_error,
    made_progress,
    max_attempts,
    overflow_exhausted_error,
    smaller_max_tokens,
)
from palimpsest.errors import OutputLimitError


@pytest.mark.parametrize(
    ("value", "expected"),
    [(3, 3), (1, 1), (10, 10), (11, 10), (0, 3), (-2, 3), ("5", 3), (True, 3)],
)
def test_max_attempts(value: object, expected: int):
    assert max_attempts(value) == expected


def test_smaller_max_tokens():
    suggested = OutputLimitError("x", suggested_max_tokens=3_000)
    assert smaller_max_tokens(suggested, 8_000) == 3_000
    room = OutputLimitError("x", limit=8_192, input_tokens=1_000)
    assert smaller_max_tokens(room, 8_000) == 7_128
    assert smaller_max_tokens(OutputLimitError("x"), 8_000) == 4_000
    assert smaller_max_tokens(OutputLimitError("x"), None) == 4_096
    assert smaller_max_tokens(OutputLimitError("x", suggested_max_tokens=9_000), 8_000) == 4_000
    assert smaller_max_tokens(OutputLimitError("x"), 300) is None


def test_progress_counts_messages_or_size():
    assert made_progress(10, 9, 100, 100)
    assert made_progress(10, 10, 100, 90)  # same count, smaller payload (AL-12)
    assert not made_progress(10, 10, 100, 100)
    assert not made_progress(10, 11, 100, 120)


def test_messages():
    assert cannot_compress_error(123_456) == (
        "Context length exceeded (~123,456 tokens). Cannot compress further."
    )
    text = overflow_exhausted_error(3)
    assert "/new" in text and "/compress" in text


def test_reset():
    state = RecoveryState(compression_attempts=2, output_retries=1, empty_answers=1)
    state.reset()
    assert state == RecoveryState()
