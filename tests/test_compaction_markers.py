"""Summary prefix, normalization and recognition (CC-89..CC-91, CC-101)."""

from __future__ import annotations

import hashlib

from palimpsest.compaction.markers import (
    END_MARKER,
    HISTORICAL_PREFIXES,
    LEGACY_SUMMARY_PREFIX,
    SHORT_SUMMARY_PREFIX,
    SUMMARY_PREFIX,
    is_compaction_summary_message,
    is_real_user_message,
    split_summary_content,
    strip_summary_prefix,
    with_summary_prefix,
)


class TestPrefixShape:
    """Guards against editing a shipped prefix: old transcripts must stay recognizable."""

    def test_prefix_is_one_line_and_ends_with_colon(self) -> None:
        assert "\n" not in SUMMARY_PREFIX
        assert SUMMARY_PREFIX.startswith("[CONTEXT COMPACTION — REFERENCE ONLY]")
        assert SUMMARY_PREFIX.endswith(":")
        for needle in ("## Active Task", "MEMORY.md", "USER.md", "newest user message"):
            assert needle in SUMMARY_PREFIX

    def test_historical_prefixes_are_pinned(self) -> None:
        digests = [hashlib.sha256(p.encode()).hexdigest()[:16] for p in HISTORICAL_PREFIXES]
        assert digests == ["dc982cc6bdb0f938", "9fe8eb45434c9099"], (
            "never edit a shipped prefix; append a new one"
        )

    def test_short_prefix_is_a_summary_prefix_too(self) -> None:
        assert "\n" not in SHORT_SUMMARY_PREFIX and SHORT_SUMMARY_PREFIX.endswith(":")
        assert SHORT_SUMMARY_PREFIX.startswith("[CONTEXT COMPACTION — REFERENCE ONLY]")
        assert len(SHORT_SUMMARY_PREFIX) * 3 < len(SUMMARY_PREFIX)
        text = SHORT_SUMMARY_PREFIX + "\n## Relevant Files\n- changed: a.py\n\n" + END_MARKER
        assert is_compaction_summary_message(text)
        assert strip_summary_prefix(text) == "## Relevant Files\n- changed: a.py"
        assert with_summary_prefix(text) == SUMMARY_PREFIX + "\n## Relevant Files\n- changed: a.py"


def test_normalization_examples() -> None:
    assert with_summary_prefix("[CONTEXT SUMMARY]: did work") == SUMMARY_PREFIX + "\ndid work"
    assert with_summary_prefix(SUMMARY_PREFIX + "\ndid work") == SUMMARY_PREFIX + "\ndid work"
    assert with_summary_prefix("") == SUMMARY_PREFIX
    assert with_summary_prefix("  body  ") == SUMMARY_PREFIX + "\nbody"
    assert with_summary_prefix("[CONTEXT COMPACTION] old style\nbody") == SUMMARY_PREFIX + "\nbody"


def test_strip_cuts_at_end_marker() -> None:
    text = f"{SUMMARY_PREFIX}\nbody\n\n{END_MARKER}\n\noriginal request"
    assert strip_summary_prefix(text) == "body"


def test_recognition() -> None:
    assert is_compaction_summary_message(SUMMARY_PREFIX + "\nx")
    assert is_compaction_summary_message(LEGACY_SUMMARY_PREFIX + " x")
    assert is_compaction_summary_message({"role": "user", "content": "[CONTEXT COMPACTION] x"})
    assert is_compaction_summary_message(
        {"role": "user", "content": "hi", "_compressed_summary": True}
    )
    assert is_compaction_summary_message(
        {"role": "assistant", "content": [{"type": "text", "text": SUMMARY_PREFIX + "\nx"}]}
    )
    assert not is_compaction_summary_message({"role": "user", "content": "summary please"})


def test_split_merged_and_standalone() -> None:
    merged = {"role": "user", "content": f"{SUMMARY_PREFIX}\nS\n\n{END_MARKER}\n\nFix it"}
    assert split_summary_content(merged) == ("S", "Fix it")
    standalone = {"role": "user", "content": f"{SUMMARY_PREFIX}\nS\n\n{END_MARKER}"}
    assert split_summary_content(standalone) == ("S", None)
    as_list = {
        "role": "user",
        "content": [
            {"type": "text", "text": f"{SUMMARY_PREFIX}\nS"},
            {"type": "text", "text": "q"},
        ],
    }
    assert split_summary_content(as_list) == ("S", [{"type": "text", "text": "q"}])


def test_real_user_classification() -> None:
    assert is_real_user_message({"role": "user", "content": "do it"})
    assert not is_real_user_message({"role": "user", "content": "   "})
    assert not is_real_user_message({"role": "user", "content": None})
    assert not is_real_user_message({"role": "user", "content": [{"type": "text", "text": " "}]})
    assert is_real_user_message(
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:x"}}]}
    )
    assert not is_real_user_message({"role": "user", "content": SUMMARY_PREFIX + "\nS"})
    assert not is_real_user_message({"role": "assistant", "content": "x"})


def test_observations_and_chatter_are_not_real_user_messages() -> None:
    from palimpsest.messages.reading import read_transcript

    assert not is_real_user_message({"role": "user", "content": "OBSERVATION:\nls output"})
    assert not is_real_user_message({"role": "user", "content": "<returncode>0</returncode>"})
    assert not is_real_user_message(
        {"role": "user", "content": "x", "_message_type": "observation"}
    )
    assert not is_real_user_message({"role": "user", "content": "[Request interrupted by user]"})
    task = {"role": "user", "content": "Solve it", "_message_type": "observation"}
    readings = read_transcript([{"role": "system", "content": "s"}, task])
    assert is_real_user_message(task, readings[1])  # with context: SWE-agent's task
