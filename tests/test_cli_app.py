"""The root command: ``--version``, shell completion, colour only where wanted.

The entry point's own behaviour (version, help, completion) in a subprocess as a user runs it,
colour in a real terminal through pexpect; the flag conventions in-process (``cli_inproc``).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

import pexpect

import palimpsest
from cli_inproc import invoke_cli
from cli_run import SRC, run_cli
from palimpsest.storage.sessions import SessionStore

COLOUR = re.compile(r"\x1b\[(?:[0-9]+;)*(?:3[0-8]|9[0-7])[;m]")
"""An SGR escape setting a foreground colour (bold alone, ``\\x1b[1m``, is not colour)."""


def test_version() -> None:
    result = run_cli("--version")
    assert result.returncode == 0 and result.stdout == f"palimpsest {palimpsest.__version__}\n"


def test_no_arguments_prints_the_help_and_exits_2() -> None:
    result = run_cli()
    assert result.returncode == 2 and "Usage: palimpsest [OPTIONS] COMMAND" in result.stdout


def test_shell_completion_script_is_offered() -> None:
    result = run_cli("--show-completion", "bash")
    assert result.returncode == 0
    assert "_PALIMPSEST_COMPLETE" in result.stdout and "complete" in result.stdout


def _terminal_output(args: list[str], status: int = 0, **env: str) -> str:
    """What ``palimpsest ARGS`` prints in a real (pseudo-)terminal."""
    full = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    full.update(PYTHONPATH=str(SRC), TERM="xterm-256color", COLUMNS="100", **env)
    child = pexpect.spawn(
        sys.executable,
        ["-m", "palimpsest.cli", *args],
        env=full,
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 100),
    )
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == status, child.before
    return str(child.before)


def test_no_color_is_honoured_in_a_terminal(isolated_home: Path) -> None:
    """Help (Typer's console) and errors (ours) are coloured in a terminal, not with NO_COLOR."""
    with SessionStore() as store:
        store.create_session("20260101_000000_aaaaaa", "cli", title="Colourful")
    for args, status in ((["sessions", "--help"], 0), (["sessions", "show", "nosuch"], 2)):
        coloured = _terminal_output(args, status)
        assert COLOUR.search(coloured), coloured
        plain = _terminal_output(args, status, NO_COLOR="1")
        assert not COLOUR.search(plain) and plain.strip(), plain


def test_a_usage_error_is_one_short_line_even_with_a_huge_argument() -> None:
    done = invoke_cli("memory", "add", "memory", "x" * 5000)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and len(lines[0]) < 400
    assert lines[0].startswith("error:") and "--help" in lines[0]


# -- one convention for shared flags, held against the command tree (issue 23 items 7, J) --

ROOT = Path(__file__).resolve().parents[1]
NO_JSON = {
    ("mcp",),  # speaks the Model Context Protocol on stdio: its output is JSON-RPC already
    ("sessions", "tip"),
    ("sessions", "path"),
    ("config", "path"),
    ("memory", "path"),
    ("outputs", "path"),
    ("sessions", "export"),
    ("sessions", "delete"),
    ("memory", "add"),
    ("memory", "replace"),
    ("memory", "remove"),
    ("sessions", "verify"),
    ("trajectories", "compress"),
    ("chat",),
}
"""Commands without --json, each with its reason in docs/cli.md."""
STORE_COMMANDS = {("chat",), ("replay",)}
"""Commands outside ``sessions`` that open the session database."""


def _tree() -> list[tuple[tuple[str, ...], Any]]:
    from palimpsest.cli.app import click_command

    found = []

    def walk(command: Any, path: tuple[str, ...]) -> None:
        subs = getattr(command, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, (*path, name))
        else:
            found.append((path, command))

    walk(click_command(), ())
    return found


def _options(command: Any) -> dict[str, Any]:
    return {
        opt: p
        for p in command.params
        if getattr(p, "param_type_name", "") == "option"
        for opt in p.opts
    }


def test_short_flags_mean_one_thing_everywhere() -> None:
    meaning = {
        "-o": "--output",
        "-f": "--force",
        "-n": "--limit",
        "-y": "--yes",
        "-q": "--quiet",
        "-r": "--role",
    }
    for path, command in _tree():
        for param in command.params:
            if getattr(param, "param_type_name", "") != "option":
                continue
            for short in (o for o in param.opts if not o.startswith("--")):
                assert short in meaning, f"{' '.join(path)}: unknown short flag {short}"
                assert meaning[short] in param.opts, (
                    f"{' '.join(path)}: {short} is not {meaning[short]}"
                )


def test_output_force_db_json_context_length_follow_the_convention() -> None:
    from palimpsest.cli.common import CONTEXT_LENGTH_HELP

    for path, command in _tree():
        opts = _options(command)
        name = " ".join(path)
        if "--output" in opts:
            assert "-o" in opts["--output"].opts and "-" in (opts["--output"].help or ""), name
        if "--force" in opts:
            assert "-f" in opts["--force"].opts, name
        if path[0] == "sessions" or path in STORE_COMMANDS:
            assert "--db" in opts, f"{name} opens the store but has no --db"
        if path not in NO_JSON:
            assert "--json" in opts, f"{name} has output but no --json"
        if "--context-length" in opts:
            assert opts["--context-length"].help == CONTEXT_LENGTH_HELP, name
            assert opts["--context-length"].default is None, f"{name}: one default, one source"
        if "--config" in opts:
            assert path in {("compress",), ("config", "show"), ("config", "path")}, name


def test_help_cites_no_internal_spec_ids() -> None:
    spec_id = re.compile(r"\b[A-Z]{2,3}-\d{2}\b|spec/|\(spec ")
    for path, command in _tree():
        texts = [command.help or "", *(getattr(p, "help", "") or "" for p in command.params)]
        for text in texts:
            assert not spec_id.search(text), f"{' '.join(path)}: {text}"


def test_docs_cli_page_lists_every_command() -> None:
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for path, _ in _tree():
        if len(path) == 1 or f"palimpsest {' '.join(path)}`" in page:
            assert f"`palimpsest {path[0]}" in page, path
            continue
        group = f"`palimpsest {path[0]} "
        assert f"{group}{path[1]}`" in page or f"`{path[1]}`" in page.split(group, 1)[1], path


def test_readme_command_list_is_complete() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Command line", 1)[1].split("```", 2)[1]
    lines = [line.strip() for line in block.splitlines() if line.strip()]
    for path, _ in _tree():
        line = next((x for x in lines if x.startswith(f"palimpsest {path[0]}")), None)
        assert line is not None, f"README's command list has no 'palimpsest {path[0]}'"
        if len(path) > 1:
            assert re.search(rf"(^|[ |]){path[1]}( |$)", line.split(path[0], 1)[1]), path


def test_dash_is_stdout_for_every_output_option(tmp_path: Path, isolated_home: Path) -> None:
    example = str(ROOT / "examples" / "marshmallow-1867.traj")
    done = invoke_cli("compress", example, "-o", "-")
    assert done.returncode == 0 and done.stdout.lstrip().startswith("[")
    assert not (Path.cwd() / "-").exists()
    sid = invoke_cli("sessions", "import", example).stdout.strip()
    exported = invoke_cli("sessions", "export", sid, "-o", "-")
    assert exported.returncode == 0 and exported.stdout.lstrip().startswith("[")


def test_compress_json_puts_the_report_on_stdout(tmp_path: Path) -> None:
    example = str(ROOT / "examples" / "marshmallow-1867.traj")
    done = invoke_cli("compress", example, "--json", "-o", str(tmp_path / "out.json"))
    assert done.returncode == 0, done.stderr
    import json

    report = json.loads(done.stdout)
    assert report["token_count"] in ("exact", "bound") and "fits" in report
    refused = invoke_cli("compress", example, "--json")
    assert refused.returncode == 2 and "-o FILE" in refused.stderr


def test_db_is_taken_by_every_sessions_command(tmp_path: Path, isolated_home: Path) -> None:
    db = tmp_path / "elsewhere.db"
    sid = invoke_cli(
        "sessions", "import", str(ROOT / "examples" / "marshmallow-1867.traj"), "--db", str(db)
    ).stdout.strip()
    assert invoke_cli("sessions", "path", "--db", str(db)).stdout.strip() == str(db)
    listed = invoke_cli("sessions", "list", "--json", "--db", str(db))
    assert sid in listed.stdout
    assert not (isolated_home / "state.db").exists()
