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
