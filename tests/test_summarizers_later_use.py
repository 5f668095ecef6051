"""Identifiers ranked by later use: names a tool printed that the run went on to use."""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from palimpsest.compaction import ContextCompressor
from palimpsest.compaction.markers import is_compaction_summary_message, split_summary_content
from palimpsest.summarizers import ExtractiveSummarizer, SummaryRequest, later_use
from palimpsest.summarizers.extractive import NAMES_LABEL
from palimpsest.summarizers.facts import extract_facts
from palimpsest.summarizers.identifiers import IdentifierTally
from palimpsest.summarizers.later_use import NameUse, tail_uses, words_of


def call(cid: str, command: str, text: str = "") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": text,
        "tool_calls": [
            {
                "id": cid,
                "type": "function",
                "function": {"name": "bash", "arguments": json.dumps({"command": command})},
            }
        ],
    }


def output(cid: str, text: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": cid, "content": text}


def names_line(body: str) -> list[str]:
    line = next(x for x in body.splitlines() if NAMES_LABEL in x)
    return re.findall(r"`([^`]+)`", line)


def test_words_of_keeps_dotted_names_and_their_parts() -> None:
    assert {"Schema.dump_many", "Schema", "dump_many", "#1867"} <= words_of(
        "see Schema.dump_many and #1867"
    )


def test_tail_uses_count_assistant_messages_only() -> None:
    tail = [
        call("a", "grep -n parse_week src", "Look at `parse_week`."),
        output("a", "parse_week printed by a tool"),
        {"role": "assistant", "content": "parse_week again; WeekParser too"},
    ]
    uses = tail_uses(tail)
    assert uses["parse_week"] == 2 and uses["WeekParser"] == 1
    assert tail_uses(None) == {}


def test_printed_names_count_only_once_the_agent_uses_them() -> None:
    agent = IdentifierTally()
    use = NameUse(agent)
    use.saw_output(1, "def parse_week(x):\n    return iso_calendar_of(x)\nunused_helper()", 3000)
    said = "I will change parse_week now."  # the agent's own message
    agent.add(said)
    use.agent_used(2, [said])
    use.agent_used(0, ["iso_calendar_of"])  # a use before it was printed is not a later use
    tail = [{"role": "assistant", "content": f"check iso_calendar_of ({i})"} for i in range(2)]
    ranked = use.ranked(tail_uses(tail))
    assert ranked[:2] == ["iso_calendar_of", "parse_week"]  # the tail's uses rank first
    assert "unused_helper" not in ranked  # printed, never used again: not vocabulary
    later, first, called = use.later_uses(tail_uses([]))
    assert later == {"parse_week": 1} and first["iso_calendar_of"] == 1
    assert "iso_calendar_of" in called


def test_a_plain_word_printed_as_a_call_and_used_later_counts() -> None:
    use = NameUse(IdentifierTally())
    use.saw_output(1, "12:    def serialize(self, value):", 3000)
    use.agent_used(2, ["The bug is in serialize, I will fix it."])
    use.agent_used(3, ["Now value is rounded."])  # `value` was never a call: not a name
    assert use.ranked(tail_uses([])) == ["serialize"]


def test_a_printed_secret_is_never_a_name() -> None:
    agent = IdentifierTally()
    use = NameUse(agent)
    use.saw_output(1, "export API_TOKEN=ghp_FAKE1234567890abcdefghijABCDEFGHIJ", 3000)
    tail = tail_uses([{"role": "assistant", "content": "ghp_FAKE1234567890abcdefghijABCDEFGHIJ"}])
    assert not any("FAKE" in n for n in use.ranked(tail))


def _span() -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = [
        call("g", "grep -rn week src/dates.py", "Where is the week parsed?"),
        output(
            "g",
            "src/dates.py:10: def parse_iso_week(text):\n"
            "src/dates.py:22:     raise WeekFormatError(text)\n"
            "src/dates.py:30: def unrelated_helper():",
        ),
        call("r", "python -c 'import dates; dates.parse_iso_week(\"2024-W05\")'"),
        output("r", "Traceback (most recent call last):\nWeekFormatError: 2024-W05"),
    ]
    for i in range(12):  # noise the agent named itself, each once
        turns.append(call(f"n{i}", f"cat notes_{i}.txt", f"Reading note_reader_{i}."))
        turns.append(output(f"n{i}", f"note {i}\n" * 80))
    return turns


def test_the_summary_lists_printed_names_the_run_used_first() -> None:
    tail = [{"role": "assistant", "content": "WeekFormatError is raised for every ISO week."}]
    facts = extract_facts(_span(), tail=tail)
    ranked = facts.key_names(limit=5)
    assert ranked[:2] == ["WeekFormatError", "parse_iso_week"]
    assert "unrelated_helper" not in facts.key_names(limit=100)
    request = SummaryRequest(
        turns=_span(),
        previous_summary=None,
        focus_topic=None,
        budget_tokens=2_000,
        prompt="",
        tail=tail,
    )
    names = names_line(ExtractiveSummarizer().summarize(request))
    assert names[:2] == ["WeekFormatError", "parse_iso_week"]


def test_without_a_tail_the_request_still_works() -> None:
    request = SummaryRequest(
        turns=_span(), previous_summary=None, focus_topic=None, budget_tokens=2_000, prompt=""
    )
    assert request.tail is None
    assert "parse_iso_week" in names_line(ExtractiveSummarizer().summarize(request))


def test_the_compressor_hands_the_tail_to_the_summarizer() -> None:
    seen: list[SummaryRequest] = []

    class Recording(ExtractiveSummarizer):
        def summarize(self, request: SummaryRequest) -> str:
            seen.append(request)
            return super().summarize(request)

    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Make ISO week parsing strict."},
        *_span(),
    ]
    for i in range(6):
        messages.append(call(f"t{i}", f"pytest -k week_{i}", "WeekFormatError still raised."))
        messages.append(output(f"t{i}", "1 failed\n" + "log line\n" * 40))
    compressor = ContextCompressor(4_000, ExtractiveSummarizer(), quiet_mode=True)
    compressor.summarizer = Recording()
    result = compressor.compress(messages, force=True)
    assert seen and seen[0].tail is not None
    stats = compressor.last_stats
    assert list(seen[0].tail) == messages[stats.head_messages + stats.middle_messages :]
    body = next(split_summary_content(m)[0] for m in result if is_compaction_summary_message(m))
    assert body is not None and "WeekFormatError" in names_line(body)


# The patterns as first written: simple, and quadratic on a long word (see later_use).
_PLAIN_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_PLAIN_CALLED = re.compile(r"([A-Za-z_]\w*)\(")


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="ab_Z9é. (\n", max_size=60))
def test_the_linear_patterns_find_what_the_plain_ones_found(text: str) -> None:
    assert later_use._DOTTED.findall(text) == _PLAIN_DOTTED.findall(text)
    assert later_use._CALLED_WORD.findall(text) == _PLAIN_CALLED.findall(text)


def test_a_long_word_is_read_once() -> None:
    word = "x" * 6_000
    assert words_of(f"{word} and os.path") == {word, "and", "os.path", "os", "path"}
