"""The per-entry guard: timeouts drop, exceptions keep the original, unparsed input passes."""

from __future__ import annotations

import asyncio
import threading

from palimpsest.trajectories.outcome import Item, one_line, run_guarded, run_guarded_async
from trajectories_batch_helpers import shout, shout_async


def item(entry: dict | None, **kw: str) -> Item:
    return Item(0, "f.jsonl:1", entry, **kw)  # type: ignore[arg-type]


def test_a_slow_entry_times_out_and_is_dropped() -> None:
    out = run_guarded(shout, item({"sleep": 5, "conversations": []}), 0.2)
    assert out.status == "timed_out" and out.entry is None
    assert out.error == "timed out after 0.2 s; entry dropped"


def test_a_raising_entry_keeps_its_original() -> None:
    entry = {"raise": "kaput", "conversations": []}
    out = run_guarded(shout, item(entry), 1.0)
    assert (out.status, out.entry, out.error) == ("failed", entry, "RuntimeError: kaput")


def test_unparsed_input_never_reaches_the_function() -> None:
    out = run_guarded(shout, item(None, raw="{x", problem="not valid JSON"), 1.0)
    assert (out.status, out.raw, out.error) == ("bad_input", "{x", "not valid JSON")


def test_off_the_main_thread_the_elapsed_time_is_checked_after_the_call() -> None:
    found = []
    worker = threading.Thread(
        target=lambda: found.append(
            run_guarded(shout, item({"sleep": 0.3, "conversations": []}), 0.1)
        )
    )
    worker.start()
    worker.join()
    assert found[0].status == "timed_out"


def test_the_async_guard_times_out_and_passes_results() -> None:
    slow = asyncio.run(run_guarded_async(shout_async, item({"sleep": 5, "conversations": []}), 0.1))
    assert slow.status == "timed_out"
    fine = asyncio.run(
        run_guarded_async(
            shout_async, item({"conversations": [{"from": "human", "value": "hi"}]}), 1
        )
    )
    assert fine.status == "compressed" and fine.entry is not None
    assert fine.entry["conversations"][0]["value"] == "HI"


def test_one_line_flattens_messages() -> None:
    assert one_line(ValueError("a\n  b")) == "ValueError: a b"
    assert one_line(KeyError()) == "KeyError"
