"""Long agent transcripts for the speed benchmarks, made of real turns.

The sources are the real runs in ``tests/data/transcripts`` (unchanged copies of
``shared/data/transcripts``), read the way a caller would hand them over:

- text-action runs as the agents write them, every key kept: SWE-agent with ``<command>``
  tags, fenced blocks and ``message_type`` (``marshmallow-1867__xml_command_tags``,
  ``pydicom-1458__gpt4_default``, two CTF runs, ``humanevalfix-python-0``) and
  mini-swe-agent (```` ```mswea_bash_command ```` blocks answered by
  ``<returncode>``/``<output>`` user messages);
- native tool calls through :func:`palimpsest.messages.load_transcript`: the SWE-agent
  function-calling runs and the Claude Code session (``tool_calls`` + ``role: tool``).

Each source's body (everything after its system prompt) is cut into turns: a message plus
the tool results that answer it. The long transcript starts with one run's system prompt
and task, then appends windows of 2-12 consecutive turns, each from a randomly chosen
source, until it holds the requested number of messages; it ends on a user request. Windows
that start at a source's first turn bring a new task message, as a long session does.

Every copy is varied so no string repeats verbatim (a cache keyed by value must not look
better than it would on a real run): tool-call ids get the copy number, and every text of
three or more lines gets ``  # <copy>`` appended to its middle line (or the next line that
is not a code fence), which leaves the first line (``OBSERVATION:``, ``<returncode>``,
``THOUGHT:``), the last (``bash-$``, a closing fence) and every fence line as the agent
wrote them. Nothing is padded: message sizes are the real ones.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from palimpsest.messages import load_transcript

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "transcripts"

TEXT_ACTION_SOURCES = [
    "swe-agent/marshmallow-1867__xml_command_tags.traj",
    "swe-agent/pydicom-1458__gpt4_default.traj",
    "swe-agent/ctf_crypto_katy.traj",
    "swe-agent/ctf_web_i_got_id_demo.traj",
    "swe-agent/humanevalfix-python-0.traj",
    "mini-swe-agent/github_issue.traj.json",
]
TOOL_CALL_SOURCES = [
    "swe-agent/marshmallow-1867__function_calling.traj",
    "swe-agent/marshmallow-1867__function_calling_replace_from_source.traj",
    "format-samples/claude-code_sample_session.json",
]

Message = dict[str, Any]
Turn = list[Message]


def _raw_messages(name: str) -> list[Message]:
    """A text-action run's messages exactly as the agent stored them."""
    data = json.loads((DATA / name).read_text(encoding="utf-8"))
    messages = data if isinstance(data, list) else data.get("history") or data["messages"]
    return [dict(m) for m in messages]


def _turns(messages: list[Message]) -> list[Turn]:
    """A source's body as turns: one message and the tool results answering it."""
    body = [m for m in messages if m.get("role") != "system"]
    turns: list[Turn] = []
    for message in body:
        if message.get("role") == "tool" and turns:
            turns[-1].append(message)
        else:
            turns.append([message])
    return turns


def sources() -> dict[str, list[Turn]]:
    """Every source's turns, by file name."""
    out = {name: _turns(_raw_messages(name)) for name in TEXT_ACTION_SOURCES}
    for name in TOOL_CALL_SOURCES:
        out[name] = _turns([dict(m) for m in load_transcript(DATA / name)])
    return out


def _vary_text(text: str, copy: int) -> str:
    lines = text.split("\n")
    if len(lines) < 3:
        return text
    middle = len(lines) // 2
    # A fence line stays as written: "```  # 3" opens no block any agent's parser knows,
    # so the command in it would vanish for one reader and not for another.
    while middle < len(lines) - 1 and lines[middle].lstrip().startswith("```"):
        middle += 1
    if lines[middle].lstrip().startswith("```"):
        return text
    lines[middle] = f"{lines[middle]}  # {copy}"
    return "\n".join(lines)


def _vary(message: Message, copy: int) -> Message:
    """A deep copy of ``message`` whose ids and long texts carry the copy number."""
    out: Message = json.loads(json.dumps(message))
    if isinstance(out.get("content"), str):
        out["content"] = _vary_text(out["content"], copy)
    elif isinstance(out.get("content"), list):
        for part in out["content"]:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                part["text"] = _vary_text(part["text"], copy)
    for call in out.get("tool_calls") or []:
        call["id"] = f"{call['id']}-{copy}"
    if isinstance(out.get("tool_call_id"), str):
        out["tool_call_id"] = f"{out['tool_call_id']}-{copy}"
    return out


def build(n: int, seed: int = 7) -> list[Message]:
    """About ``n`` messages of real, varied turns ending on a user request (see module doc)."""
    rng = random.Random(seed)
    by_source = sources()
    names = sorted(by_source)
    head_source = _raw_messages(TEXT_ACTION_SOURCES[0])
    out: list[Message] = [dict(m) for m in head_source[:2]]  # system prompt + task
    copy = 0
    while len(out) < n:
        copy += 1
        turns = by_source[rng.choice(names)]
        width = rng.randint(2, 12)
        start = rng.randrange(max(1, len(turns) - width + 1))
        for turn in turns[start : start + width]:
            out.extend(_vary(m, copy) for m in turn)
    del out[n:]
    # End on a complete tool group and a user request, as a live session does.
    while out[-1].get("role") == "tool" or out[-1].get("tool_calls"):
        out.pop()
    out.append({"role": "user", "content": "Please continue with the fix."})
    return out


def describe(messages: list[Message]) -> str:
    """One line: message count, size, and the share of text actions vs native tool calls."""
    size_mb = len(json.dumps(messages, ensure_ascii=False)) / 1e6
    calls = sum(1 for m in messages if m.get("tool_calls"))
    results = sum(1 for m in messages if m.get("role") == "tool")
    return (
        f"{len(messages):,} messages, {size_mb:.1f} MB JSON; "
        f"{calls:,} assistant messages with native tool calls, {results:,} tool results, "
        f"the rest text turns (SWE-agent / mini-swe-agent actions and observations, prose)"
    )
