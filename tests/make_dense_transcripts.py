"""Build the dense-token transcripts in tests/data/transcripts/dense (run: python tests/make_dense_transcripts.py).

Four agent runs whose tool output is text that chars/4 under-counts badly: symbolic-math
output (sympy-style expressions), base64, minified JavaScript and CJK prose. The text is
generated from a fixed seed so the files are reproducible; the run around it (a system
prompt, a task, calls and observations) follows the shapes of the real transcripts next
to this folder: native tool calls in two files, SWE-agent-style text actions with the
observation in a user message in the other two.
"""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path

HERE = Path(__file__).parent / "data" / "transcripts" / "dense"


def _math(rng: random.Random, terms: int) -> str:
    symbols = ["x", "y", "z", "a", "b", "theta", "phi"]
    funcs = ["sin", "cos", "exp", "log", "sqrt", "atan"]
    out = []
    for _ in range(terms):
        coeff = rng.choice(
            ["", f"{rng.randint(2, 97)}*", f"{rng.randint(2, 9)}/{rng.randint(2, 9)}*"]
        )
        s1, s2 = rng.sample(symbols, 2)
        f = rng.choice(funcs)
        out.append(
            f"{coeff}{s1}**{rng.randint(2, 11)}*{f}({s2}**{rng.randint(2, 5)} - {rng.randint(1, 9)})"
            f"/({s2} + {rng.randint(1, 99)})**{rng.randint(2, 7)}"
        )
    return " + ".join(out)


def _minified_js(rng: random.Random, functions: int) -> str:
    names = [a + b for a in "abcdefghijklmnopqrstuvwxyz" for b in "0123456789$_"]
    parts = []
    for _ in range(functions):
        f, p, q, r = rng.sample(names, 4)
        parts.append(
            f"function {f}({p},{q}){{var {r}={p}[{rng.randint(0, 9)}]|{q}<<{rng.randint(1, 7)};"
            f"return {r}>{rng.randint(0, 255)}?{p}.map(({q})=>{q}^{r}):[{p},{q},{r}&0x{rng.randint(16, 255):x}]}}"
        )
    return ";".join(parts)


def _cjk(rng: random.Random, chars: int) -> str:
    text = []
    for i in range(chars):
        text.append(chr(rng.randint(0x4E00, 0x9FA5)))
        if i % 37 == 36:
            text.append("。")
    return "".join(text)


def _native(task: str, outputs: list[tuple[str, str]]) -> list[dict[str, object]]:
    messages: list[dict[str, object]] = [
        {
            "role": "system",
            "content": "You are a coding agent. Use the tools to inspect and fix the repository.",
        },
        {"role": "user", "content": task},
    ]
    for i, (command, output) in enumerate(outputs):
        call_id = f"call_{i:03d}"
        messages.append(
            {
                "role": "assistant",
                "content": f"Step {i + 1}: running `{command}` to look at the output.",
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "bash", "arguments": json.dumps({"command": command})},
                    }
                ],
            }
        )
        messages.append({"role": "tool", "tool_call_id": call_id, "content": output})
    messages.append(
        {"role": "assistant", "content": "Done: the output above is what the task asked for."}
    )
    return messages


def _text_action(task: str, outputs: list[tuple[str, str]]) -> list[dict[str, object]]:
    messages: list[dict[str, object]] = [
        {
            "role": "system",
            "content": "SETTING: You are an autonomous programmer working in a shell.",
        },
        {"role": "user", "content": task},
    ]
    for i, (command, output) in enumerate(outputs):
        messages.append(
            {"role": "assistant", "content": f"DISCUSSION\nStep {i + 1}.\n\n```\n{command}\n```"}
        )
        messages.append(
            {
                "role": "user",
                "content": f"{output}\n(Open file: n/a)\n(Current directory: /repo)\nbash-$",
            }
        )
    messages.append(
        {"role": "assistant", "content": "DISCUSSION\nThe task is done.\n\n```\nsubmit\n```"}
    )
    return messages


def main() -> None:
    rng = random.Random(20261127)
    runs = {
        "sympy-math-output.json": _text_action(
            "Simplify the expression in expr.py and show the expanded result.",
            [(f"python expand.py --step {i}", _math(rng, 60)) for i in range(8)],
        ),
        "base64-blobs.json": _native(
            "Find which fixture holds the corrupted PNG.",
            [
                (f"base64 fixtures/img{i}.png", base64.b64encode(rng.randbytes(4500)).decode())
                for i in range(8)
            ],
        ),
        "minified-js.json": _native(
            "Why does the bundle throw on load? Look at dist/app.min.js.",
            [(f"sed -n {i + 1}p dist/app.min.js", _minified_js(rng, 55)) for i in range(8)],
        ),
        "cjk-docs.json": _text_action(
            "把 docs/ 下的说明文档整理成一份摘要。",
            [(f"cat docs/part{i}.md", _cjk(rng, 2400)) for i in range(8)],
        ),
    }
    for name, messages in runs.items():
        (HERE / name).write_text(
            json.dumps(messages, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
        )


if __name__ == "__main__":
    main()
