"""The session_search tool on a real SessionStore, with a scripted model at the boundary."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apsw
import pytest

from palimpsest.config import settings_from_dict
from palimpsest.errors import ProviderError
from palimpsest.providers.base import ScriptedChatModel
from palimpsest.storage.search import (
    SESSION_SEARCH_SCHEMA,
    SUMMARY_SYSTEM_PROMPT,
    SessionSearch,
    coerce_limit,
)
from palimpsest.storage.sessions import SessionStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    s = SessionStore(tmp_path / "state.db")
    yield s
    s.close()


def session(
    store: SessionStore,
    sid: str,
    *texts: str,
    source: str = "cli",
    parent: str | None = None,
    title: str | None = None,
) -> str:
    store.create_session(sid, source=source, model="m1", parent_session_id=parent, title=title)
    store.append_messages(
        sid,
        [
            {"role": "user" if i % 2 == 0 else "assistant", "content": t}
            for i, t in enumerate(texts)
        ],
    )
    return sid


def run(tool: SessionSearch, query: str, **kwargs: Any) -> dict[str, Any]:
    payload = json.loads(tool.run(query, **kwargs))
    assert isinstance(payload, dict)
    return payload


def ids(payload: dict[str, Any]) -> list[str]:
    return [r["session_id"] for r in payload["results"]]


# -- schema and arguments ---------------------------------------------------------------


def test_schema_shape() -> None:
    assert SESSION_SEARCH_SCHEMA["name"] == "session_search"
    props = SESSION_SEARCH_SCHEMA["parameters"]["properties"]
    assert set(props) == {"query", "role_filter", "limit", "match"}
    assert props["match"]["enum"] == ["auto", "any", "all"]
    assert props["limit"]["default"] == 3 and props["limit"]["maximum"] == 5
    json.dumps(SESSION_SEARCH_SCHEMA)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(10, 5), ("bogus", 3), (None, 3), (0, 1), (-4, 1), ("4", 4), (2, 2), (True, 3)],
)
def test_coerce_limit(value: object, expected: int) -> None:
    assert coerce_limit(value) == expected


def test_no_store_is_an_error_payload() -> None:
    assert json.loads(SessionSearch(None).run("x")) == {
        "success": False,
        "error": "Session database not available.",
    }


# -- recent mode ------------------------------------------------------------------------


def test_empty_query_lists_recent_sessions_without_model(store: SessionStore) -> None:
    session(store, "old", "first question", title="Old one")
    session(store, "new", "second question")
    session(store, "hidden", "tool noise", source="tool")
    model = ScriptedChatModel()  # no reply queued: any call would fail the test
    payload = run(SessionSearch(store, model), "   ", current_session_id="new")
    assert payload["mode"] == "recent"
    assert ids(payload) == ["old"]
    assert payload["results"][0]["title"] == "Old one"
    assert payload["results"][0]["preview"] == "first question"
    assert model.calls == []


# -- keyword mode -----------------------------------------------------------------------


def test_groups_hits_by_lineage_root(store: SessionStore) -> None:
    session(store, "a", "the nginx reload failed", "nginx config fixed")
    store.start_continuation("a", messages=[{"role": "user", "content": "nginx again"}])
    session(store, "b", "unrelated nginx mention")
    payload = run(SessionSearch(store), "nginx", limit=5)
    roots = [r["lineage_root_id"] for r in payload["results"]]
    assert sorted(roots) == ["a", "b"]  # the chain a -> a#2 is one conversation
    assert payload["count"] == 2
    assert payload["sessions_searched"] == 3


def test_current_lineage_is_excluded(store: SessionStore) -> None:
    session(store, "A", "oauth refresh token bug")
    b = store.start_continuation("A", messages=[{"role": "user", "content": "oauth refresh"}])
    c = store.start_continuation(b, messages=[{"role": "user", "content": "oauth refresh"}])
    session(store, "kid", "oauth refresh in a delegate", parent="A")
    session(store, "D", "oauth refresh elsewhere")
    for current in ("A", b, c):
        payload = run(SessionSearch(store), "oauth refresh", limit=5, current_session_id=current)
        assert ids(payload) == ["D"], current
    # without a current session the chain comes back too
    assert "D" in ids(run(SessionSearch(store), "oauth refresh", limit=5))
    assert len(ids(run(SessionSearch(store), "oauth refresh", limit=5))) == 2


def test_descendants_of_current_session_are_excluded(store: SessionStore) -> None:
    session(store, "parent", "kafka consumer lag")
    session(store, "child", "kafka consumer lag again", parent="parent")
    session(store, "other", "kafka consumer lag elsewhere")
    payload = run(SessionSearch(store), "kafka", limit=5, current_session_id="child")
    assert ids(payload) == ["other"]


def test_no_hits_message(store: SessionStore) -> None:
    session(store, "a", "hello")
    payload = run(SessionSearch(store), "zyzzyva")
    assert payload == {
        "success": True,
        "query": "zyzzyva",
        "results": [],
        "count": 0,
        "sessions_searched": 0,
        "message": "No matching sessions found.",
    }


def test_limit_is_capped_at_five(store: SessionStore) -> None:
    for i in range(8):
        session(store, f"s{i}", f"redis eviction note {i}")
    assert len(run(SessionSearch(store), "redis", limit=10)["results"]) == 5
    assert len(run(SessionSearch(store), "redis", limit="bogus")["results"]) == 3


def test_cron_sessions_are_demoted(store: SessionStore) -> None:
    session(store, "tg", "backup rotation policy", source="telegram")
    for i in range(8):
        session(store, f"cron{i}", "backup rotation policy backup rotation", source="cron")
    assert ids(run(SessionSearch(store), "backup rotation", limit=1)) == ["tg"]
    only_cron = run(SessionSearch(store), "backup rotation", limit=5)
    assert ids(only_cron)[0] == "tg" and len(ids(only_cron)) == 5


def test_natural_language_query_widens_to_any_term(store: SessionStore) -> None:
    session(store, "a", "we pinned the postgres image to 15.4")
    payload = run(SessionSearch(store), "which postgres version did we settle on")
    assert ids(payload) == ["a"]


def test_role_filter(store: SessionStore) -> None:
    session(store, "a", "question about grpc", "answer")
    session(store, "b", "question", "assistant talks about grpc")
    assert ids(run(SessionSearch(store), "grpc", role_filter="assistant")) == ["b"]
    assert ids(run(SessionSearch(store), "grpc", role_filter="user, system")) == ["a"]


def test_chinese_query(store: SessionStore) -> None:
    session(store, "zh", "我们讨论了数据库迁移方案")
    assert ids(run(SessionSearch(store), "数据库")) == ["zh"]
    assert ids(run(SessionSearch(store), "迁移")) == ["zh"]


# -- previews, summaries, windows -------------------------------------------------------


def test_no_model_returns_previews(store: SessionStore) -> None:
    filler = "lorem ipsum dolor " * 400
    session(store, "a", filler, "the fix was to bump the terraform provider", filler)
    payload = run(SessionSearch(store), "terraform provider")
    (result,) = payload["results"]
    assert result["summary"] is None
    assert "terraform provider" in result["preview"]
    assert 0 < len(result["preview"]) <= 2000
    assert set(result) >= {"session_id", "lineage_root_id", "when", "source", "model", "title"}


def test_summary_uses_window_and_prompt(store: SessionStore) -> None:
    session(store, "a", "x" * 5000 + " the webhook secret rotated " + "y" * 5000)
    model = ScriptedChatModel(["The user rotated the webhook secret."])
    payload = run(SessionSearch(store, model, window_chars=1000), "webhook")
    assert payload["results"][0]["summary"] == "The user rotated the webhook secret."
    assert "preview" not in payload["results"][0]
    (messages, _tools, max_tokens, options) = model.calls[0]
    assert messages[0]["content"] == SUMMARY_SYSTEM_PROMPT
    user = messages[1]["content"]
    assert user.startswith("Search topic: webhook\nSession source: cli\n")
    assert "...[earlier conversation truncated]..." in user
    assert "...[later conversation truncated]..." in user
    assert "the webhook secret rotated" in user
    assert max_tokens == 2000 and options == {"temperature": 0.1}


def test_secrets_are_redacted_everywhere(store: SessionStore) -> None:
    key = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 2
    session(store, "a", f"set OPENAI_API_KEY={key} for the deploy")
    model = ScriptedChatModel([lambda msgs: f"The user set the key {key}."])
    with_model = run(SessionSearch(store, model), "deploy")
    without = run(SessionSearch(store), "deploy")
    assert key not in json.dumps(with_model) and key not in json.dumps(without)
    assert key not in model.calls[0][0][1]["content"]
    assert "[REDACTED]" in with_model["results"][0]["summary"]


def test_failed_summary_falls_back_to_preview(store: SessionStore) -> None:
    session(store, "a", "vault unseal steps")
    session(store, "b", "vault unseal again")
    error = ProviderError("boom", provider="x", model="m")
    model = ScriptedChatModel([error, error, error], default="summary text")
    tool = SessionSearch(store, model, concurrency=1, retry_delay=0)
    payload = run(tool, "vault unseal", limit=2)
    summaries = [r["summary"] for r in payload["results"]]
    assert summaries == [None, "summary text"]
    assert "vault unseal" in payload["results"][0]["preview"]
    assert len(model.calls) == 4  # three attempts for the first, one for the second


def test_concurrency_bound_is_respected(store: SessionStore) -> None:
    for i in range(5):
        session(store, f"s{i}", f"elastic shard {i}")
    lock = threading.Lock()
    active = 0
    peak = 0

    def slow(_messages: list[dict[str, Any]]) -> str:
        nonlocal active, peak
        with lock:
            active += 1
            peak = max(peak, active)
        time.sleep(0.15)
        with lock:
            active -= 1
        return "ok"

    for concurrency, expected in ((3, 3), (2, 2), (9, 5)):
        peak = 0
        model = ScriptedChatModel(default=slow)
        payload = run(SessionSearch(store, model, concurrency=concurrency), "elastic", limit=5)
        assert [r["summary"] for r in payload["results"]] == ["ok"] * 5
        assert peak == expected


def test_timeout_returns_raw_windows(store: SessionStore) -> None:
    session(store, "a", "consul gossip encryption")
    release = threading.Event()

    def stuck(_messages: list[dict[str, Any]]) -> str:
        release.wait(5)
        return "too late"

    model = ScriptedChatModel(default=stuck)
    started = time.monotonic()
    try:
        payload = run(SessionSearch(store, model, timeout=0.3), "consul")
    finally:
        release.set()
    assert time.monotonic() - started < 2
    (result,) = payload["results"]
    assert result["summary"] is None
    assert "consul gossip encryption" in result["preview"]


def test_unexpected_failure_is_a_payload(store: SessionStore) -> None:
    session(store, "a", "hello")
    con = apsw.Connection(str(store.path))
    con.execute("PRAGMA foreign_keys = OFF; DROP TABLE sessions")
    con.close()
    payload = run(SessionSearch(store), "hello")
    assert payload["success"] is False
    assert payload["error"].startswith("Search failed: ")


def test_tool_call_entry_point(store: SessionStore) -> None:
    session(store, "a", "istio sidecar")
    session(store, "b", "istio sidecar too")
    tool = SessionSearch(store)
    payload = json.loads(tool(query="istio", limit=5, current_session_id="a"))
    assert ids(payload) == ["b"]


def test_from_settings(store: SessionStore) -> None:
    settings = settings_from_dict(
        {
            "auxiliary": {
                "session_search": {"max_concurrency": 5, "timeout": 12, "window_chars": 500}
            }
        }
    )
    tool = SessionSearch.from_settings(store, None, settings)
    assert (tool.concurrency, tool.timeout, tool.window_chars) == (5, 12.0, 500)
    assert SessionSearch.from_settings(store).timeout == 90.0
