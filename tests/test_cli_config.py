"""``palimpsest config show`` and ``config path``.

In-process through the console script's ``main`` (``cli_inproc``); ``config path`` also in a
real process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_inproc import invoke_cli
from cli_run import run_cli


def _rows(*args: str, **env: str) -> dict[str, dict[str, Any]]:
    result = invoke_cli("config", "show", "--json", *args, env=env)
    assert result.returncode == 0, result.stderr
    return {row["key"]: row for row in json.loads(result.stdout)}


def test_defaults_and_derived_paths_name_their_source(isolated_home: Path) -> None:
    rows = _rows()
    assert rows["compression.threshold"] == {
        "key": "compression.threshold",
        "value": 0.5,
        "source": "default",
        "detail": None,
    }
    home = rows["paths.home"]
    assert home["value"] == str(isolated_home) and home["source"] == "environment"
    assert home["detail"] == "PALIMPSEST_HOME"
    assert rows["paths.sessions_db"]["value"] == str(isolated_home / "state.db")
    assert rows["paths.config_file"]["value"] == str(isolated_home / "config.yaml")


def test_file_values_name_the_file(isolated_home: Path) -> None:
    isolated_home.mkdir(parents=True)
    config = isolated_home / "config.yaml"
    config.write_text("compression:\n  threshold: 0.7\nstore:\n  path: /tmp/x.db\n")
    rows = _rows()
    assert rows["compression.threshold"]["value"] == 0.7
    assert (rows["compression.threshold"]["source"], rows["compression.threshold"]["detail"]) == (
        "file",
        str(config),
    )
    assert rows["compression.target_ratio"]["source"] == "default"
    db = rows["paths.sessions_db"]
    assert db["value"] == "/tmp/x.db" and db["source"] == "file"
    changed = invoke_cli("config", "show", "--changed", "--json")
    keys = {row["key"] for row in json.loads(changed.stdout)}
    assert "compression.threshold" in keys and "compression.target_ratio" not in keys


def test_flag_and_environment_choose_the_file(tmp_path: Path) -> None:
    chosen = tmp_path / "other.yaml"
    chosen.write_text("model:\n  context_length: 32000\n")
    rows = _rows("--config", str(chosen))
    assert rows["paths.config_file"]["source"] == "flag"
    assert rows["paths.config_file"]["detail"] == "--config"
    assert rows["model.context_length"]["value"] == 32000
    rows = _rows(PALIMPSEST_CONFIG=str(chosen))
    assert rows["paths.config_file"]["detail"] == "PALIMPSEST_CONFIG"
    assert rows["model.context_length"]["detail"] == str(chosen)


def test_table_shows_values_and_sources_whole(isolated_home: Path) -> None:
    isolated_home.mkdir(parents=True)
    (isolated_home / "config.yaml").write_text("memory:\n  memory_char_limit: 999\n")
    result = invoke_cli("config", "show")
    assert result.returncode == 0 and "…" not in result.stdout
    line = next(x for x in result.stdout.splitlines() if x.startswith("memory.memory_char_limit"))
    assert "999" in line and "file" in line


def test_config_path(isolated_home: Path, tmp_path: Path) -> None:
    result = run_cli("config", "path")
    assert result.returncode == 0 and result.stdout == f"{isolated_home / 'config.yaml'}\n"
    assert "no file there yet" in result.stderr
    other = tmp_path / "c.yaml"
    result = run_cli("config", "path", "--config", str(other))
    assert result.stdout == f"{other}\n"


def test_bad_yaml_and_bad_key_are_one_line(isolated_home: Path) -> None:
    isolated_home.mkdir(parents=True)
    config = isolated_home / "config.yaml"
    config.write_text("compression:\n  threshold: [0.5\nmodel: x\n")
    result = invoke_cli("config", "show")
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    assert "not valid YAML: line" in lines[0] and str(config) in lines[0]
    config.write_text("compression:\n  treshold: 0.5\n")
    result = invoke_cli("config", "show")
    assert result.returncode == 2 and "compression.treshold" in result.stderr


def test_a_binary_config_file_is_one_line_naming_it(isolated_home: Path, tmp_path: Path) -> None:
    """Issue 20: a binary --config file was a UnicodeDecodeError traceback."""
    binary = tmp_path / "config.bin"
    binary.write_bytes(b"compression:\n  threshold: 0.5\n\xd0\xff\x00\x01 binary")
    transcript = tmp_path / "t.json"
    transcript.write_text('[{"role": "user", "content": "hi"}]')
    for args, env in (
        (("compress", str(transcript), "--config", str(binary)), None),
        (("config", "show"), {"PALIMPSEST_CONFIG": str(binary)}),
        (("trajectories", "compress", str(transcript), "--trajectory-config", str(binary)), None),
    ):
        result = invoke_cli(*args, env=env)
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 2 and len(lines) == 1, result.stderr
        assert f"{binary}: not a UTF-8 YAML file (byte 0xd0 at offset 30 is not UTF-8)" in lines[0]


def test_the_effective_threshold_is_reported_per_window(
    isolated_home: Path, tmp_path: Path
) -> None:
    # The default ratio has a 64K floor and a small-window rule: 0.5 is not what fires.
    effective = _rows()["compression.effective_threshold_tokens"]
    assert effective["source"] == "derived"
    assert effective["value"]["8000"] == 6_800 and effective["value"]["128000"] == 64_000
    assert effective["value"]["200000"] == 100_000
    # An explicit ratio is taken as asked, and the configured window is listed too.
    config = tmp_path / "c.yaml"
    config.write_text("compression:\n  threshold: 0.5\nmodel:\n  context_length: 16000\n")
    value = _rows("--config", str(config))["compression.effective_threshold_tokens"]["value"]
    assert value["8000"] == 4_000 and value["16000"] == 8_000
    text = invoke_cli("config", "show", "--config", str(config)).stdout
    assert "8,000 → 4,000 (50%)" in text and "16,000 → 8,000 (50%)" in text


def test_the_window_and_threshold_in_effect_name_their_source(tmp_path: Path) -> None:
    rows = _rows()
    assert rows["model.window_in_effect"]["value"] == 200_000
    assert rows["model.window_in_effect"]["source"] == "default"
    assert rows["compression.threshold_in_effect"]["source"] == "default"
    config = tmp_path / "c.yaml"
    config.write_text(
        "model:\n  name: openai:gpt-5\n  context_length: 1000000\n"
        "compression:\n  model_thresholds:\n    gpt-5: 0.4\n    openai:gpt-5: 0.3\n"
    )
    rows = _rows("--config", str(config))
    assert rows["model.window_in_effect"]["value"] == 1_000_000
    assert rows["model.window_in_effect"]["source"] == "configured"
    threshold = rows["compression.threshold_in_effect"]
    assert threshold["source"] == "compression.model_thresholds['openai:gpt-5']"
    assert threshold["value"]["tokens"] == 300_000 and threshold["value"]["ratio"] == 0.3
    text = invoke_cli("config", "show", "--config", str(config)).stdout
    assert "model.window_in_effect: 1000000 (model.context_length in the config)" in text
    assert "compression.model_thresholds['openai:gpt-5']" in text
