"""Per-model thresholds (longest key, provider scope) and where the window came from."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.compaction.compressor import ContextCompressor
from palimpsest.compaction.window import (
    ContextWindow,
    WindowProbe,
    adopt_window,
    match_model_threshold,
    resolve_window,
    split_model_spec,
    threshold_choice,
    window_in_effect,
)
from palimpsest.config import Settings, settings_from_dict
from palimpsest.errors import ConfigError

TABLE = {"gpt-5": 0.4, "gpt-5-mini": 0.7, "openai:gpt-5": 0.3, "anthropic:claude": 0.6}


def test_longest_key_wins_and_provider_scope_only_matches_its_provider() -> None:
    assert match_model_threshold("gpt-5-mini-2026", "azure", TABLE) == ("gpt-5-mini", 0.7)
    assert match_model_threshold("gpt-5", "openai", TABLE) == ("openai:gpt-5", 0.3)
    assert match_model_threshold("gpt-5", "azure", TABLE) == ("gpt-5", 0.4)
    assert match_model_threshold("claude-sonnet-5", "anthropic", TABLE) == ("anthropic:claude", 0.6)
    assert match_model_threshold("claude-sonnet-5", "bedrock", TABLE) is None
    assert match_model_threshold("GPT-5", None, TABLE) == ("gpt-5", 0.4)
    scoped = {"openai:": 0.6, "": 0.1}
    assert match_model_threshold("o3", "openai", scoped) == ("openai:", 0.6)
    assert match_model_threshold("o3", "azure", scoped) is None  # "" matches nothing


@given(st.dictionaries(st.sampled_from(["a", "ab", "abc", "x:ab", "b"]), st.floats(0.1, 1.0)))
def test_the_match_never_depends_on_the_tables_order(table: dict[str, float]) -> None:
    reordered = dict(reversed(list(table.items())))
    assert match_model_threshold("abc", "x", table) == match_model_threshold("abc", "x", reordered)


def test_split_model_spec() -> None:
    assert split_model_spec("openai:gpt-5") == ("openai", "gpt-5")
    assert split_model_spec("gpt-5") == (None, "gpt-5")
    assert split_model_spec("openai:gpt-5", "azure") == ("azure", "gpt-5")


def test_threshold_choice_says_where_the_ratio_came_from() -> None:
    settings = settings_from_dict({"compression": {"model_thresholds": TABLE}})
    chosen = threshold_choice(settings, "openai:gpt-5")
    assert (chosen.ratio, chosen.source) == (0.3, "compression.model_thresholds['openai:gpt-5']")
    assert threshold_choice(settings, "llama-3").source == "default"
    explicit = settings_from_dict({"compression": {"threshold": 0.8}})
    assert threshold_choice(explicit, "llama-3").ratio == 0.8


def test_a_model_threshold_changes_the_compressors_trigger() -> None:
    settings = settings_from_dict(
        {"model": {"name": "openai:gpt-5"}, "compression": {"model_thresholds": TABLE}}
    )
    engine = ContextCompressor.from_settings(settings, context_length=1_000_000, model="gpt-5")
    assert engine.threshold_tokens == 300_000  # not the default 500,000
    plain = ContextCompressor.from_settings(Settings(), context_length=1_000_000, model="gpt-5")
    assert plain.threshold_tokens == 500_000
    assert engine.threshold_source.startswith("compression.model_thresholds")
    assert plain.threshold_source == "default"
    assert window_in_effect(engine) == ContextWindow(1_000_000, "caller")


def test_bad_model_threshold_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="model_thresholds"):
        settings_from_dict({"compression": {"model_thresholds": {"gpt": 1.5}}})


def test_resolve_window_order() -> None:
    asked: list[int] = []

    def provider() -> int:
        asked.append(1)
        return 32_000

    assert resolve_window(caller=8_000, configured=16_000, provider=provider).source == "caller"
    assert resolve_window(configured=16_000, provider=provider).source == "configured"
    assert asked == []  # a configured window wins without asking
    assert resolve_window(provider=provider) == ContextWindow(32_000, "provider")
    assert resolve_window(provider=lambda: None, default=200_000).source == "default"
    assert resolve_window() is None


def test_a_failed_probe_is_cooled_down_and_retried_after() -> None:
    now = [0.0]
    probe = WindowProbe(cooldown=60, clock=lambda: now[0])
    calls = []

    def failing() -> int:
        calls.append(1)
        raise OSError("no /models here")

    assert probe.probe("local", failing) is None
    assert probe.probe("local", failing) is None
    assert len(calls) == 1 and probe.cooling_down("local")
    now[0] = 61
    assert probe.probe("local", lambda: 4_096) == 4_096
    assert probe.probe("local", failing) == 4_096  # found once, remembered
    assert probe.asked == 2


def test_an_adopted_window_keeps_its_source() -> None:
    engine = ContextCompressor(100_000)
    adopt_window(engine, 50_000, "overflow", "the provider said 50,000")
    assert engine.context_length == 50_000
    assert window_in_effect(engine).describe() == "overflow (the provider said 50,000)"
    engine.update_model("m", 40_000)  # a host that did not say why
    assert window_in_effect(engine).source == "caller"


def test_a_model_switch_picks_the_new_models_ratio() -> None:
    settings = settings_from_dict({"compression": {"model_thresholds": {"big": 0.3}}})
    engine = ContextCompressor.from_settings(settings, context_length=1_000_000, model="small")
    assert engine.threshold_tokens == 500_000 and engine.threshold_source == "default"
    engine.update_model("big-1", 1_000_000)
    assert engine.threshold_tokens == 300_000
    assert engine.threshold_source == "compression.model_thresholds['big']"
    engine.update_model("small-2", 1_000_000)
    assert engine.threshold_tokens == 500_000 and engine.threshold_source == "default"
    fixed = ContextCompressor.from_settings(
        settings, context_length=1_000_000, model="small", threshold_percent=0.7
    )
    fixed.update_model("big-1", 1_000_000)  # a caller's ratio is kept across a switch
    assert fixed.threshold_tokens == 700_000 and fixed.threshold_source == "caller"
