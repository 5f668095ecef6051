"""CompressionConfig: the spec's defaults, the YAML mapping, and errors that name the key."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from palimpsest.errors import ConfigError
from palimpsest.trajectories import CompressionConfig
from palimpsest.trajectories.config import DEFAULT_BASE_URL


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "trajectories.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_follow_the_spec() -> None:
    c = CompressionConfig()
    assert (c.target_max_tokens, c.summary_target_tokens, c.protect_last_n_turns) == (
        15_250,
        750,
        4,
    )
    assert c.protect_first_system and c.protect_first_human
    assert c.protect_first_gpt and c.protect_first_tool
    assert c.summary_notice_text == (
        "\n\nSome of your previous tool responses may be summarized to preserve context."
    )
    assert (c.temperature, c.max_retries, c.retry_delay) == (0.3, 3, 2.0)
    assert (c.num_workers, c.max_concurrent_requests, c.per_trajectory_timeout) == (4, 50, 300.0)
    assert c.skip_under_target and c.save_over_limit
    assert c.metrics_enabled and c.metrics_per_trajectory
    assert c.metrics_output_file == "compression_metrics.json"
    assert c.output_suffix == "_compressed" and c.api_key_env == "OPENROUTER_API_KEY"
    assert c.tokenizer_name == "o200k_base" and c.summarization_model is None


def test_yaml_sections_map_to_fields(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
tokenizer: {name: cl100k_base, trust_remote_code: false}
compression: {target_max_tokens: 8000, summary_target_tokens: 400}
protected_turns: {first_system: false, first_human: true, first_gpt: false,
                  first_tool: false, last_n_turns: 2}
summarization: {model: "openai:gpt-4o-mini", base_url: null, api_key_env: MY_KEY,
                temperature: 0.1, max_retries: 5, retry_delay: 0.5}
output: {add_summary_notice: false, summary_notice_text: " (summarized)", output_suffix: _small}
processing: {num_workers: 2, max_concurrent_requests: 8, skip_under_target: false,
             save_over_limit: false}
metrics: {enabled: false, per_trajectory: false, output_file: m.json}
""",
    )
    c = CompressionConfig.from_yaml(path)
    assert c == CompressionConfig(
        tokenizer_name="cl100k_base",
        trust_remote_code=False,
        target_max_tokens=8000,
        summary_target_tokens=400,
        protect_first_system=False,
        protect_first_gpt=False,
        protect_first_tool=False,
        protect_last_n_turns=2,
        summarization_model="openai:gpt-4o-mini",
        api_key_env="MY_KEY",
        temperature=0.1,
        max_retries=5,
        retry_delay=0.5,
        add_summary_notice=False,
        summary_notice_text=" (summarized)",
        output_suffix="_small",
        num_workers=2,
        max_concurrent_requests=8,
        skip_under_target=False,
        save_over_limit=False,
        metrics_enabled=False,
        metrics_per_trajectory=False,
        metrics_output_file="m.json",
    )
    assert c.base_url == DEFAULT_BASE_URL


def test_missing_keys_keep_defaults(tmp_path: Path) -> None:
    c = CompressionConfig.from_yaml(write(tmp_path, "compression:\n  target_max_tokens: 9000\n"))
    assert c == CompressionConfig(target_max_tokens=9000)
    assert CompressionConfig.from_yaml(write(tmp_path, "")) == CompressionConfig()
    assert CompressionConfig.from_yaml(write(tmp_path, "metrics:\n")) == CompressionConfig()


def test_null_temperature_means_omit(tmp_path: Path) -> None:
    c = CompressionConfig.from_yaml(write(tmp_path, "summarization: {temperature: null}\n"))
    assert c.temperature is None


@pytest.mark.parametrize(
    ("text", "key", "words"),
    [
        ("tokeniser: {name: x}\n", "tokeniser", "unknown section 'tokeniser'"),
        ("compression: {target_tokens: 5}\n", "compression.target_tokens", "unknown key"),
        ("compression: {target_max_tokens: lots}\n", "compression.target_max_tokens", "integer"),
        ("protected_turns: {last_n_turns: -1}\n", "protected_turns.last_n_turns", ">= 0"),
        ("summarization: {retry_delay: -2}\n", "summarization.retry_delay", ">= 0"),
        ("compression: 5\n", "compression", "must be a mapping"),
    ],
)
def test_bad_yaml_names_key_and_file(tmp_path: Path, text: str, key: str, words: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        CompressionConfig.from_yaml(path)
    assert info.value.key == key
    assert info.value.path == str(path)
    assert str(path) in str(info.value) and words in str(info.value)


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        CompressionConfig.from_yaml(tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match="not valid YAML"):
        CompressionConfig.from_yaml(write(tmp_path, "a: [1,\n"))
    with pytest.raises(ConfigError, match="top level must be a mapping"):
        CompressionConfig.from_yaml(write(tmp_path, "- 1\n"))


def test_direct_construction_is_validated() -> None:
    with pytest.raises(ConfigError) as info:
        CompressionConfig(max_retries=0)
    assert info.value.key == "max_retries"
    with pytest.raises(ConfigError):
        CompressionConfig(target_max_tokens=True)


def test_config_is_frozen_hashable_and_picklable() -> None:
    c = CompressionConfig(target_max_tokens=1234)
    assert pickle.loads(pickle.dumps(c)) == c
    assert hash(c) == hash(CompressionConfig(target_max_tokens=1234))
    with pytest.raises(AttributeError):
        c.target_max_tokens = 5  # type: ignore[misc]
    assert c.replace(num_workers=1).num_workers == 1
