"""The whole secret corpus through every path that outlives a turn (issue 12, acceptance).

tests/data/secrets/secrets.jsonl holds 55 kinds, each in 3 contexts (env lines, JSON,
headers, URLs, prose). Every context is planted at once and then read back through each
path a model or a log reader sees: the handoff summary (extractive, and a careless model
that copies its input), search previews (``search_messages`` snippets and the
``session_search`` tool), a large tool output as the model receives it and as the output
store keeps it, every log record palimpsest emitted meanwhile, and the memory file (every
write is refused). A context "survives" when 8 consecutive characters of its secret show.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from palimpsest.compaction.compressor import ContextCompressor
from palimpsest.errors import MemoryThreatError
from palimpsest.memory.store import MemoryStore
from palimpsest.messages.markers import is_compaction_summary_message
from palimpsest.outputs.budget import BudgetConfig
from palimpsest.outputs.guard import OutputGuard
from palimpsest.outputs.preview import extract_persisted_path
from palimpsest.outputs.store import OutputStore
from palimpsest.storage.search import SessionSearch
from palimpsest.storage.sessions import SessionStore
from test_compaction_secrets import VerbatimModel

CORPUS = Path(__file__).parent / "data" / "secrets" / "secrets.jsonl"
ROWS: list[dict[str, Any]] = [json.loads(line) for line in CORPUS.read_text().splitlines()]
CONTEXTS: list[tuple[str, str, str]] = [
    (row["kind"], row["secret"], context) for row in ROWS for context in row["contexts"]
]
WINDOW = 8


def survivors(text: str) -> list[str]:
    """The kinds of which ``text`` shows ``WINDOW`` consecutive characters of the secret."""
    found = []
    for kind, secret, _ in CONTEXTS:
        pieces = (secret[i : i + WINDOW] for i in range(max(1, len(secret) - WINDOW + 1)))
        if any(piece in text for piece in pieces):
            found.append(kind)
    return sorted(set(found))


@pytest.fixture(autouse=True)
def every_log_record(caplog: pytest.LogCaptureFixture) -> Any:
    """Each test also checks that no log line palimpsest wrote carries a secret."""
    caplog.set_level(logging.DEBUG, logger="palimpsest")
    yield
    assert survivors("\n".join(r.getMessage() for r in caplog.records)) == []


def test_the_corpus_is_at_least_50_kinds_in_3_contexts() -> None:
    assert len({kind for kind, _, _ in CONTEXTS}) >= 50
    assert all(len(row["contexts"]) >= 3 for row in ROWS)
    assert all(secret in context for _, secret, context in CONTEXTS)


def _transcript() -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "set up the deployment"},
        {"role": "assistant", "content": "ok"},
    ]
    for i, (_, _, context) in enumerate(CONTEXTS):
        call = {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": "terminal", "arguments": json.dumps({"command": context})},
        }
        messages += [
            {"role": "user", "content": f"note {i}: {context}"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": f"{context}\n" * 2},
        ]
    messages += [
        {"role": "user", "content": "now wrap up"},
        {"role": "assistant", "content": "working on it"},
        {"role": "user", "content": "thanks, continue"},
    ]
    return messages


@pytest.mark.parametrize("summarizer", [None, VerbatimModel()], ids=["extractive", "verbatim"])
def test_no_context_survives_in_the_summary(summarizer: Any) -> None:
    compressor = ContextCompressor(context_length=16_000, summarizer=summarizer)
    compacted = compressor.compress(_transcript(), force=True)
    # The protected tail is the user's own recent turns, kept verbatim; the summary is new.
    summaries = [str(m["content"]) for m in compacted if is_compaction_summary_message(m)]
    assert len(summaries) == 1 and len(summaries[0]) > 1_000
    assert survivors(summaries[0]) == []


def test_no_context_survives_in_search_previews(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "state.db") as store:
        for i, (kind, _, context) in enumerate(CONTEXTS):
            sid = f"s{i:03d}"
            store.create_session(sid, source="cli", title=f"{kind} {i}")
            store.append_messages(
                sid,
                [
                    {"role": "user", "content": f"keep this: {context}"},
                    {"role": "assistant", "content": f"Stored. {context} Anything else?"},
                ],
            )
        tool = SessionSearch(store, model=None)
        shown: list[str] = []
        reached = set()
        for kind, secret, _ in CONTEXTS:
            for query in (secret[:6], secret[:6] + "*", kind):
                hits = store.search_messages(query, limit=5, match="any")
                shown += [str(hit.get("snippet", "")) for hit in hits]
                payload = tool.run(query, limit=5)
                shown.append(payload)
                if json.loads(payload)["results"]:
                    reached.add(kind)
    assert survivors("\n".join(shown)) == []
    assert len(reached) >= 50  # the searches did reach the planted rows


def test_no_context_survives_in_a_large_tool_output(tmp_path: Path) -> None:
    outputs = OutputStore(tmp_path / "outputs")
    budget = BudgetConfig(default_result_size=2_000, turn_budget=6_000, preview_size=1_500)
    guard = OutputGuard(outputs, budget, session_id="s1")
    text = "\n".join(f"line {i}: {context}" for i, (_, _, context) in enumerate(CONTEXTS))
    block = guard.admit(text, tool_name="run_tests", call_id="c1")
    assert survivors(block) == []
    path = extract_persisted_path(block)
    assert path is not None
    saved = outputs.resolve(path)
    assert saved is not None
    assert survivors(saved.path.read_text()) == []


def test_every_memory_write_of_a_context_is_refused(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path, memory_char_limit=200_000, user_char_limit=200_000)
    refused = 0
    for _, _, context in CONTEXTS:
        with pytest.raises(MemoryThreatError):
            store.add("memory", f"deploy note: {context}")
        refused += 1
    assert refused == len(CONTEXTS)
    on_disk = "\n".join(p.read_text() for p in tmp_path.rglob("*") if p.is_file())
    assert survivors(on_disk) == []
