"""The stall at the compaction threshold inside the agent, with and without speculation.

``benchmarks/speculative.py`` times the mechanism (``SpeculativeCompactor.take``) alone; this
one times the whole agent: ``Agent(speculative=False)`` against ``Agent(speculative=True)``
on the same conversation. Every model call (turns and the memory flush) takes
``--model-seconds``; the summary takes ``--summary-seconds`` (the extractive summary written
after a sleep, a stand-in for a summary model); between turns the user takes
``--pause-seconds`` to type. The user messages are real tool observations and the replies
real assistant texts from ``long_transcript.build``, so the history grows as a coding
session does. The **stall** is a compaction event's ``seconds``: from the threshold
check to the compacted history being in place, i.e. to the moment the next request can be
built (memory flush, summary, ledger and todos, system-prompt rebuild, continuation session
in a real SQLite store). Run:

    python benchmarks/agent_speculative.py [--summary-seconds 2] [--model-seconds 0.3]
        [--pause-seconds 2.5] [--crossings 3] [--context-length 32000]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from long_transcript import build
from palimpsest import ScriptedChatModel, SessionStore
from palimpsest.agent import Agent, CompactionEvent
from palimpsest.agent.flush import FLUSH_MESSAGE
from palimpsest.compaction.compressor import ContextCompressor
from palimpsest.memory.manager import MemoryManager
from palimpsest.memory.store import MemoryStore
from palimpsest.messages import content_text
from palimpsest.providers.base import Completion
from speculative import SlowSummarizer

BUDGET_MS = 50.0


def material(n: int) -> tuple[list[str], list[str]]:
    """Real observations (as the user's messages) and real assistant texts."""
    asks: list[str] = []
    replies: list[str] = []
    for message in build(n):
        text = content_text(message.get("content"))[:2_400]
        if len(text) < 200:
            continue
        (replies if message.get("role") == "assistant" else asks).append(text)
    return asks, replies


def run(args: argparse.Namespace, speculative: bool) -> list[CompactionEvent]:
    asks, replies = material(3_000)
    calls = iter(range(10**9))

    def answer(messages: list[dict[str, Any]]) -> Completion:
        time.sleep(args.model_seconds)
        if str(messages[-1].get("content", "")).startswith(FLUSH_MESSAGE[:30]):
            return Completion(content="Nothing worth saving.", finish_reason="stop")
        return Completion(content=replies[next(calls) % len(replies)], finish_reason="stop")

    with tempfile.TemporaryDirectory() as home:
        engine = ContextCompressor(
            args.context_length, SlowSummarizer(args.summary_seconds), quiet_mode=True
        )
        agent = Agent(
            ScriptedChatModel(default=answer),
            store=SessionStore(Path(home) / "state.db"),
            memory=MemoryManager(MemoryStore(home), home=home),
            compressor=engine,
            context_length=args.context_length,
            speculative=speculative,
        )
        stalls: list[CompactionEvent] = []
        for turn, ask in enumerate(asks):
            events = list(agent.run(f"Turn {turn}. What do you make of this?\n\n{ask}"))
            for event in events:
                if isinstance(event, CompactionEvent) and event.compacted:
                    stalls.append(event)
                    print(
                        f"  {'speculative' if speculative else 'synchronous'} crossing "
                        f"{len(stalls)} ({event.path}): {event.before_messages} -> "
                        f"{event.after_messages} messages, {event.before_tokens:,} -> "
                        f"{event.after_tokens:,} tokens, stall {event.seconds * 1000:.1f} ms",
                        flush=True,
                    )
            if len(stalls) >= args.crossings:
                break
            time.sleep(args.pause_seconds)  # the user reads and types
        agent.close()
        agent.store.close()  # type: ignore[union-attr]
    return stalls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--summary-seconds", type=float, default=2.0)
    parser.add_argument("--model-seconds", type=float, default=0.3)
    parser.add_argument("--pause-seconds", type=float, default=2.5)
    parser.add_argument("--crossings", type=int, default=3)
    parser.add_argument("--context-length", type=int, default=32_000)
    args = parser.parse_args()
    print(
        f"python {platform.python_version()}, {os.cpu_count()} cores; summary "
        f"{args.summary_seconds} s, model call {args.model_seconds} s, pause "
        f"{args.pause_seconds} s, window {args.context_length:,}"
    )
    results = {mode: run(args, mode) for mode in (False, True)}
    for mode, events in results.items():
        stalls = [e.seconds * 1000 for e in events]
        label = "speculative" if mode else "synchronous"
        if not stalls:
            print(f"{label}: no compaction happened")
            continue
        after = statistics.median(e.after_tokens for e in events)
        verdict = ""
        if mode:
            verdict = f" ({'within' if max(stalls) <= BUDGET_MS else 'over'} {BUDGET_MS:.0f} ms)"
        print(
            f"{label}: stall median {statistics.median(stalls):.1f} ms, max "
            f"{max(stalls):.1f} ms over {len(stalls)} crossings{verdict}; tokens after "
            f"compaction, median {after:,.0f}"
        )


if __name__ == "__main__":
    main()
