"""Builders shared by the agent tests: messages, scripted replies, an agent on real files.

Only the model is scripted (``ScriptedChatModel``); stores, memory files and compressors
are the real ones, on files under ``tmp_path``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from palimpsest import ScriptedChatModel
from palimpsest.agent.loop import Agent
from palimpsest.compaction.compressor import ContextCompressor
from palimpsest.config import CompressionSettings, Settings
from palimpsest.memory.manager import MemoryManager
from palimpsest.memory.providers import MemoryProvider
from palimpsest.memory.store import MemoryStore
from palimpsest.providers.base import Completion
from palimpsest.storage.sessions import SessionStore
from palimpsest.usage import CanonicalUsage

ROTATION = Settings(compression=CompressionSettings(in_place=False))
"""Settings for a test about rotation (a continuation session per compaction); the default
compacts in place (compression.in_place)."""


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def asst(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def history(pairs: int, chars: int = 400, start: int = 0) -> list[dict[str, Any]]:
    """``2 * pairs`` alternating user/assistant messages of about ``chars`` characters."""
    out: list[dict[str, Any]] = []
    for i in range(start, start + pairs):
        filler = f" detail {i} about the module parser_{i}.py and its tests." * (chars // 50 + 1)
        out.append(user(f"Request {i}: please look at parser_{i}.py.{filler}"[:chars]))
        out.append(asst(f"Answer {i}: I looked at parser_{i}.py.{filler}"[:chars]))
    return out


def call(name: str, arguments: Mapping[str, Any] | str, cid: str = "c1") -> dict[str, Any]:
    args = arguments if isinstance(arguments, str) else json.dumps(dict(arguments))
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


def calls(*items: dict[str, Any], text: str | None = None, usage: CanonicalUsage | None = None):
    """A completion asking for the given tool calls."""
    return Completion(
        content=text,
        tool_calls=list(items),
        usage=usage or CanonicalUsage(),
        finish_reason="tool_calls",
    )


def answer(text: str, prompt: int | None = None, output: int = 10) -> Completion:
    """A final answer; with ``prompt`` it carries real usage."""
    usage = CanonicalUsage()
    if prompt is not None:
        usage = CanonicalUsage(input_tokens=prompt, output_tokens=output, raw_usage={"x": 1})
    return Completion(content=text, usage=usage, finish_reason="stop")


def compressor(
    context_length: int = 8_000,
    *,
    threshold: float = 0.5,
    protect_first_n: int = 3,
    protect_last_n: int = 4,
    **kwargs: Any,
) -> ContextCompressor:
    return ContextCompressor(
        context_length,
        threshold_percent=threshold,
        protect_first_n=protect_first_n,
        protect_last_n=protect_last_n,
        quiet_mode=True,
        **kwargs,
    )


class RecordingProvider(MemoryProvider):
    """A real external memory provider that remembers the hooks it received."""

    name = "recording"

    def __init__(self, recall: str = "") -> None:
        self.recall = recall
        self.switches: list[tuple[str, dict[str, Any]]] = []
        self.pre_compress: list[int] = []
        self.prefetched: list[str] = []

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        return None

    def system_prompt_block(self) -> str:
        return ""

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        self.prefetched.append(query)
        return self.recall

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return []

    def handle_tool_call(self, name: str, args: Mapping[str, Any], **kwargs: Any) -> str:
        return "{}"

    def on_session_switch(self, new_session_id: str, **kwargs: Any) -> None:
        self.switches.append((new_session_id, kwargs))

    def on_pre_compress(self, messages: Sequence[Mapping[str, Any]]) -> str:
        self.pre_compress.append(len(messages))
        return ""


def memory_manager(home: Path, provider: MemoryProvider | None = None) -> MemoryManager:
    manager = MemoryManager(MemoryStore(home), home=home)
    if provider is not None:
        assert manager.add_provider(provider)
    return manager


def make_agent(
    tmp_path: Path,
    replies: Sequence[Any] = (),
    *,
    messages: Sequence[dict[str, Any]] = (),
    store: SessionStore | bool | None = True,
    **kwargs: Any,
) -> Agent:
    """An agent on a real store file; ``messages`` are seeded as an existing session."""
    model = kwargs.pop("model", None) or ScriptedChatModel(list(replies))
    if store is True:
        store = SessionStore(tmp_path / "state.db")
    elif store is False:
        store = None
    kwargs.setdefault("context_length", 100_000)
    session_id = kwargs.pop("session_id", None)
    if messages and isinstance(store, SessionStore):
        session_id = store.create_session(source="cli", model="scripted")
        store.append_messages(session_id, messages)
    return Agent(model, store=store, session_id=session_id, **kwargs)


def stored(agent: Agent) -> list[dict[str, Any]]:
    assert agent.store is not None and agent.session_id is not None
    return agent.store.get_messages(agent.session_id)


def valid_tool_pairs(messages: Sequence[Mapping[str, Any]]) -> bool:
    """Every tool call has exactly one result and every result has its call."""
    wanted: list[str] = []
    for m in messages:
        for c in m.get("tool_calls") or []:
            wanted.append(c["id"])
    results = [m["tool_call_id"] for m in messages if m.get("role") == "tool"]
    return sorted(wanted) == sorted(results)


NATIVE_TRANSCRIPT = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "List the files"},
    {
        "role": "assistant",
        "content": "Looking.",
        "tool_calls": [call("shell", {"cmd": "ls"}, "c1")],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "a.py\nb.py"},
    {"role": "assistant", "content": "Two files."},
    {"role": "user", "content": "Thanks"},
    {"role": "assistant", "content": "You're welcome."},
]
"""A small native-tool-call transcript: two user turns, one tool round."""
