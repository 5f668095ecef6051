"""The two drivers answer the same flow the same way (STYLE.md: one loop, two modes)."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from palimpsest.agent.driver import Flow, ModelCall, Offload, drive_async, drive_sync
from palimpsest.agent.events import TextDelta, TurnEnd
from palimpsest.errors import ProviderError
from palimpsest.providers.base import ScriptedChatModel


def flow() -> Flow:
    reply = yield ModelCall([{"role": "user", "content": "hi"}], None, 10)
    yield TextDelta(reply.content)
    thread = yield Offload(lambda: threading.current_thread().name)
    yield TextDelta(thread)
    try:
        yield ModelCall([], None, None)
    except ProviderError as exc:
        yield TurnEnd(completed=False, error=str(exc))


def test_sync_and_async_answer_the_same():
    sync = list(drive_sync(ScriptedChatModel(["hello", ProviderError("boom")]), flow()))

    async def collect() -> list[Any]:
        model = ScriptedChatModel(["hello", ProviderError("boom")])
        return [e async for e in drive_async(model, flow())]

    async_events = asyncio.run(collect())
    assert sync[0] == async_events[0] == TextDelta("hello")
    assert sync[1] == TextDelta(threading.current_thread().name)
    assert async_events[1] != sync[1]  # async offloads blocking work to a worker thread
    assert sync[2] == async_events[2] == TurnEnd(completed=False, error="boom")


def test_keyboard_interrupt_is_thrown_into_the_flow():
    def interrupted() -> Flow:
        try:
            yield Offload(lambda: (_ for _ in ()).throw(KeyboardInterrupt()))
        except KeyboardInterrupt:
            yield TurnEnd(completed=False, interrupted=True)

    events = list(drive_sync(ScriptedChatModel([]), interrupted()))
    assert events == [TurnEnd(completed=False, interrupted=True)]


class _EndlessStream:
    """A streaming model that would talk for a minute: a piece of text every 20 ms."""

    supports_on_text = True

    def __init__(self) -> None:
        self.pieces = 0
        self.ended = threading.Event()

    def complete(self, messages: Any, tools: Any = None, max_tokens: Any = None, **options: Any):
        on_text = options["on_text"]
        try:
            for _ in range(3_000):
                on_text("word ")
                self.pieces += 1
                time.sleep(0.02)
        finally:
            self.ended.set()
        raise AssertionError("the stream was never abandoned")


def test_a_stop_request_ends_a_streamed_reply_at_once():
    """One Ctrl-C in chat used to let a streamed reply run on for ~25 s (issue 23)."""
    model = _EndlessStream()
    asked = threading.Event()
    threading.Timer(0.3, asked.set).start()

    def streaming() -> Flow:
        try:
            yield ModelCall([], None, None, stream=True, stop=asked.is_set)
        except KeyboardInterrupt:
            yield TurnEnd(completed=False, interrupted=True)

    started = time.monotonic()
    events = list(drive_sync(model, streaming()))  # type: ignore[arg-type]
    assert time.monotonic() - started < 1.0
    assert events[-1] == TurnEnd(completed=False, interrupted=True)
    assert any(isinstance(e, TextDelta) for e in events)
    assert model.ended.wait(1.0)  # the provider's loop was told to stop, not left talking
    assert model.pieces < 100
