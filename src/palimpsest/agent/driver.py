"""One turn flow, two drivers: the loop's logic is a generator that never does I/O itself.

The turn (:mod:`.turn`), the compaction step (:mod:`.compaction_step`) and the memory flush
(:mod:`.flush`) are written as generators. When they need the outside world they yield a
request and receive the answer:

* :class:`ModelCall`: call the chat model; the reply (a :class:`Completion`) is sent back,
  or the provider's exception is thrown in at the ``yield``;
* :class:`Offload`: run a blocking function (a compaction, a round of tool calls); its
  return value is sent back, its exception thrown in;
* any :data:`~.events.AgentEvent`: hand it to the caller; ``None`` is sent back.

:func:`drive_sync` answers with ``model.complete`` and direct calls; :func:`drive_async`
with ``model.acomplete`` and ``asyncio.to_thread``. The flow cannot drift between the two
modes because there is only one flow (STYLE.md, "Pure core"). A ``KeyboardInterrupt`` that
arrives while the driver is doing the work is thrown into the flow too, so the flow's own
interrupt handling leaves the history valid whichever mode runs it.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import AsyncIterator, Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from ..providers.base import ChatModel, Completion
from .events import AgentEvent, TextDelta

__all__ = ["Flow", "ModelCall", "Offload", "Step", "drain", "drive_async", "drive_sync"]


@dataclass
class ModelCall:
    """A model request the flow wants sent (the request is already complete)."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    max_tokens: int | None
    options: dict[str, Any] = field(default_factory=dict)
    purpose: Literal["turn", "flush"] = "turn"
    stream: bool = False
    """Ask for the reply's text as it arrives (sync driver, models with ``on_text``)."""
    streamed: bool = False
    """Set by the driver when text was yielded as :class:`TextDelta` events already."""
    stop: Callable[[], bool] | None = None
    """Polled while a streamed reply arrives; once it answers true the stream is closed and
    ``KeyboardInterrupt`` is thrown into the flow (one Ctrl-C ends a reply, not a turn later)."""


class _StreamAbandoned(Exception):
    """Raised inside the provider's text callback to close a stream nobody reads any more."""


@dataclass
class Offload:
    """Blocking work (compaction, tool calls): run in a worker thread by the async driver."""

    function: Callable[[], Any]


Step = ModelCall | Offload | AgentEvent
Flow = Generator[Step, Any, Any]
"""What the flows are: they yield steps and receive the answers."""


def _answer_sync(model: ChatModel, step: ModelCall | Offload) -> Any:
    if isinstance(step, Offload):
        return step.function()
    return model.complete(step.messages, step.tools, step.max_tokens, **step.options)


async def _answer_async(model: ChatModel, step: ModelCall | Offload) -> Any:
    if isinstance(step, Offload):
        return await asyncio.to_thread(step.function)
    reply: Completion = await model.acomplete(
        step.messages, step.tools, step.max_tokens, **step.options
    )
    return reply


def _streams(model: ChatModel) -> bool:
    return bool(getattr(model, "supports_on_text", False))


def _stream_sync(model: ChatModel, step: ModelCall) -> Generator[AgentEvent, None, Any]:
    """The call on a worker thread, its text yielded as it arrives; returns the reply.

    The caller's thread keeps waiting on a queue in short slices, so Ctrl-C reaches it at
    once, and ``step.stop`` is polled as often. An abandoned call is told to end: the next
    piece of text it delivers raises inside the provider's own loop, which closes the stream
    (the SDKs close the response when their iteration ends); it fails on its daemon thread
    unread.
    """
    pieces: queue.Queue[tuple[str, Any]] = queue.Queue()
    abandoned = threading.Event()

    def deliver(text: str) -> None:
        if abandoned.is_set():
            raise _StreamAbandoned
        pieces.put(("text", text))

    def work() -> None:
        try:
            reply = model.complete(
                step.messages, step.tools, step.max_tokens, **step.options, on_text=deliver
            )
            pieces.put(("done", reply))
        except BaseException as exc:  # handed to the flow, which decides
            pieces.put(("error", exc))

    threading.Thread(target=work, name="palimpsest-model-stream", daemon=True).start()
    try:
        while True:
            if step.stop is not None and step.stop():
                raise KeyboardInterrupt
            try:
                kind, item = pieces.get(timeout=0.1)
            except queue.Empty:
                continue
            if kind == "text":
                step.streamed = True
                yield TextDelta(item)
            elif kind == "done":
                return item
            else:
                raise item
    finally:
        abandoned.set()


def drive_sync(model: ChatModel, flow: Flow) -> Iterator[AgentEvent]:
    """Run ``flow`` to its end, yielding its events; work is done in this thread."""
    value: Any = None
    error: BaseException | None = None
    try:
        while True:
            try:
                step = flow.throw(error) if error is not None else flow.send(value)
            except StopIteration:
                return
            value, error = None, None
            if isinstance(step, ModelCall) and step.stream and _streams(model):
                try:
                    value = yield from _stream_sync(model, step)
                except (Exception, KeyboardInterrupt) as exc:
                    error = exc
            elif isinstance(step, ModelCall | Offload):
                try:
                    value = _answer_sync(model, step)
                except (Exception, KeyboardInterrupt) as exc:
                    error = exc
            else:
                yield step
    finally:
        flow.close()  # a caller that stops early still gets the flow's cleanup, now


def drain(model: ChatModel, flow: Flow) -> tuple[list[AgentEvent], Any]:
    """Run ``flow`` to its end in this thread: its events and its return value (for a
    command or a background job that has no caller reading events one by one)."""
    box: dict[str, Any] = {}

    def keep() -> Flow:
        box["value"] = yield from flow

    events = list(drive_sync(model, keep()))
    return events, box.get("value")


async def drive_async(model: ChatModel, flow: Flow) -> AsyncIterator[AgentEvent]:
    """Run ``flow`` to its end, yielding its events; model calls are awaited and blocking
    work runs in a worker thread, so the event loop stays free."""
    value: Any = None
    error: BaseException | None = None
    try:
        while True:
            try:
                step = flow.throw(error) if error is not None else flow.send(value)
            except StopIteration:
                return
            value, error = None, None
            if isinstance(step, ModelCall | Offload):
                try:
                    value = await _answer_async(model, step)
                except (Exception, KeyboardInterrupt) as exc:
                    error = exc
            else:
                yield step
    finally:
        flow.close()
