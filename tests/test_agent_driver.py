"""The two drivers answer the same flow the same way (STYLE.md: one loop, two modes)."""

from __future__ import annotations

import asyncio
import threading
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
