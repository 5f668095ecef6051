"""What ``sessions import`` lets into the store (storage/import_check.py): what compress accepts.

The invariant (issue 20): any imported transcript is either refused with a
PalimpsestError before anything is stored, or exports as a transcript that
``validate_transcript`` accepts. Strict import stores exactly what it was given; lenient
import repairs what the compressor repairs.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from palimpsest.errors import PalimpsestError, TranscriptError
from palimpsest.messages import transcript_problems, validate_transcript
from palimpsest.storage.import_check import MISSING_RESULT, checked_for_import
from palimpsest.storage.sessions import SessionStore
from palimpsest.storage.transfer import import_messages

IDS = ["call_a", "call_b", "", 7]

calls = st.lists(
    st.one_of(
        st.fixed_dictionaries(
            {"type": st.just("function")},
            optional={
                "id": st.sampled_from(IDS),
                "function": st.fixed_dictionaries(
                    {},
                    optional={
                        "name": st.sampled_from(["ls", "", 3]),
                        "arguments": st.one_of(
                            st.just('{"a": 1}'),
                            st.just("not json"),
                            st.just({"a": 1}),
                            st.none(),
                        ),
                    },
                ),
            },
        ),
        st.sampled_from(["call", 1, None, ["x"]]),
    ),
    max_size=3,
)

content = st.one_of(
    st.text(max_size=12),
    st.none(),
    st.integers(),
    st.dictionaries(st.sampled_from(["a", "type"]), st.text(max_size=4), max_size=2),
    st.lists(
        st.one_of(
            st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=6)}),
            st.text(max_size=4),
            st.integers(),
            st.fixed_dictionaries({"text": st.text(max_size=4)}),
        ),
        max_size=2,
    ),
)

message = st.one_of(
    st.fixed_dictionaries(
        {},
        optional={
            "role": st.sampled_from(
                ["system", "user", "assistant", "tool", "developer", "function", "robot", 5, None]
            ),
            "content": content,
            "tool_calls": st.one_of(st.none(), st.text(max_size=4), calls),
            "tool_call_id": st.sampled_from(IDS),
            "name": st.sampled_from(["ls", "f"]),
        },
    ),
    st.sampled_from(["just text", 3, None, ["a"]]),
)


@st.composite
def valid_transcripts(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Transcripts compress accepts: text messages, and calls each followed by its result."""
    out: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["system", "user", "assistant", "calls"]))
        if kind != "calls":
            parts = st.lists(
                st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=5)}),
                max_size=2,
            )
            out.append({"role": kind, "content": draw(st.one_of(st.text(max_size=10), parts))})
            continue
        ids = [f"c{len(out)}_{i}" for i in range(draw(st.integers(1, 2)))]
        arguments = st.sampled_from(["{}", '{"a": 1}', "raw text"])
        out.append(
            {
                "role": "assistant",
                "content": draw(st.one_of(st.none(), st.text(max_size=8))),
                "tool_calls": [
                    {
                        "id": cid,
                        "type": "function",
                        "function": {"name": "ls", "arguments": draw(arguments)},
                    }
                    for cid in ids
                ],
            }
        )
        out.extend(
            {"role": "tool", "tool_call_id": cid, "content": draw(st.text(max_size=8))}
            for cid in ids
        )
    return out


@st.composite
def damaged_transcripts(draw: st.DrawFn) -> list[Any]:
    """A valid transcript with one message dropped, or one field set to a wrong value."""
    batch: list[Any] = draw(valid_transcripts())
    if not batch:
        return batch
    index = draw(st.integers(0, len(batch) - 1))
    if draw(st.booleans()):
        del batch[index]  # may leave a result without its call, or a call without its result
        return batch
    changed = dict(batch[index])
    key = draw(st.sampled_from(["role", "content", "tool_calls", "tool_call_id"]))
    changed[key] = draw(st.sampled_from([5, None, {"a": 1}, "ls", [], ["x"], "robot"]))
    batch[index] = changed
    return batch


transcripts = st.one_of(valid_transcripts(), damaged_transcripts(), st.lists(message, max_size=6))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SessionStore]:
    with SessionStore(tmp_path_factory.mktemp("store") / "state.db") as opened:
        yield opened


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(batch=transcripts, lenient=st.booleans())
def test_an_import_is_refused_or_exports_as_a_valid_transcript(
    store: SessionStore, batch: list[Any], lenient: bool
) -> None:
    before = store.session_count()
    try:
        sid = import_messages(store, batch, again=True, lenient=lenient, origin="t.json")
    except PalimpsestError as exc:
        assert str(exc).startswith("t.json")
        assert store.session_count() == before  # nothing stored
        if not lenient:
            assert transcript_problems(batch)  # refused only what compress refuses
        return
    exported = store.export_session(sid)
    validate_transcript(exported)
    if not lenient:
        assert exported == batch  # strict import stores exactly what it was given


@settings(max_examples=200, deadline=None)
@given(batch=transcripts)
def test_strict_refuses_exactly_what_validate_transcript_refuses(batch: list[Any]) -> None:
    problems = transcript_problems(batch)
    if problems:
        with pytest.raises(TranscriptError) as caught:
            checked_for_import(batch, origin="x.json")
        assert caught.value.index == problems[0].index
    else:
        assert checked_for_import(batch) == batch


def test_the_three_shapes_of_issue_20_are_refused_with_the_index(store: SessionStore) -> None:
    cases = [
        ([{"role": "user", "content": "hi"}, {"role": 5, "content": "x"}], 1, "unknown role 5"),
        ([{"role": "user", "content": {"a": 1}}], 0, "'content' must be a string"),
        (
            [{"role": "user", "content": "q"}, {"role": "assistant", "tool_calls": "ls"}],
            1,
            "'tool_calls' must be a list",
        ),
    ]
    for batch, index, problem in cases:
        with pytest.raises(TranscriptError) as caught:
            import_messages(store, batch, origin="in.json")
        assert caught.value.index == index and problem in str(caught.value)
        assert str(caught.value).startswith(f"in.json: message {index}: ")


def test_lenient_repairs_what_compress_repairs_and_refuses_the_rest(store: SessionStore) -> None:
    batch = [
        {"role": "user", "content": {"a": 1}},
        {"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "ls"}}]},
    ]
    sid = import_messages(store, batch, lenient=True, again=True)
    exported = store.export_session(sid)
    validate_transcript(exported)
    assert exported[0] == {"role": "user", "content": '{"a": 1}'}
    call = exported[1]["tool_calls"][0]
    assert call["function"] == {"name": "ls", "arguments": "{}"} and call["id"]
    assert exported[2] == {"role": "tool", "tool_call_id": call["id"], "content": MISSING_RESULT}
    for bad, problem in (
        ([{"role": 5, "content": "x"}], "'role' must be a string, got int"),
        ([{"role": "assistant", "content": "x", "tool_calls": "ls"}], "'tool_calls' must be"),
    ):
        with pytest.raises(TranscriptError, match=problem):
            import_messages(store, bad, lenient=True, origin="x.json")


def test_a_valid_file_still_round_trips(tmp_path: Path) -> None:
    source = Path(__file__).parent / "data" / "transcripts" / "mini-swe-agent" / "local.traj.json"
    with SessionStore(tmp_path / "s.db") as opened:
        sid = opened.import_transcript(source)
        validate_transcript(opened.export_session(sid))
