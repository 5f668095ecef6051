"""A memory write that holds a secret is refused, whatever its kind (issue 12, item 3).

Memory goes into the system prompt of every later session, so one stored key leaks into
all of them. Issue 12 measured ``memory add`` accepting 10 of 35 kinds. Here every context
of every kind in tests/data/secrets/secrets.jsonl (88 kinds, 264 contexts) is offered to
``MemoryStore.add`` / ``replace`` / ``apply``, to the model-facing ``memory`` tool, and to
``palimpsest memory add`` run as a real process: each is refused with the ``secret``
error, the file is unchanged, and the error never quotes the secret.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cli_inproc import invoke_cli
from palimpsest.errors import MemoryThreatError
from palimpsest.memory.store import MemoryStore
from palimpsest.memory.tool import MemoryTool
from test_safety_redact import BENIGN_CORPUS, CORPUS

CONTEXTS = [(row["kind"], row["secret"], c) for row in CORPUS for c in row["contexts"]]


@pytest.fixture
def store(isolated_home: Path) -> MemoryStore:
    s = MemoryStore(memory_char_limit=20_000, user_char_limit=20_000)
    s.load_from_disk()
    s.add("memory", "deploys go through the staging pipeline first")
    return s


@pytest.mark.parametrize("row", CORPUS, ids=[row["kind"] for row in CORPUS])
def test_add_and_replace_refuse_every_context(store: MemoryStore, row: dict[str, Any]) -> None:
    path = store.path("memory")
    before = path.read_bytes()
    for context in row["contexts"]:
        writes: list[tuple[Callable[..., object], tuple[Any, ...]]] = [
            (store.add, ("memory", f"note: {context}")),
            (store.replace, ("memory", "staging pipeline", f"deploy with {context}")),
            (store.apply, ("memory", [{"action": "add", "content": context}])),
            (store.add, ("user", context)),
        ]
        for write, args in writes:
            with pytest.raises(MemoryThreatError) as info:
                write(*args)
            assert info.value.category == "secret", context
            assert "secret value" in str(info.value)
            assert row["secret"] not in str(info.value)
    assert path.read_bytes() == before
    assert not store.path("user").exists()


def test_benign_notes_are_stored(store: MemoryStore) -> None:
    """The other side: the benign corpus is never refused as a secret."""
    refused = []
    anchor = store.entries("memory")
    for line in BENIGN_CORPUS:
        try:
            store.add("memory", line)
        except MemoryThreatError as exc:
            if exc.category == "secret":
                refused.append(line)
            continue
        assert store.entries("memory") == [*anchor, line.strip()]  # it landed
        # One note at a time: every write re-checks each entry in the file, so 178 notes
        # kept together made this test quadratic (15,000 threat scans; now about 700).
        store.remove("memory", line)
    assert refused == []


def test_secret_is_named_before_the_threat_scan(store: MemoryStore) -> None:
    """A secret inside a note the scanner also dislikes is reported as the secret."""
    row = next(r for r in CORPUS if r["kind"] == "private-key-openssh")
    content = row["contexts"][1]  # "$ cat ~/.ssh/id_ed25519" then the key
    with pytest.raises(MemoryThreatError) as info:
        store.add("memory", content)
    assert info.value.category == "secret"


def test_memory_tool_refuses_every_kind(store: MemoryStore) -> None:
    tool = MemoryTool(store)
    answers = {
        kind: json.loads(tool({"target": "memory", "action": "add", "content": context}))
        for kind, _, context in CONTEXTS[::3]  # the first context of each kind
    }
    assert len(answers) == len(CORPUS)
    for kind, answer in answers.items():
        assert answer["success"] is False, kind
        assert answer["threat"] == "secret_value", kind
        assert answer["error"].startswith("Blocked: content contains a secret value"), kind
    text = json.dumps(answers)
    assert not any(secret in text for _, secret, _ in CONTEXTS)
    assert store.path("memory").read_text(encoding="utf-8") == (
        "deploys go through the staging pipeline first"
    )


def test_cli_memory_add_refuses_every_kind(isolated_home: Path) -> None:
    """``palimpsest memory add`` as a user runs it: one line, exit 2, nothing written.

    Every kind issue 12 found accepted, and two of the general rule, go through the console
    script's ``main`` in this process; the two of the general rule also in a real process
    (a process costs a second or two; the store tests above cover every context)."""
    env = {**os.environ, "PALIMPSEST_HOME": str(isolated_home)}
    src = str(Path(__file__).resolve().parents[1] / "src")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    sample = [r for r in CORPUS if r["group"] == "vendor"]
    general = [r for r in CORPUS if r["kind"] in ("weak-key-env", "prose-for")]
    runs = [(row, False) for row in sample + general] + [(row, True) for row in general]
    for row, real_process in runs:
        content = row["contexts"][-1]
        if real_process:
            done = subprocess.run(
                [sys.executable, "-m", "palimpsest.cli", "memory", "add", "--", content],
                capture_output=True,
                text=True,
                env=env,
                timeout=120,
                check=False,
            )
        else:
            done = invoke_cli("memory", "add", "--", content)
        assert done.returncode == 2, (row["kind"], done.stdout, done.stderr)
        assert "secret value" in done.stderr, row["kind"]
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert row["secret"] not in done.stdout + done.stderr
    assert not (isolated_home / "memories" / "MEMORY.md").exists()
