"""``palimpsest sessions import --from claude-code|codex [DIR]`` from the shell.

The default folders come from ``$HOME`` (and ``$CLAUDE_CONFIG_DIR`` / ``$CODEX_HOME``), so
the tests lay the fixture trees out under a home of their own.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pexpect
import pytest
from typer.testing import CliRunner

from cli_inproc import invoke_cli
from cli_run import cli_env, run_cli
from palimpsest.cli.app import app
from palimpsest.cli.sessions_import import summary_line
from palimpsest.storage.history_import import FileOutcome, HistoryImport

TREES = Path(__file__).parent / "data" / "agent-histories"
BROKEN = "0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9.jsonl"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home whose ~/.claude/projects and ~/.codex/sessions hold the fixture trees."""
    user = tmp_path / "user"
    shutil.copytree(TREES / "claude" / "projects", user / ".claude" / "projects")
    shutil.copytree(TREES / "codex" / "sessions", user / ".codex" / "sessions")
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    return user


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["sessions", "import", *args])
    return result.exit_code, result.stdout, result.stderr


def test_codex_from_its_default_folder_then_nothing_new(home: Path) -> None:
    code, out, err = invoke("--from", "codex")
    assert code == 0
    assert err == "note: 2 record(s) of types this reader does not know were skipped\n"
    assert out == "codex: 3 new, 0 grown, 0 unchanged; 11 messages added\n"
    code, out, err = invoke("--from", "codex")
    assert err == ""  # nothing was read, so nothing was skipped
    assert code == 0 and out == "codex: 0 new, 0 grown, 3 unchanged; 0 messages added\n"


def test_claude_code_names_the_broken_file_and_exits_1(home: Path) -> None:
    code, out, err = invoke("--from", "claude-code")
    assert code == 1
    assert out == "claude-code: 3 new, 0 grown, 0 unchanged, 1 failed; 12 messages added\n"
    lines = err.splitlines()
    assert lines[0].startswith("skipped ") and lines[0].endswith(
        f"{BROKEN}: line 2: tool_use block has no 'id'"
    )
    assert "1 record(s) of types this reader does not know were skipped" in err


def test_a_folder_given_and_json_output(home: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "copied-sessions"
    shutil.move(home / ".codex" / "sessions", elsewhere)
    code, out, _ = invoke("--from", "codex", str(elsewhere), "--json")
    assert code == 0
    payload = json.loads(out)
    assert payload == {
        "agent": "codex",
        "root": str(elsewhere),
        "new": 3,
        "grown": 0,
        "unchanged": 0,
        "replaced": 0,
        "failed": [],
        "messages": 11,
    }


def test_codex_home_moves_the_default(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    moved = home / "codex-state"
    shutil.move(home / ".codex", moved)
    monkeypatch.setenv("CODEX_HOME", str(moved))
    code, out, _ = invoke("--from", "codex")
    assert code == 0 and out.startswith("codex: 3 new")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--from", "aider"), "error: --from must be one of: claude-code, codex (not 'aider')"),
        ((), "error: give a transcript FILE (or - for stdin), or --from claude-code|codex"),
    ],
)
def test_mistakes_are_one_line_and_exit_2(home: Path, args: tuple[str, ...], message: str) -> None:
    code, out, err = invoke(*args)
    assert (code, out, err.strip()) == (2, "", message)


def test_a_missing_default_folder_says_what_to_pass(home: Path) -> None:
    shutil.rmtree(home / ".codex")
    code, _, err = invoke("--from", "codex")
    assert code == 2
    assert err.strip() == (
        f"error: {home / '.codex' / 'sessions'} is not a directory; pass the folder that "
        "holds the Codex sessions"
    )


def test_found_by_sessions_search_in_a_real_shell(home: Path) -> None:
    assert (
        invoke_cli("sessions", "import", "--from", "codex", env={"HOME": str(home)}).returncode == 0
    )
    imported = invoke_cli("sessions", "import", "--from", "claude-code", env={"HOME": str(home)})
    assert imported.returncode == 1
    env = cli_env(HOME=str(home))
    found = run_cli("sessions", "search", "flamingo OR hangar", "--json", env=env)
    assert found.returncode == 0, found.stderr
    sources = {hit["source"] for hit in json.loads(found.stdout)}
    assert sources == {"codex:/home/ada/walrus", "claude-code:/home/ada/zeppelin"}


def test_the_summary_line_names_rewrites_and_failures() -> None:
    result = HistoryImport("codex", Path("/x"))
    result.files = [
        FileOutcome(Path("/x/a"), "replaced", messages=4),
        FileOutcome(Path("/x/b"), "failed", error="boom"),
        FileOutcome(Path("/x/c"), "empty"),
    ]
    assert summary_line(result) == (
        "codex: 1 new, 0 grown, 0 unchanged, 1 rewritten and re-imported, 1 failed; "
        "4 messages added"
    )


def test_a_terminal_gets_a_progress_bar_and_a_pipe_does_not(home: Path) -> None:
    env = cli_env(HOME=str(home), TERM="xterm")
    env.pop("NO_COLOR", None)
    child = pexpect.spawn(
        sys.executable,
        ["-m", "palimpsest.cli", "sessions", "import", "--from", "codex"],
        env=env,
        encoding="utf-8",
        timeout=60,
        dimensions=(24, 100),
    )
    child.expect(pexpect.EOF)
    child.close()
    shown = child.before or ""
    assert child.exitstatus == 0
    assert "importing codex" in shown and "codex: 3 new" in shown
    piped = run_cli("sessions", "import", "--from", "codex", env=cli_env(HOME=str(home)))
    assert "importing" not in piped.stderr and piped.stdout.startswith("codex: 0 new")
