"""normalize_usage on recorded provider payloads, the spec's examples, and junk input."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.usage import (
    CanonicalUsage,
    UsageTotal,
    format_token_pair,
    format_token_total,
    normalize_usage,
    reported_usage,
)

DATA = Path(__file__).parent / "data" / "usage"
RECORDED = sorted(DATA.glob("*.json"))
BUCKETS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "prompt_tokens",
    "total_tokens",
)


def _load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _buckets(u: CanonicalUsage) -> dict[str, int]:
    return {name: getattr(u, name) for name in BUCKETS}


def _sdk_object(shape: str, usage: dict[str, Any]) -> Any:
    """The same payload as the official SDK's pydantic usage model (attribute access)."""
    if shape == "anthropic":
        from anthropic.types import Usage

        return Usage.model_validate(usage)
    if shape == "responses":
        from openai.types.responses import ResponseUsage

        # Recent SDKs require ``cache_write_tokens``; older payloads predate the field.
        details = {"cache_write_tokens": 0, **usage.get("input_tokens_details", {})}
        return ResponseUsage.model_validate({**usage, "input_tokens_details": details})
    from openai.types import CompletionUsage

    return CompletionUsage.model_validate(usage)


def test_every_shape_has_recorded_payloads() -> None:
    shapes = {_load(p)["api_shape"] for p in RECORDED}
    assert shapes == {"anthropic", "chat", "responses"}
    assert all(_load(p)["source"] for p in RECORDED)


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.stem)
def test_recorded_payload_as_dict(path: Path) -> None:
    case = _load(path)
    got = normalize_usage(case["usage"], case["api_shape"])
    assert _buckets(got) == case["expected"]
    assert got.request_count == 1
    assert got.raw_usage is case["usage"]


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.stem)
def test_recorded_payload_as_sdk_object(path: Path) -> None:
    case = _load(path)
    obj = _sdk_object(case["api_shape"], case["usage"])
    got = normalize_usage(obj, case["api_shape"])
    assert _buckets(got) == case["expected"]
    assert got.raw_usage is obj


class TestSpecExamples:
    """Spec tokens-usage-caching.md, worked example and acceptance examples 4-7."""

    def test_anthropic_worked_example(self) -> None:
        u = normalize_usage(
            {
                "input_tokens": 21000,
                "output_tokens": 3000,
                "cache_read_input_tokens": 60000,
                "cache_creation_input_tokens": 0,
            },
            "anthropic",
        )
        assert (u.input_tokens, u.cache_read_tokens) == (21000, 60000)
        assert (u.prompt_tokens, u.total_tokens) == (81000, 84000)

    def test_chat_example(self) -> None:
        u = normalize_usage(
            {
                "prompt_tokens": 81000,
                "completion_tokens": 3000,
                "prompt_tokens_details": {"cached_tokens": 60000},
            },
            "chat",
        )
        assert (u.input_tokens, u.cache_read_tokens) == (21000, 60000)
        assert (u.prompt_tokens, u.total_tokens) == (81000, 84000)

    def test_responses_example(self) -> None:
        u = normalize_usage(
            {
                "input_tokens": 81000,
                "output_tokens": 3000,
                "input_tokens_details": {"cached_tokens": 60000, "cache_creation_tokens": 1000},
            },
            "responses",
        )
        assert (u.input_tokens, u.cache_write_tokens, u.prompt_tokens) == (20000, 1000, 81000)

    @pytest.mark.parametrize("raw", [None, {}])
    def test_empty(self, raw: Any) -> None:
        u = normalize_usage(raw)
        assert _buckets(u) == dict.fromkeys(BUCKETS, 0)
        assert u.request_count == 1

    def test_negative_and_string_counters(self) -> None:
        u = normalize_usage({"prompt_tokens": -5, "completion_tokens": "7"})
        assert (u.input_tokens, u.output_tokens) == (0, 7)

    def test_reasoning_heavy_response_has_small_prompt(self) -> None:
        # The compressor's trigger reads prompt tokens only (TK-17): 40K < 64K threshold,
        # although the 90K completion alone would exceed it.
        u = normalize_usage({"prompt_tokens": 40000, "completion_tokens": 90000})
        assert u.for_engine()["prompt_tokens"] == 40000
        assert u.prompt_tokens < 64000 < u.total_tokens


class TestChatFallbacks:
    """TK-14: alternative field names seen on OpenAI-compatible servers."""

    def test_input_output_names_in_chat_shape(self) -> None:
        u = normalize_usage({"input_tokens": 500, "output_tokens": 20})
        assert (u.input_tokens, u.output_tokens) == (500, 20)

    def test_prompt_tokens_wins_over_input_tokens(self) -> None:
        u = normalize_usage({"prompt_tokens": 700, "input_tokens": 500})
        assert u.input_tokens == 700

    def test_zero_candidate_falls_through(self) -> None:
        u = normalize_usage({"prompt_tokens": 0, "input_tokens": 500})
        assert u.input_tokens == 500

    @pytest.mark.parametrize(
        "extra",
        [
            {"cache_read_input_tokens": 60},
            {"prompt_cache_hit_tokens": 60},  # DeepSeek's flat field
            {"cached_tokens": 60},
            {"prompt_tokens_details": {"cached_tokens": 60}, "cached_tokens": 999},
        ],
    )
    def test_cache_read_candidates(self, extra: dict[str, Any]) -> None:
        u = normalize_usage({"prompt_tokens": 100, **extra})
        assert (u.cache_read_tokens, u.input_tokens) == (60, 40)

    @pytest.mark.parametrize(
        "extra",
        [
            {"prompt_tokens_details": {"cache_write_tokens": 30}},
            {"prompt_tokens_details": {"cache_creation_input_tokens": 30}},
            {"cache_creation_input_tokens": 30},
            {"cache_write_tokens": 30},
        ],
    )
    def test_cache_write_candidates(self, extra: dict[str, Any]) -> None:
        u = normalize_usage({"prompt_tokens": 100, **extra})
        assert (u.cache_write_tokens, u.input_tokens, u.prompt_tokens) == (30, 70, 100)

    def test_reasoning_from_either_details_object(self) -> None:
        chat = normalize_usage({"completion_tokens_details": {"reasoning_tokens": 9}})
        resp = normalize_usage({"output_tokens_details": {"reasoning_tokens": 8}}, "responses")
        anth = normalize_usage({"output_tokens_details": {"reasoning_tokens": 7}}, "anthropic")
        assert (chat.reasoning_tokens, resp.reasoning_tokens, anth.reasoning_tokens) == (9, 8, 7)

    def test_responses_prefers_cache_write_tokens(self) -> None:
        u = normalize_usage(
            {
                "input_tokens": 100,
                "input_tokens_details": {"cache_write_tokens": 10, "cache_creation_tokens": 99},
            },
            "responses",
        )
        assert (u.cache_write_tokens, u.input_tokens) == (10, 90)


class TestRobustReading:
    def test_attributes_and_keys_mix(self) -> None:
        raw = SimpleNamespace(prompt_tokens=100, prompt_tokens_details={"cached_tokens": 40})
        u = normalize_usage(raw)
        assert (u.input_tokens, u.cache_read_tokens) == (60, 40)

    @pytest.mark.parametrize(
        "junk", ["abc", None, float("nan"), float("inf"), [], {"x": 1}, object(), "-3"]
    )
    def test_junk_counts_as_zero(self, junk: Any) -> None:
        u = normalize_usage({"prompt_tokens": junk, "completion_tokens": 5})
        assert (u.input_tokens, u.output_tokens) == (0, 5)

    def test_none_detail_object(self) -> None:
        u = normalize_usage({"prompt_tokens": 10, "prompt_tokens_details": None})
        assert (u.input_tokens, u.cache_read_tokens) == (10, 0)

    def test_cache_larger_than_total_clamps_input(self) -> None:
        u = normalize_usage({"prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": 50}})
        assert (u.input_tokens, u.cache_read_tokens) == (0, 50)

    def test_shape_aliases(self) -> None:
        raw = {"input_tokens": 10, "cache_read_input_tokens": 5}
        assert normalize_usage(raw, "anthropic_messages") == normalize_usage(raw, "anthropic")
        assert normalize_usage(raw, "Chat_Completions").cache_read_tokens == 5

    def test_unknown_shape_is_rejected(self) -> None:
        with pytest.raises(ValueError, match="unknown usage api_shape 'gemini'"):
            normalize_usage({"prompt_tokens": 1}, "gemini")


class TestAddition:
    def test_sums_buckets_and_drops_raw(self) -> None:
        a = normalize_usage({"prompt_tokens": 100, "completion_tokens": 5})
        b = normalize_usage(
            {"input_tokens": 3, "output_tokens": 4, "cache_read_input_tokens": 50}, "anthropic"
        )
        total = a + b
        assert total.raw_usage is None
        assert total.request_count == 2
        assert (total.input_tokens, total.cache_read_tokens, total.output_tokens) == (103, 50, 9)

    def test_to_dict(self) -> None:
        u = normalize_usage({"prompt_tokens": 100, "completion_tokens": 5})
        assert u.to_dict()["prompt_tokens"] == 100
        assert u.to_dict()["total_tokens"] == 105


counter = st.one_of(
    st.integers(min_value=-(10**9), max_value=10**9),
    st.none(),
    st.text(max_size=5),
    st.floats(allow_nan=True),
)


@given(
    prompt=counter,
    completion=counter,
    cached=counter,
    write=counter,
    shape=st.sampled_from(["chat", "responses", "anthropic"]),
)
def test_never_raises_and_never_negative(
    prompt: Any, completion: Any, cached: Any, write: Any, shape: str
) -> None:
    raw = {
        "prompt_tokens": prompt,
        "input_tokens": prompt,
        "completion_tokens": completion,
        "output_tokens": completion,
        "cache_read_input_tokens": cached,
        "cache_creation_input_tokens": write,
        "prompt_tokens_details": {"cached_tokens": cached, "cache_write_tokens": write},
        "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": write},
    }
    u = normalize_usage(raw, shape)
    assert min(_buckets(u).values()) >= 0
    assert u.total_tokens == u.prompt_tokens + u.output_tokens


@given(
    total=st.integers(min_value=0, max_value=10**8),
    cached=st.integers(min_value=0, max_value=10**8),
)
def test_chat_prompt_tokens_preserved_when_cache_fits(total: int, cached: int) -> None:
    """Chat/Responses totals include the cache: the derived prompt equals the raw total."""
    cached = min(cached, total)
    u = normalize_usage(
        {"prompt_tokens": total, "prompt_tokens_details": {"cached_tokens": cached}}
    )
    assert u.prompt_tokens == total


class TestUnreportedUsage:
    """A provider that sends no usage must read as unknown, not as zero tokens."""

    @pytest.mark.parametrize("raw", [None, {}])
    def test_no_usage_object_is_none(self, raw: Any) -> None:
        assert reported_usage(raw) is None
        assert reported_usage(raw, "anthropic") is None

    def test_a_reported_zero_is_a_report(self) -> None:
        usage = reported_usage({"prompt_tokens": 0, "completion_tokens": 0})
        assert usage is not None and usage.total_tokens == 0

    def test_reported_matches_normalize(self) -> None:
        raw = {"prompt_tokens": 2006, "prompt_tokens_details": {"cached_tokens": 1920}}
        assert reported_usage(raw) == normalize_usage(raw)

    def test_bad_shape_is_still_an_error(self) -> None:
        with pytest.raises(ValueError, match="api_shape"):
            reported_usage(None, "bogus")

    @pytest.mark.parametrize(
        ("known", "unreported", "calls", "shown"),
        [
            (1234, 0, 3, "1,234"),
            (0, 0, 0, "0"),
            (1234, 1, 3, "≥ 1,234 (1 call unreported)"),
            (0, 2, 3, "≥ 0 (2 calls unreported)"),  # one call reported zero
            (0, 2, 2, "unknown (2 calls unreported)"),
            (0, 1, None, "unknown (1 call unreported)"),
        ],
    )
    def test_token_total_labels(
        self, known: int, unreported: int, calls: int | None, shown: str
    ) -> None:
        assert format_token_total(known, unreported, calls) == shown

    def test_token_pair_labels(self) -> None:
        assert format_token_pair(10, 2, 0, 1) == "10 in / 2 out"
        assert format_token_pair(10, 2, 1, 2) == "≥ 10 in / ≥ 2 out (1 call unreported)"
        assert format_token_pair(0, 0, 3, 3) == "unknown (3 calls unreported)"

    def test_total_keeps_known_and_unreported_apart(self) -> None:
        total = UsageTotal()
        assert total.calls == 0 and total.complete
        total = total.add(CanonicalUsage(input_tokens=100, output_tokens=5)).add(None)
        assert (total.known.input_tokens, total.known.request_count) == (100, 1)
        assert (total.unreported_calls, total.calls, total.complete) == (1, 2, False)
        assert total.tokens("prompt_tokens") == "≥ 100 (1 call unreported)"
        assert total.to_dict()["input_tokens"] == 100
        with pytest.raises(ValueError, match="bucket"):
            total.tokens("raw_usage")

    def test_all_unreported_gives_none_figures(self) -> None:
        data = UsageTotal().add(None).to_dict()
        assert data["input_tokens"] is None and data["total_tokens"] is None
        assert (data["request_count"], data["unreported_calls"], data["calls"]) == (0, 1, 1)


@given(st.lists(st.one_of(st.none(), st.integers(0, 10**6)), max_size=20))
def test_total_is_a_lower_bound_exactly_when_a_call_is_missing(counts: list[int | None]) -> None:
    total = UsageTotal()
    for count in counts:
        total = total.add(None if count is None else CanonicalUsage(input_tokens=count))
    known = sum(c for c in counts if c is not None)
    assert total.known.input_tokens == known and total.calls == len(counts)
    assert total.complete == (None not in counts)
    shown = total.tokens("input_tokens")
    assert shown.startswith(("≥", "unknown")) != total.complete
