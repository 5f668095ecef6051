"""The root command imports a noun's module only when that noun runs (issue 27, item 4)."""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any
from unittest.mock import patch

import pytest

from cli_inproc import invoke_cli
from cli_run import cli_env
from palimpsest.cli.app import click_command
from palimpsest.cli.lazy import COMMANDS, LazyCommands

HEAVY = ("apsw", "tokenizers", "tiktoken", "openai", "pydantic", "yaml", "httpx")
"""Libraries that only a command's body needs: the store, tokenizers, providers, config."""
OWN_HEAVY = ("palimpsest.storage", "palimpsest.compaction", "palimpsest.agent", "palimpsest.config")


RUNNER = """
import atexit, sys
atexit.register(lambda: sys.stderr.write("\\nMODULES " + " ".join(sorted(sys.modules)) + "\\n"))
sys.argv = ["palimpsest", *sys.argv[1:]]
from palimpsest.cli import main
main()
"""
"""``palimpsest ARGS`` in a fresh interpreter that lists ``sys.modules`` as it exits."""


def _imported(*args: str) -> set[str]:
    """Every module a real ``palimpsest ARGS`` process has imported when it exits."""
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, *args],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-500:]
    listed = re.search(r"^MODULES (.*)$", done.stderr, re.M)
    assert listed is not None, done.stderr[-500:]
    names = set(listed.group(1).split())
    assert "typer" in names
    return names


@pytest.mark.parametrize("args", [("--help",), ("--version",)])
def test_help_and_version_import_no_command_module(args: tuple[str, ...]) -> None:
    names = _imported(*args)
    heavy = sorted(n for n in names if n.split(".")[0] in HEAVY or n.startswith(OWN_HEAVY))
    assert not heavy, heavy
    modules = {f"palimpsest.cli.{entry.module}" for entry in COMMANDS.values()}
    assert not names & modules, names & modules


def test_a_noun_imports_its_own_module_only() -> None:
    names = _imported("eval", "--help")
    assert "palimpsest.cli.eval" in names
    assert not {"palimpsest.cli.sessions", "palimpsest.cli.chat"} & names
    assert "apsw" not in names


def test_sessions_help_loads_no_settings_compressor_or_summarizer() -> None:
    """`sessions --help` lists subcommands; the settings, compressor and scanners wait for one."""
    names = _imported("sessions", "--help")
    assert "palimpsest.cli.sessions_edit" in names  # its subcommands are listed
    # (Typer itself may import pydantic to coerce parameters; the settings are ours.)
    late = ("palimpsest.config", "palimpsest.compaction", "palimpsest.summarizers")
    loaded = sorted(n for n in names if n.startswith(late) or n.split(".")[0] == "yaml")
    assert not loaded, loaded
    assert "palimpsest.safety.threats" not in names


def test_the_listing_matches_each_command_s_own_help() -> None:
    """The table's one-liners are what each command's own help opens with."""
    root = click_command()
    for name, entry in COMMANDS.items():
        command = root.commands[name]
        first = " ".join((command.short_help or command.help or "").split("\n\n")[0].split())
        assert entry.summary == first, name


def _run(root: Any, *args: str) -> subprocess.CompletedProcess[str]:
    """``palimpsest ARGS`` in-process on ``root`` (to see what it loaded)."""
    with patch("palimpsest.cli.app.click_command", return_value=root):
        return invoke_cli(*args, env={"COLUMNS": "200"})


def test_root_help_lists_every_command_without_loading_one() -> None:
    root = click_command()
    result = _run(root, "--help")
    assert result.returncode == 0
    for name, entry in COMMANDS.items():
        assert re.search(rf"│ {name}\s+{re.escape(entry.summary)}", result.stdout), name
    assert isinstance(root.commands, LazyCommands) and root.commands.loaded() == []


def test_running_a_command_loads_only_that_one() -> None:
    root = click_command()
    result = _run(root, "config", "path")
    assert result.returncode == 0 and result.stdout.strip().endswith("config.yaml")
    assert root.commands.loaded() == ["config"]


def test_a_verb_of_a_one_verb_noun_is_still_a_verb() -> None:
    """eval and trajectories have one verb each: built alone they would collapse into it."""
    result = invoke_cli("eval", "continuity", "--help")
    assert result.returncode == 0 and "Usage: palimpsest eval continuity" in result.stdout
    result = invoke_cli("trajectories", "--help")
    assert result.returncode == 0 and "compress" in result.stdout


def test_an_unknown_command_suggests_a_near_name_without_loading() -> None:
    root = click_command()
    result = _run(root, "sesions")
    assert result.returncode == 2 and "Did you mean 'sessions'?" in result.stderr
    assert root.commands.loaded() == []


def test_the_table_cannot_lose_a_command() -> None:
    commands = LazyCommands(COMMANDS)
    with pytest.raises(TypeError):
        del commands["compress"]
    assert list(commands) == list(COMMANDS) and len(commands) == len(COMMANDS)
