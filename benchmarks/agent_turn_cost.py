"""CPU per agent turn as the history grows: is a turn O(what it added)? (issue 27)

An ``Agent`` with a scripted model (no store, no memory, a window large enough that nothing
compacts) runs ``--turns`` turns; in each the model calls one tool (``echo``, a real tool
round: the call, its result, the model's answer) and then replies, so every turn adds four
messages. The model's own time is excluded: the script measures the process CPU of each
``agent.run`` minus the CPU spent inside the model's ``complete``. The model is the scripted
one without its record of every request (``ScriptedChatModel.calls`` keeps a copy of the
whole history per call: O(history) work and memory that belong to the test double, as a
real provider's serialization of the request belongs to the provider). Prints the median CPU per turn
over the ``--window`` turns ending at each of ``--at`` and the ratio of the last to the
first (aim: turn 1,000 at most 1.3x turn 100).

    python benchmarks/agent_turn_cost.py [--turns 1000] [--at 100 1000] [--window 50]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from long_transcript import build
from palimpsest import ScriptedChatModel
from palimpsest.agent import Agent
from palimpsest.compaction.compressor import ContextCompressor
from palimpsest.messages import content_text
from palimpsest.providers.base import Completion


def texts(n: int) -> list[str]:
    """Real assistant texts and observations to grow the history with."""
    found = [content_text(m.get("content"))[:1_500] for m in build(n)]
    return [t for t in found if len(t) > 80]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1_000)
    parser.add_argument("--at", type=int, nargs="+", default=[100, 1_000])
    parser.add_argument("--window", type=int, default=50)
    parser.add_argument("--no-tools", action="store_true", help="plain replies, no tool round")
    args = parser.parse_args()
    material = texts(4_000)
    model_cpu = [0.0]
    step = iter(range(10**9))

    def answer(messages: list[dict[str, Any]]) -> Completion:
        i = next(step)
        if messages[-1].get("role") == "user" and not args.no_tools:  # a turn's first call
            call = {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": "echo", "arguments": json.dumps({"text": f"t{i}"})},
            }
            done = Completion(content="", tool_calls=[call], finish_reason="tool_calls")
        else:
            done = Completion(content=material[i % len(material)], finish_reason="stop")
        return done

    def echo(text: str) -> str:
        """Echo the text back."""
        return material[len(text) % len(material)]

    class Replier(ScriptedChatModel):
        """The scripted model without its record of every request (a copy of the whole
        history per call, which 1,000 turns would not fit in memory); its time is excluded."""

        def complete(
            self,
            messages: Any,
            tools: Any = None,
            max_tokens: int | None = None,
            **options: Any,
        ) -> Completion:
            start = time.process_time()
            try:
                return answer(messages)
            finally:
                model_cpu[0] += time.process_time() - start

    model = Replier()
    with tempfile.TemporaryDirectory() as home:
        agent = Agent(
            model,
            tools=[echo],
            compressor=ContextCompressor(10_000_000, quiet_mode=True),
            context_length=10_000_000,
            builtin_tools=False,
            workdir=Path(home),
        )
        per_turn: list[float] = []
        for turn in range(args.turns):
            ask = material[(turn * 7) % len(material)]
            model_cpu[0] = 0.0
            start = time.process_time()
            for _ in agent.run(f"Turn {turn}: {ask}"):
                pass
            per_turn.append(time.process_time() - start - model_cpu[0])
        messages = len(agent.messages)
        agent.close()
    medians = {}
    for at in args.at:
        window = per_turn[max(0, at - args.window) : at]
        medians[at] = statistics.median(window)
        print(f"turn {at:>5,}: median CPU per turn {medians[at] * 1000:.2f} ms (model excluded)")
    first, last = args.at[0], args.at[-1]
    print(
        f"{messages:,} messages at the end; turn {last:,} / turn {first:,}: "
        f"{medians[last] / medians[first]:.2f}x (aim <= 1.3)"
    )


if __name__ == "__main__":
    main()
