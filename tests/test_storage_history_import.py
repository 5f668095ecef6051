"""Bulk, incremental import of Claude Code and Codex histories into a real SessionStore.

Each test copies the fixture trees (tests/data/agent-histories) into its own directory,
so it can grow, rewrite or break files the way a live agent (or a disk) does.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from palimpsest.storage.history_import import HistoryImport, import_history
from palimpsest.storage.search import SessionSearch
from palimpsest.storage.sessions import SessionStore

TREES = Path(__file__).parent / "data" / "agent-histories"
SECRET = "sk-proj-" + "Hq4Jw8Ks2Lm6Np0Rt3Vx" * 2
ZEPPELIN = "5f0c2a64-3b1e-4c7a-9d2e-0a1b2c3d4e5f"


@pytest.fixture
def trees(tmp_path: Path) -> Path:
    copy = tmp_path / "trees"
    shutil.copytree(TREES, copy)
    return copy


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    with SessionStore(tmp_path / "state.db", background_upkeep=False) as opened:
        yield opened


def _both(store: SessionStore, trees: Path) -> tuple[HistoryImport, HistoryImport]:
    claude = import_history(store, "claude-code", trees / "claude" / "projects")
    codex = import_history(store, "codex", trees / "codex" / "sessions")
    return claude, codex


def _statuses(result: HistoryImport) -> dict[str, str]:
    return {f.path.name: f.status for f in result.files}


def _zeppelin(trees: Path) -> Path:
    return trees / "claude" / "projects" / "-home-ada-zeppelin" / f"{ZEPPELIN}.jsonl"


def test_every_readable_session_goes_in_and_the_broken_one_is_named(
    store: SessionStore, trees: Path
) -> None:
    claude, codex = _both(store, trees)
    assert (claude.count("new"), codex.count("new")) == (3, 3)
    (broken,) = claude.failed
    assert broken.path.name == "0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9.jsonl"
    assert broken.error == "line 2: tool_use block has no 'id'"
    assert (claude.messages, codex.messages) == (12, 11)
    # Sessions: quokka, zeppelin, its inline sidechain, its sub-agent; three rollouts.
    assert store.session_count() == 7
    assert store.message_count() == 23


def test_the_project_becomes_the_source_and_the_first_record_the_start(
    store: SessionStore, trees: Path
) -> None:
    _both(store, trees)
    rows = store.list_sessions(20, include_children=True)
    sources = sorted({row["source"] for row in rows})
    assert sources == [
        "claude-code:/home/ada/quokka",
        "claude-code:/home/ada/zeppelin",
        "codex:/home/ada/otter",
        "codex:/home/ada/walrus",
    ]
    started = {store.get_session(r["id"])["started_at"] for r in rows}  # type: ignore[index]
    assert 1756720800.0 in started  # 2025-09-01T10:00:00Z, the walrus rollout's session_meta


def test_sub_agents_are_children_of_their_parent_session(store: SessionStore, trees: Path) -> None:
    _both(store, trees)
    rows = {r["id"]: r for r in store.list_sessions(20, include_children=True)}
    parents = {
        sid: store.get_session(sid)["parent_session_id"]  # type: ignore[index]
        for sid in rows
    }
    zeppelin = next(s for s, r in rows.items() if r["title"] == "Zeppelin hangar deploy fix")
    children = sorted(
        store.get_messages(s)[0]["content"] for s, p in parents.items() if p == zeppelin
    )
    assert children == ["Check the dirigible mooring config", "Find the hangar deploy script"]
    walrus_child = next(
        s for s in rows if store.get_messages(s)[0]["content"].startswith("Audit the narwhal")
    )
    walrus = parents[walrus_child]
    assert walrus is not None
    assert "walrus importer" in json.dumps(store.get_messages(walrus))
    # Listing shows conversations, not their sub-agents.
    assert len(store.list_sessions(20)) == 4


def test_a_second_run_imports_nothing(store: SessionStore, trees: Path) -> None:
    _both(store, trees)
    claude, codex = _both(store, trees)
    assert claude.count("new", "grown") == 0 and codex.count("new", "grown") == 0
    assert claude.count("unchanged") == 3 and codex.count("unchanged") == 3
    assert claude.messages == codex.messages == 0
    assert len(claude.failed) == 1  # still named, still skipped
    assert store.message_count() == 23


def test_a_touched_but_unchanged_file_is_not_imported_again(
    store: SessionStore, trees: Path
) -> None:
    _both(store, trees)
    path = _zeppelin(trees)
    os.utime(path, (1_900_000_000, 1_900_000_000))
    claude = import_history(store, "claude-code", trees / "claude" / "projects")
    assert _statuses(claude)[path.name] == "unchanged" and claude.messages == 0


def test_a_grown_session_appends_only_its_new_messages(store: SessionStore, trees: Path) -> None:
    _both(store, trees)
    path = _zeppelin(trees)
    sid = next(
        r["id"] for r in store.list_sessions(20) if r["title"] == "Zeppelin hangar deploy fix"
    )
    before = store.get_messages(sid)
    # The truncated line is finished, and the agent writes one more exchange.
    text = path.read_text()
    cut = text.rindex("\n") + 1
    last = {
        "parentUuid": "c-6",
        "isSidechain": False,
        "cwd": "/home/ada/zeppelin",
        "sessionId": ZEPPELIN,
        "type": "user",
        "message": {"role": "user", "content": "Thanks, rotating now"},
        "uuid": "c-7",
        "timestamp": "2025-10-02T09:01:00.000Z",
    }
    reply = {
        **last,
        "type": "assistant",
        "uuid": "c-8",
        "parentUuid": "c-7",
        "message": {
            "id": "msg_03",
            "role": "assistant",
            "content": [{"type": "text", "text": "The blimp pipeline is green again."}],
        },
    }
    path.write_text(text[:cut] + json.dumps(last) + "\n" + json.dumps(reply) + "\n")
    claude = import_history(store, "claude-code", trees / "claude" / "projects")
    assert _statuses(claude)[path.name] == "grown"
    assert claude.messages == 2 and claude.count("new") == 0
    after = store.get_messages(sid)
    assert after[: len(before)] == before
    assert [m["content"] for m in after[len(before) :]] == [
        "Thanks, rotating now",
        "The blimp pipeline is green again.",
    ]
    again = import_history(store, "claude-code", trees / "claude" / "projects")
    assert again.messages == 0 and store.get_messages(sid) == after


def test_a_file_rewritten_in_place_replaces_its_sessions(store: SessionStore, trees: Path) -> None:
    _both(store, trees)
    path = (
        trees
        / "claude"
        / "projects"
        / "-home-ada-quokka"
        / "7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d.jsonl"
    )
    records = [json.loads(line) for line in path.read_text().splitlines()]
    records[0]["message"]["content"] = "Add a capybara counter instead"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    count = store.session_count()
    claude = import_history(store, "claude-code", trees / "claude" / "projects")
    assert _statuses(claude)[path.name] == "replaced"
    assert store.session_count() == count
    contents = json.dumps([store.get_messages(r["id"]) for r in store.list_sessions(20)])
    assert "capybara" in contents and "quokka counter to the stats" not in contents


def test_a_sub_agent_seen_before_its_parent_is_linked_when_the_parent_arrives(
    store: SessionStore, trees: Path
) -> None:
    sessions = trees / "codex" / "sessions"
    parent = next(sessions.rglob("rollout-2025-09-01T10-00-00-*.jsonl"))
    held = parent.read_bytes()
    parent.unlink()
    import_history(store, "codex", sessions)
    child = next(
        r["id"] for r in store.list_sessions(20) if r["source"] == "codex:/home/ada/walrus"
    )
    assert store.get_session(child)["parent_session_id"] is None  # type: ignore[index]
    parent.write_bytes(held)
    codex = import_history(store, "codex", sessions)
    assert codex.count("new") == 1
    linked = store.get_session(child)["parent_session_id"]  # type: ignore[index]
    assert linked is not None and "walrus importer" in json.dumps(store.get_messages(linked))


def test_search_finds_words_from_both_agents_and_never_the_secret(
    store: SessionStore, trees: Path
) -> None:
    _both(store, trees)
    search = SessionSearch(store)
    for word, source in (("hangar", "claude-code:"), ("flamingo", "codex:")):
        payload = search.search(word)
        assert payload["success"] and payload["count"] >= 1, word
        assert all(r["source"].startswith(source) for r in payload["results"])
    found = search.run("stale env rotate hangar")
    assert "rotate it and rerun the hangar deploy" in found
    assert SECRET not in found and SECRET[8:24] not in found
    raw = json.dumps([search.search(w) for w in ("OPENAI_API_KEY", "staging", "sk-proj")])
    assert SECRET[8:24] not in raw


def test_an_unreadable_file_is_named_and_the_rest_go_in(store: SessionStore, trees: Path) -> None:
    sessions = trees / "codex" / "sessions"
    victim = next(sessions.rglob("rollout-2025-09-02T*.jsonl"))
    victim.unlink()
    victim.symlink_to(victim.with_name("moved-to-another-disk.jsonl"))  # reading it fails
    codex = import_history(store, "codex", sessions)
    assert [f.path for f in codex.failed] == [victim]
    assert codex.failed[0].error == "No such file or directory"
    assert codex.count("new") == 2


def test_a_response_continued_after_an_import_is_merged_not_split(
    store: SessionStore, trees: Path
) -> None:
    """Claude Code writes one response as several lines sharing message.id; a line that
    arrives after an import belongs to the message already stored."""
    _both(store, trees)
    path = (
        trees
        / "claude"
        / "projects"
        / "-home-ada-quokka"
        / "7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d.jsonl"
    )
    sid = next(r["id"] for r in store.list_sessions(20) if r["source"].endswith("quokka"))
    before = store.get_messages(sid)
    last = json.loads(path.read_text().splitlines()[-1])
    last["uuid"] = "q-5"
    last["message"]["content"] = [
        {"type": "tool_use", "id": "toolu_q2", "name": "Bash", "input": {"command": "make test"}}
    ]
    with path.open("a") as handle:
        handle.write(json.dumps(last) + "\n")
    claude = import_history(store, "claude-code", trees / "claude" / "projects")
    assert _statuses(claude)[path.name] == "grown" and claude.messages == 0
    after = store.get_messages(sid)
    assert len(after) == len(before) == store.get_session(sid)["message_count"]  # type: ignore[index]
    assert after[:-1] == before[:-1]
    assert after[-1]["content"] == "Added the quokka counter beside the wombat tally."
    assert [c["id"] for c in after[-1]["tool_calls"]] == ["toolu_q2"]
    assert store.search_messages("wombat")  # still indexed once
    assert len(store.search_messages("wombat")) == 1
