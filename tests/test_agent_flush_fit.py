"""``fit_flush_request``: the flush's request fitted to the window, cheapest loss first."""

from __future__ import annotations

import json
from typing import Any

from palimpsest.agent.flush import FLUSH_MESSAGE
from palimpsest.agent.flush_fit import FLUSH_MIN_OUTPUT, FLUSH_WINDOW_SHARE, fit_flush_request
from palimpsest.messages import validate_transcript
from palimpsest.tokens import estimate_request_tokens_rough

SYSTEM = {"role": "system", "content": "You are a helpful agent."}
FLUSH = {"role": "user", "content": FLUSH_MESSAGE}
TOOLS = [{"type": "function", "function": {"name": "memory", "parameters": {"type": "object"}}}]


def _turns(n: int, output_chars: int = 200, start: int = 0) -> list[dict[str, Any]]:
    """``n`` turns of: request, assistant call, tool result, answer."""
    out: list[dict[str, Any]] = []
    for i in range(start, start + n):
        cid = f"c{i}"
        call = {
            "id": cid,
            "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": f"cat file_{i}.py"})},
        }
        out += [
            {"role": "user", "content": f"Request {i}: look at file_{i}.py please"},
            {"role": "assistant", "content": f"Reading file_{i}.py.", "tool_calls": [call]},
            {
                "role": "tool",
                "tool_call_id": cid,
                "content": f"line of file {i}\n" * (output_chars // 16),
            },
            {"role": "assistant", "content": f"file_{i}.py looks fine."},
        ]
    return out


def _size(request: list[dict[str, Any]]) -> int:
    return estimate_request_tokens_rough(request, tools=TOOLS)


def test_without_a_window_the_request_is_whole() -> None:
    history = _turns(3)
    request, cap = fit_flush_request(SYSTEM, history, FLUSH, TOOLS, None, 5_120)  # type: ignore[misc]
    assert request == [SYSTEM, *history, FLUSH] and cap == 5_120


def test_a_request_that_fits_keeps_its_cap() -> None:
    history = _turns(3)
    request, cap = fit_flush_request(SYSTEM, history, FLUSH, TOOLS, 100_000, 5_120)  # type: ignore[misc]
    assert request == [SYSTEM, *history, FLUSH] and cap == 5_120


def test_the_cap_is_lowered_before_anything_is_left_out() -> None:
    history = _turns(10)
    size = _size([SYSTEM, *history, FLUSH])
    window = int((size + 1_000) / FLUSH_WINDOW_SHARE) + 1
    request, cap = fit_flush_request(SYSTEM, history, FLUSH, TOOLS, window, 5_120)  # type: ignore[misc]
    assert request == [SYSTEM, *history, FLUSH]
    assert FLUSH_MIN_OUTPUT <= cap <= 1_000


def test_old_tool_output_is_pruned_next() -> None:
    history = _turns(12, output_chars=4_000)
    whole = _size([SYSTEM, *history, FLUSH])
    window = int(whole * 0.5 / FLUSH_WINDOW_SHARE)
    fitted = fit_flush_request(SYSTEM, history, FLUSH, TOOLS, window, 5_120)
    assert fitted is not None
    request, cap = fitted
    assert len(request) == len(history) + 2  # nothing left out, outputs shrunk
    assert _size(request) + cap <= window * FLUSH_WINDOW_SHARE
    assert request[-1] == FLUSH and request[0] == SYSTEM
    validate_transcript(request[1:-1])
    assert history == _turns(12, output_chars=4_000)  # the caller's list is untouched


def test_the_newest_turns_leave_whole_and_the_oldest_stay() -> None:
    history = _turns(40, output_chars=120)
    whole = _size([SYSTEM, *history, FLUSH])
    window = int(whole * 0.4 / FLUSH_WINDOW_SHARE)
    fitted = fit_flush_request(SYSTEM, history, FLUSH, TOOLS, window, 5_120)
    assert fitted is not None
    request, _cap = fitted
    kept = request[1:-1]
    assert kept and kept[0]["content"].startswith("Request 0:")  # the oldest are what leaves
    assert kept[-1]["role"] == "assistant"  # cut before a user message: whole turns
    assert len(kept) % 4 == 0
    assert _size(request) + FLUSH_MIN_OUTPUT <= window * FLUSH_WINDOW_SHARE
    validate_transcript(kept)


def test_a_measure_that_counts_more_shrinks_more() -> None:
    history = _turns(40, output_chars=120)
    window = int(_size([SYSTEM, *history, FLUSH]) * 0.8 / FLUSH_WINDOW_SHARE)
    plain = fit_flush_request(SYSTEM, history, FLUSH, TOOLS, window, 5_120)
    scaled = fit_flush_request(
        SYSTEM, history, FLUSH, TOOLS, window, 5_120, measure=lambda rough: int(rough * 1.3)
    )
    assert plain is not None and scaled is not None
    assert len(scaled[0]) < len(plain[0])
    assert int(_size(scaled[0]) * 1.3) + FLUSH_MIN_OUTPUT <= window * FLUSH_WINDOW_SHARE


def test_what_cannot_fit_is_not_sent() -> None:
    huge_system = {"role": "system", "content": "rules " * 20_000}
    assert fit_flush_request(huge_system, _turns(3), FLUSH, TOOLS, 4_000, 5_120) is None
