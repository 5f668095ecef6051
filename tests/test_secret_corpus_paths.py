"""The whole secret corpus through every path that outlives a turn (issues 12 and 20).

tests/data/secrets/secrets.jsonl holds 88 kinds, each in 3 contexts (env lines, JSON,
headers, URLs, prose; since issue 20 also values repeated after their first occurrence,
chained keywords, next-line and YAML block values, base64-wrapped and line-wrapped keys).
Every context is planted and then read back through each path a model or a log reader
sees: the handoff summary (extractive, and a careless model that copies its input), search
previews (``search_messages`` snippets and the ``session_search`` tool), the CLI (``sessions
search`` as a table and ``--json``, ``sessions show --redact`` and ``--json``, ``sessions
export --redact``), a large tool output as the model receives it and as the output store
keeps it, every log record palimpsest emitted meanwhile, and the memory file (every write
is refused). A context "survives" when 8 consecutive characters of its secret show. The
benign texts (benign.txt and benign_issue20.jsonl) go through the same paths and must come
back without a single ``[REDACTED]``.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import pytest
import typer

from cli_inproc import invoke_command
from palimpsest.cli import sessions_search  # noqa: F401  (registers `search`)
from palimpsest.cli.sessions import console, sessions_app
from palimpsest.compaction.compressor import ContextCompressor
from palimpsest.errors import MemoryThreatError
from palimpsest.memory.store import MemoryStore, refuse_secret
from palimpsest.messages.markers import is_compaction_summary_message
from palimpsest.outputs.budget import BudgetConfig
from palimpsest.outputs.guard import OutputGuard
from palimpsest.outputs.preview import extract_persisted_path
from palimpsest.outputs.store import OutputStore
from palimpsest.safety.redact import REDACTED
from palimpsest.storage.search import SessionSearch
from palimpsest.storage.sessions import SessionStore
from test_compaction_secrets import VerbatimModel
from test_safety_redact import BENIGN_CORPUS

CORPUS = Path(__file__).parent / "data" / "secrets" / "secrets.jsonl"
ROWS: list[dict[str, Any]] = [json.loads(line) for line in CORPUS.read_text().splitlines()]
BENIGN: list[str] = BENIGN_CORPUS
CONTEXTS: list[tuple[str, str, str]] = [
    (row["kind"], row["secret"], context) for row in ROWS for context in row["contexts"]
]
WINDOW = 8


def _windows(secret: str) -> set[str]:
    """The secret's 8-character windows, minus any a benign text also holds (a JWT's
    standard ``eyJhbGciOiJIUzI1NiJ9`` header is in a benign note, and is no leak there)."""
    pieces = {secret[i : i + WINDOW] for i in range(max(1, len(secret) - WINDOW + 1))}
    return {p for p in pieces if not any(p in text for text in BENIGN)}


WINDOWS = {kind: _windows(secret) for kind, secret, _ in CONTEXTS}


def survivors(text: str) -> list[str]:
    """The kinds of which ``text`` shows ``WINDOW`` consecutive characters of the secret."""
    return sorted(kind for kind, pieces in WINDOWS.items() if any(p in text for p in pieces))


@pytest.fixture(autouse=True)
def every_log_record(caplog: pytest.LogCaptureFixture) -> Any:
    """Each test also checks that no log line palimpsest wrote carries a secret."""
    caplog.set_level(logging.DEBUG, logger="palimpsest")
    yield
    assert survivors("\n".join(r.getMessage() for r in caplog.records)) == []


def test_the_corpus_is_at_least_70_kinds_in_3_contexts() -> None:
    assert len({kind for kind, _, _ in CONTEXTS}) >= 70
    assert all(len(row["contexts"]) >= 3 for row in ROWS)
    # a key wrapped over two lines is whole once the line break is taken out
    assert all(secret in context.replace("\n", "") for _, secret, context in CONTEXTS)


def _transcript() -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "set up the deployment"},
        {"role": "assistant", "content": "ok"},
    ]
    for i, (_, secret, context) in enumerate(CONTEXTS):
        call = {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": "terminal", "arguments": json.dumps({"command": context})},
        }
        # a tool that is not a shell: the summary renders it as CALL name(k=v, ...)
        http = {
            "id": f"h{i}",
            "type": "function",
            "function": {
                "name": "http_request",
                "arguments": json.dumps({"user": "admin", "password": secret, "note": context}),
            },
        }
        messages += [
            {"role": "user", "content": f"note {i}: {context}"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": f"{context}\n" * 2},
            {"role": "assistant", "content": None, "tool_calls": [http]},
            {"role": "tool", "tool_call_id": f"h{i}", "content": "200 OK"},
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


# -- the CLI's read paths, one session per kind -------------------------------------------


def _kind_session(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The kind's three contexts as a user turn, a tool call, a tool output and a reply."""
    first, second, third = row["contexts"][:3]
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "http_request", "arguments": json.dumps({"body": second})},
    }
    return [
        {"role": "user", "content": f"keep this: {first}"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "name": "http_request", "content": third},
        {"role": "assistant", "content": f"Stored. {second} Anything else?"},
    ]


# Values typed once under a name, then shown bare in later messages of the same session.
CARRIED = [
    (
        "carried-db",
        "Kq7vN2pLx9Rw",
        ["DB_PASSWORD=Kq7vN2pLx9Rw", "psql accepted it: Kq7vN2pLx9Rw", "retrying Kq7vN2pLx9Rw"],
    ),
    (
        "carried-token",
        "f3Hj9QmZ2xWc8LpR4tYv",
        ['{"api_token": "f3Hj9QmZ2xWc8LpR4tYv"}', "curl ... f3Hj9QmZ2xWc8LpR4tYv", "ok"],
    ),
]


def _plant_home(home: Path) -> None:
    home.mkdir(parents=True)
    with SessionStore(home / "state.db") as store:
        for index, row in enumerate(ROWS):
            sid = f"k{index:03d}"
            store.create_session(sid, source="cli", title=row["kind"])
            store.append_messages(sid, _kind_session(row))
        for index, text in enumerate(BENIGN):
            sid = f"b{index:03d}"
            store.create_session(sid, source="cli", title=f"benign {index}")
            store.append_messages(
                sid,
                [
                    {"role": "user", "content": f"benignnote {text}"},
                    {"role": "assistant", "content": f"Noted: {text}"},
                ],
            )
        for kind, _, texts in CARRIED:
            store.create_session(kind, source="cli", title=kind)
            store.append_messages(
                kind,
                [
                    {"role": "user" if i % 2 == 0 else "tool", "content": t}
                    for i, t in enumerate(texts)
                ],
            )


@pytest.fixture(scope="module")
def planted_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("corpus") / "home"
    _plant_home(home)
    return home


@pytest.fixture
def home(planted_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PALIMPSEST_HOME", str(planted_home))
    monkeypatch.setenv("COLUMNS", "5000")  # no table cell wraps a secret out of sight
    # a console built while another test had COLUMNS set keeps that width (rich reads it
    # once, and the CLI's modules are imported lazily, in whichever test runs first)
    monkeypatch.setattr(console, "_width", 5000)
    assert console.width == 5000
    return planted_home


SESSIONS = typer.main.get_command(sessions_app)
"""``sessions`` as click runs it, built once (``CliRunner().invoke(sessions_app)`` rebuilds the
whole group on every call)."""


def cli(*args: str) -> str:
    result = invoke_command(SESSIONS, *args, prog_name="sessions")
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout + result.stderr


def _carried_survivors(text: str) -> list[str]:
    return [kind for kind, secret, _ in CARRIED if secret[:8] in text or secret[-8:] in text]


def test_cli_search_shows_no_context(home: Path) -> None:
    prefixes = " OR ".join(f'"{row["secret"][:6]}"*' for row in ROWS)
    outputs = {
        "json": cli("search", "--json", "--limit", "1000", "--", prefixes),
        "table": cli("search", "--limit", "1000", "--", prefixes),
    }
    reached = {h["session_id"] for h in json.loads(outputs["json"])}
    for row in ROWS:  # and by the kind's own words, as someone looking for it would
        found = re.findall(r"[A-Za-z]{4,}", row["contexts"][0])
        words = " OR ".join([w for w in found if w not in row["secret"]][:4])
        if words:
            outputs[f"{row['kind']} json"] = cli("search", "--json", "--any", "--", words)
            outputs[f"{row['kind']} table"] = cli("search", "--any", "--", words)
            reached |= {h["session_id"] for h in json.loads(outputs[f"{row['kind']} json"])}
    leaked = {name: survivors(text) for name, text in outputs.items()}
    assert {name: found for name, found in leaked.items() if found} == {}
    assert len([s for s in reached if s.startswith("k")]) >= 70  # the searches reached them


def test_cli_show_and_export_redact_every_context(home: Path) -> None:
    leaked: dict[str, list[str]] = {}
    for index, row in enumerate(ROWS):
        sid = f"k{index:03d}"
        outputs = {
            "show --redact": cli("show", sid, "--redact", "--width", "100000"),
            "show --redact --json": cli("show", sid, "--redact", "--json"),
            "export --redact": cli("export", sid, "--redact"),
        }
        for name, text in outputs.items():
            if found := survivors(text):
                leaked[f"{row['kind']} {name}"] = found
        assert REDACTED in outputs["export --redact"]
    assert leaked == {}


def test_a_value_one_message_reveals_is_redacted_in_the_others(home: Path) -> None:
    """Issue 20: the value typed under a name once shows bare nowhere in its session."""
    outputs = {"search json": cli("search", "--json", "psql OR curl OR retrying OR ok")}
    outputs["search table"] = cli("search", "psql OR curl OR retrying")
    for kind, _, _ in CARRIED:
        outputs[f"{kind} show"] = cli("show", kind, "--redact", "--width", "100000")
        outputs[f"{kind} export"] = cli("export", kind, "--redact")
    hits = json.loads(outputs["search json"])
    assert {h["session_id"] for h in hits} >= {kind for kind, _, _ in CARRIED}
    with SessionStore(home / "state.db") as store:
        library = store.search_messages("psql OR curl OR retrying", match="any")
        outputs["library"] = json.dumps(library)
        tool = SessionSearch(store, model=None)
        outputs["tool"] = tool.run("psql OR curl OR retrying", limit=5)
        outputs["tool recent"] = tool.run("", limit=5)
    assert {
        name: found for name, text in outputs.items() if (found := _carried_survivors(text))
    } == {}
    assert all(REDACTED in outputs[f"{kind} export"] for kind, _, _ in CARRIED)


def test_benign_text_comes_back_unredacted_on_every_path(home: Path) -> None:
    outputs = {
        "search json": cli("search", "--json", "--limit", "1000", "benignnote"),
        "search table": cli("search", "--limit", "1000", "benignnote"),
    }
    assert len(json.loads(outputs["search json"])) == len(BENIGN)
    for index in range(len(BENIGN)):
        sid = f"b{index:03d}"
        outputs[f"{sid} show"] = cli("show", sid, "--redact", "--width", "100000")
        outputs[f"{sid} export"] = cli("export", sid, "--redact")
    with SessionStore(home / "state.db") as store:
        outputs["tool"] = SessionSearch(store, model=None).run("benignnote", limit=5)
    assert [name for name, text in outputs.items() if REDACTED in text] == []
    for text in BENIGN:
        refuse_secret(f"deploy note: {text}")  # a benign note is not refused as a secret


def test_the_summary_of_benign_work_redacts_nothing() -> None:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    for i, text in enumerate(BENIGN):
        call = {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": "http_request", "arguments": json.dumps({"note": text})},
        }
        messages += [
            {"role": "user", "content": text},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": text},
        ]
    messages += [{"role": "user", "content": "wrap up"}, {"role": "assistant", "content": "ok"}]
    for summarizer in (None, VerbatimModel()):
        compacted = ContextCompressor(context_length=16_000, summarizer=summarizer).compress(
            messages, force=True
        )
        summary = [str(m["content"]) for m in compacted if is_compaction_summary_message(m)]
        assert len(summary) == 1 and REDACTED not in summary[0]
