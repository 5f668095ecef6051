"""A giant assistant message in the kept tail is cut to the cap, with a session_search pointer."""

from __future__ import annotations

from compaction_helpers import StubSummarizer, asst, sys_, user
from palimpsest.compaction.compressor import ContextCompressor
from palimpsest.compaction.tail_cap import cap_tail_assistants, is_cut


def test_only_assistant_text_over_the_cap_is_cut() -> None:
    big = "B" * 40_000 + "THE END"
    tail = [user("x" * 40_000), asst(big), asst("small")]
    out, cut = cap_tail_assistants(tail, 1_000)
    assert cut == 1
    assert out[0] is tail[0] and out[2] is tail[2]
    text = out[1]["content"]
    assert len(text) < 4_400 and is_cut(text) and "session_search" in text
    assert text.startswith("BBB") and text.endswith("THE END")
    assert tail[1]["content"] == big  # the input is never modified
    assert cap_tail_assistants(tail, None) == (tail, 0)


def test_the_compressor_caps_the_tail_when_configured() -> None:
    msgs = [sys_(), user("task")]
    for i in range(12):
        msgs += [user(f"q{i} " + "w " * 800), asst(f"a{i} " + "v " * 800)]
    msgs += [user("write the report"), asst("R" * 60_000)]
    capped = ContextCompressor(
        200_000, StubSummarizer(), threshold_percent=0.1, max_tail_assistant_tokens=2_000
    )
    out = capped.compress(msgs)
    assert capped.last_stats.tail_capped_messages == 1
    assert is_cut(out[-1]["content"])
    whole = ContextCompressor(200_000, StubSummarizer(), threshold_percent=0.1).compress(msgs)
    assert whole[-1]["content"] == "R" * 60_000  # the seed default keeps it whole
