"""ContextCompressor: trigger, anti-thrashing, failures, re-compression (spec examples 2-4, 10, 11, 14, 15)."""

from __future__ import annotations

import copy
import itertools
import json

import pytest

from compaction_helpers import StubSummarizer, alternating, asst, call, sys_, tool, user
from palimpsest.compaction.compressor import ContextCompressor
from palimpsest.compaction.markers import COMPACTION_NOTE, SUMMARY_PREFIX
from palimpsest.messages import validate_transcript


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def make(summarizer=None, **kwargs):  # type: ignore[no-untyped-def]
    kwargs.setdefault("quiet_mode", True)
    # The spec's examples are written for profile "seed", where a summary is inserted even
    # when it is larger than the tiny middle it replaces.
    kwargs.setdefault("refuse_if_grow", False)
    return ContextCompressor(
        kwargs.pop("context_length", 200_000), summarizer or StubSummarizer(), **kwargs
    )


def summary_of(messages: list[dict]) -> dict:
    return next(m for m in messages if m.get("_compressed_summary"))


class TestThresholds:
    def test_example_1(self) -> None:
        c = make()
        assert (c.threshold_tokens, c.tail_token_budget, c.max_summary_tokens) == (
            100_000,
            20_000,
            10_000,
        )
        assert make(context_length=100_000).threshold_tokens == 64_000
        assert make(context_length=64_000).threshold_tokens == 54_400
        assert make(target_ratio=0.40).tail_token_budget == 40_000
        assert make(target_ratio=0.05).tail_token_budget == 10_000

    def test_target_ratio_is_clamped_where_it_is_stored(self) -> None:
        # CC-02: the stored ratio is the clamped one, not only the tail budget derived from it.
        assert make(target_ratio=0.05).summary_target_ratio == 0.10
        assert make(target_ratio=0.95).summary_target_ratio == 0.80
        assert make(target_ratio=0.95).tail_token_budget == 80_000
        assert make(target_ratio=0.3).summary_target_ratio == 0.3

    def test_bad_arguments(self) -> None:
        with pytest.raises(ValueError):
            ContextCompressor(0)
        with pytest.raises(TypeError):
            ContextCompressor("200k")  # type: ignore[arg-type]
        with pytest.raises(ValueError):
            ContextCompressor(1000, threshold_percent=1.5)

    def test_update_model_recomputes_and_resets(self) -> None:
        c = make()
        c.ineffective_compression_count = 2
        c.last_prompt_tokens = 99
        c.update_model("other", 128_000)
        assert (c.threshold_tokens, c.tail_token_budget, c.max_summary_tokens) == (
            64_000,
            12_800,
            6_400,
        )
        assert c.last_prompt_tokens == 0 and c.ineffective_compression_count == 0


class TestTrigger:
    def test_example_2(self) -> None:
        c = make(context_length=100_000, threshold_percent=0.85)
        assert c.threshold_tokens == 85_000
        c.update_from_response({"prompt_tokens": 85_000})
        assert c.should_compress() is True
        c.update_from_response({"prompt_tokens": 84_999})
        assert c.should_compress() is False
        c.update_from_response({"prompt_tokens": 50_000})
        assert c.should_compress(prompt_tokens=90_000) is True
        c.update_from_response({})
        assert c.last_prompt_tokens == 0
        c.update_from_response(
            {"prompt_tokens": 5000, "completion_tokens": 1000, "total_tokens": 6000}
        )
        assert (c.last_prompt_tokens, c.last_completion_tokens, c.last_total_tokens) == (
            5000,
            1000,
            6000,
        )

    def test_reasoning_heavy_completion_does_not_trigger(self) -> None:
        c = make(context_length=128_000)
        c.update_from_response({"prompt_tokens": 40_000, "completion_tokens": 90_000})
        assert c.should_compress() is False

    def test_after_compaction_waits_for_real_usage(self) -> None:
        c = make()
        c.compress(alternating(20))
        assert c.last_prompt_tokens == -1 and c.awaiting_real_usage
        assert c.should_compress() is False
        assert c.get_status()["last_prompt_tokens"] == 0
        c.update_from_response({"prompt_tokens": 150_000})
        assert c.should_compress() is True


def weak_transcript(middle_chars: int) -> list[dict]:
    """Big head and tail around a small middle, so compaction saves little."""
    big = "x" * 40_000
    return [
        sys_(big),
        user(big),
        asst(big),
        user("m1" * middle_chars),
        asst("m2"),
        user("m3"),
        asst(big),
        user(big),
        asst(big),
    ]


class TestAntiThrash:
    def test_example_3(self) -> None:
        c = make()
        c.tail_token_budget = 20
        for _ in range(2):
            c.compress(weak_transcript(10))
            assert c.last_stats.savings_pct < 10
        assert c.ineffective_compression_count == 2
        assert c.should_compress(10**9) is False
        assert c.should_compress_info(10**9) == (False, "ineffective")
        big_middle = weak_transcript(100_000)
        out = c.compress(big_middle, force=True)
        assert c.last_stats.savings_pct >= 40 and len(out) < len(big_middle)
        assert c.ineffective_compression_count == 0
        assert c.should_compress(10**9) is True

    def test_real_usage_below_threshold_clears_the_count(self) -> None:
        c = make()
        c.ineffective_compression_count = 2
        c.update_from_response({"prompt_tokens": 10})
        assert c.ineffective_compression_count == 0


class TestFewMessages:
    def test_example_4(self) -> None:
        summarizer = StubSummarizer()
        c = make(summarizer)
        seven = alternating(7)
        out = c.compress(seven)
        assert out == seven and out is not seven
        assert c.compression_count == 0 and summarizer.requests == []
        assert c.ineffective_compression_count == 1
        nine = alternating(9)
        out = c.compress(nine)
        assert len(out) < 9 and c.compression_count == 1


class TestRoles:
    def test_example_10_merge_into_tail(self) -> None:
        msgs = [
            sys_(),
            user("msg 1"),
            asst("msg 2"),
            user("u3"),
            asst("a4"),
            user("u5"),
            user("msg 6"),
            asst("a7"),
            user("u8"),
        ]
        out = make(protect_last_n=3).compress(msgs)
        roles = [m["role"] for m in out]
        assert all(
            not (a == b and a in ("user", "assistant")) for a, b in itertools.pairwise(roles)
        )
        merged = next(m for m in out if "msg 6" in m["content"])
        assert "S" in merged["content"] and merged["content"].startswith(SUMMARY_PREFIX)

    def test_example_10_standalone_user(self) -> None:
        out = make(protect_first_n=2).compress(alternating(8))
        summaries = [m for m in out if m.get("_compressed_summary")]
        assert len(summaries) == 1 and summaries[0]["role"] == "user"
        assert summaries[0]["content"].startswith(SUMMARY_PREFIX)

    def test_example_10_forced_merge_into_assistant(self) -> None:
        msgs = [
            sys_(),
            user("u1"),
            user("u2"),
            asst("a3"),
            user("u4"),
            asst("a5"),
            user("u6"),
            asst("a7"),
        ]
        out = make().compress(msgs)
        assert out[:3] == [
            {**msgs[0], "content": msgs[0]["content"] + "\n\n" + COMPACTION_NOTE},
            msgs[1],
            msgs[2],
        ]
        holder = summary_of(out)
        assert holder["role"] == "assistant" and holder["content"].startswith(SUMMARY_PREFIX)
        assert holder["content"].endswith("a5")
        roles = [m["role"] for m in out]
        assert ("user", "user") not in set(itertools.pairwise(roles[2:]))


class TestFailures:
    def test_example_11_static_fallback_and_cooldown(self) -> None:
        clock = Clock()
        failing = StubSummarizer(error=TimeoutError("timed out"))
        c = make(failing, fallback_summary="static", clock=clock)
        msgs = alternating(20)
        out = c.compress(msgs)
        summary = summary_of(out)
        n = c.last_stats.middle_messages
        assert summary["content"].startswith(SUMMARY_PREFIX)
        assert f"{n} message(s) were removed" in summary["content"]
        assert c.last_summary_fallback_used is True
        assert c.last_summary_dropped_count == n and c.compression_count == 1
        clock.now += 59
        c.compress(alternating(22))
        assert len(failing.requests) == 1  # no call during the 60 s cooldown
        assert c.should_compress_info(10**9)[1] == "cooldown:1"
        clock.now += 2
        c.compress(alternating(24))
        assert len(failing.requests) == 2

    def test_example_11_abort_keeps_the_pruned_input(self) -> None:
        from palimpsest.compaction.prune import prune_tool_results

        failing = StubSummarizer(error=ConnectionError("connection reset by peer"))
        c = make(failing, abort_on_summary_failure=True)
        c.tail_token_budget = 50  # so the old tool result is outside the protected tail
        msgs = [sys_(), user("u"), asst(None, [call("c1")]), tool("c1", "r" * 5_000)]
        msgs += alternating(40)
        c.previous_summary = "kept"
        msgs[5] = {"role": "user", "content": SUMMARY_PREFIX + "\nkept"}
        out = c.compress(msgs)
        pruned = prune_tool_results(msgs, protect_last_n=20, tail_token_budget=50)
        assert out == pruned.messages
        assert out != msgs
        assert c.last_compress_aborted is True and c.last_summary_dropped_count == 0
        assert c.compression_count == 0 and c.previous_summary == "kept"

    def test_deterministic_fallback_keeps_the_facts(self) -> None:
        failing = StubSummarizer(error=RuntimeError("provider down"))
        c = make(failing)
        msgs = [
            sys_(),
            user("start"),
            asst("ok"),
            user("edit the config"),
            asst(None, [call("c1", "write_file", path="src/app/config.py", content="x=1")]),
            tool("c1", "written"),
            asst("done"),
            user("now run the tests"),
            asst("running"),
            user("and the docs"),
            asst("sure"),
            user("thanks"),
        ]
        out = c.compress(msgs)
        body = summary_of(out)["content"]
        assert "src/app/config.py" in body
        assert "provider down" in body and "rule-based" in body
        assert c.last_summary_fallback_used and c.fallback_streak == 1

    def test_empty_summary_is_a_failure(self) -> None:
        c = make(StubSummarizer(body="   "))
        out = c.compress(alternating(20))
        assert c.last_summary_fallback_used
        assert summary_of(out)["content"].strip() != SUMMARY_PREFIX

    def test_force_clears_cooldown(self) -> None:
        clock = Clock()
        failing = StubSummarizer(error=TimeoutError("t"))
        c = make(failing, clock=clock)
        c.compress(alternating(20))
        failing.error = None
        c.compress(alternating(22), force=True)
        assert len(failing.requests) == 2 and not c.last_summary_fallback_used


class TestRecompression:
    def test_example_14(self) -> None:
        statuses: list[str] = []
        summarizer = StubSummarizer()
        c = make(summarizer, status_callback=statuses.append)
        first = c.compress([sys_(), *alternating(20)])
        grown = first + alternating(20)
        second = c.compress(grown)
        prompt = summarizer.requests[1].prompt
        assert (
            "PREVIOUS SUMMARY:\nS" in prompt
            and f"PREVIOUS SUMMARY:\n{SUMMARY_PREFIX}" not in prompt
        )
        assert c.compression_count == 2
        assert second[0]["content"].count(COMPACTION_NOTE) == 1
        assert statuses == [
            "Session compressed 2 times — accuracy may degrade. Consider /new to start fresh."
        ]
        assert sum(1 for m in second if m.get("_compressed_summary")) == 1

    def test_previous_summary_from_another_conversation_is_dropped(self) -> None:
        summarizer = StubSummarizer()
        c = make(summarizer)
        c.compress(alternating(20))
        c.compress(alternating(30))  # no summary message in this input
        assert summarizer.requests[1].previous_summary is None

    def test_rehydrates_previous_summary_after_restart(self) -> None:
        first = make().compress([sys_(), *alternating(20)])
        summarizer = StubSummarizer(body="S2")
        fresh = make(summarizer)
        fresh.compress(first + alternating(20))
        assert summarizer.requests[0].previous_summary == "S"
        assert all("[CONTEXT COMPACTION" not in json.dumps(t) for t in summarizer.requests[0].turns)


class TestPressure:
    def test_example_15_warning_once_and_never_in_messages(self) -> None:
        seen: list[str] = []
        c = make(status_callback=seen.append, threshold_tokens_cap=50_000)
        assert c.threshold_tokens == 50_000
        assert (
            c.check_pressure(42_500)
            == "⚠️ Context is 85% to compaction threshold (42,500/50,000 tokens)"
        )
        assert c.check_pressure(43_000) is None
        assert seen == ["⚠️ Context is 85% to compaction threshold (42,500/50,000 tokens)"]
        out = c.compress(alternating(20))
        assert all("Context is" not in json.dumps(m) for m in out)
        c.check_pressure(1_000)
        assert c.pressure_warning_active is False


def test_input_never_mutated_and_focus_reaches_the_prompt() -> None:
    msgs = [
        sys_(),
        user("u"),
        asst(None, [call("c1", path="a.py", content="y" * 2000)]),
        tool("c1", "r" * 5000),
    ]
    msgs += alternating(20)
    before = copy.deepcopy(msgs)
    summarizer = StubSummarizer()
    out = make(summarizer).compress(msgs, focus_topic="database schema")
    assert msgs == before
    assert 'FOCUS TOPIC: "database schema"' in summarizer.requests[0].prompt
    validate_transcript(out)


@pytest.mark.parametrize("n", [7, 20], ids=["no-op", "compacted"])
def test_internal_markers_are_removed_from_returned_messages(n: int) -> None:
    msgs = [{**m, "_persisted": True} for m in alternating(n)]
    out = make().compress(msgs)
    assert all(
        k in ("role", "content", "_compressed_summary", "_compressed_summary_has_user_turn")
        for m in out
        for k in m
    )


def test_refuses_a_summary_that_would_grow_the_conversation() -> None:
    summarizer = StubSummarizer(body="a very long summary " * 500)
    c = ContextCompressor(200_000, summarizer, quiet_mode=True)
    msgs = alternating(12)
    out = c.compress(msgs)
    assert out == msgs and c.compression_count == 0
    assert c.last_compress_refused_would_grow and c.ineffective_compression_count == 1
    assert c.previous_summary is None


def test_has_content_to_compress() -> None:
    c = make()
    assert c.has_content_to_compress(alternating(7)) is False
    assert c.has_content_to_compress(alternating(20)) is True


def test_from_settings_reads_compression_and_model_sections() -> None:
    from palimpsest.config import settings_from_dict
    from palimpsest.errors import ConfigError

    settings = settings_from_dict(
        {
            "model": {"context_length": 128_000},
            "compression": {"threshold": 0.7, "protect_last_n": 8, "prune_style": "placeholder"},
        }
    )
    c = ContextCompressor.from_settings(settings)
    assert c.context_length == 128_000 and c.threshold_tokens == 89_600
    assert c.protect_last_n == 8 and c.prune_style == "placeholder"
    assert (
        ContextCompressor.from_settings(settings, threshold_percent=0.5).threshold_tokens == 64_000
    )
    with pytest.raises(ConfigError) as info:
        ContextCompressor.from_settings(settings_from_dict({}))
    assert info.value.key == "model.context_length"


def _chat(pairs: int, chars: int) -> list[dict]:
    out: list[dict] = []
    for i in range(pairs):
        out += [
            user(f"question {i} " + "about the parser " * (chars // 17)),
            asst(f"answer {i} " + "x" * chars),
        ]
    return out


def test_a_host_compaction_target_shrinks_the_tail() -> None:
    """``compaction_target_tokens`` (an agent's room after its system prompt and tool
    schemas) lowers the tail budget: more of the conversation is summarized."""
    messages = _chat(40, 600)
    plain = make(context_length=16_000, threshold_percent=0.5)
    aimed = make(context_length=16_000, threshold_percent=0.5)
    aimed.compaction_target_tokens = 2_000
    a, b = plain.compress(messages), aimed.compress(messages)
    assert plain.last_stats.compressed and aimed.last_stats.compressed
    assert aimed.last_stats.tail_messages < plain.last_stats.tail_messages
    assert aimed.last_stats.after_tokens < plain.last_stats.after_tokens
    validate_transcript(b)
    assert a[-1] == b[-1] == messages[-1]  # the newest request stays, whatever the aim


def test_a_middle_of_only_the_earlier_summary_walks_again_past_it() -> None:
    """When everything newer than a large earlier summary fits under the tail's 1.5x
    ceiling, the middle would be the summary alone and a forced compaction (reactive,
    manual) could never shrink the session again: it walks again behind the summary."""
    head = [user("Please fix the parser."), asst("Looking at it."), user("Keep tests green.")]
    summary = {
        "role": "assistant",
        "content": SUMMARY_PREFIX + "\n## Goal\n" + "The parser work so far. " * 500,
        "_compressed_summary": True,
    }
    newer: list[dict] = []
    for i in range(6):
        newer += [user(f"step {i}: " + "check the module " * 20), asst(f"done {i}: " * 30)]
    grown = [*head, summary, *newer]
    compressor = make(context_length=16_000, threshold_percent=0.5, refuse_if_grow=True)
    result = compressor.compress(grown, force=True)
    assert compressor.last_stats.compressed, compressor.last_stats.reason
    assert len(result) < len(grown)
    validate_transcript(result)
    assert result[-1] == grown[-1]
