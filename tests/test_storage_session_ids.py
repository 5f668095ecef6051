"""Session ids (SS-26), named the same way by both stores and the transcript import."""

from __future__ import annotations

import re
from datetime import datetime

from palimpsest.storage import sessions
from palimpsest.storage.session_ids import new_session_id


def test_ids_are_local_time_then_six_hex_digits_and_differ() -> None:
    before = datetime.now().replace(microsecond=0)
    ids = {new_session_id() for _ in range(50)}
    after = datetime.now()
    assert len(ids) > 45  # 24 random bits each
    for sid in ids:
        assert re.fullmatch(r"\d{8}_\d{6}_[0-9a-f]{6}", sid)
        stamp = datetime.strptime(sid[:15], "%Y%m%d_%H%M%S")
        assert before <= stamp <= after


def test_the_sqlite_store_module_still_offers_it() -> None:
    assert sessions.new_session_id is new_session_id
