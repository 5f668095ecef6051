"""What the output budgets keep out of the context, and off the disk, on real agent runs.

Every observation of the real transcripts in ``tests/data/transcripts`` (SWE-agent in three
action styles, mini-swe-agent, Claude Code, Codex; read with
:func:`palimpsest.messages.read_transcript`, which pairs each output with the action that
produced it) is replayed, turn by turn, through three policies, for a model window of
``--windows`` tokens (the budgets scaled to it, TR-19):

- **none**: every output enters the context whole;
- **reference** (the seed design, same run): ``maybe_persist_tool_result`` per output and
  ``enforce_turn_budget`` per turn, into a ``LocalSandbox`` directory, head previews; every
  spilled output is written, once per call;
- **palimpsest**: :class:`~palimpsest.outputs.guard.OutputGuard` over an
  :class:`~palimpsest.outputs.store.OutputStore`, head-and-tail previews; an output whose
  command :func:`~palimpsest.outputs.rerun.classify_command` calls re-runnable becomes a
  pointer (nothing written), the others are stored once per distinct content.

It prints, per window: outputs, characters produced, characters that entered the context,
spilled outputs, bytes written to disk, pointers; then which commands were judged
re-runnable. Run:

    python benchmarks/tool_output_budget.py [--windows 8000,32000,128000] [--copies 3]

``--copies N`` replays every transcript N times (as N sessions of the same task would): the
reference writes every copy again, the store keeps one.
"""

from __future__ import annotations

import argparse
import collections
import os
import platform
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from palimpsest.messages import load_transcript, read_transcript
from palimpsest.outputs import (
    BudgetConfig,
    LocalSandbox,
    OutputGuard,
    OutputStore,
    budget_for_context_window,
    classify_command,
    enforce_turn_budget,
    maybe_persist_tool_result,
)
from palimpsest.outputs.rerun import Rerun

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "transcripts"
SOURCES = sorted(
    p
    for p in DATA.rglob("*")
    if p.is_file() and p.suffix in (".traj", ".json", ".jsonl") and p.parent.name != "fixtures"
)


@dataclass
class Turn:
    """The outputs answering one assistant message: (call id, tool, command, output)."""

    outputs: list[tuple[str, str, str | None, str]] = field(default_factory=list)


def turns_of(path: Path) -> list[Turn]:
    messages = load_transcript(path)
    readings = read_transcript(messages)
    turns: dict[int, Turn] = {}
    for reading in readings:
        seen = reading.observation
        if seen is None:
            continue
        owner = seen.action_index if seen.action_index is not None else reading.index
        action_msg = readings[owner] if 0 <= owner < len(readings) else None
        command = None
        tool = seen.tool or "bash"
        if action_msg is not None and action_msg.actions:
            action = next(
                (a for a in action_msg.actions if seen.call_id and a.call_id == seen.call_id),
                action_msg.actions[0],
            )
            command, tool = action.command, action.tool
        call_id = seen.call_id or f"obs_{reading.index}"
        turns.setdefault(owner, Turn()).outputs.append((call_id, tool, command, seen.output))
    return [turns[k] for k in sorted(turns)]


def _dir_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and p.suffix == ".txt")


def _verdict(tool: str, command: str | None) -> Rerun:
    if command and tool in ("bash", "run_shell", "execute_bash", "shell", "Bash", "terminal"):
        return classify_command(command)
    if command:  # an agent command such as SWE-agent's `open`, `search_dir`, `edit`
        return classify_command(command)
    return Rerun(False, f"{tool}: no command to re-run")


def replay(sessions: list[list[Turn]], config: BudgetConfig, work: Path) -> dict[str, Any]:
    produced = sum(len(o[3]) for turns in sessions for t in turns for o in t.outputs)
    count = sum(len(t.outputs) for turns in sessions for t in turns)
    sandbox_dir = work / "sandbox"
    sandbox_dir.mkdir()
    env = LocalSandbox(sandbox_dir)
    ref_context = ref_spilled = 0
    store = OutputStore(work / "store")
    guard = OutputGuard(store, config, session_id="bench")
    ours_context = 0
    for number, turns in enumerate(sessions):
        for turn_index, turn in enumerate(turns):
            ref_msgs, our_msgs, reruns = [], [], {}
            for call_id, tool, command, output in turn.outputs:
                cid = f"s{number}_{turn_index}_{call_id}"
                text = maybe_persist_tool_result(output, tool, cid, env, config)
                ref_msgs.append(
                    {"role": "tool", "tool_call_id": cid, "name": tool, "content": text}
                )
                verdict = _verdict(tool, command)
                reruns[cid] = verdict
                admitted = guard.admit(output, tool_name=tool, call_id=cid, rerun=verdict)
                our_msgs.append(
                    {"role": "tool", "tool_call_id": cid, "name": tool, "content": admitted}
                )
            enforce_turn_budget(ref_msgs, env, config)
            guard.enforce_turn(our_msgs, reruns)
            ref_context += sum(len(m["content"]) for m in ref_msgs)
            ref_spilled += sum("<persisted-output>" in m["content"] for m in ref_msgs)
            ours_context += sum(len(m["content"]) for m in our_msgs)
    stats = guard.stats
    result = {
        "outputs": count,
        "produced": produced,
        "reference": {
            "context": ref_context,
            "spilled": ref_spilled,
            "disk": _dir_bytes(sandbox_dir),
        },
        "palimpsest": {
            "context": ours_context,
            "spilled": stats.spilled,
            "disk": store.total_bytes(),
            "pointers": stats.pointers,
            "deduplicated": stats.deduplicated,
        },
    }
    store.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", default="8000,32000,128000")
    parser.add_argument("--copies", type=int, default=3)
    args = parser.parse_args()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    runs = {path.relative_to(DATA).as_posix(): turns_of(path) for path in SOURCES}
    sessions = [turns for _ in range(args.copies) for turns in runs.values()]
    sizes = sorted(len(o[3]) for turns in runs.values() for t in turns for o in t.outputs)
    print(
        f"{len(runs)} transcripts, {len(sizes)} outputs (each replayed {args.copies}x); "
        f"output size median {sizes[len(sizes) // 2]:,}, max {sizes[-1]:,} characters\n"
    )
    print(
        f"{'window':>8} {'policy':<11} {'in context':>11} {'share':>6} {'spilled':>8} "
        f"{'pointers':>9} {'disk bytes':>11}"
    )
    for window in (int(w) for w in args.windows.split(",")):
        config = BudgetConfig(
            **{
                **budget_for_context_window(window).__dict__,
                "preview_mode": "head_tail",
            }
        )
        with tempfile.TemporaryDirectory(prefix="palimpsest-budget-") as tmp:
            row = replay(sessions, config, Path(tmp))
        produced = row["produced"]
        print(f"{window:>8} {'none':<11} {produced:>11,} {'100%':>6} {0:>8} {'':>9} {0:>11,}")
        for policy in ("reference", "palimpsest"):
            data = row[policy]
            share = f"{data['context'] / produced:.0%}"
            pointers = data.get("pointers", "")
            print(
                f"{'':>8} {policy:<11} {data['context']:>11,} {share:>6} {data['spilled']:>8} "
                f"{pointers!s:>9} {data['disk']:>11,}"
            )
    verdicts: collections.Counter[str] = collections.Counter()
    for turns in runs.values():
        for turn in turns:
            for _cid, tool, command, _output in turn.outputs:
                verdict = _verdict(tool, command)
                verdicts[
                    ("re-runnable: " if verdict.repeatable else "kept: ") + verdict.reason
                ] += 1
    print("\nverdicts on the real commands (one copy):")
    for reason, n in verdicts.most_common(15):
        print(f"{n:>5}  {reason}")


if __name__ == "__main__":
    main()
