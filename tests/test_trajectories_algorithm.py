"""The pure steps of trajectory compression: protection, region, snapping, rendering, assembly."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.compaction.summary import serialize_turns
from palimpsest.trajectories import CompressionConfig
from palimpsest.trajectories.algorithm import (
    ELISION_MARKER,
    SUMMARY_PREFIX,
    assemble,
    elide,
    normalize_summary,
    plan,
    protected_indices,
    region_bounds,
    render_region,
    snap_boundary,
)

CYCLE = ["gpt", "tool"]


def turns_of(*roles: str) -> list[dict[str, Any]]:
    return [{"from": r, "value": f"{r} {i}"} for i, r in enumerate(roles)]


def twenty() -> list[dict[str, Any]]:
    return turns_of("system", "human", *(CYCLE * 9))


class TestProtected:
    def test_example_2_protected_and_region(self) -> None:
        turns = twenty()
        protected = protected_indices(turns, CompressionConfig(protect_last_n_turns=4))
        assert protected == {0, 1, 2, 3, 16, 17, 18, 19}
        assert region_bounds(len(turns), protected) == (4, 16)

    def test_example_2_no_system_still_protects_first_human(self) -> None:
        turns = turns_of("human", *(CYCLE * 9))
        assert 0 in protected_indices(turns, CompressionConfig())

    def test_example_2_index_zero_unprotected_without_first_system(self) -> None:
        protected = protected_indices(twenty(), CompressionConfig(protect_first_system=False))
        assert 0 not in protected
        assert {1, 2, 3} <= protected

    def test_each_role_flag(self) -> None:
        config = CompressionConfig(
            protect_first_gpt=False, protect_first_tool=False, protect_last_n_turns=0
        )
        assert protected_indices(twenty(), config) == {0, 1}

    def test_no_protection_region_is_everything(self) -> None:
        assert region_bounds(6, frozenset()) == (0, 6)

    def test_tail_only_region_starts_at_zero(self) -> None:
        assert region_bounds(6, frozenset({4, 5})) == (0, 4)


class TestSnap:
    def test_example_5(self) -> None:
        traj = turns_of("system", "human", "gpt", "tool", "gpt", "tool", "gpt", "tool", "gpt")
        assert traj[5]["from"] == "tool"
        assert snap_boundary(traj, 5, 4, 8) == 6
        assert snap_boundary(traj, 4, 4, 8) == 4
        assert snap_boundary(turns_of("gpt", "tool"), 1, 0, 1) == 0

    def test_end_of_list_is_clean(self) -> None:
        assert snap_boundary(turns_of("gpt", "tool"), 2, 0, 2) == 2

    def test_runs_of_tool_turns_are_skipped_whole(self) -> None:
        traj = turns_of("gpt", "tool", "tool", "tool", "gpt")
        assert snap_boundary(traj, 1, 0, 4) == 4

    def test_nothing_clean_returns_lo(self) -> None:
        assert snap_boundary(turns_of("tool", "tool"), 1, 0, 1) == 0


class TestPlan:
    def test_example_3_greedy_and_snapping(self) -> None:
        roles = ["system", "human", "gpt", "tool", "gpt", "tool", "gpt", "tool", "gpt", "human"]
        counts = [100, 100, 100, 2000, 100, 2000, 100, 2000, 100, 100]
        config = CompressionConfig(
            target_max_tokens=5_000, summary_target_tokens=500, protect_last_n_turns=2
        )
        p = plan(turns_of(*roles), counts, config)
        assert (p.status, p.start, p.until, p.total) == ("summarize", 4, 8, 6_700)

    def test_under_target_is_skipped(self) -> None:
        p = plan(twenty(), [50] * 20, CompressionConfig())
        assert p.status == "skipped_under_target"

    def test_under_target_without_skip_still_plans(self) -> None:
        config = CompressionConfig(skip_under_target=False, summary_target_tokens=10)
        p = plan(twenty(), [50] * 20, config)
        assert p.status == "summarize"
        assert (p.start, p.until) == (4, 6)

    def test_empty_region_is_unchanged(self) -> None:
        turns = turns_of("system", "human", "gpt", "tool")
        p = plan(turns, [10_000] * 4, CompressionConfig())
        assert p.status == "unchanged"

    def test_example_6_net_savings_guard(self) -> None:
        counts = [5_000, 5_000, 5_000, 5_000] + [50] * 8 + [5_000] * 4
        turns = turns_of("system", "human", "gpt", "tool", *(CYCLE * 4), *(CYCLE * 2))
        p = plan(turns, counts, CompressionConfig(summary_target_tokens=750))
        assert p.status == "unchanged"

    def test_whole_region_when_target_unreachable(self) -> None:
        counts = [5_000] * 4 + [1_000] * 8 + [5_000] * 4
        turns = turns_of("system", "human", "gpt", "tool", *(CYCLE * 6))
        p = plan(turns, counts, CompressionConfig())
        assert (p.start, p.until) == (4, 12)

    def test_region_starting_on_a_tool_turn_moves_forward(self) -> None:
        # Only system and human protected: the region would start on the tool turn at 2,
        # which answers no call inside it, so it starts at the gpt turn after it.
        turns = turns_of("system", "human", "tool", "gpt", "tool", "gpt", "human", "gpt")
        config = CompressionConfig(
            protect_first_gpt=False,
            protect_first_tool=False,
            protect_last_n_turns=1,
            summary_target_tokens=1,
            target_max_tokens=10,
        )
        p = plan(turns, [10] * 8, config)
        assert p.start == 3


class TestRender:
    def test_blocks(self) -> None:
        turns = turns_of("system", "human", "gpt", "tool")
        assert render_region(turns, 2, 4) == "[Turn 2 - GPT]:\ngpt 2\n\n[Turn 3 - TOOL]:\ntool 3"

    def test_empty_range(self) -> None:
        assert render_region(twenty(), 5, 5) == ""

    def test_long_values_are_elided(self) -> None:
        text = "a" * 1_500 + "b" * 1_001 + "c" * 500
        out = elide(text)
        assert out == "a" * 1_500 + ELISION_MARKER + "c" * 500
        assert elide("x" * 3_000) == "x" * 3_000

    def test_marker_is_the_one_the_live_compressor_uses(self) -> None:
        long_result = {"role": "tool", "tool_call_id": "c1", "content": "y" * 7_000}
        assert ELISION_MARKER in serialize_turns([long_result])


class TestNormalize:
    @pytest.mark.parametrize(
        ("raw", "expected"),
        [
            ("did X", "[CONTEXT SUMMARY]: did X"),
            ("[CONTEXT SUMMARY]: did X", "[CONTEXT SUMMARY]: did X"),
            (None, "[CONTEXT SUMMARY]:"),
            ("   ", "[CONTEXT SUMMARY]:"),
            ("[CONTEXT SUMMARY]:", "[CONTEXT SUMMARY]:"),
            ("  [CONTEXT SUMMARY]:[CONTEXT SUMMARY]: y \n", "[CONTEXT SUMMARY]: y"),
            # What a real model wrote back (issue 23): no doubled prefix.
            ("[CONTEXT SUMMARY: did X]", "[CONTEXT SUMMARY]: did X"),
            ("[Context Summary] did X", "[CONTEXT SUMMARY]: did X"),
            ("[CONTEXT SUMMARY]: [CONTEXT SUMMARY: did [X]]", "[CONTEXT SUMMARY]: did [X]"),
        ],
    )
    def test_example_7_prefix(self, raw: str | None, expected: str) -> None:
        assert normalize_summary(raw) == expected

    @given(st.text())
    def test_prefix_exactly_once(self, text: str) -> None:
        out = normalize_summary(text)
        assert out.startswith(SUMMARY_PREFIX)
        assert normalize_summary(out) == out


class TestAssemble:
    def test_notice_and_order(self) -> None:
        turns = [{"from": "system", "value": "sys", "weight": 1}, *turns_of("human", "gpt")]
        config = CompressionConfig()
        out = assemble(turns, 1, 2, "S", config)
        assert out[0] == {
            "from": "system",
            "value": "sys" + config.summary_notice_text,
            "weight": 1,
        }
        assert out[1] == {"from": "human", "value": "S"}
        assert out[2] == turns[2] and out[2] is not turns[2]
        assert turns[0]["value"] == "sys"

    def test_example_9_notice_off(self) -> None:
        turns = turns_of("system", "human", "gpt")
        out = assemble(turns, 1, 2, "S", CompressionConfig(add_summary_notice=False))
        assert out[0]["value"] == "system 0"
