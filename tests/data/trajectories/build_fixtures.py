"""Rebuild real_sharegpt.jsonl: real agent transcripts from /work/shared/data as ShareGPT.

Run from the repository root: python tests/data/trajectories/build_fixtures.py [DATA_DIR]

Sources (MIT, see the data README): two SWE-agent function-calling runs (native tool calls,
written here in the Hermes ``<tool_call>``/``<tool_response>`` form common in ShareGPT agent
data), one SWE-agent run with fenced text actions and one mini-swe-agent run. In the text
action runs every user message after the task is an observation and becomes a ``tool``
turn. Demonstration messages (``is_demo``) are left out; turn text is kept as written.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

SOURCES = (
    "swe-agent/marshmallow-1867__function_calling.traj",
    "swe-agent/marshmallow-1867__function_calling_replace_from_source.traj",
    "swe-agent/pydicom-1458__gpt4_default.traj",
    "mini-swe-agent/github_issue.traj.json",
)


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def convert(history: list[dict[str, Any]]) -> list[dict[str, str]]:
    turns: list[dict[str, str]] = []
    names: dict[str, str] = {}
    seen_request = False
    for m in history:
        if m.get("is_demo"):
            continue
        role, text = m["role"], _text(m.get("content"))
        if role == "system":
            turns.append({"from": "system", "value": text})
        elif role == "assistant":
            parts = [text.strip()] if text.strip() else []
            for call in m.get("tool_calls") or []:
                fn = call["function"]
                names[call["id"]] = fn["name"]
                body = {"name": fn["name"], "arguments": json.loads(fn["arguments"] or "{}")}
                parts.append(f"<tool_call>\n{json.dumps(body)}\n</tool_call>")
            turns.append({"from": "gpt", "value": "\n".join(parts)})
        elif role == "tool":
            ids = m.get("tool_call_ids") or [m.get("tool_call_id")]
            body = {"tool_call_id": ids[0], "name": names.get(ids[0], ""), "content": text}
            turns.append({"from": "tool", "value": f"<tool_response>\n{json.dumps(body)}\n</tool_response>"})
        elif role == "user" and seen_request:
            turns.append({"from": "tool", "value": text})
        else:
            seen_request = True
            turns.append({"from": "human", "value": text})
    return turns


def main() -> None:
    data = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/shared/data/transcripts")
    out = Path(__file__).with_name("real_sharegpt.jsonl")
    with out.open("w", encoding="utf-8") as fh:
        for number, source in enumerate(SOURCES):
            raw = json.loads((data / source).read_text(encoding="utf-8"))
            history = raw["history"] if isinstance(raw, dict) else raw
            entry = {
                "id": f"real-{number}",
                "source": source,
                "conversations": convert(history),
                "meta": {"turns": None, "license": "MIT", "tags": ["real", source.split("/")[0]]},
            }
            entry["meta"]["turns"] = len(entry["conversations"])
            fh.write(json.dumps(entry, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
