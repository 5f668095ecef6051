"""``palimpsest replay``: every shared transcript through the real agent, a valid session chain
left behind, and a timeline that tells what each compaction did."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import REAL_TRANSCRIPTS, SHARED_SETS
from palimpsest import load_transcript
from palimpsest.cli.app import app
from palimpsest.messages import validate_transcript
from palimpsest.storage.sessions import SessionStore
from palimpsest.tokens import estimate_messages_tokens_rough

runner = CliRunner()

TRANSCRIPTS = sorted(
    p for folder in SHARED_SETS for p in (REAL_TRANSCRIPTS / folder).iterdir() if p.is_file()
)
LONG = 4000
"""Transcripts larger than this (rough tokens) must compact at least once in their window."""


def _size(path: Path) -> tuple[int, int]:
    messages = load_transcript(path)
    total = estimate_messages_tokens_rough(messages)
    return total, max(estimate_messages_tokens_rough([m]) for m in messages)


def _window(path: Path) -> int:
    """Three quarters of the transcript's size, so the longer ones cannot fit and must
    compact, with room for two of its largest messages and the agent's own prompt."""
    total, largest = _size(path)
    return max(total * 3 // 4, 2 * largest + 1000, 3000)


def _records(output: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in output.splitlines() if line.strip()]


def test_the_shared_transcripts_are_there() -> None:
    assert len(TRANSCRIPTS) >= 10


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: p.name)
def test_every_transcript_replays_into_a_valid_chain(path: Path, tmp_path: Path) -> None:
    db = tmp_path / "replay.db"
    window = _window(path)
    args = ["replay", str(path), "--context-length", str(window), "--db", str(db), "--json"]
    # the chain of continuations is what is checked
    result = runner.invoke(app, [*args, "--compaction-mode", "rotation"])
    assert result.exit_code == 0, result.output
    records = _records(result.stdout)
    kinds = [r["event"] for r in records]
    assert kinds[0] == "start" and kinds[-1] == "totals"
    start, totals = records[0], records[-1]
    turns = [r for r in records if r["event"] == "turn"]
    assert len(turns) == start["turns"] == totals["turns"]
    assert totals["replies_played"] == start["replies"]
    compactions = [r for r in records if r["event"] == "compaction" and r["compacted"]]
    assert totals["compactions"] == len(compactions)
    assert totals["turn_errors"] == 0 and totals["replies_unplayed"] == 0
    if _size(path)[0] > LONG:
        assert compactions, f"{path.name} in a {window}-token window never compacted"
    for event in compactions:
        assert event["path"] in ("preflight", "after_round", "reactive")
        assert (
            event["tokens_after"] < event["tokens_before"]
            or event["messages_after"] < event["messages_before"]
        )
        assert event["session_id"] and event["parent_session_id"]

    chain = [r for r in records if r["event"] == "session"]
    assert len(chain) == totals["sessions"] == len(compactions) + 1
    assert chain[0]["title"] == f"replay {path.name}"
    for position, link in enumerate(chain[1:], start=2):
        assert link["title"] == f"replay {path.name} #{position}"
    assert chain[-1]["session_id"] == totals["final_session_id"]
    with SessionStore(db) as store:
        for earlier, later in itertools.pairwise(chain):
            row = store.get_session(later["session_id"])
            assert row is not None and row["parent_session_id"] == earlier["session_id"]
            assert store.get_session(earlier["session_id"])["end_reason"] == "compression"  # type: ignore[index]
        for link in chain:
            stored = store.get_messages(link["session_id"])
            assert len(stored) == link["messages"]
            validate_transcript(stored, path=link["session_id"])
    # every compaction's continuation is a link of the chain, parent first
    ids = [link["session_id"] for link in chain]
    for event in compactions:
        assert ids.index(event["parent_session_id"]) + 1 == ids.index(event["session_id"])


def _native(tmp_path: Path) -> Path:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "shell", "arguments": '{"cmd": "ls"}'},
    }
    messages = [
        {"role": "system", "content": "You are a recorded agent."},
        {"role": "user", "content": "List the files"},
        {"role": "assistant", "content": "Looking.", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "recorded-listing: a.py b.py"},
        {"role": "assistant", "content": "Two files."},
    ]
    path = tmp_path / "native.json"
    path.write_text(json.dumps(messages), encoding="utf-8")
    return path


def test_native_calls_get_their_recorded_results(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    result = runner.invoke(
        app,
        ["replay", str(_native(tmp_path)), "--context-length", "8000", "--db", str(db), "--json"],
    )
    assert result.exit_code == 0, result.output
    totals = _records(result.stdout)[-1]
    assert totals["tool_calls"] == 1 and totals["model_calls"] == 2
    with SessionStore(db) as store:
        stored = store.get_messages(totals["final_session_id"])
    assert [m["role"] for m in stored] == ["user", "assistant", "tool", "assistant"]
    assert stored[2]["content"] == "recorded-listing: a.py b.py"
    assert stored[3]["content"] == "Two files."


def test_text_actions_send_the_observation_as_the_next_user_message(tmp_path: Path) -> None:
    path = REAL_TRANSCRIPTS / "mini-swe-agent" / "local.traj.json"
    db = tmp_path / "r.db"
    result = runner.invoke(
        app, ["replay", str(path), "--context-length", "20000", "--db", str(db), "--json"]
    )
    assert result.exit_code == 0, result.output
    totals = _records(result.stdout)[-1]
    recorded = [m for m in load_transcript(path) if m["role"] in ("user", "assistant")]
    with SessionStore(db) as store:
        stored = store.get_messages(totals["final_session_id"])
    assert [m["role"] for m in stored] == [m["role"] for m in recorded]
    assert [m["content"] for m in stored] == [m["content"] for m in recorded]


def test_the_text_timeline(tmp_path: Path) -> None:
    path = REAL_TRANSCRIPTS / "swe-agent" / "ctf_web_i_got_id_demo.traj"
    result = runner.invoke(
        app,
        [
            "replay",
            str(path),
            "--context-length",
            str(_window(path)),
            "--db",
            str(tmp_path / "r.db"),
            "--compaction-mode",
            "rotation",
        ],
    )
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith(
        "replay ctf_web_i_got_id_demo.traj: 43 messages as 21 turns (text actions)"
    )
    assert "turn 1/21 (request): 1 round, 0 tool calls" in out
    assert "turn 2/21 (observation)" in out
    assert "⟳ compaction (" in out and "removed)" in out and "continues in " in out
    assert "sessions (oldest first):" in out
    assert "ended: compression" in out
    assert "\ntotals: 21 turns, 21 model calls" in out


def test_the_same_file_twice_into_one_store(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    args = ["replay", str(_native(tmp_path)), "--context-length", "8000", "--db", str(db), "--json"]
    first = runner.invoke(app, args)
    second = runner.invoke(app, args)
    assert first.exit_code == second.exit_code == 0, second.output
    titles = [
        [r["title"] for r in _records(done.stdout) if r["event"] == "session"]
        for done in (first, second)
    ]
    assert titles[0] == ["replay native.json"]
    assert titles[1][0].startswith("replay native.json 20")


class TestErrors:
    def test_missing_file(self, tmp_path: Path) -> None:
        result = runner.invoke(
            app, ["replay", str(tmp_path / "nope.json"), "--context-length", "4000"]
        )
        assert result.exit_code == 2
        assert "nope.json" in result.output and "Traceback" not in result.output

    def test_context_length_has_the_one_default(self, tmp_path: Path) -> None:
        result = runner.invoke(app, ["replay", str(_native(tmp_path)), "--json"])
        assert result.exit_code == 0, result.output
        assert _records(result.stdout)[0]["context_length"] == 200_000

    def test_not_a_transcript(self, tmp_path: Path) -> None:
        bad = tmp_path / "bad.json"
        bad.write_text("{not json", encoding="utf-8")
        result = runner.invoke(app, ["replay", str(bad), "--context-length", "4000"])
        assert result.exit_code == 2
        assert "bad.json" in result.output

    def test_no_user_message(self, tmp_path: Path) -> None:
        only = tmp_path / "only.json"
        only.write_text(json.dumps([{"role": "system", "content": "x"}]), encoding="utf-8")
        result = runner.invoke(app, ["replay", str(only), "--context-length", "4000"])
        assert result.exit_code == 2
        assert "no user message to replay" in result.output


def _swe_agent_runs() -> list[Path]:
    return sorted((REAL_TRANSCRIPTS / "swe-agent").glob("*.traj"))


def _with_a_huge_observation(tmp_path: Path) -> Path:
    """pydicom's run with one observation (a user message) grown to ~35K tokens."""
    from palimpsest.messages import for_provider

    messages = for_provider(
        load_transcript(REAL_TRANSCRIPTS / "swe-agent" / "pydicom-1458__gpt4_default.traj")
    )
    lines = str(messages[12]["content"]).splitlines()
    messages[12] = {
        **messages[12],
        "content": "\n".join(f"{i}: {lines[i % len(lines)]}" for i in range(2400)),
    }
    path = tmp_path / "huge-observation.json"
    path.write_text(json.dumps(messages), encoding="utf-8")
    return path


@pytest.mark.parametrize("which", [*(p.name for p in _swe_agent_runs()), "huge-observation"])
def test_replay_at_16k_leaves_the_users_store_alone_and_never_stalls(
    which: str, tmp_path: Path, isolated_home: Path
) -> None:
    path = (
        _with_a_huge_observation(tmp_path)
        if which == "huge-observation"
        else (REAL_TRANSCRIPTS / "swe-agent" / which)
    )
    result = runner.invoke(app, ["replay", str(path), "--context-length", "16000"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "Cannot compress further" not in out
    assert "empty answer" not in out
    assert not any(line.startswith(("WARNING", "INFO", "palimpsest.")) for line in out.splitlines())
    assert "turn error" in out and " 0 turn errors" in out
    # Nothing in the user's own home: no store, no saved outputs.
    assert not (isolated_home / "state.db").exists()
    assert not (isolated_home / "outputs").exists() or not any(
        (isolated_home / "outputs").iterdir()
    )


def test_keep_writes_into_the_users_store(tmp_path: Path, isolated_home: Path) -> None:
    path = REAL_TRANSCRIPTS / "mini-swe-agent" / "local.traj.json"
    result = runner.invoke(app, ["replay", str(path), "--keep", "--json"])
    assert result.exit_code == 0, result.output
    final = _records(result.stdout)[-1]["final_session_id"]
    with SessionStore(isolated_home / "state.db") as store:
        assert store.get_session(final) is not None


def test_log_records_go_through_the_timeline(tmp_path: Path) -> None:
    # A window too small for the transcript makes the compressor log "Cannot compress".
    path = REAL_TRANSCRIPTS / "swe-agent" / "pydicom-1458__gpt4_default.traj"
    args = ["replay", str(path), "--context-length", "600"]
    plain = runner.invoke(app, args)
    assert "Cannot compress: only" not in plain.output and "WARNING" not in plain.output
    as_json = runner.invoke(app, [*args, "--json"])
    logs = [r for r in _records(as_json.stdout) if r["event"] == "log"]
    assert logs and all(r["level"] in ("info", "warning") for r in logs)
    verbose = runner.invoke(app, [*args, "--verbose"])
    assert "  log: Cannot compress: only" in verbose.output


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: p.name)
def test_both_compaction_modes_replay_the_same_talk_into_different_sessions(
    path: Path, tmp_path: Path
) -> None:
    """Issue 24: the timeline shows the mode; rotation makes one session per compaction
    more, in place keeps one session, and the conversation itself is the same."""
    window = str(_window(path))
    runs: dict[str, list[dict[str, Any]]] = {}
    for mode in ("rotation", "in-place"):
        db = tmp_path / f"{mode}.db"
        args = ["replay", str(path), "--context-length", window, "--db", str(db), "--json"]
        result = runner.invoke(app, [*args, "--compaction-mode", mode])
        assert result.exit_code == 0, result.output
        runs[mode] = _records(result.stdout)
    totals = {mode: records[-1] for mode, records in runs.items()}
    rotation, in_place = totals["rotation"], totals["in-place"]
    assert runs["rotation"][0]["compaction_mode"] == rotation["compaction_mode"] == "rotation"
    assert runs["in-place"][0]["compaction_mode"] == in_place["compaction_mode"] == "in_place"
    assert rotation["compactions"] == in_place["compactions"]
    assert rotation["final_messages"] == in_place["final_messages"]
    assert rotation["sessions_created"] == 1 + rotation["compactions"]
    assert in_place["sessions_created"] == 1
    for mode, expected in (("rotation", "rotation"), ("in-place", "in_place")):
        done = [r for r in runs[mode] if r["event"] == "compaction" and r["compacted"]]
        assert len(done) == totals[mode]["compactions"]
        assert all(r["mode"] == expected for r in done)
    sessions = [r for r in runs["in-place"] if r["event"] == "session"]
    assert len(sessions) == 1 and sessions[0]["session_id"] == in_place["final_session_id"]
    if in_place["compactions"]:
        assert sessions[0]["archived_messages"] > 0
        with SessionStore(tmp_path / "in-place.db") as store:
            validate_transcript(store.get_messages(sessions[0]["session_id"]), path="live")


def test_the_text_timeline_names_the_mode(tmp_path: Path) -> None:
    path = REAL_TRANSCRIPTS / "swe-agent" / "pydicom-1458__gpt4_default.traj"
    args = ["replay", str(path), "--context-length", str(_window(path))]
    result = runner.invoke(
        app, [*args, "--db", str(tmp_path / "r.db"), "--compaction-mode", "in-place"]
    )
    assert result.exit_code == 0, result.output
    assert "compaction in place" in result.stdout
    assert ", in place): " in result.stdout and "(earlier messages archived in it)" in result.stdout
    assert "1 session created (in place)" in result.stdout
    bad = runner.invoke(app, ["replay", str(path), "--compaction-mode", "sideways"])
    assert bad.exit_code == 2
