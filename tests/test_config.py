"""Settings: defaults, YAML loading, and errors that name the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from palimpsest.config import config_path, home_dir, load_settings, settings_from_dict
from palimpsest.errors import ConfigError


def test_defaults_are_the_seed_defaults() -> None:
    s = load_settings()
    assert (s.compression.threshold, s.compression.target_ratio) == (0.5, 0.2)
    assert (s.compression.protect_first_n, s.compression.protect_last_n) == (3, 20)
    assert s.context.engine == "compressor"


def test_home_and_config_path_follow_the_environment(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert home_dir() == isolated_home
    assert config_path() == isolated_home / "config.yaml"
    monkeypatch.setenv("PALIMPSEST_CONFIG", str(tmp_path / "c.yaml"))
    assert config_path() == tmp_path / "c.yaml"


def test_yaml_file_is_read(isolated_home: Path) -> None:
    isolated_home.mkdir(parents=True)
    (isolated_home / "config.yaml").write_text(
        "compression:\n  threshold: 0.7\nmodel:\n  context_length: 32000\n"
    )
    s = load_settings()
    assert s.compression.threshold == 0.7 and s.model.context_length == 32_000


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"compression": {"treshold": 0.4}}, "compression.treshold"),
        ({"compresion": {}}, "compresion"),
        ({"compression": {"threshold": 2}}, "compression.threshold"),
        ({"model": {"context_length": -5}}, "model.context_length"),
    ],
)
def test_errors_name_the_key(data: dict, key: str) -> None:
    with pytest.raises(ConfigError) as info:
        settings_from_dict(data, source="config.yaml")
    assert info.value.key == key and key in str(info.value)


def test_target_ratio_is_clamped_not_rejected() -> None:
    assert (
        settings_from_dict({"compression": {"target_ratio": 0.05}}).compression.target_ratio == 0.10
    )


def test_bad_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_settings(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("compression: [unclosed")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_settings(bad)
    bad.write_text("- a list\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_settings(bad)


def test_explain_settings_agrees_with_load_settings(isolated_home: Path) -> None:
    from palimpsest.config import explain_settings

    isolated_home.mkdir(parents=True)
    config = isolated_home / "config.yaml"
    config.write_text(
        "compression:\n  target_ratio: 0.95\npricing:\n  models:\n    gpt: {input: 1}\n"
    )
    settings, values = explain_settings()
    assert settings == load_settings()
    by_key = {v.key: v for v in values}
    # The validator clamps the file's value; the source is still the file.
    assert by_key["compression.target_ratio"].value == 0.80
    assert str(by_key["compression.target_ratio"].source) == f"file {config}"
    assert by_key["pricing.models"].source.kind == "file"
    assert str(by_key["context.engine"].source) == "default"
    assert len(values) == len({v.key for v in values}) > 50


def test_config_path_source_order(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from palimpsest.config import config_path_source, home_dir_source

    assert str(home_dir_source()[1]) == "environment PALIMPSEST_HOME"
    assert config_path_source()[1].kind == "environment"
    monkeypatch.setenv("PALIMPSEST_CONFIG", str(tmp_path / "c.yaml"))
    assert str(config_path_source()[1]) == "environment PALIMPSEST_CONFIG"
    assert config_path_source(tmp_path / "d.yaml") == (
        tmp_path / "d.yaml",
        __import__("palimpsest.config", fromlist=["ValueSource"]).ValueSource("flag", "--config"),
    )
    monkeypatch.delenv("PALIMPSEST_HOME")
    monkeypatch.delenv("PALIMPSEST_CONFIG")
    assert str(config_path_source()[1]) == "default"


def test_bad_yaml_is_one_line(isolated_home: Path) -> None:
    isolated_home.mkdir(parents=True)
    (isolated_home / "config.yaml").write_text("a: [1\nb: 2\n")
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert "\n" not in str(info.value) and "line 2" in str(info.value)
