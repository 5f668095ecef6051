"""palimpsest.integrations.keeper: the shared compaction and persistence of every adapter,
driven with our own dicts as the "framework" messages over the real 44-turn conversation."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from compaction_helpers import StubSummarizer
from integration_script import WINDOW, Turn, conversation, exact_counter, system_prompt
from palimpsest import (
    ConfigError,
    ExactCounter,
    ExtractiveSummarizer,
    LLMSummarizer,
    ScriptedChatModel,
    SessionStore,
    is_compaction_summary_message,
    validate_transcript,
)
from palimpsest.integrations.keeper import (
    ConversationKeeper,
    compact,
    make_compressor,
    make_summarizer,
    storable,
)

Dict = dict[str, Any]


def _copies(messages: Sequence[Mapping[str, Any]]) -> list[Dict]:
    return [dict(m) for m in messages]


def _keeper(store: SessionStore | None = None, **kwargs: Any) -> ConversationKeeper[Dict]:
    return ConversationKeeper(
        make_compressor(WINDOW), _copies, _copies, store=store, source="test", **kwargs
    )


def _turn(turn: Turn) -> list[Dict]:
    return [{"role": "user", "content": turn.user}, {"role": "assistant", "content": turn.reply}]


@pytest.fixture(scope="module")
def turns() -> list[Turn]:
    return conversation()


def _check(view: Sequence[Dict], newest: str) -> None:
    assert exact_counter().count_messages(view) < WINDOW
    validate_transcript(list(view), strict=True)
    assert [m for m in view if m["role"] == "user"][-1]["content"] == newest


def test_a_framework_that_keeps_the_whole_history(turns: list[Turn], tmp_path: Path) -> None:
    """LangChain's way: every call brings the full history; the model sees it compacted."""
    store = SessionStore(tmp_path / "s.db", background_upkeep=False)
    keeper = _keeper(store, session_id="whole")
    history: list[Dict] = [{"role": "system", "content": system_prompt()}]
    compactions = 0
    for turn in turns:
        history.append({"role": "user", "content": turn.user})
        view = keeper.view(history)
        _check(view.messages, turn.user)
        compactions += view.compacted
        if not view.changed:
            assert view.messages == history
        history.append({"role": "assistant", "content": turn.reply})
    keeper.record(history)
    assert compactions >= 2
    chain = store.compression_chain(keeper.session_id() or "")
    assert chain[0] == "whole" and len(chain) == compactions + 1
    # the first session holds the conversation as it was until the first compaction
    first = store.get_messages("whole")
    assert [m["content"] for m in first[:3]] == [m["content"] for m in history[:3]]
    # the tip starts with the compacted list and ends with the last reply
    tip = store.get_messages(chain[-1])
    assert any(is_compaction_summary_message(m) for m in tip)
    assert tip[-1]["content"] == turns[-1].reply
    store.close()


def test_a_framework_that_adopts_the_compacted_list(turns: list[Turn], tmp_path: Path) -> None:
    """pydantic-ai's way: the processed list becomes the history the next call brings."""
    store = SessionStore(tmp_path / "s.db", background_upkeep=False)
    keeper = _keeper(store, session_id="adopted")
    history: list[Dict] = [{"role": "system", "content": system_prompt()}]
    compactions = 0
    for turn in turns:
        history.append({"role": "user", "content": turn.user})
        view = keeper.view(history)
        _check(view.messages, turn.user)
        compactions += view.compacted
        history = [*view.messages, {"role": "assistant", "content": turn.reply}]
    assert compactions >= 2
    # one conversation throughout: never "started afresh" into a new session
    chain = store.compression_chain(keeper.session_id() or "")
    assert chain[0] == "adopted" and len(chain) == compactions + 1
    assert store.session_count(source="test") == len(chain)
    store.close()


def test_conversations_are_kept_apart_by_key(turns: list[Turn], tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "s.db", background_upkeep=False)
    keeper = _keeper(store)
    for key in ("a", "b"):
        keeper.view([*_turn(turns[0]), {"role": "user", "content": key}], key)
    a, b = keeper.session_id("a"), keeper.session_id("b")
    assert a and b and a != b
    assert store.get_messages(b)[-1]["content"] == "b"
    # a history that no longer starts as the conversation did is a new conversation
    keeper.view([{"role": "user", "content": "something else"}], "a")
    assert keeper.session_id("a") not in (a, b)
    store.close()


def test_a_resumed_session_is_not_stored_twice(turns: list[Turn], tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "s.db", background_upkeep=False)
    history = _turn(turns[0])
    _keeper(store, session_id="resumed").record(history)
    again = _keeper(store, session_id="resumed")  # a new process, same session id
    again.record([*history, *_turn(turns[1])])
    assert [m["content"] for m in store.get_messages("resumed")] == [
        m["content"] for m in [*history, *_turn(turns[1])]
    ]
    store.close()


def test_compact_keeps_the_newest_request_verbatim_and_the_originals(turns: list[Turn]) -> None:
    compressor = make_compressor(WINDOW)
    messages: list[Dict] = [{"role": "system", "content": system_prompt()}]
    for turn in turns[:20]:
        messages += [{**m, "_mark": i} for i, m in enumerate(_turn(turn))]
    messages.append({"role": "user", "content": "What next?", "_mark": "newest"})
    result = compact(compressor, messages, exact_counter().count_messages(messages))
    assert result is not None and len(result) < len(messages)
    assert result[-1] is messages[-1]  # the original object, private key and all
    summaries = [m for m in result if is_compaction_summary_message(m)]
    assert summaries and all(m["content"] != "What next?" for m in summaries)
    # too little to compact: None, the caller keeps what it had
    assert compact(compressor, messages[:3], 10) is None


def test_storable_keeps_what_json_can_hold() -> None:
    live = object()
    stored = storable([{"role": "user", "content": "x", "_fw": {"object": live, "json": {"a": 1}}}])
    assert stored == [{"role": "user", "content": "x", "_fw": {"json": {"a": 1}}}]
    assert storable([{"role": "user", "content": "x", "_fw": live}]) == [
        {"role": "user", "content": "x"}
    ]


def test_summarizer_specs() -> None:
    assert make_summarizer(None) is None
    extractive = ExtractiveSummarizer()
    assert make_summarizer(extractive) is extractive
    wrapped = make_summarizer(ScriptedChatModel(["a summary"]))
    assert isinstance(wrapped, LLMSummarizer)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        make_summarizer("openai:gpt-4o-mini")  # no key in the test environment
    assert isinstance(make_compressor(WINDOW).token_counter, ExactCounter)


def test_the_base_install_imports_no_framework() -> None:
    """``pip install palimpsest`` without extras: nothing imports a framework."""
    code = (
        "import sys, palimpsest, palimpsest.integrations, palimpsest.integrations.keeper\n"
        "loaded = {n.split('.')[0] for n in sys.modules}\n"
        "print(sorted(loaded & {'langchain', 'langgraph', 'pydantic_ai', 'agents'}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", code],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_history_holding_our_compacted_list_passes_as_it_is(turns: list[Turn]) -> None:
    keeper = _keeper()
    history: list[Dict] = [{"role": "system", "content": system_prompt()}]
    for turn in turns:
        history.append({"role": "user", "content": turn.user})
        view = keeper.view(history)
        if view.compacted:
            history = view.messages
            again = keeper.view(history)
            assert not again.changed and again.messages == history
            return
        history.append({"role": "assistant", "content": turn.reply})
    raise AssertionError("the conversation never compacted")


def test_a_chat_model_writes_the_summary(turns: list[Turn]) -> None:
    """``summarizer=`` a ChatModel: it is asked, and its answer is checked as our own
    agent's would be (this scripted one is too thin, so the checked fallback is used)."""
    model = ScriptedChatModel(["## Goal\nSolve the challenge."] * 8)
    keeper = ConversationKeeper(make_compressor(WINDOW, summarizer=model), _copies, _copies)
    history: list[Dict] = [{"role": "system", "content": system_prompt()}]
    for turn in turns:
        history.append({"role": "user", "content": turn.user})
        if keeper.view(history).compacted:
            break
        history.append({"role": "assistant", "content": turn.reply})
    assert model.calls, "the summary model was never asked"
    assert keeper.compressor.last_summary_check == "rejected"
    assert keeper.compressor.last_stats.fallback_used


def _words(count: int, seed: int) -> str:
    vocabulary = ("parser", "value", "token", "branch", "offset", "column", "handler", "retry")
    return " ".join(f"{vocabulary[(i * 7 + seed) % 8]}{i % 13}" for i in range(count))


def test_an_observation_handed_back_as_the_user_turn_reaches_the_model() -> None:
    """A LangGraph run of a text-action agent: each user turn is the agent's observation
    (SWE-agent's ``(Open file: …)``/``bash-$`` envelope), and the model answered the newest
    one with a native call. A long summary made the fit step shrink the tail, and it took
    that observation for droppable (it is no "request"): the model saw the summary and the
    last tool result, not the turn it was answering."""
    envelope = "\n(Open file: /testbed/src/app.py)\n(Current directory: /testbed)\nbash-$"
    history: list[Dict] = [
        {"role": "user", "content": "Fix the date parser in app.py so it takes ISO dates."},
        {"role": "assistant", "content": "Let me look.\n```\nopen app.py\n```"},
    ]
    for i in range(8):
        history.append({"role": "user", "content": f"output {i} {_words(700, i)}{envelope}"})
        history.append({"role": "assistant", "content": f"step {i}\n```\nls\n```"})
    newest = "curl: (7) Failed to connect to web.chal.example port 8000" + envelope
    call = {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}
    history += [
        {"role": "user", "content": newest},
        {"role": "assistant", "content": "again", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": _words(1_500, 9)},
    ]
    summary = StubSummarizer("## Active Task\nFix the parser.\n\n" + _words(3_300, 3))
    keeper = ConversationKeeper(make_compressor(WINDOW, summary), _copies, _copies)
    view = keeper.view(history)
    assert view.compacted and keeper.compressor.last_stats.fit_clipped_messages
    validate_transcript(list(view.messages), strict=True)
    assert [m for m in view.messages if m["role"] == "user"][-1]["content"] == newest
    assert view.messages[-1]["tool_call_id"] == "c1"
