"""``palimpsest sessions``: list, show, tip, import, export, path, verify, and unknown ids."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_inproc import invoke_cli
from cli_run import run_cli
from palimpsest.cli.app import app
from palimpsest.messages import load_transcript
from palimpsest.storage.sessions import SessionStore

runner = CliRunner()
TRANSCRIPT = Path(__file__).parent / "data" / "transcripts" / "mini-swe-agent" / "local.traj.json"


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["sessions", *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def chain(isolated_home: Path) -> Path:
    """A -> B by compression, plus an unrelated session."""
    with SessionStore() as store:
        store.create_session("20260101_090000_aaaaaa", "telegram", title="Build API")
        store.append_messages(
            "20260101_090000_aaaaaa",
            [
                {"role": "user", "content": "build the API please"},
                {"role": "assistant", "content": "done A"},
            ],
        )
        store.start_continuation(
            "20260101_090000_aaaaaa",
            session_id="20260101_100000_bbbbbb",
            messages=[{"role": "user", "content": "[summary]", "_compressed_summary": True}],
        )
        store.append_message("20260101_100000_bbbbbb", "assistant", "done B")
        store.create_session("20260102_000000_cccccc", "cli", title="Other")
    return isolated_home / "state.db"


def test_list_shows_one_row_per_conversation(chain: Path) -> None:
    code, out, err = invoke("list", "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert [r["id"] for r in rows] == ["20260102_000000_cccccc", "20260101_100000_bbbbbb"]
    assert (
        rows[1]["title"] == "Build API #2"
        and rows[1]["_lineage_root_id"] == "20260101_090000_aaaaaa"
    )
    code, out, _ = invoke("list")
    assert code == 0 and "Build API #2" in out and "2 sessions" in out


def test_list_on_an_empty_store(isolated_home: Path) -> None:
    code, out, err = invoke("list")
    assert code == 0 and out == "" and "No sessions" in err


def test_show_by_prefix_and_as_json(chain: Path) -> None:
    code, out, err = invoke("show", "20260101_09")
    assert code == 0, err
    assert "build the API please" in out and "continued in" in out
    code, out, _ = invoke("show", "20260101_100000_bbbbbb", "--json")
    data = json.loads(out)
    assert data["session"]["parent_session_id"] == "20260101_090000_aaaaaa"
    assert data["messages"][0]["_compressed_summary"] is True


@pytest.mark.parametrize("command", ["show", "tip", "export"])
def test_an_unknown_id_is_one_line_and_exit_2(chain: Path, command: str) -> None:
    code, out, err = invoke(command, "nope")
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        "error: no session with id 'nope'; run 'palimpsest sessions list' to see ids"
    ]


def test_tip_follows_the_chain(chain: Path) -> None:
    code, out, _ = invoke("tip", "20260101_090000_aaaaaa")
    assert (code, out.strip()) == (0, "20260101_100000_bbbbbb")


def test_import_then_export_round_trips(isolated_home: Path, tmp_path: Path) -> None:
    code, out, err = invoke("import", str(TRANSCRIPT), "--format", "mini-swe-agent")
    assert code == 0, err
    sid = out.strip()
    assert "imported" in err
    target = tmp_path / "out.json"
    code, _, err = invoke("export", sid, "-o", str(target))
    assert code == 0, err
    assert json.loads(target.read_text()) == load_transcript(TRANSCRIPT)
    code, out, _ = invoke("export", sid)
    assert json.loads(out) == load_transcript(TRANSCRIPT)


def test_export_output_targets(chain: Path, tmp_path: Path) -> None:
    """Issue 20: `export -o` writes through a symlink, keeps a file's mode, and refuses a
    directory, a FIFO or a device with one line before reading the store."""
    real = tmp_path / "real.json"
    real.write_text("old")
    real.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    code, _, err = invoke("export", "20260101_100000_bbbbbb", "-o", str(link))
    assert code == 0, err
    assert link.is_symlink() and json.loads(real.read_text())[0]["content"] == "[summary]"
    assert real.stat().st_mode & 0o777 == 0o640
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for target, problem in ((tmp_path, "is a directory"), (fifo, "FIFO"), ("/dev/null", "device")):
        # An unknown id: the refusal naming the target comes before the store is read.
        code, _, err = invoke("export", "no-such-id", "-o", str(target))
        assert code == 2 and problem in err and str(target) in err, err
        assert len(err.strip().splitlines()) == 1
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_export_chain_gives_the_original_history(chain: Path) -> None:
    code, out, _ = invoke("export", "20260101_100000_bbbbbb", "--chain")
    assert code == 0
    assert [m["content"] for m in json.loads(out)] == ["build the API please", "done A", "done B"]


def test_import_of_a_bad_file_is_a_user_error(isolated_home: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    code, _, err = invoke("import", str(bad))
    assert code == 2 and str(bad) in err and len(err.strip().splitlines()) == 1
    code, _, err = invoke("import", str(tmp_path / "missing.json"))
    assert code == 2 and "missing.json" in err


def test_import_refuses_what_compress_refuses(isolated_home: Path, tmp_path: Path) -> None:
    """Issue 20: an int role was a traceback; a content object and string tool_calls were
    stored and exported back. Now one line naming the message, exit 2, nothing stored."""
    cases = {
        "int-role.json": ([{"role": "user", "content": "a"}, {"role": 5, "content": "b"}], 1),
        "object.json": ([{"role": "user", "content": {"a": 1}}], 0),
        "calls.json": ([{"role": "assistant", "content": "x", "tool_calls": "ls"}], 0),
    }
    for name, (batch, index) in cases.items():
        path = tmp_path / name
        path.write_text(json.dumps(batch))
        code, out, err = invoke("import", str(path))
        assert code == 2 and out == "", err
        # Named by the import check ("message N") or, for a role that is not even a
        # string, already by the reader's detection ("item N"), as compress does.
        named = f"{path}: message {index}: " in err or f"item {index}: " in err
        assert named and str(path) in err and len(err.strip().splitlines()) == 1, err
        assert "Traceback" not in err
    code, out, _ = invoke("list", "--json")
    assert json.loads(out) == []
    # --lenient repairs the content object (as compress's repair does) but not an int role.
    code, out, err = invoke("import", "--lenient", str(tmp_path / "object.json"))
    assert code == 0, err
    code, exported, _ = invoke("export", out.strip())
    assert json.loads(exported) == [{"role": "user", "content": '{"a": 1}'}]
    code, _, err = invoke("import", "--lenient", str(tmp_path / "int-role.json"))
    assert code == 2 and "item 1: a message must be a JSON object with a string 'role'" in err


def test_path_and_verify(chain: Path) -> None:
    code, out, _ = invoke("path")
    assert (code, out.strip()) == (0, str(chain))
    code, out, _ = invoke("verify")
    assert code == 0 and out.startswith("ok: 3 sessions, 4 messages")


def test_a_corrupt_database_is_reported_not_deleted(isolated_home: Path) -> None:
    isolated_home.mkdir(parents=True)
    db = isolated_home / "state.db"
    db.write_bytes(b"garbage" * 1000)
    code, _, err = invoke("list")
    assert code == 1 and "not an SQLite database" in err and str(db) in err
    assert "Move it aside" in err and "verify --repair" not in err  # no loop
    code, _, err = invoke("verify", "--repair")
    assert code == 1 and "not an SQLite database" in err and "verify --repair" not in err
    assert db.read_bytes() == b"garbage" * 1000
    db.rename(db.with_suffix(".db.not-sqlite"))  # what the message says to do
    assert invoke("list")[0] == 0


def test_the_installed_command_runs(chain: Path) -> None:
    script = Path(sys.executable).parent / "palimpsest"
    if not script.exists():
        pytest.skip("the palimpsest console script is not installed next to python")
    done = subprocess.run(
        [str(script), "sessions", "tip", "20260101_09"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "20260101_100000_bbbbbb"


def test_every_sessions_command_has_help_and_is_documented() -> None:
    from palimpsest.cli.sessions import sessions_app

    docs = (Path(__file__).parents[1] / "docs" / "sessions.md").read_text()
    names = [c.name for c in sessions_app.registered_commands]
    assert {"list", "show", "tip", "import", "export", "path", "verify"} <= set(names)
    for command in sessions_app.registered_commands:
        assert command.callback is not None and (command.callback.__doc__ or "").strip()
        assert f"palimpsest sessions {command.name}" in docs


def test_config_chooses_the_file_and_the_layout(isolated_home: Path, tmp_path: Path) -> None:
    isolated_home.mkdir(parents=True)
    target = tmp_path / "elsewhere" / "my.db"
    (isolated_home / "config.yaml").write_text(
        f"store:\n  path: {target}\n  fts_layout: external\n"
    )
    assert invoke("path")[1].strip() == str(target)
    code, _, err = invoke("import", str(TRANSCRIPT))
    assert code == 0, err
    with SessionStore(target) as store:
        assert store.fts_layout == "external" and store.message_count() > 0
    (isolated_home / "config.yaml").write_text("store:\n  fts_layuot: external\n")
    code, _, err = invoke("list")
    assert code == 2 and "store.fts_layuot" in err


# -- issue 14: prefixes, filters, stdin, duplicates (through the console script's main; bad
# stdin from a real pipe) -----------------------------------------------------------------


def _ten_sessions() -> None:
    with SessionStore() as store:
        for n in range(10):
            store.create_session(f"20261123_1000{n:02d}_abc{n:03d}", "cli", title=f"t{n}")


def test_ambiguous_prefix_lists_the_candidates() -> None:
    _ten_sessions()
    result = invoke_cli("sessions", "show", "20261123")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "ambiguous: it matches 10 sessions" in result.stderr
    assert "20261123_100000_abc000" in result.stderr and "no session with id" not in result.stderr
    assert invoke_cli("sessions", "tip", "20261123_100003").stdout == "20261123_100003_abc003\n"
    missing = invoke_cli("sessions", "show", "1999")
    assert missing.returncode == 2 and "no session with id '1999'" in missing.stderr


def test_a_filter_matching_nothing_says_so() -> None:
    empty = invoke_cli("sessions", "list")
    assert empty.returncode == 0 and "No sessions stored yet." in empty.stderr
    _ten_sessions()
    result = invoke_cli("sessions", "list", "--source", "nosuch")
    assert result.returncode == 0 and "No sessions stored yet." not in result.stderr
    assert "No session matches --source nosuch (10 sessions stored" in result.stderr
    past = invoke_cli("sessions", "list", "--offset", "50")
    assert "No session matches --offset 50" in past.stderr


def test_import_from_stdin_and_duplicates_by_content() -> None:
    text = TRANSCRIPT.read_text(encoding="utf-8")
    first = invoke_cli("sessions", "import", "-", "--title", "piped", stdin=text)
    assert first.returncode == 0, first.stderr
    sid = first.stdout.strip()
    assert "imported 6 messages from <stdin>" in first.stderr
    # The same content from a file (another name, reformatted JSON) is the same transcript.
    again = invoke_cli("sessions", "import", str(TRANSCRIPT))
    assert again.returncode == 3 and again.stdout.strip() == sid
    assert f"already imported as session {sid}" in again.stderr and "--again" in again.stderr
    as_json = invoke_cli("sessions", "import", str(TRANSCRIPT), "--json")
    assert as_json.returncode == 3 and json.loads(as_json.stdout)["id"] == sid
    forced = invoke_cli("sessions", "import", str(TRANSCRIPT), "--again", "--json")
    data = json.loads(forced.stdout)
    assert forced.returncode == 0 and data["imported"] and data["id"] != sid
    with SessionStore() as store:
        assert store.session_count() == 2
        assert store.require_session(sid)["title"] == "piped"


def test_bad_stdin_is_one_line() -> None:
    result = run_cli("sessions", "import", "-", stdin="{not json")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "<stdin>" in result.stderr


def test_a_short_handle_is_accepted_wherever_an_id_is(chain: Path) -> None:
    # The id's last part, as `sessions list` shows it in bold; a unique prefix of it too.
    assert invoke("tip", "aaaaaa")[1].strip() == "20260101_100000_bbbbbb"
    assert invoke("tip", "aaa")[1].strip() == "20260101_100000_bbbbbb"
    code, out, _ = invoke("show", "bbbb", "--json")
    assert code == 0 and json.loads(out)["session"]["id"] == "20260101_100000_bbbbbb"
    with SessionStore() as store:
        store.create_session("20260103_000000_aaazzz", "cli")
        assert store.resolve_session_id("aaaz") == "20260103_000000_aaazzz"
        assert store.resolve_session_id("aaa") is None  # two handles start with it
    code, _, err = invoke("tip", "aaa")
    assert code == 2 and "20260103_000000_aaazzz" in err


def test_list_shows_unknown_usage_as_unknown_never_zero(isolated_home: Path) -> None:
    with SessionStore() as store:
        store.create_session("20260101_000000_import", "import", title="Imported")
        store.append_message("20260101_000000_import", "user", "hi")
        store.create_session("20260101_000001_silent", "cli", title="Silent server")
        store.append_message("20260101_000001_silent", "user", "hi")
        for _ in range(12):
            store.record_usage("20260101_000001_silent", None, 0.0, model="local")
    code, out, _ = invoke("list")
    assert code == 0
    rows = {
        line.split("│")[2].strip().split(" ")[0]: line
        for line in out.splitlines()
        if "│" in line and ("Imported" in line or "Silent" in line)
    }
    imported, silent = rows["Imported"], rows["Silent"]
    assert "–" in imported and " 0 " not in imported
    assert "unknown" in silent and "$0" not in silent and "calls unreported" not in silent
    assert "no model calls recorded" in out


def test_import_shows_progress_on_a_terminal_and_nothing_in_a_pipe(
    isolated_home: Path, tmp_path: Path
) -> None:
    import os

    import pexpect

    from cli_run import SRC, run_cli

    big = (
        Path(__file__).parent
        / "data"
        / "transcripts"
        / "swe-agent"
        / "pydicom-1458__gpt4_default.traj"
    )
    env = dict(os.environ, PYTHONPATH=str(SRC), TERM="xterm", PYTHONUNBUFFERED="1")
    # The terminal's own 200 columns decide the bar's width, not a COLUMNS or LINES this
    # process was left with (under pytest-xdist an earlier module's may linger): at 80
    # columns the long path leaves no room for the size column.
    for name in ("NO_COLOR", "COLUMNS", "LINES"):
        env.pop(name, None)
    child = pexpect.spawn(
        sys.executable,
        ["-m", "palimpsest.cli", "sessions", "import", str(big)],
        env=env,
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 200),
    )
    child.expect(pexpect.EOF)
    child.close()
    shown = str(child.before)
    assert child.exitstatus == 0
    assert "importing" in shown and "MiB" in shown and "imported 26 messages" in shown
    piped = run_cli("sessions", "import", str(big), "--again")
    assert piped.returncode == 0 and "importing" not in piped.stderr
