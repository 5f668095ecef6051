"""``palimpsest sessions search``: output, filters, --json, --sql and one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from palimpsest.cli import sessions_search  # noqa: F401  (registers the command)
from palimpsest.cli.sessions import sessions_app
from palimpsest.storage.sessions import SessionStore

runner = CliRunner()


@pytest.fixture
def home(isolated_home: Path) -> Path:
    isolated_home.mkdir(parents=True, exist_ok=True)
    with SessionStore(isolated_home / "state.db") as store:
        store.create_session("alpha", source="cli", title="Deploy work")
        store.append_messages(
            "alpha",
            [
                {"role": "user", "content": "how do I run rm -rf safely"},
                {"role": "assistant", "content": "use my-app.config.ts with token=hunter2secret"},
            ],
        )
        store.create_session("beta", source="cron")
        store.append_messages("beta", [{"role": "user", "content": "我们讨论了数据库迁移方案"}])
    return isolated_home


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(sessions_app, ["search", *args])
    return result.exit_code, result.stdout, result.stderr


def test_table_output_finds_flags(home: Path) -> None:
    code, out, err = invoke("--", "-rf")  # a leading dash needs "--" on the command line
    assert code == 0, err
    assert "alpha" in out and "rm -rf safely" in out
    assert "1 hits (fts)" in err


def test_json_output_is_redacted(home: Path) -> None:
    code, out, _ = invoke("my-app.config.ts", "--json")
    assert code == 0
    (hit,) = json.loads(out)
    assert hit["session_id"] == "alpha" and hit["role"] == "assistant"
    assert "hunter2secret" not in out
    assert "[REDACTED]" in hit["snippet"]
    assert hit["session_title"] == "Deploy work"


@pytest.mark.parametrize("query", ["token", "hunter*", "hunter2secret", "my-app.config.ts"])
def test_snippets_are_redacted_before_they_are_marked(home: Path, query: str) -> None:
    """The issue: markers went in first, so ``>>>token<<<=hunter2secret`` escaped redaction."""
    code, out, _ = invoke(query, "--json")
    assert code == 0
    hits = json.loads(out)
    assert [h["session_id"] for h in hits] == ["alpha"]  # found, even by the secret itself
    assert "hunter2" not in out
    for hit in hits:
        assert "token=[REDACTED]" in hit["snippet"].replace(">>>", "").replace("<<<", "")
    code, table, err = invoke(query)
    assert code == 0 and "hunter2" not in table + err
    assert ">>>" not in table  # the table marks matches with style, not marker text


def test_role_and_source_filters(home: Path) -> None:
    assert json.loads(invoke("rm", "--json", "--role", "assistant")[1]) == []
    assert len(json.loads(invoke("rm", "--json", "--role", "user,system")[1])) == 1
    assert json.loads(invoke("数据库", "--json", "--source", "cli")[1]) == []
    (hit,) = json.loads(invoke("数据库", "--json", "--source", "cron")[1])
    assert hit["session_id"] == "beta"


def test_cjk_routes(home: Path) -> None:
    _, _, err = invoke("数据库")
    assert "(trigram)" in err
    code, out, err = invoke("迁移")
    assert code == 0 and "(like)" in err and "beta" in out


def test_sql_prints_statement_without_opening_the_store(isolated_home: Path) -> None:
    code, out, _ = invoke("C++ OR 100%", "--sql", "--limit", "5", "--role", "user")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("SELECT m.id AS id") and lines[0].endswith("LIMIT ? OFFSET ?;")
    assert "messages_fts MATCH ?" in lines[0] and "m.role IN (?)" in lines[0]
    match = '"C++" OR "100%"'
    # MATCH ? and the rowid floor (0 here) are set at run time from the data
    assert json.loads(lines[1].removeprefix("-- params: ")) == [match, 0, "user", 5, 0]
    assert lines[2] == "-- route: fts"
    assert not (isolated_home / "state.db").exists()


def test_any_flag_or_joins(isolated_home: Path) -> None:
    _, out, _ = invoke("the docker build", "--any", "--sql")
    assert "-- match: docker OR build" in out


def test_no_hits_and_empty_query(home: Path) -> None:
    code, out, err = invoke("zyzzyva")
    assert code == 0 and out == "" and "No messages match" in err
    code, _, err = invoke("  ")
    assert code == 2
    assert err.strip() == "error: the query is empty; give some words to search for"


def test_installed_command_runs_in_a_subprocess(home: Path) -> None:
    exe = Path(sys.executable).with_name("palimpsest")
    if not exe.exists():
        pytest.skip("console script not installed")
    env = {**os.environ, "PALIMPSEST_HOME": str(home)}
    done = subprocess.run(
        [str(exe), "sessions", "search", "数据库", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert [h["session_id"] for h in json.loads(done.stdout)] == ["beta"]


@pytest.mark.parametrize(
    ("args", "mode"),
    [
        ((), "auto (all, then any"),
        (("--match", "all"), "all\n"),
        (("--match", "any"), "any\n"),
        (("--any",), "any\n"),
    ],
)
def test_match_mode_reaches_the_plan(home: Path, args: tuple[str, ...], mode: str) -> None:
    code, out, err = invoke("deploy work", "--sql", *args)
    assert code == 0, err
    assert f"-- mode: {mode}" in out


def test_an_unknown_match_mode_is_refused(home: Path) -> None:
    code, _out, err = invoke("deploy", "--match", "most")
    assert code == 2 and "most" in err


def test_role_is_checked_against_the_real_roles() -> None:
    from cli_inproc import invoke_cli

    result = invoke_cli("sessions", "search", "rm", "--role", "user,bogus")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "unknown --role 'bogus'" in result.stderr
    assert "system, developer, user, assistant, tool" in result.stderr


def test_rows_name_the_message_and_identical_text_is_shown_once(isolated_home: Path) -> None:
    from palimpsest.storage.sessions import SessionStore

    with SessionStore() as store:
        for sid in ("20260101_000000_aaaaaa", "20260102_000000_bbbbbb"):
            store.create_session(sid, "cli")
            store.append_messages(
                sid,
                [
                    {"role": "user", "content": "first"},
                    {"role": "assistant", "content": "the zebra config lives in zoo.yaml"},
                ],
            )
    code, out, _ = invoke("zebra", "--json")
    assert code == 0
    hits = json.loads(out)
    assert [h["message_number"] for h in hits] == [1, 1]  # as `sessions show` numbers them
    shown = runner.invoke(sessions_app, ["search", "zebra"], env={"COLUMNS": "160"}).stdout
    assert shown.count("the zebra config") == 1  # two identical hits, one row
    assert "same text also in" in shown and "#1" in shown
