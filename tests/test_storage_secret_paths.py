"""No planted secret reaches any output path that is not the user's own raw data (issue 11, item 4).

45 kinds of secret that :func:`palimpsest.safety.redact.redact` recognises are stored in
real sessions (the 35 of issue 11 and the ten issue 12 found missed, with realistic values
from tests/data/secrets/): in the first user message (so the 60-character list preview cuts through
the key), in assistant text, in tool-call arguments and in a long tool result (so the
250-character tool cut of the recall transcript cuts through it), and in session titles.
Then every reader is asked for them: ``sessions search`` with 6-character prefixes of the
secret and with the key's name (table and ``--json``), ``sessions list``, the
``session_search`` tool in recent and keyword mode (its previews, and the windows it sends
a summarizer), ``show --redact`` and ``export --redact``. Nothing may print 8 consecutive
characters of any planted secret. ``show`` and ``export`` without ``--redact`` stay
verbatim, and that is asserted too.

Measured on this corpus before the change: ``sessions search`` leaked 32 of the 35 kinds
(FTS5's ``snippet()`` cut keys and put ``>>>match<<<`` markers inside ``password=...``
before anything was redacted), ``sessions list`` 35 (titles verbatim, previews cut
before redaction) and the tool's previews 19 (tool output cut at 250 characters before
redaction).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer

from cli_inproc import invoke_command
from palimpsest.cli import sessions_search  # noqa: F401  (registers `search`)
from palimpsest.cli.sessions import console, sessions_app
from palimpsest.providers import ScriptedChatModel
from palimpsest.safety.redact import REDACTED, redact
from palimpsest.storage.search import SessionSearch
from palimpsest.storage.sessions import SessionStore
from test_safety_redact import PLANTED

ISSUE_12_KINDS = (
    "stripe-webhook",
    "google-oauth",
    "sendgrid",
    "twilio",
    "discord-bot",
    "telegram-bot",
    "azure-storage",
    "mailgun",
    "digitalocean",
    "prose-password",
)
RECOGNISED_KINDS = (
    "openai",
    "openai-proj",
    "anthropic",
    "openrouter",
    "google",
    "github-ghp",
    "github-pat",
    "slack-xoxb",
    "slack-webhook",
    "aws-akia",
    "aws-secret",
    "auth-header",
    "bearer",
    "private-key-rsa",
    "private-key-openssh",
    "private-key-truncated",
    "password-env",
    "passwd",
    "token-code",
    "secret-yaml",
    "password-yaml",
    "api_key-py",
    "apikey",
    "access_token-json",
    "client_secret-json",
    "password-json",
    "cli-password",
    "cli-token",
    "url-userinfo",
    "curl-user",
    "npmrc",
    "url-token-param",
    "url-sig-param",
    "jwt",
    "stripe",
    # the ten kinds issue 12 measured as missed, recognised since
    *ISSUE_12_KINDS,
)
KINDS: list[tuple[str, str, str]] = [p for p in PLANTED if p[0] in RECOGNISED_KINDS]

WINDOW = 8
"""A leak is any run of this many consecutive characters of a planted secret."""


def leaks(text: str, kinds: list[tuple[str, str, str]] = KINDS) -> list[str]:
    """The kinds of which ``text`` shows 8 consecutive characters of the secret."""
    return [
        kind
        for kind, secret, _ in kinds
        if any(secret[i : i + WINDOW] in text for i in range(max(1, len(secret) - WINDOW + 1)))
    ]


def _key_word(line: str, secret: str) -> str:
    """The name the secret sits under: the last word before it (``DB_PASSWORD``, ``admin``)."""
    words = re.findall(r"[A-Za-z][A-Za-z_]{2,}", line[: line.index(secret)])
    return words[-1] if words else line.split()[0]


def _messages(secret: str, line: str) -> list[dict[str, Any]]:
    at = line.index(secret)
    # The first user message puts the secret across character 60, where list previews cut.
    first = "keep this safe " + "x" * max(0, 50 - 16 - at) + " " + line
    # The tool result puts it across character 250, where the recall transcript cuts.
    output = "." * max(0, 238 - at) + line + " " + "y" * 400
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "terminal", "arguments": json.dumps({"command": f"echo '{line}'"})},
    }
    return [
        {"role": "user", "content": first},
        {"role": "assistant", "content": f"Stored it. {line} Anything else?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "name": "terminal", "content": output},
        {"role": "user", "content": [{"type": "text", "text": f"again: {line}"}]},
    ]


def _index(kind: str) -> int:
    return [k for k, _, _ in KINDS].index(kind)


def _title(kind: str, line: str) -> str:
    title = " ".join(f"{kind} {line}".split())
    return title if len(title) <= 100 else kind


def _plant(home: Path, kinds: list[tuple[str, str, str]]) -> SessionStore:
    home.mkdir(parents=True)
    store = SessionStore(home / "state.db")
    for index, (kind, secret, line) in enumerate(kinds):
        sid = f"s{index:02d}"
        store.create_session(sid, source="cli", title=_title(kind, line.format(s=secret)))
        store.append_messages(sid, _messages(secret, line.format(s=secret)))
    return store


@pytest.fixture(scope="module")
def planted_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("secrets") / "home"
    with _plant(home, KINDS) as store:
        store.create_session("cjk", source="cli")
        password = KINDS[_index("password-env")][1]
        store.append_messages(
            "cjk", [{"role": "user", "content": f"数据库密码 DB_PASSWORD={password} 迁移"}]
        )
    return home


@pytest.fixture
def home(planted_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("PALIMPSEST_HOME", str(planted_home))
    # Wide enough that no table cell wraps: a wrapped secret would hide from the check.
    monkeypatch.setenv("COLUMNS", "5000")
    # a console built while another test had COLUMNS set keeps that width (rich reads it
    # once, and the CLI's modules are imported lazily, in whichever test runs first)
    monkeypatch.setattr(console, "_width", 5000)
    assert console.width == 5000
    yield planted_home


SESSIONS = typer.main.get_command(sessions_app)
"""``sessions`` as click runs it, built once (``CliRunner().invoke(sessions_app)`` rebuilds the
whole group on every call)."""


def cli(*args: str) -> str:
    result = invoke_command(SESSIONS, *args, prog_name="sessions")
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout + result.stderr


def queries(kind: str, secret: str, line: str) -> list[str]:
    return [secret[:6], secret[:6] + "*", _key_word(line.format(s=secret), secret)]


def test_the_corpus_is_45_recognised_kinds() -> None:
    assert len(KINDS) == 45 == len(set(RECOGNISED_KINDS))
    for kind, secret, line in KINDS:
        assert secret not in redact(line.format(s=secret)), kind


def test_sessions_search_shows_no_secret(home: Path) -> None:
    leaked: dict[str, list[str]] = {}
    found: set[str] = set()
    for kind, secret, line in KINDS:
        for query in queries(kind, secret, line):
            hits = json.loads(cli("search", "--json", "--limit", "50", "--", query))
            table = cli("search", "--limit", "50", "--", query)
            if hits:
                found.add(kind)
            for where, text in (("json", json.dumps(hits, ensure_ascii=False)), ("table", table)):
                for bad in leaks(text):
                    leaked.setdefault(f"{query!r} {where}", []).append(bad)
    assert leaked == {}
    assert found == set(RECOGNISED_KINDS)  # every kind was reached by some query


def test_search_snippets_mark_the_key_name_not_the_secret(home: Path) -> None:
    hits = json.loads(cli("search", "--json", "DB_PASSWORD"))
    assert {h["session_id"] for h in hits} == {f"s{_index('password-env'):02d}", "cjk"}
    for hit in hits:  # the issue's ">>>password<<<=hunter2" cannot happen: redacted first
        assert f">>>DB_PASSWORD<<<={REDACTED}" in hit["snippet"]
    for query, route in (("数据库", "trigram"), ("迁移", "like")):
        out = cli("search", query)
        assert f"1 hits ({route})" in out and f"DB_PASSWORD={REDACTED}" in out
        assert leaks(out) == []


def test_sessions_list_shows_no_secret(home: Path) -> None:
    rows = json.loads(cli("list", "--json", "--limit", "100"))
    assert len(rows) == len(KINDS) + 1
    table = cli("list", "--limit", "100")
    assert leaks(json.dumps(rows, ensure_ascii=False)) == []
    assert leaks(table) == []
    previews = [r["preview"] for r in rows if r["id"] != "cjk"]
    assert all(p.startswith("keep this safe") for p in previews)
    assert sum("[REDACT" in p for p in previews) == len(KINDS)  # removed, then cut
    assert sum(REDACTED in (r["title"] or "") for r in rows) >= 25


def test_session_search_tool_raw_mode_shows_no_secret(home: Path) -> None:
    leaked: dict[str, list[str]] = {}
    with SessionStore(home / "state.db") as store:
        tool = SessionSearch(store, model=None)
        recent = tool.run("", limit=5)
        assert json.loads(recent)["count"] == 5
        leaked.update({"recent": found} if (found := leaks(recent)) else {})
        reached: set[str] = set()
        for kind, secret, line in KINDS:
            for query in queries(kind, secret, line):
                payload = tool.run(query, limit=5)
                results = json.loads(payload)["results"]
                if any(r["preview"] for r in results):
                    reached.add(kind)
                if found := leaks(payload):
                    leaked[repr(query)] = found
    assert leaked == {}
    assert len(reached) == len(KINDS)


def test_session_search_summarizer_sees_no_secret(home: Path) -> None:
    """A model that copies its whole input back: the window it was sent must be clean."""

    def verbatim(messages: list[dict[str, Any]]) -> str:
        return str(messages[-1]["content"])

    model = ScriptedChatModel(default=verbatim)
    with SessionStore(home / "state.db") as store:
        tool = SessionSearch(store, model=model)
        payloads = [tool.run(_key_word(line.format(s=s), s), limit=5) for _, s, line in KINDS]
    sent = json.dumps([call[0] for call in model.calls], ensure_ascii=False)
    assert len(model.calls) >= len(KINDS)
    assert leaks(sent) == []
    assert leaks("\n".join(payloads)) == []
    assert REDACTED in sent


def test_show_and_export_redact_on_request_and_are_verbatim_otherwise(home: Path) -> None:
    leaked: dict[str, list[str]] = {}
    for index, (kind, secret, _) in enumerate(KINDS):
        sid = f"s{index:02d}"
        outputs = {
            "show --redact": cli("show", sid, "--redact", "--width", "100000"),
            "show --redact --width 40": cli("show", sid, "--redact", "--width", "40"),
            "show --redact --json": cli("show", sid, "--redact", "--json"),
            "export --redact": cli("export", sid, "--redact"),
        }
        for name, text in outputs.items():
            if found := leaks(text):
                leaked[f"{sid} {name}"] = found
        assert REDACTED in outputs["export --redact"]
        # Without --redact the user's own data comes back as stored.
        assert secret in json.loads(cli("export", sid))[0]["content"], kind
        assert secret in cli("show", sid, "--json"), kind
    assert leaked == {}


def test_redacted_export_is_still_a_transcript(home: Path, tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    cli("export", "s00", "--redact", "--output", str(target))
    messages = json.loads(target.read_text(encoding="utf-8"))
    assert [m["role"] for m in messages] == ["user", "assistant", "assistant", "tool", "user"]
    arguments = json.loads(messages[2]["tool_calls"][0]["function"]["arguments"])
    assert REDACTED in arguments["command"]
    assert leaks(target.read_text(encoding="utf-8")) == []


def test_real_cli_processes_show_no_secret(home: Path) -> None:
    """The same paths through ``python -m palimpsest.cli``, as a user runs them."""
    env = {**os.environ, "PALIMPSEST_HOME": str(home), "COLUMNS": "5000"}
    prefixes = " OR ".join(f"{secret[:6]}*" for _, secret, _ in KINDS)

    def run(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "palimpsest.cli", "sessions", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert leaks(done.stderr) == []
        return done.stdout

    hits = run("search", "--json", "--limit", "500", "--", prefixes)
    assert len({h["session_id"] for h in json.loads(hits)}) >= 30
    outputs = {
        "search json": hits,
        "search table": run("search", "--limit", "500", "--", prefixes),
        "list": run("list", "--limit", "100"),
        "export --redact": run("export", "s13", "--redact"),
    }
    assert {name: leaks(text) for name, text in outputs.items() if leaks(text)} == {}
    assert REDACTED in outputs["search table"] and REDACTED in outputs["export --redact"]


def test_the_issue_12_kinds_are_planted_with_realistic_values() -> None:
    """The strict xfail of the ten kinds is gone: they go through every path above."""
    planted = {kind: (secret, line) for kind, secret, line in KINDS}
    assert set(ISSUE_12_KINDS) <= set(planted)
    for kind in ISSUE_12_KINDS:
        secret, _ = planted[kind]
        assert "FAKE" not in secret.upper() and len(set(secret)) >= 10, kind
