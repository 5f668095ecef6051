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


def test_agent_compacts_for_real_and_goes_on(tmp_path: Path) -> None:
    model_file = gguf_path()
    logs = _logs()
    assert len(logs) >= 8
    with llama_server(model_file, tmp_path / "server.log", ["--n_ctx", str(SERVER_CTX)]) as url:
        model = connect("openai-compatible:local", base_url=url, timeout=600)
        home = tmp_path / "home"
        store = SessionStore(tmp_path / "state.db")
        agent = Agent(
            model,
            store=store,
            memory=MemoryManager(MemoryStore(home), home=home),
            context_length=TOLD_CTX,
            max_tokens=48,
            builtin_tools=False,  # their schemas alone would take most of a 2K window
            system_message="Answer in one short sentence.",
        )
        first = agent.session_id
        paths: list[str] = []
        turns: list[list[object]] = []
        for log in (logs * 2)[:16]:
            events = list(agent.run(f"What does this output say, in one sentence?\n\n{log}"))
            turns.append(events)
            paths += [e.path for e in events if isinstance(e, CompactionEvent) and e.compacted]
        warnings = [e.message for t in turns for e in t if isinstance(e, WarningEvent)]
        ends = [next(e for e in t if isinstance(e, TurnEnd)) for t in turns]
        print("compactions:", paths, "warnings:", warnings)
        print("turn ends:", [(e.completed, e.error) for e in ends])

        assert "reactive" in paths, (paths, warnings)
        assert "preflight" in paths, (paths, warnings)
        assert agent.context_length == SERVER_CTX  # the limit the server stated was adopted
        # The conversation went on after every compaction: each turn that compacted ended
        # with an answer, and so did the last turn.
        for events, end in zip(turns, ends, strict=True):
            if any(isinstance(e, CompactionEvent) and e.compacted for e in events):
                assert end.completed, end.error
        assert ends[-1].completed and ends[-1].text
        chain = store.compression_chain(agent.session_id)
        assert chain[0] == first and len(chain) == len(paths) + 1
        for parent, child in itertools.pairwise(chain):
            row = store.get_session(child)
            assert row is not None and row["parent_session_id"] == parent
            validate_transcript(store.get_messages(child))
        agent.close()
        store.close()
