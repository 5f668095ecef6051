"""Stored text on a terminal (cli/terminal_text.py): control and bidi characters are shown
escaped by every command that prints stored text; JSON output still decodes to the exact text.

A store holding ``ESC[2J`` (clear screen), ``\\x9b`` (the one-byte CSI) and U+202E (right-to-
left override) in titles, messages, tool output and memory is walked through the CLI, with
captured output and once through a real terminal (pexpect).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pexpect
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from cli_run import SRC
from palimpsest.cli.app import app
from palimpsest.cli.render import EventRenderer
from palimpsest.cli.terminal_text import TERMINAL_UNSAFE, for_terminal, json_for_terminal
from palimpsest.outputs.store import OutputStore
from palimpsest.storage.sessions import SessionStore

HOSTILE = "before\x1b[2Jmid\x9b31mfile\u202etxt.exe\u2066\x07after"
RAW = ("\x1b[2J", "\x9b", "\u202e", "\u2066", "\x07")
SID = "20260101_090000_aaaaaa"


def _unsafe_in(text: str) -> list[str]:
    return [f"U+{ord(ch):04X}" for ch in text if ord(ch) in TERMINAL_UNSAFE and ch not in "\n\t"]


# -- the function --------------------------------------------------------------------------


def test_each_kind_is_shown_visibly() -> None:
    assert for_terminal(HOSTILE) == ("before\\x1b[2Jmid\\x9b31mfile\\u202etxt.exe\\u2066\\x07after")
    assert for_terminal("a\r\nb\tc\x7f\x00\u200e\u200f\u061c\u2028") == (
        "a\\r\nb\tc\\x7f\\x00\\u200e\\u200f\\u061c\\u2028"
    )
    assert for_terminal("a\nb\tc", keep_lines=False) == "a\\nb\\tc"
    assert for_terminal("lone \udcff surrogate") == "lone \\udcff surrogate"


def test_ordinary_text_is_left_alone() -> None:
    text = "Grüße, 日本語, emoji 👩‍💻 (ZWJ kept), C:\\path\\x1b literal, tab\tand\nlines"
    assert for_terminal(text) == text


@given(st.text())
def test_nothing_unsafe_survives(text: str) -> None:
    assert _unsafe_in(for_terminal(text)) == []
    assert _unsafe_in(for_terminal(text, keep_lines=False).replace("\\n", "")) == []
    assert "\n" not in for_terminal(text, keep_lines=False)


@given(st.recursive(st.text(), lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner)))
def test_json_for_terminal_decodes_to_the_same_data(data: Any) -> None:
    text = json_for_terminal(json.dumps(data, ensure_ascii=False))
    assert json.loads(text) == data
    assert _unsafe_in(text) == []


# -- through the CLI -----------------------------------------------------------------------


@pytest.fixture
def hostile_home(isolated_home: Path) -> Path:
    """A store, an output and a memory file that all hold the hostile text."""
    with SessionStore() as store:
        store.create_session(SID, "cli\x1b[2J", title="title \u202e" + "fdp.exe")
        store.append_messages(
            SID,
            [
                {"role": "user", "content": "search me " + HOSTILE},
                {"role": "assistant", "content": "answer " + HOSTILE},
            ],
        )
    with OutputStore() as outputs:
        outputs.put_text("tool output " + HOSTILE + "\n", tool_name="shell\x9b", session_id=SID)
    memories = isolated_home / "memories"
    memories.mkdir(parents=True, exist_ok=True)
    (memories / "MEMORY.md").write_text("plain note\n§\nnote " + HOSTILE + "\n", encoding="utf-8")
    return isolated_home


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "400"})  # no folded cells
    return result.exit_code, result.stdout, result.stderr


HUMAN = [
    ("sessions", "list"),
    ("sessions", "show", SID),
    ("sessions", "search", "search"),
    ("sessions", "export", SID),
    ("sessions", "tip", SID),
    ("memory", "show"),
    ("memory", "list"),
    ("outputs", "list"),
]


@pytest.mark.parametrize("args", HUMAN, ids=" ".join)
def test_no_command_prints_stored_control_characters_raw(
    hostile_home: Path, args: tuple[str, ...]
) -> None:
    code, out, err = _invoke(*args)
    assert code == 0, err
    assert _unsafe_in(out) == [] and _unsafe_in(err) == [], (out, err)
    if args[:2] in (("sessions", "show"), ("sessions", "search"), ("memory", "show")):
        assert "\\x1b[2J" in out and "\\u202e" in out  # shown, not dropped


JSON = [
    (("sessions", "list", "--json"), lambda d: d[0]["preview"]),
    (("sessions", "show", SID, "--json"), lambda d: d["messages"][1]["content"]),
    (("sessions", "export", SID), lambda d: d[1]["content"]),
    (("sessions", "search", "search", "--json"), lambda d: d[0]["snippet"]),
    (("memory", "show", "--json"), lambda d: d["entries"][1]),
    (("outputs", "list", "--json"), lambda d: d[0]["tool_name"]),
]


@pytest.mark.parametrize(("args", "pick"), JSON, ids=[" ".join(a) for a, _ in JSON])
def test_json_output_is_exact_and_terminal_safe(
    hostile_home: Path, args: tuple[str, ...], pick: Callable[[Any], str]
) -> None:
    code, out, err = _invoke(*args)
    assert code == 0, err
    assert _unsafe_in(out) == []
    value = pick(json.loads(out))
    assert any(raw in value for raw in RAW), value  # the stored characters, decoded exactly


def test_outputs_show_keeps_the_bytes_in_a_pipe(hostile_home: Path) -> None:
    with OutputStore() as outputs:
        digest = outputs.list()[0].digest
    code, out, _ = _invoke("outputs", "show", digest)
    assert code == 0 and out == "tool output " + HOSTILE + "\n"  # not a terminal: the data


def test_an_error_line_quoting_stored_text_is_escaped(hostile_home: Path) -> None:
    code, _, err = _invoke("sessions", "show", "\x1b[2J\u202e")
    assert code == 2 and _unsafe_in(err) == []


def test_the_chat_renderer_escapes_model_text() -> None:
    from io import StringIO

    from rich.console import Console

    from palimpsest.agent.events import TextDelta, WarningEvent

    sink = StringIO()
    renderer = EventRenderer(Console(file=sink, force_terminal=False, width=200))
    renderer.render(TextDelta(text="model says " + HOSTILE))
    renderer.render(WarningEvent(code="test", message="tool said " + HOSTILE))
    renderer.finish()
    assert _unsafe_in(sink.getvalue()) == [] and "\\u202e" in sink.getvalue()


def _terminal(home: Path, *args: str) -> str:
    env = dict(os.environ)
    env.update(PYTHONPATH=str(SRC), PALIMPSEST_HOME=str(home), TERM="xterm-256color")
    env.pop("NO_COLOR", None)
    child = pexpect.spawn(
        sys.executable,
        ["-m", "palimpsest.cli", *args],
        env=env,
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 200),
    )
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    return str(child.before)


def test_a_real_terminal_gets_no_raw_sequences(hostile_home: Path) -> None:
    with OutputStore() as outputs:
        digest = outputs.list()[0].digest
    for args in (
        ("sessions", "search", "search"),
        ("sessions", "show", SID),
        ("outputs", "show", digest),
    ):
        screen = _terminal(hostile_home, *args)
        # Rich styles its own text with SGR sequences; the stored ones must not get through.
        for raw in RAW:
            assert raw not in screen, (args, raw)
        assert "\\x1b[2J" in screen and "\\u202e" in screen, screen
