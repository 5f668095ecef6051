"""Invariants of compress() over generated transcripts (hypothesis).

Generated transcripts have tool groups with parallel calls, list and multimodal content,
orphan results and missing results. Whatever the input, the output must be a valid provider
sequence, must not introduce a same-role pair, must keep the latest user request verbatim,
must leave the input untouched, and a compression that ran must save tokens.
"""

from __future__ import annotations

import copy
import itertools
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from palimpsest.compaction.compressor import ContextCompressor
from palimpsest.compaction.markers import is_real_user_message
from palimpsest.messages import content_text, validate_transcript
from palimpsest.tokens import estimate_messages_tokens_rough

WORDS = ["fix", "the", "parser", "tests", "config", "deploy", "error", "retry", "cache", "docs"]
words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join)
sizes = st.integers(min_value=0, max_value=6_000)


@st.composite
def transcripts(draw: st.DrawFn) -> list[dict[str, Any]]:
    ids = itertools.count()
    msgs: list[dict[str, Any]] = []
    if draw(st.booleans()):
        msgs.append({"role": "system", "content": "system: " + draw(words)})
    for turn in range(draw(st.integers(min_value=1, max_value=10))):
        text = f"request {turn}: {draw(words)}"
        if draw(st.integers(0, 4)) == 0:
            content: Any = [
                {"type": "text", "text": text},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
            ]
        else:
            content = text
        msgs.append({"role": "user", "content": content})
        for _ in range(draw(st.integers(min_value=0, max_value=3))):
            calls = [f"c{next(ids)}" for _ in range(draw(st.integers(1, 3)))]
            msgs.append(
                {
                    "role": "assistant",
                    "content": draw(st.one_of(st.none(), words)),
                    "tool_calls": [
                        {
                            "id": cid,
                            "type": "function",
                            "function": {
                                "name": draw(
                                    st.sampled_from(["terminal", "read_file", "write_file"])
                                ),
                                "arguments": json.dumps(
                                    {"path": f"src/{cid}.py", "content": "y" * draw(sizes)}
                                ),
                            },
                        }
                        for cid in calls
                    ],
                }
            )
            for cid in calls:
                if draw(st.integers(0, 6)) == 0:
                    continue  # a missing result
                body = draw(words) + "\n" + "out " * (draw(sizes) // 4)
                msgs.append({"role": "tool", "tool_call_id": cid, "content": body})
            if draw(st.integers(0, 8)) == 0:
                msgs.append(
                    {"role": "tool", "tool_call_id": f"ghost{next(ids)}", "content": "stray"}
                )
        msgs.append({"role": "assistant", "content": draw(words)})
    return msgs


def same_role_pairs(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    pairs = []
    for a, b in itertools.pairwise(messages):
        if a["role"] == b["role"] and a["role"] in ("user", "assistant"):
            pairs.append((json.dumps(a, sort_keys=True), json.dumps(b, sort_keys=True)))
    return pairs


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(transcripts(), st.sampled_from([1_500, 4_000, 20_000]), st.booleans())
def test_compress_invariants(messages: list[dict[str, Any]], window: int, force: bool) -> None:
    original = copy.deepcopy(messages)
    compressor = ContextCompressor(window, quiet_mode=True)
    out = compressor.compress(messages, force=force)

    assert messages == original, "compress() mutated its input"
    validate_transcript(out)

    # No new consecutive same-role pair: every such pair in the output was already adjacent
    # in the input (the summary never sits next to a message of its own role).
    allowed = set(same_role_pairs(messages))
    for pair in same_role_pairs(
        [{k: v for k, v in m.items() if not k.startswith("_")} for m in out]
    ):
        assert pair in allowed

    users = [m for m in messages if is_real_user_message(m)]
    if users:
        latest = content_text(users[-1]["content"])
        assert any(latest in content_text(m.get("content")) for m in out)

    if compressor.last_stats.compressed:
        assert estimate_messages_tokens_rough(out) < estimate_messages_tokens_rough(messages)
        assert compressor.compression_count == 1
    else:
        assert compressor.compression_count == 0
