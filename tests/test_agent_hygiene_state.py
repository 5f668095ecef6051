"""Hygiene's store-side state: the lineage record, recorded prompt tokens, the lease."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from palimpsest import SessionStore
from palimpsest.agent.hygiene_state import (
    LineageState,
    admission,
    admission_key,
    clear_prompt_tokens,
    next_sequence,
    read_lineage_state,
    read_prompt_tokens,
    record_prompt_tokens,
    write_lineage_state,
)
from palimpsest.agent.lock import take_compression_lock
from palimpsest.errors import DatabaseLockedError
from palimpsest.storage.fts_layout import set_meta


@pytest.fixture
def store(tmp_path: Path):
    with SessionStore(tmp_path / "state.db") as s:
        yield s


def _state(store: SessionStore, root: str) -> LineageState:
    with store.database.reader() as con:
        return read_lineage_state(con, root)


class TestLineageState:
    def test_round_trip_and_sequence(self, store: SessionStore) -> None:
        assert _state(store, "r") == LineageState()
        wanted = LineageState(sequence=3, failure_streak=2, cooldown_until=12.5)
        store.database.write(lambda con: write_lineage_state(con, "r", wanted))
        assert _state(store, "r") == wanted
        number = store.database.write(
            lambda con: next_sequence(con, "r", LineageState(failure_streak=0))
        )
        assert number == 4
        assert _state(store, "r") == LineageState(sequence=4)

    def test_unreadable_state_starts_afresh(self, store: SessionStore) -> None:
        store.database.write(lambda con: set_meta(con, "gateway_hygiene:r", "{not json"))
        assert _state(store, "r") == LineageState()


class TestPromptTokens:
    def test_record_read_clear(self, store: SessionStore) -> None:
        assert read_prompt_tokens(store, "s") == 0
        record_prompt_tokens(store, "s", 70_000)
        assert read_prompt_tokens(store, "s") == 70_000
        assert read_prompt_tokens(store, "other") == 0
        clear_prompt_tokens(store, "s")
        assert read_prompt_tokens(store, "s") == 0

    def test_zero_or_less_clears(self, store: SessionStore) -> None:
        record_prompt_tokens(store, "s", 10)
        record_prompt_tokens(store, "s", 0)
        assert read_prompt_tokens(store, "s") == 0


class TestAdmission:
    def test_released_after_the_block_even_on_error(self, store: SessionStore) -> None:
        with pytest.raises(RuntimeError), admission(store, "r"):
            raise RuntimeError("boom")
        with admission(store, "r", wait=0.0) as holder:
            assert holder.startswith(socket.gethostname())

    def test_a_live_holder_blocks_until_the_wait_ends(self, store: SessionStore) -> None:
        other = f"{socket.gethostname()}:{os.getpid()}:elsewhere"
        assert take_compression_lock(store, admission_key("r"), other) is None
        with pytest.raises(DatabaseLockedError, match="elsewhere"), admission(store, "r", wait=0.1):
            pass

    def test_a_dead_holder_is_taken_over(self, store: SessionStore) -> None:
        done = subprocess.run(
            [sys.executable, "-c", "import os; print(os.getpid())"],
            capture_output=True,
            text=True,
            check=True,
        )
        dead = f"{socket.gethostname()}:{done.stdout.strip()}:1"
        assert take_compression_lock(store, admission_key("r"), dead) is None
        with admission(store, "r", wait=0.0):
            pass

    def test_threads_take_turns(self, store: SessionStore) -> None:
        inside: list[int] = []
        overlaps: list[int] = []
        barrier = threading.Barrier(8)

        def work(i: int) -> None:
            barrier.wait()
            with admission(store, "r"):
                if inside:
                    overlaps.append(i)
                inside.append(i)
                threading.Event().wait(0.01)
                inside.remove(i)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert overlaps == []
