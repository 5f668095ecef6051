"""The removal-only repair: valid output, never more tokens than the input."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from compaction_helpers import asst, call, tool, user
from palimpsest.compaction.repair_lean import lean_repair
from palimpsest.messages import validate_transcript
from palimpsest.tokens import ExactCounter

EXACT = ExactCounter()


def test_lean_repair_removes_instead_of_adding() -> None:
    msgs = [
        user("go"),
        asst("trying", [{"type": "function", "function": {"name": "ls"}}, call("ok")]),
        tool("ok", "fine"),
        tool("ghost", "stray"),
        {"role": "function", "name": "x", "content": "legacy"},
        asst("done"),
    ]
    out = lean_repair(msgs)
    validate_transcript(out, strict=True)
    assert [c["id"] for c in out[1]["tool_calls"]] == ["ok"]
    assert EXACT.count_messages(out) <= EXACT.count_messages(msgs)


_IDS = st.sampled_from(["a", "b", "c"])
_MESSAGE = st.one_of(
    st.builds(user, st.text(max_size=12)),
    st.builds(asst, st.one_of(st.none(), st.text(max_size=12))),
    st.builds(lambda ids: asst(None, [call(i) for i in ids]), st.lists(_IDS, max_size=3)),
    st.builds(tool, _IDS, st.text(max_size=12)),
    st.builds(lambda text: {"role": "function", "name": "f", "content": text}, st.text(max_size=8)),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_MESSAGE, max_size=10))
def test_lean_repair_output_is_valid_and_never_larger(msgs: list[dict[str, Any]]) -> None:
    """Whatever the pairing mess, removal alone yields a valid list that counts no more."""
    before = copy.deepcopy(msgs)
    out = lean_repair(msgs)
    assert msgs == before  # the input is not modified
    roles = [m["role"] for m in out]
    assert "function" not in roles
    open_ids: set[str] = set()
    for message in out:
        if message["role"] == "assistant":
            open_ids = {c["id"] for c in message.get("tool_calls") or []}
        elif message["role"] == "tool":
            assert message["tool_call_id"] in open_ids  # every result answers a call above it
    assert EXACT.count_messages(out) <= EXACT.count_messages(msgs)
