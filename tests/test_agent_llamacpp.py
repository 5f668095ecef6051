"""Opt-in (``pytest -m llamacpp``): the Agent against a real model on llama.cpp's server.

The server runs Qwen2.5-Coder-0.5B-Instruct (../shared/LOCAL_MODEL.md) with ``n_ctx``
2048 on 127.0.0.1, while the agent is told the window is 4096: the conversation grows until
the server refuses a request for real (reactive recovery adopts the limit it states and
compacts), and the turn after that starts over the lowered threshold (preflight
compression). The store must hold the session chain and the conversation must go on after
every compaction.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from llamacpp_server import gguf_path, llama_server
from palimpsest import SessionStore, connect, load_transcript
from palimpsest.agent.events import CompactionEvent, TurnEnd, WarningEvent
from palimpsest.agent.loop import Agent
from palimpsest.memory.manager import MemoryManager
from palimpsest.memory.store import MemoryStore
from palimpsest.messages import content_text, validate_transcript

pytestmark = pytest.mark.llamacpp

DATA = Path(__file__).parent / "data" / "transcripts"
SERVER_CTX = 2_048
TOLD_CTX = 4_096


def _logs() -> list[str]:
    """Real tool observations (SWE-agent pydicom run) to paste as the user's questions."""
    messages = load_transcript(DATA / "swe-agent" / "pydicom-1458__gpt4_default.traj")
    outputs = [content_text(m.get("content")) for m in messages if m.get("role") == "user"]
    return [text[:700] for text in outputs[2:] if len(text) > 300]


def _stored_session(store: SessionStore, logs: list[str]) -> str:
    """A long session loaded from storage (AL-03's case): 30 messages of real output, about
    3,000 rough tokens, for a 2,048-token window."""
    sid = store.create_session(source="cli", title="earlier work")
    messages: list[dict[str, str]] = []
    for i in range(15):
        messages.append({"role": "user", "content": f"Look at this: {logs[i % len(logs)][:480]}"})
        messages.append({"role": "assistant", "content": f"Step {i}: noted. " + "All good. " * 8})
    store.append_messages(sid, messages)
    return sid


def test_agent_compacts_for_real_and_goes_on(tmp_path: Path) -> None:
    model_file = gguf_path()
    logs = _logs()
    assert len(logs) >= 8
    with llama_server(model_file, tmp_path / "server.log", ["--n_ctx", str(SERVER_CTX)]) as url:
        model = connect("openai-compatible:local", base_url=url, timeout=600)
        home = tmp_path / "home"
        store = SessionStore(tmp_path / "state.db")

        def agent_for(session: str | None, window: int) -> Agent:
            return Agent(
                model,
                store=store,
                memory=MemoryManager(MemoryStore(home), home=home),
                context_length=window,
                max_tokens=48,
                builtin_tools=False,  # their schemas alone would take most of a 2K window
                system_message="Answer in one short sentence.",
                session_id=session,
            )

        def run(agent: Agent, texts: list[str]) -> tuple[list[str], list[TurnEnd]]:
            paths: list[str] = []
            ends: list[TurnEnd] = []
            for text in texts:
                events = list(agent.run(text))
                done = [e for e in events if isinstance(e, CompactionEvent) and e.compacted]
                paths += [e.path for e in done]
                end = events[-1]
                assert isinstance(end, TurnEnd)
                ends.append(end)
                if done:  # the conversation went on after the compaction
                    assert end.completed and end.text, (end.error, paths)
                warnings = [e.message for e in events if isinstance(e, WarningEvent)]
                print(len(agent.messages), [e.path for e in done], end.completed, warnings)
            return paths, ends

        # 1. Told 4,096 while the server has 2,048: the server refuses for real, the agent
        #    adopts the limit it states, compacts and retries.
        agent = agent_for(None, TOLD_CTX)
        first = agent.session_id
        asks = [f"What does this output say, in one sentence?\n\n{log}" for log in logs * 2]
        paths, ends = run(agent, asks[:14])
        assert "reactive" in paths, paths
        assert agent.context_length == SERVER_CTX  # the limit the server stated
        assert ends[-1].completed and ends[-1].text
        chain = store.compression_chain(agent.session_id)
        assert chain[0] == first and len(chain) == len(paths) + 1
        for parent, child in itertools.pairwise(chain):
            row = store.get_session(child)
            assert row is not None and row["parent_session_id"] == parent
            validate_transcript(store.get_messages(child))
        agent.close()

        # 2. A long stored session resumed in the real window: preflight compacts it before
        #    the first call, and the conversation goes on.
        stored = _stored_session(store, logs)
        resumed = agent_for(stored, SERVER_CTX)
        paths, ends = run(resumed, ["Which step was the last one?"])
        assert paths and paths[0] == "preflight", paths
        assert ends[-1].completed and ends[-1].text
        assert store.get_session(stored)["end_reason"] == "compression"  # type: ignore[index]
        resumed.close()
        store.close()


def test_streamed_text_and_unknown_usage_from_the_real_server(tmp_path: Path) -> None:
    """llama.cpp's server streams the reply but sends no usage with a stream: the text comes
    in pieces, and the prompt figure is the estimate, marked as such, never a zero."""
    from palimpsest.agent.events import TextDelta, UsageEvent

    model_file = gguf_path()
    with llama_server(model_file, tmp_path / "server.log", ["--n_ctx", str(SERVER_CTX)]) as url:
        model = connect("openai-compatible:local", base_url=url, timeout=600)
        agent = Agent(
            model, builtin_tools=False, context_length=SERVER_CTX, max_tokens=32, stream=True
        )
        events = list(agent.run("Name three colours."))
        deltas = [e.text for e in events if isinstance(e, TextDelta)]
        usage = [e for e in events if isinstance(e, UsageEvent)]
        end = events[-1]
        assert isinstance(end, TurnEnd) and end.completed
        assert len(deltas) > 1 and "".join(deltas) == end.text
        assert usage and usage[0].estimated and usage[0].usage is None  # unknown, not zero
        assert usage[0].prompt_tokens is not None and usage[0].prompt_tokens > 0  # the estimate
        agent.close()
