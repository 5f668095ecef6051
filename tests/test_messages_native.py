"""Opaque provider items on assistant messages: finding the native compaction, keeping them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from palimpsest.messages import dump_transcript, for_provider
from palimpsest.messages.native import (
    ANTHROPIC_BLOCKS_KEY,
    RESPONSES_ITEMS_KEY,
    for_request,
    latest_native_compaction,
    live_window,
    native_compaction_of,
)
from palimpsest.storage.sessions import SessionStore

OPENAI_ITEM = {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAA-state"}
ANTHROPIC_BLOCK = {"type": "compaction", "content": "Summary.", "signature": "sig"}


def responses_carrier(text: str = "Continuing.") -> dict[str, Any]:
    reasoning = {"type": "reasoning", "id": "rs_1", "encrypted_content": "r"}
    return {"role": "assistant", "content": text, RESPONSES_ITEMS_KEY: [reasoning, OPENAI_ITEM]}


def anthropic_carrier() -> dict[str, Any]:
    return {"role": "assistant", "content": "Summary.", ANTHROPIC_BLOCKS_KEY: [ANTHROPIC_BLOCK]}


def test_each_route_is_recognised_and_other_items_are_not() -> None:
    assert native_compaction_of(responses_carrier()) == ("openai-responses", OPENAI_ITEM)
    assert native_compaction_of(anthropic_carrier()) == ("anthropic", ANTHROPIC_BLOCK)
    reasoning_only = {
        "role": "assistant",
        "content": "x",
        RESPONSES_ITEMS_KEY: [{"type": "reasoning", "encrypted_content": "r"}],
    }
    assert native_compaction_of(reasoning_only) is None
    assert native_compaction_of({**anthropic_carrier(), "role": "user"}) is None


def test_a_failed_anthropic_compaction_is_not_a_compaction() -> None:
    failed = {**ANTHROPIC_BLOCK, "content": None}
    message = {"role": "assistant", "content": "", ANTHROPIC_BLOCKS_KEY: [failed]}
    assert native_compaction_of(message) is None


def test_live_window_starts_at_the_newest_compaction() -> None:
    messages = [
        {"role": "user", "content": "a"},
        responses_carrier("first"),
        {"role": "user", "content": "b"},
        anthropic_carrier(),
        {"role": "user", "content": "c"},
    ]
    assert latest_native_compaction(messages) == 3
    assert live_window(messages) == messages[3:]
    plain = [{"role": "user", "content": "a"}]
    assert latest_native_compaction(plain) is None and live_window(plain) == plain


def test_for_request_keeps_only_the_carried_internal_keys() -> None:
    message = {**responses_carrier(), "_agent_ledger": True, "_compressed_summary": "s"}
    sent = for_request([message])[0]
    assert RESPONSES_ITEMS_KEY in sent and "_agent_ledger" not in sent
    assert "_compressed_summary" not in sent
    assert for_provider([message])[0] == {"role": "assistant", "content": "Continuing."}


@given(st.lists(st.sampled_from(["user", "carrier", "assistant"]), max_size=12))
def test_live_window_is_a_suffix_that_starts_with_a_carrier_or_is_everything(
    kinds: list[str],
) -> None:
    messages = [responses_carrier() if k == "carrier" else {"role": k, "content": k} for k in kinds]
    live = live_window(messages)
    assert messages[len(messages) - len(live) :] == live
    if "carrier" in kinds:
        assert native_compaction_of(live[0]) is not None
        assert all(native_compaction_of(m) is None for m in live[1:])
    else:
        assert live == messages


def test_carried_items_survive_the_store_export_and_import(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "a.db")
    session = store.create_session(source="cli", model="m")
    messages = [
        {"role": "user", "content": "The refunds ledger keeps cents."},
        anthropic_carrier(),
        responses_carrier(),
        {"role": "user", "content": "next"},
    ]
    store.append_messages(session, messages)
    assert store.get_messages(session) == messages
    exported = tmp_path / "session.json"
    exported.write_text(dump_transcript(store.export_session(session)), encoding="utf-8")
    other = SessionStore(tmp_path / "b.db")
    imported = other.import_transcript(exported)
    assert other.get_messages(imported) == messages
