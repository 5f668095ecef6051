"""Compression of every real transcript in tests/data/transcripts (copied from shared/data).

With a window small enough to force compression, the output must validate and every file
that a tool call in the compacted span wrote or edited must be named in the summary.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from palimpsest.compaction.compressor import ContextCompressor
from palimpsest.messages import (
    call_name,
    load_transcript,
    parse_arguments,
    tool_calls_of,
    validate_transcript,
)
from palimpsest.tokens import estimate_messages_tokens_rough

DATA = Path(__file__).parent / "data" / "transcripts"
TRANSCRIPTS = sorted(
    p
    for p in DATA.rglob("*")
    if p.is_file()
    and p.suffix in (".traj", ".json", ".jsonl")
    and not {"fixtures", "dense"} & set(p.parts)
)

WRITE_TOOLS = {"write_file", "Write", "Edit", "MultiEdit", "create", "patch", "str_replace_editor"}
STATEFUL_EDIT_TOOLS = {"edit", "insert"}  # SWE-agent tools that edit the file opened last
PATH_KEYS = ("path", "file_path", "filename")


def written_paths(span: list[dict[str, Any]], before: list[dict[str, Any]]) -> set[str]:
    """Paths written or edited by tool calls in ``span``, computed from the calls alone."""
    current: str | None = None
    for message in before:  # the file SWE-agent has open when the span starts
        for call in tool_calls_of(message):
            args = parse_arguments(call)
            if call_name(call) in ("open", "create"):
                current = next((str(args[k]) for k in PATH_KEYS if args.get(k)), current)
    paths: set[str] = set()
    for message in span:
        for call in tool_calls_of(message):
            name, args = call_name(call), parse_arguments(call)
            explicit = next((str(args[k]) for k in PATH_KEYS if args.get(k)), None)
            if name in ("open", "create"):
                current = explicit or current
            if name == "str_replace_editor" and args.get("command") == "view":
                continue
            if name in WRITE_TOOLS and explicit:
                paths.add(explicit)
            elif name in STATEFUL_EDIT_TOOLS and current:
                paths.add(current)
    return paths


def test_every_sample_is_here() -> None:
    assert len(TRANSCRIPTS) == 12


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: p.name)
def test_forced_compression_of_real_transcript(path: Path) -> None:
    messages = load_transcript(path)
    tokens = estimate_messages_tokens_rough(messages)
    compressor = ContextCompressor(max(1_000, tokens // 2), quiet_mode=True)
    out = compressor.compress(messages, force=True)
    validate_transcript(out)
    stats = compressor.last_stats
    if len(messages) <= compressor.protect_first_n + 4:
        assert not stats.compressed
        return
    assert stats.compressed, stats.reason
    assert len(out) < len(messages)
    start, end = stats.head_messages, stats.head_messages + stats.middle_messages
    summary = next(m for m in out if m.get("_compressed_summary"))
    text = summary["content"] if isinstance(summary["content"], str) else str(summary["content"])
    for written in written_paths(messages[start:end], messages[:start]):
        assert written in text, f"{written} missing from the summary of {path.name}"


def test_the_check_is_not_vacuous() -> None:
    """At least the function-calling samples must have edited files in their middle span."""
    checked = 0
    for path in TRANSCRIPTS:
        messages = load_transcript(path)
        tokens = estimate_messages_tokens_rough(messages)
        compressor = ContextCompressor(max(1_000, tokens // 2), quiet_mode=True)
        compressor.compress(messages, force=True)
        stats = compressor.last_stats
        start, end = stats.head_messages, stats.head_messages + stats.middle_messages
        checked += len(written_paths(messages[start:end], messages[:start]))
    assert checked >= 4
