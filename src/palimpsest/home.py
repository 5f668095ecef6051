"""Where palimpsest keeps its data and reads its config: ``$PALIMPSEST_HOME`` and friends.

The store, memory files, trajectories and system prompt all need the data directory, and
most of them never read a setting. Resolving the directory lives here, on the standard
library alone, so that asking "where is state.db?" does not import the settings layer
(pydantic and YAML, a good part of a second on a cold start). :mod:`palimpsest.config`
re-exports these names.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["CONFIG_ENV", "DEFAULT_HOME", "HOME_ENV", "config_path", "home_dir"]

DEFAULT_HOME = Path("~/.palimpsest")
HOME_ENV = "PALIMPSEST_HOME"
CONFIG_ENV = "PALIMPSEST_CONFIG"


def home_dir() -> Path:
    """The data directory: ``$PALIMPSEST_HOME`` or ``~/.palimpsest`` (not created here)."""
    value = os.environ.get(HOME_ENV)
    return Path(value).expanduser() if value else DEFAULT_HOME.expanduser()


def config_path() -> Path:
    """Where the YAML config is read from."""
    value = os.environ.get(CONFIG_ENV)
    return Path(value).expanduser() if value else home_dir() / "config.yaml"
