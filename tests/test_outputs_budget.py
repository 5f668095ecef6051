"""budget.py: the immutable budget config, TR-04 thresholds and TR-19 window scaling."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.config import ToolBudgetSettings
from palimpsest.outputs.budget import (
    DEFAULT_BUDGET,
    BudgetConfig,
    budget_for_context_window,
    threshold_for,
)


class TestBudgetConfig:
    def test_defaults_are_the_seed_table(self) -> None:
        config = BudgetConfig()
        assert config.default_result_size == 100_000
        assert config.turn_budget == 200_000
        assert config.preview_size == 1_500
        assert config.mcp_result_size == 50_000
        assert dict(config.tool_overrides) == {}
        assert config.preview_mode == "head"
        assert config.pinned_tools == frozenset({"read_file", "read_output"})
        assert config.recovery_line is False
        assert config == DEFAULT_BUDGET

    @pytest.mark.parametrize(
        "field", ["default_result_size", "turn_budget", "preview_size", "mcp_result_size"]
    )
    @pytest.mark.parametrize("value", [0, -1, True, 1.5, "100"])
    def test_sizes_must_be_positive_ints(self, field: str, value: object) -> None:
        with pytest.raises(ValueError, match=field):
            BudgetConfig(**{field: value})  # type: ignore[arg-type]

    def test_negative_override_names_the_tool(self) -> None:
        with pytest.raises(ValueError, match=r"tool_overrides\['terminal'\]"):
            BudgetConfig(tool_overrides={"terminal": -1})

    def test_override_must_be_an_int(self) -> None:
        with pytest.raises(ValueError, match="tool_overrides"):
            BudgetConfig(tool_overrides={"terminal": 1.5})  # type: ignore[dict-item]

    def test_zero_override_is_allowed(self) -> None:
        assert BudgetConfig(tool_overrides={"terminal": 0}).tool_overrides["terminal"] == 0

    def test_bad_preview_mode(self) -> None:
        with pytest.raises(ValueError, match="preview_mode"):
            BudgetConfig(preview_mode="tail")  # type: ignore[arg-type]

    def test_pinned_tools_must_be_a_set_of_names(self) -> None:
        with pytest.raises(ValueError, match="pinned_tools"):
            BudgetConfig(pinned_tools="read_file")  # type: ignore[arg-type]
        config = BudgetConfig(pinned_tools={"cat"})  # type: ignore[arg-type]
        assert config.pinned_tools == frozenset({"cat"})

    def test_overrides_are_a_read_only_copy(self) -> None:
        overrides = {"terminal": 10}
        config = BudgetConfig(tool_overrides=overrides)
        overrides["terminal"] = 99
        overrides["other"] = 1
        assert dict(config.tool_overrides) == {"terminal": 10}
        with pytest.raises(TypeError):
            config.tool_overrides["terminal"] = 5  # type: ignore[index]

    def test_fields_cannot_be_reassigned(self) -> None:
        with pytest.raises(dataclasses.FrozenInstanceError):
            DEFAULT_BUDGET.turn_budget = 1  # type: ignore[misc]

    def test_hashable_and_equal_by_value(self) -> None:
        a = BudgetConfig(tool_overrides={"a": 1, "b": 2})
        b = BudgetConfig(tool_overrides={"b": 2, "a": 1})
        c = BudgetConfig(tool_overrides={"a": 1, "b": 3})
        assert a == b and hash(a) == hash(b)
        assert a != c
        assert {a: "x"}[b] == "x"

    def test_replace_keeps_validation(self) -> None:
        with pytest.raises(ValueError, match="preview_size"):
            dataclasses.replace(DEFAULT_BUDGET, preview_size=0)


class TestThresholdFor:
    @pytest.mark.parametrize(
        ("tool", "registry_max", "expected"),
        [
            ("read_file", None, math.inf),
            ("read_file", 100_000, math.inf),  # pinned beats the registry
            ("read_output", None, math.inf),
            ("mcp_github_search", None, 50_000),
            ("mcp_github_search", math.inf, 50_000),  # the MCP rule comes before the registry
            ("terminal", 100_000, 100_000),
            ("search_files", 100_000, 100_000),
            ("big_tool", 500_000, 100_000),
            ("small_tool", 30_000, 30_000),
            ("unbounded", math.inf, math.inf),
            ("unknown", None, 100_000),
        ],
    )
    def test_rules_in_order(self, tool: str, registry_max: float | None, expected: float) -> None:
        assert threshold_for(tool, DEFAULT_BUDGET, registry_max) == expected

    def test_override_wins_over_mcp_and_registry(self) -> None:
        config = BudgetConfig(tool_overrides={"mcp_x": 7, "terminal": 0})
        assert threshold_for("mcp_x", config) == 7
        assert threshold_for("terminal", config, registry_max=100_000) == 0

    def test_pinned_wins_over_override(self) -> None:
        config = BudgetConfig(tool_overrides={"read_file": 10})
        assert threshold_for("read_file", config) == math.inf

    def test_mcp_size_never_exceeds_the_default(self) -> None:
        config = BudgetConfig(default_result_size=20_000, mcp_result_size=50_000)
        assert threshold_for("mcp_tool", config) == 20_000

    def test_custom_pinned_tools(self) -> None:
        config = BudgetConfig(pinned_tools=frozenset({"view"}))
        assert threshold_for("view", config) == math.inf
        assert threshold_for("read_file", config) == 100_000

    @pytest.mark.parametrize("bad", [-1.0, math.nan])
    def test_bad_registry_value(self, bad: float) -> None:
        with pytest.raises(ValueError, match="registry_max"):
            threshold_for("terminal", DEFAULT_BUDGET, bad)


class TestBudgetForContextWindow:
    def test_spec_example_65k(self) -> None:
        config = budget_for_context_window(65_536)
        assert (config.default_result_size, config.turn_budget) == (39_321, 78_643)
        assert config.preview_size == 1_500

    @pytest.mark.parametrize("context_length", [None, 0, -4096])
    def test_unknown_window_keeps_the_base(self, context_length: int | None) -> None:
        base = BudgetConfig(default_result_size=1234)
        assert budget_for_context_window(context_length, base) is base

    @pytest.mark.parametrize("context_length", [167_000, 200_000, 1_000_000])
    def test_large_windows_keep_the_defaults(self, context_length: int) -> None:
        config = budget_for_context_window(context_length)
        assert (config.default_result_size, config.turn_budget) == (100_000, 200_000)

    def test_tiny_window_hits_the_floors(self) -> None:
        config = budget_for_context_window(2_048)
        assert (config.default_result_size, config.turn_budget) == (8_000, 16_000)

    def test_scaling_never_raises_a_configured_size(self) -> None:
        big = BudgetConfig(default_result_size=300_000, turn_budget=600_000)
        scaled = budget_for_context_window(1_000_000, big)
        assert (scaled.default_result_size, scaled.turn_budget) == (300_000, 600_000)
        small = BudgetConfig(default_result_size=5_000, turn_budget=9_000)
        scaled = budget_for_context_window(2_048, small)
        assert (scaled.default_result_size, scaled.turn_budget) == (5_000, 9_000)

    def test_other_fields_are_kept(self) -> None:
        base = BudgetConfig(
            preview_size=900,
            mcp_result_size=40_000,
            tool_overrides={"t": 3},
            preview_mode="head_tail",
            recovery_line=True,
        )
        scaled = budget_for_context_window(10_000, base)
        assert scaled.default_result_size == 8_000
        assert dataclasses.replace(scaled, default_result_size=100_000, turn_budget=200_000) == (
            base
        )

    @given(st.integers(min_value=1, max_value=2_000_000), st.integers(1, 2_000_000))
    def test_bounds_and_monotony(self, context_length: int, more: int) -> None:
        small = budget_for_context_window(context_length)
        large = budget_for_context_window(context_length + more)
        assert 8_000 <= small.default_result_size <= large.default_result_size <= 100_000
        assert 16_000 <= small.turn_budget <= large.turn_budget <= 200_000


class TestFromSettings:
    def test_scaled_by_default(self) -> None:
        settings = ToolBudgetSettings()
        config = BudgetConfig.from_settings(settings, context_length=65_536)
        assert (config.default_result_size, config.turn_budget) == (39_321, 78_643)
        assert config.preview_mode == settings.preview_mode

    def test_unknown_window_uses_the_configured_values(self) -> None:
        settings = ToolBudgetSettings(default_result_size_chars=70_000, turn_budget_chars=90_000)
        config = BudgetConfig.from_settings(settings)
        assert (config.default_result_size, config.turn_budget) == (70_000, 90_000)

    def test_every_key_is_carried(self) -> None:
        settings = ToolBudgetSettings(
            default_result_size_chars=70_000,
            turn_budget_chars=90_000,
            preview_size_chars=800,
            mcp_result_size_chars=20_000,
            tool_overrides={"terminal": 0},
            preview_mode="head",
            scale_to_context=False,
        )
        config = BudgetConfig.from_settings(settings, context_length=8_192)
        assert config == BudgetConfig(
            default_result_size=70_000,
            turn_budget=90_000,
            preview_size=800,
            mcp_result_size=20_000,
            tool_overrides={"terminal": 0},
            preview_mode="head",
        )

    def test_settings_overrides_are_copied(self) -> None:
        settings = ToolBudgetSettings(tool_overrides={"terminal": 5})
        config = BudgetConfig.from_settings(settings)
        settings.tool_overrides["terminal"] = 50
        assert config.tool_overrides["terminal"] == 5
