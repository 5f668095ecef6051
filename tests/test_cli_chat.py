"""``palimpsest chat`` in a real terminal (pexpect on a pty), driven by a replay transcript.

The model is the only double (``--model replay:PATH`` answers with recorded assistant
turns); the agent, the workspace tools (real files, a real shell), the session store and
the memory files are the real ones.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pexpect
import pytest
from typer.testing import CliRunner

from cli_inproc import invoke_cli
from palimpsest.cli.app import app
from palimpsest.messages import validate_transcript
from palimpsest.storage.archive import in_place_compactions, searchable_messages
from palimpsest.storage.sessions import SessionStore

SRC = Path(__file__).resolve().parents[1] / "src"
PROMPT = "> "
STATUS = re.compile(r"ctx ~?[\d,?]+/4,096")


def _call(ident: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": ident,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


def _padding(k: int) -> str:
    # long enough that a 4,096-token window has a middle to compress after a few turns
    return f"Reply {k}: " + " ".join(f"detail-{k}-{i} of the workspace notes" for i in range(60))


def _transcript(path: Path) -> Path:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "Hi, I am replaying a recorded session."},
        {"role": "user", "content": "look around"},
        {
            "role": "assistant",
            "content": "Listing.",
            "tool_calls": [_call("c1", "run_shell", {"command": "ls"})],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "(recorded)"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [_call("c2", "read_file", {"path": "notes.txt"})],
        },
        {"role": "tool", "tool_call_id": "c2", "content": "(recorded)"},
        {"role": "assistant", "content": "The notes greet the workspace."},
    ]
    for k in range(1, 5):
        messages += [
            {"role": "user", "content": f"more {k}"},
            {"role": "assistant", "content": _padding(k)},
        ]
    path.write_text(json.dumps(messages), encoding="utf-8")
    return path


def _spawn(
    args: list[str], cwd: Path, preexec_fn: Callable[[], None] | None = None
) -> pexpect.spawn:
    env = dict(os.environ)
    env.update(
        PYTHONPATH=str(SRC) + os.pathsep + env.get("PYTHONPATH", ""),
        TERM="dumb",
        NO_COLOR="1",
        PYTHONUNBUFFERED="1",
    )
    return pexpect.spawn(
        sys.executable,
        ["-m", "palimpsest.cli", "chat", *args],
        cwd=str(cwd),
        env=env,
        encoding="utf-8",
        timeout=20,
        dimensions=(60, 220),
        preexec_fn=preexec_fn,
    )


def _turn(child: pexpect.spawn, line: str) -> str:
    """Send a line, wait for the status line and the next prompt; return what was printed
    (the status line included)."""
    child.sendline(line)
    child.expect(STATUS)
    shown = str(child.before) + str(child.after)
    child.expect_exact(PROMPT)
    return shown + str(child.before)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    root.mkdir()
    (root / "notes.txt").write_text("hello from the workspace\n", encoding="utf-8")
    return root


def test_a_session_in_a_real_terminal_then_resumed(workspace: Path, tmp_path: Path) -> None:
    transcript = _transcript(tmp_path / "recorded.json")
    db = tmp_path / "state.db"
    child = _spawn(
        [
            "--model",
            f"replay:{transcript}",
            "--tools",
            "workspace",
            "--context-length",
            "4096",
            "--db",
            str(db),
        ],
        workspace,
    )
    child.expect("palimpsest chat · replay:recorded.json · session")
    child.expect_exact(PROMPT)

    assert "Hi, I am replaying a recorded session." in _turn(child, "hello")

    shown = _turn(child, "look around")
    assert '→ run_shell command="ls"' in shown
    assert "← notes.txt" in shown  # the real shell ran in the workspace
    assert '→ read_file path="notes.txt"' in shown
    assert "hello from the workspace" in shown  # the real file was read
    assert "The notes greet the workspace." in shown

    for k in range(1, 5):
        assert f"Reply {k}:" in _turn(child, f"more {k}")

    # At 4,096 tokens the long replies already made preflight compact by itself (tokens,
    # not a 24-message count, decide); /compress then compacts once more, /undo undoes it.
    compressed = _turn(child, "/compress the workspace notes")
    before = re.search(r"⟳ compaction \(manual\): (\d+) → \d+ messages", compressed)
    assert before is not None
    assert re.search(rf"Compressed: {before.group(1)} → \d+ messages", compressed)
    count = re.search(r"· (\d+) compactions? ·", compressed)
    assert count is not None and int(count.group(1)) >= 1

    undone = _turn(child, "/undo")
    assert "Undid the last compaction" in undone and f"→ {before.group(1)} messages" in undone
    assert f"· {int(count.group(1)) - 1} compaction" in undone

    usage = _turn(child, "/usage")
    assert re.search(r"Model calls: \d+", usage) and "Tokens:" in usage

    child.sendline("/exit")
    child.expect(r"resume with: palimpsest chat --session (\S+) ")
    session_id = str(child.match.group(1))
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0

    with SessionStore(db) as store:
        tip = store.resume_target(session_id)
        root = store.compression_chain(session_id)[0]
        stored = store.get_messages(tip)
        validate_transcript(stored)
        # compaction kept the originals: archived in the session (in place, the default)
        # or in the chain's first session (rotation)
        original = searchable_messages(store, root)
        assert any("hello from the workspace" in str(m.get("content")) for m in original)
        compacted_in_place = bool(in_place_compactions(store, root))
    assert root != tip or compacted_in_place  # the compaction left its trace either way

    again = _spawn(
        [
            "--model",
            f"replay:{transcript}",
            "--session",
            root,
            "--db",
            str(db),
            "--context-length",
            "4096",
        ],
        workspace,
    )
    again.expect(r"session \S+ resumed with (\d+) messages")
    assert int(again.match.group(1)) == len(stored)
    again.expect_exact(PROMPT)
    status = _turn(again, "/status")
    assert tip in status
    again.sendeof()
    again.expect(pexpect.EOF)
    again.close()
    assert again.exitstatus == 0


def test_ctrl_c_stops_a_turn_and_keeps_the_session(workspace: Path, tmp_path: Path) -> None:
    sleep = {"role": "tool", "tool_call_id": "s", "content": "(recorded)"}
    messages = [
        {"role": "user", "content": "wait"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [_call("s", "run_shell", {"command": "sleep 2"})],
        },
        sleep,
        {"role": "user", "content": "wait longer"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [_call("l", "run_shell", {"command": "sleep 30"})],
        },
        {"role": "tool", "tool_call_id": "l", "content": "(recorded)"},
        {"role": "user", "content": "still there?"},
        {"role": "assistant", "content": "Still here."},
    ]
    transcript = tmp_path / "sleepy.json"
    transcript.write_text(json.dumps(messages), encoding="utf-8")
    db = tmp_path / "state.db"
    child = _spawn(
        [
            "--model",
            f"replay:{transcript}",
            "--tools",
            "workspace",
            "--db",
            str(db),
            "--context-length",
            "4096",
        ],
        workspace,
    )
    child.expect_exact(PROMPT)

    # one Ctrl-C: the agent stops at its next safe point (after the running tool)
    child.sendline("wait")
    child.expect('→ run_shell command="sleep 2"')
    child.sendintr()
    child.expect_exact("stopping")
    child.expect_exact("interrupted")
    child.expect(STATUS)
    child.expect_exact(PROMPT)

    # two: stop now, without waiting for the 30 s command (the bound leaves room for a
    # loaded CI machine; a second Ctrl-C that waited for the command would take 30 s)
    child.sendline("wait longer")
    child.expect('→ run_shell command="sleep 30"')
    started = time.monotonic()
    child.sendintr()
    child.expect_exact("stopping")
    child.sendintr()
    child.expect_exact("interrupted")
    child.expect(STATUS)
    child.expect_exact(PROMPT)
    assert time.monotonic() - started < 15

    assert "Still here." in _turn(child, "still there?")
    child.sendintr()  # Ctrl-C at the prompt leaves
    child.expect(r"resume with: palimpsest chat --session (\S+) ")
    session_id = str(child.match.group(1))
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    with SessionStore(db) as store:
        stored = store.get_messages(store.resume_target(session_id))
    validate_transcript(stored)
    users = [m["content"] for m in stored if m["role"] == "user"]
    assert users == ["wait", "wait longer", "still there?"]
    calls = [c["id"] for m in stored for c in m.get("tool_calls") or ()]
    results = [m["tool_call_id"] for m in stored if m["role"] == "tool"]
    assert calls == results == ["s", "l"]  # each stopped call has a result
    assert stored[-1]["content"] == "Still here."


runner = CliRunner()


class TestArguments:
    def test_without_a_model_the_error_names_the_fix(self) -> None:
        result = runner.invoke(app, ["chat"])
        assert result.exit_code == 2
        assert "--model" in result.output and "docs/providers-local.md" in result.output
        assert "Traceback" not in result.output

    def test_unknown_tool_set(self, tmp_path: Path) -> None:
        transcript = _transcript(tmp_path / "t.json")
        result = runner.invoke(app, ["chat", "--model", f"replay:{transcript}", "--tools", "web"])
        assert result.exit_code == 2
        assert "--tools 'web' is not known; choose from: workspace" in result.output

    def test_unknown_session(self, tmp_path: Path) -> None:
        transcript = _transcript(tmp_path / "t.json")
        args = [
            "chat",
            "--model",
            f"replay:{transcript}",
            "--session",
            "nope",
            "--db",
            str(tmp_path / "s.db"),
        ]
        result = runner.invoke(app, args)
        assert result.exit_code == 2
        assert "no single session matches 'nope'" in result.output

    def test_missing_replay_file(self, tmp_path: Path) -> None:
        result = runner.invoke(app, ["chat", "--model", f"replay:{tmp_path / 'absent.json'}"])
        assert result.exit_code == 2
        assert "absent.json" in result.output

    def test_replay_file_without_replies(self, tmp_path: Path) -> None:
        transcript = tmp_path / "quiet.json"
        transcript.write_text(json.dumps([{"role": "user", "content": "hi"}]), encoding="utf-8")
        result = runner.invoke(app, ["chat", "--model", f"replay:{transcript}"])
        assert result.exit_code == 2
        assert "records no assistant reply" in result.output

    def test_the_config_model_is_used_when_no_flag(
        self, isolated_home: Path, tmp_path: Path
    ) -> None:
        transcript = _transcript(tmp_path / "t.json")
        isolated_home.mkdir(parents=True, exist_ok=True)
        (isolated_home / "config.yaml").write_text(
            f"model:\n  name: replay:{transcript}\n  context_length: 4096\n"
        )
        result = runner.invoke(app, ["chat"], input="hello\n")
        assert result.exit_code == 0, result.output
        assert "Hi, I am replaying a recorded session." in result.output
        assert "resume with: palimpsest chat --session" in result.output
        with SessionStore(isolated_home / "state.db") as store:  # the default store
            assert store.message_count() == 2

    def test_a_provider_spec_goes_through_connect(self) -> None:
        result = runner.invoke(app, ["chat", "--model", "openai-compatible:local"])
        assert result.exit_code == 2
        assert "base_url" in result.output
        result = runner.invoke(app, ["chat", "--model", "nosuch:model"])
        assert result.exit_code == 2
        assert "nosuch" in result.output

    def test_the_commands_have_help_and_docs(self) -> None:
        docs = (Path(__file__).resolve().parents[1] / "docs" / "agent.md").read_text()
        for name in ("chat", "replay"):
            result = runner.invoke(app, [name, "--help"])
            assert result.exit_code == 0
            assert f"## `palimpsest {name}`" in docs
        chat_help = runner.invoke(app, ["chat", "--help"]).output
        for option in ("--model", "--base-url", "--session", "--tools", "--context-length", "--db"):
            assert option in chat_help and f"`{option}" in docs


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_ctrl_c_at_the_prompt_leaves_even_when_started_with_sigint_ignored(
    workspace: Path, tmp_path: Path
) -> None:
    # A background job of a non-interactive shell inherits SIGINT ignored.
    transcript = tmp_path / "hello.json"
    transcript.write_text(
        json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello."}]),
        encoding="utf-8",
    )
    child = _spawn(
        [
            "--model",
            f"replay:{transcript}",
            "--db",
            str(tmp_path / "state.db"),
            "--context-length",
            "4096",
        ],
        workspace,
        preexec_fn=_ignore_sigint,
    )
    child.expect_exact(PROMPT)
    assert "Hello." in _turn(child, "hi")
    child.sendintr()
    child.expect(r"resume with: palimpsest chat --session \S+ ")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_offline_first_run_in_a_terminal(
    workspace: Path, tmp_path: Path, isolated_home: Path
) -> None:
    """A new user with no model: the error shows the offline way, which starts with no
    other flag; /help lists the commands; the printed resume hint works as printed; a
    start that says nothing leaves no empty session behind."""
    import shlex

    none = invoke_cli("chat")  # the error alone needs no terminal
    shown = " ".join((none.stdout + none.stderr).split())
    assert none.returncode == 2 and "--model replay:TRANSCRIPT" in shown

    transcript = _transcript(tmp_path / "recorded.json")
    idle = _spawn(["--model", f"replay:{transcript}"], workspace)
    idle.expect_exact(PROMPT)
    idle.sendline("/exit")
    idle.expect(pexpect.EOF)
    idle.close()
    assert idle.exitstatus == 0 and "resume with" not in str(idle.before)
    with SessionStore(isolated_home / "state.db") as store:
        assert store.session_count() == 0  # no empty "(untitled)" session

    child = _spawn(["--model", f"replay:{transcript}"], workspace)
    child.expect("palimpsest chat · replay:recorded.json · session")
    child.expect_exact(PROMPT)
    child.sendline("/help")
    child.expect_exact(PROMPT)
    listed = str(child.before)
    for command in ("/status", "/usage", "/compress", "/undo", "/new", "/exit"):
        assert command in listed
    child.sendline("hello")
    child.expect_exact("Hi, I am replaying a recorded session.")
    child.expect(r"ctx ~?[\d,]+/200,000")  # the one default window, with no flag
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    child.expect(r"resume with: (palimpsest chat [^\r\n]+)\r\n")
    hint = str(child.match.group(1))
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0

    args = shlex.split(hint)
    assert args[:2] == ["palimpsest", "chat"]
    again = _spawn(args[2:], workspace)  # exactly what was printed
    again.expect(r"session \S+ resumed with \d+ messages")
    again.expect_exact(PROMPT)
    again.sendeof()
    again.expect(pexpect.EOF)
    again.close()
    assert again.exitstatus == 0


def test_the_chat_window_names_its_source() -> None:
    from palimpsest import ScriptedChatModel
    from palimpsest.cli.chat import chat_window
    from palimpsest.config import settings_from_dict

    class Listed(ScriptedChatModel):
        provider = "vllm"

        def probe_context_length(self) -> int:
            return 65_536

    plain = ScriptedChatModel(model="chat-window-plain")
    empty = settings_from_dict({})
    assert chat_window(plain, None, empty).describe() == "default"
    assert chat_window(plain, 9_000, empty).source == "caller"
    configured = settings_from_dict({"model": {"context_length": 50_000}})
    assert chat_window(Listed(model="chat-window-listed"), None, configured).source == "configured"
    found = chat_window(Listed(model="chat-window-listed"), None, empty)
    assert (found.tokens, found.source) == (65_536, "provider")


def test_server_tool_clearing_reaches_an_anthropic_model(monkeypatch: pytest.MonkeyPatch) -> None:
    from palimpsest.cli.chat import resolve_model
    from palimpsest.config import Settings

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    on = Settings.model_validate(
        {
            "compression": {
                "server_tool_clearing": True,
                "proactive_prune_tokens": 60_000,
                "proactive_prune_min_reclaim_tokens": 8_000,
            }
        }
    )
    model = resolve_model("anthropic:claude-sonnet-4-5", None, on)
    assert model.tool_clearing == {  # type: ignore[attr-defined]
        "type": "clear_tool_uses_20250919",
        "trigger": {"type": "input_tokens", "value": 60_000},
        "clear_at_least": {"type": "input_tokens", "value": 8_000},
    }
    off = resolve_model("anthropic:claude-sonnet-4-5", None, Settings())
    assert off.tool_clearing is None  # type: ignore[attr-defined]
