"""Finding and reading Claude Code and Codex history trees (tests/data/agent-histories).

The fixture trees are laid out like ``~/.claude/projects`` and ``~/.codex/sessions``:
several projects, an inline sidechain and a sub-agent file, a Codex sub-agent rollout
linked by ``parent_thread_id``, a truncated last line, unknown record types, and one
session that cannot be converted.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.errors import UserError
from palimpsest.messages.formats_common import ConversionError
from palimpsest.messages.history_files import (
    CLAUDE_CODE,
    CODEX,
    convert_history,
    default_root,
    discover,
    read_lines,
)

TREES = Path(__file__).parent / "data" / "agent-histories"
CLAUDE = TREES / "claude" / "projects"
CODEX_TREE = TREES / "codex" / "sessions"
ZEPPELIN = "5f0c2a64-3b1e-4c7a-9d2e-0a1b2c3d4e5f"


def test_default_roots_follow_home_and_the_agents_own_variables() -> None:
    home = {"HOME": "/home/ada"}
    assert default_root(CLAUDE_CODE, home) == Path("/home/ada/.claude/projects")
    assert default_root(CODEX, home) == Path("/home/ada/.codex/sessions")
    moved = {"HOME": "/home/ada", "CLAUDE_CONFIG_DIR": "/srv/claude", "CODEX_HOME": "/srv/cx"}
    assert default_root(CLAUDE_CODE, moved) == Path("/srv/claude/projects")
    assert default_root(CODEX, moved) == Path("/srv/cx/sessions")
    with pytest.raises(UserError, match="claude-code, codex"):
        default_root("aider", home)


def test_discover_lists_sessions_before_their_sub_agents() -> None:
    found = discover(CLAUDE_CODE, CLAUDE)
    names = [(f.project_folder, f.path.name, f.subagent, f.parent) for f in found]
    assert names == [
        ("-home-ada-broken", "0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9.jsonl", False, None),
        ("-home-ada-quokka", "7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d.jsonl", False, None),
        ("-home-ada-zeppelin", f"{ZEPPELIN}.jsonl", False, None),
        ("-home-ada-zeppelin", "agent-a9f3e21.jsonl", True, ZEPPELIN),
    ]
    rollouts = discover(CODEX, CODEX_TREE)
    assert [f.project_folder for f in rollouts] == ["2025/09/01", "2025/09/01", "2025/09/02"]


def test_discover_refuses_a_missing_folder_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="is not a directory; pass the folder that holds the Codex"):
        discover(CODEX, tmp_path / "nowhere")


def test_a_truncated_last_line_is_left_for_the_next_run() -> None:
    data = b'{"a": 1}\n{"b": 2}\n{"c": '
    read = read_lines(data)
    assert [r.value for r in read.records] == [{"a": 1}, {"b": 2}]
    assert read.consumed == len(b'{"a": 1}\n{"b": 2}\n') and read.pending
    finished = read_lines(data + b"3}\n")
    assert finished.consumed == len(data) + 3 and not finished.pending
    assert [r.where for r in finished.records] == ["line 1", "line 2", "line 3"]


def test_a_complete_last_line_without_newline_is_read() -> None:
    read = read_lines(b'{"a": 1}\n{"b": 2}')
    assert len(read.records) == 2 and read.consumed == 17 and not read.pending


def test_a_broken_line_inside_is_skipped_and_counted() -> None:
    read = read_lines(b'{"a": 1}\nnot json\n[1, 2]\n\xff\xfe\n\n{"b": 2}\n')
    assert [r.value for r in read.records] == [{"a": 1}, {"b": 2}]
    assert read.bad_lines == [2, 3, 4] and not read.pending


@given(st.lists(st.dictionaries(st.text(max_size=5), st.integers(), max_size=3), max_size=6))
def test_reading_a_prefix_then_the_rest_never_loses_or_repeats_a_record(
    values: list[dict[str, int]],
) -> None:
    data = "".join(json.dumps(v) + "\n" for v in values).encode()
    for cut in range(len(data) + 1):
        head = read_lines(data[:cut])
        rest = read_lines(data[head.consumed :])
        assert [r.value for r in head.records + rest.records] == values


def test_a_claude_session_keeps_its_project_title_and_inline_sidechain() -> None:
    file = next(f for f in discover(CLAUDE_CODE, CLAUDE) if f.path.name == f"{ZEPPELIN}.jsonl")
    session = convert_history(file, read_lines(file.path.read_bytes()).records)
    assert session.session_id == ZEPPELIN and session.project == "/home/ada/zeppelin"
    assert session.title == "Zeppelin hangar deploy fix"
    assert session.started_at == pytest.approx(1759395600.0)  # the snapshot's first stamp
    assert session.unknown_records == 1  # the "frobnicate" record
    own, side = session.conversations
    assert own.key == "" and [m["role"] for m in own.messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert own.messages[1]["tool_calls"][0]["id"] == "toolu_task1"
    assert side.key == "sidechain:s-1"
    assert [m["content"] for m in side.messages] == [
        "Find the hangar deploy script",
        "The gondola script lives in scripts/hangar_deploy.sh",
    ]


def test_a_sub_agent_file_is_its_own_conversation_under_its_parent() -> None:
    file = next(f for f in discover(CLAUDE_CODE, CLAUDE) if f.subagent)
    session = convert_history(file, read_lines(file.path.read_bytes()).records)
    assert session.parent_session_id == ZEPPELIN
    assert session.session_id == f"{ZEPPELIN}/a9f3e21"
    assert [m["content"] for m in session.conversations[0].messages] == [
        "Check the dirigible mooring config",
        "The dirigible mooring config points at the old mast.",
    ]


def test_a_claude_record_the_reader_cannot_convert_raises() -> None:
    file = next(f for f in discover(CLAUDE_CODE, CLAUDE) if "broken" in f.project_folder)
    with pytest.raises(ConversionError, match="line 2: tool_use block has no 'id'"):
        convert_history(file, read_lines(file.path.read_bytes()).records)


def test_a_codex_rollout_skips_unknown_records_and_names_its_parent() -> None:
    parent, child, other = discover(CODEX, CODEX_TREE)
    first = convert_history(parent, read_lines(parent.path.read_bytes()).records)
    assert first.project == "/home/ada/walrus" and first.parent_session_id is None
    assert first.unknown_records == 2  # a ghost_snapshot item and a telemetry_blob line
    roles = [m["role"] for m in first.conversations[0].messages]
    assert roles == ["user", "user", "assistant", "tool", "assistant"]
    second = convert_history(child, read_lines(child.path.read_bytes()).records)
    assert second.parent_session_id == first.session_id
    third_read = read_lines(other.path.read_bytes())
    assert third_read.pending
    third = convert_history(other, third_read.records)
    assert third.conversations[0].messages[-1]["content"] == "Renamed otter to beaver."


def test_a_rename_beats_the_generated_title_which_beats_a_summary(tmp_path: Path) -> None:
    project = tmp_path / "projects" / "-home-ada-x"
    project.mkdir(parents=True)
    lines = [
        {"type": "summary", "summary": "Old summary", "leafUuid": "u1"},
        {
            "type": "user",
            "uuid": "u1",
            "sessionId": "s",
            "message": {"role": "user", "content": "hi"},
        },
        {"type": "ai-title", "aiTitle": "Generated title", "sessionId": "s"},
    ]
    path = project / "s.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    (file,) = discover(CLAUDE_CODE, tmp_path / "projects")
    assert convert_history(file, read_lines(path.read_bytes()).records).title == "Generated title"
    renamed = [*lines, {"type": "custom-title", "customTitle": "Mine", "sessionId": "s"}]
    path.write_text("".join(json.dumps(line) + "\n" for line in renamed))
    session = convert_history(file, read_lines(path.read_bytes()).records)
    assert session.title == "Mine" and session.unknown_records == 0
    assert session.project == "-home-ada-x"  # no cwd in the records: the folder's name


def test_an_older_sub_agent_file_beside_the_sessions_names_its_parent_in_its_records(
    tmp_path: Path,
) -> None:
    project = tmp_path / "projects" / "-home-ada-x"
    project.mkdir(parents=True)
    record = {
        "type": "user",
        "isSidechain": True,
        "sessionId": "parent-session",
        "agentId": "b7",
        "uuid": "u1",
        "message": {"role": "user", "content": "look at the tests"},
    }
    (project / "agent-b7.jsonl").write_text(json.dumps(record) + "\n")
    (file,) = discover(CLAUDE_CODE, tmp_path / "projects")
    assert file.subagent and file.parent is None
    session = convert_history(file, read_lines(file.path.read_bytes()).records)
    assert session.parent_session_id == "parent-session"
    assert session.session_id == "parent-session/b7"
    assert session.conversations[0].messages == [{"role": "user", "content": "look at the tests"}]
