"""No planted secret survives into any summary, whoever writes it (issue 2, item 7).

Each kind from the redaction corpus is planted in user text, in tool output and in tool-call
arguments inside the span that gets summarized. Four writers are tried: the extractive
summarizer, a model that copies every turn verbatim, the deterministic fallback after a
failure, and the static fallback whose reason quotes a secret.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from compaction_helpers import StubSummarizer, asst, sys_, user
from palimpsest.compaction.compressor import ContextCompressor
from palimpsest.messages import call_arguments, content_text, tool_calls_of
from palimpsest.summarizers import SummaryRequest
from test_safety_redact import PLANTED


def planted_transcript() -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = [sys_(), user("start the deployment work"), asst("ok")]
    for i, (_, secret, line) in enumerate(PLANTED):
        text = line.format(s=secret)
        msgs.append(user(f"note {i}: {text}"))
        msgs.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"c{i}",
                        "type": "function",
                        "function": {
                            "name": "terminal",
                            "arguments": json.dumps({"command": f"echo '{text}'"}),
                        },
                    }
                ],
            }
        )
        msgs.append({"role": "tool", "tool_call_id": f"c{i}", "content": f"output: {text}\n" * 3})
    msgs += [user("now summarize what we did"), asst("working on it"), user("thanks, continue")]
    return msgs


class VerbatimModel:
    """A careless summarizer that copies every turn, arguments included, into its answer."""

    def summarize(self, request: SummaryRequest) -> str:
        lines = ["## Active Task", "None.", "## Critical Context"]
        for message in request.turns:
            lines.append(content_text(message.get("content")))
            lines.extend(call_arguments(c) for c in tool_calls_of(message))
        return "\n".join(lines)


@pytest.mark.parametrize(
    ("summarizer", "fallback"),
    [
        (None, "deterministic"),
        (VerbatimModel(), "deterministic"),
        (StubSummarizer(error=RuntimeError("boom")), "deterministic"),
        (StubSummarizer(error=RuntimeError(f"rejected key {PLANTED[0][1]}")), "static"),
    ],
    ids=["extractive", "verbatim-model", "deterministic-fallback", "static-fallback"],
)
def test_no_secret_survives_in_the_summary(summarizer: Any, fallback: str) -> None:
    msgs = planted_transcript()
    compressor = ContextCompressor(200_000, summarizer, quiet_mode=True, fallback_summary=fallback)  # type: ignore[arg-type]
    compressor.tail_token_budget = 50
    out = compressor.compress(msgs, force=True)
    assert compressor.last_stats.compressed
    summary = next(m for m in out if m.get("_compressed_summary"))
    text = content_text(summary["content"])
    assert "[REDACTED]" in text
    leaked = [kind for kind, secret, _ in PLANTED if secret in text]
    assert leaked == []
    if compressor.previous_summary:
        assert all(secret not in compressor.previous_summary for _, secret, _ in PLANTED)


def test_every_planted_line_was_in_the_summarized_span() -> None:
    msgs = planted_transcript()
    compressor = ContextCompressor(200_000, VerbatimModel(), quiet_mode=True)
    compressor.tail_token_budget = 50
    compressor.compress(msgs, force=True)
    stats = compressor.last_stats
    assert stats.head_messages == 3
    assert stats.head_messages + stats.middle_messages >= 3 + 3 * len(PLANTED)
