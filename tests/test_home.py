"""The data directory and config path, resolved without the settings layer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from palimpsest import config, home


def test_home_and_config_follow_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(home.HOME_ENV, str(tmp_path / "h"))
    monkeypatch.delenv(home.CONFIG_ENV, raising=False)
    assert home.home_dir() == tmp_path / "h"
    assert home.config_path() == tmp_path / "h" / "config.yaml"
    monkeypatch.setenv(home.CONFIG_ENV, "~/elsewhere.yaml")
    assert home.config_path() == Path("~/elsewhere.yaml").expanduser()


def test_defaults_to_dot_palimpsest_in_the_user_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(home.HOME_ENV, raising=False)
    assert home.home_dir() == Path("~/.palimpsest").expanduser()


def test_config_re_exports_the_same_functions() -> None:
    assert config.home_dir is home.home_dir
    assert config.config_path is home.config_path
    assert config.DEFAULT_HOME == home.DEFAULT_HOME


def test_the_store_path_is_resolved_without_pydantic_or_yaml() -> None:
    code = (
        "import sys\n"
        "from palimpsest.storage.sessions import default_db_path\n"
        "default_db_path()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'yaml')"
        " or m == 'palimpsest.config'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
