"""Import and export of transcripts, and the duplicate check by content (transfer.py)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.errors import DuplicateTranscriptError
from palimpsest.storage.sessions import SessionStore
from palimpsest.storage.transfer import content_digest, find_import, import_stream

TRANSCRIPT = Path(__file__).parent / "data" / "transcripts" / "mini-swe-agent" / "local.traj.json"

messages = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant"]), "content": st.text(max_size=20)}
    ),
    max_size=5,
)


@given(messages)
def test_digest_ignores_key_order_and_not_content(batch: list[dict[str, str]]) -> None:
    reordered = [dict(reversed(list(m.items()))) for m in batch]
    assert content_digest(batch) == content_digest(reordered)
    changed = [*batch, {"role": "user", "content": "x"}]
    assert content_digest(changed) != content_digest(batch)


def test_reimport_is_refused_until_again(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "s.db") as store:
        first = store.import_transcript(TRANSCRIPT)
        with pytest.raises(DuplicateTranscriptError) as info:
            store.import_transcript(TRANSCRIPT, title="other")
        assert info.value.existing_id == first and str(TRANSCRIPT) in str(info.value)
        stream = io.StringIO(json.dumps(store.export_session(first)))
        with pytest.raises(DuplicateTranscriptError):
            import_stream(store, stream)
        assert store.session_count() == 1
        copy = store.import_transcript(TRANSCRIPT, again=True)
        assert copy != first and store.session_count() == 2
        with store.connection_for_reads() as con:
            assert find_import(con, info.value.digest) == first
        # Once the first copy is gone the record no longer points anywhere.
        store.delete_session(first)
        with store.connection_for_reads() as con:
            assert find_import(con, info.value.digest) is None
        third = store.import_transcript(TRANSCRIPT)
        assert third not in (first, copy)
