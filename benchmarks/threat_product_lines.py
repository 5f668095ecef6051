"""The product's own neutral text, as a validation set for the threat detector's directive check.

    python benchmarks/threat_product_lines.py           # writes tests/data/threats/training/product_lines.jsonl
    python benchmarks/threat_product_lines.py --check   # scores the file with the shipped model

A handoff summary is checked line by line for instructions addressed to the model
(:mod:`palimpsest.safety.threats.directives`): the extractive summarizer withholds such
lines, verified compaction rejects a model's summary that has one. A line of the
product's own making that the check flags breaks a sound summary (the third round's model
flagged the fallback sentence "No summary could be produced this time. …" and a handoff
summary's "All migrations were read."), and no held-out file had lines of that kind. This
script collects them, deterministically, from four places:

- ``summary_line``: every line of the summaries the product writes for the transcripts in
  ``tests/data`` (``transcripts/`` and ``agent-histories/``): the extractive summarizer
  over each whole transcript (handoff and classic layout, three budgets, an update of a
  first-half summary, and an update of each fallback text as the previous summary) and
  the compressor's own path (``ContextCompressor.compress``, 4K and 16K windows, with and
  without a focus topic), with the planted-directive step switched off so that what is
  collected does not depend on the model being judged. Lines that restate a user message
  (the check exempts them: they are the user's words, not the product's) are left out.
- ``fixed_text``: the string constants of ``src/palimpsest/summarizers`` and
  ``src/palimpsest/compaction`` that can end up in a summary, a placeholder or a status
  line (fallback sentences, headings, markers, one-liners, feedback and error reasons),
  with each f-string's fields filled in. Not regular expressions, not docstrings, and not
  the text that instructs the summarizer model (the template descriptions and preamble of
  ``compaction/summary.py``, the retry note of ``compaction/verify.py``, the continuation
  and digest notes): that text addresses a model on purpose and never is a summary line.
  The rendered fallbacks (``compaction/fallback.py``) are added with sample reasons.
- ``fixture_line``: the lines of the summaries that tests feed the product (scripted model
  summaries, previous summaries), from the string constants of ``tests/*.py`` that hold a
  summary heading or are passed as a previous summary; tests about planted instructions
  (their function or file name says planted, inject, attack, directive, withhold, threat)
  are left out.
- ``doc_line``: the sentences, list items and table cells of ``docs/*.md`` outside code
  blocks (not ``benchmarks.md`` or ``memory.md``, which quote attacks as examples; and not
  a sentence that quotes an attack phrase, the rule the training text uses). Some of these
  were training text (``own_project_text.jsonl`` holds the docs' paragraphs as of
  ``bfe53fa``): such rows carry ``"in_train": true``.

Each row: ``text``, ``kind`` (above), ``source`` (where it was first found). Rows are
unique and sorted by kind, then source, then text. Nothing here is a training row: a test
checks that no row is a row of the TRAIN files, apart from those marked ``in_train``.

``--check`` runs the directive check (:func:`planted_directives` with no user messages,
the strictest case) on every row and prints how many are flagged, and the model's highest
scores against its threshold (the margin), including headings, which the check skips.
"""

from __future__ import annotations

import ast
import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from palimpsest.files import replace_bytes  # noqa: E402
from threat_model_train import TRAIN_SOURCES, TRAINING  # noqa: E402

OUT = TRAINING / "product_lines.jsonl"
_SKIP_DOCS = {"memory.md", "benchmarks.md"}
_QUOTES_ATTACK = re.compile(r"ignore (?:all )?previous|disregard|you are now|from now on", re.I)
_ATTACK_TEST = re.compile(r"planted|inject|attack|directive|withh|threat|hostile|malicious", re.I)
_PROMPT_MODULES = {"continuation.py", "window.py", "memory_context.py"}
"""Modules whose prose is a note to the summarizer model (not a summary line)."""
_PROMPT_FUNCTIONS = {"retry_note", "_echo", "build_prompt", "render_prompt", "_focus_block"}
_REGEX = re.compile(r"\\[bdswSWD]|\(\?|\[\^|\^\(|\$$|^\^|\\\.|\|.*\|")
_TWO_WORDS = re.compile(r"[^\W\d_]{2,}\S*\s+\S*[^\W\d_]{2,}")
_NUMERIC = re.compile(
    r"count|dropped|removed|cut|tokens|\bn\b|_n\b|num|len\(|size|seconds|first|last|tail|"
    r"index|percent|ratio|saved|before|after|total|limit|budget|\d",
    re.I,
)
SAMPLE_REASONS = (
    "the summarizer returned an empty summary",
    "abandoned at the summary timeout",
    "summary cooldown active (42s remaining); last error: connection reset",
    "summary rejected twice: it lacks the template's headings (Active Task)",
    "no auxiliary LLM provider configured",
)
"""Reasons the product puts into its fallback texts (from summary_writer.py, llm.py)."""


def _value_text(node: ast.expr, names: dict[str, str]) -> str | None:
    """The text of a string expression with its fields filled in (None: not a string)."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        parts = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                parts.append(str(part.value))
            elif isinstance(part, ast.FormattedValue):
                parts.append(_field(part.value, names))
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _value_text(node.left, names), _value_text(node.right, names)
        if left is None and right is None:
            return None
        if left is None:
            left = _field(node.left, names)
        if right is None:
            right = _field(node.right, names)
        return left + right
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    return None


def _field(node: ast.expr, names: dict[str, str]) -> str:
    """A sample value for an f-string field or a name joined to a string."""
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    source = ast.unparse(node)
    if _NUMERIC.search(source):
        return "12"
    words = re.findall(r"[a-z]+", source.split("(")[-1].split(".")[-1].lower())
    return " ".join(words) or "value"


def _module_strings(tree: ast.Module) -> dict[str, str]:
    """Module-level names bound to a plain string (for resolving ``"…" + NAME + "…"``)."""
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                value = _value_text(node.value, out)
                if value is not None:
                    out[target.id] = value
    return out


def _docstring_ids(tree: ast.AST) -> set[int]:
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            ids.add(id(node.value))  # docstrings and attribute docstrings
    return ids


def _parents(tree: ast.AST) -> dict[int, ast.AST]:
    out: dict[int, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            out[id(child)] = node
    return out


def _function_of(node: ast.AST, parents: dict[int, ast.AST]) -> str:
    names = []
    at: ast.AST | None = node
    while at is not None:
        if isinstance(at, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(at.name)
        at = parents.get(id(at))
    return ".".join(reversed(names))


def _outermost_strings(tree: ast.Module) -> Iterator[tuple[ast.expr, str]]:
    """String expressions (with fields filled in), each at its outermost node, with the
    function they are in."""
    names = _module_strings(tree)
    docs = _docstring_ids(tree)
    seen: set[int] = set()
    for node in ast.walk(tree):
        if id(node) in seen or id(node) in docs or not isinstance(node, ast.expr):
            continue
        if not isinstance(node, (ast.Constant, ast.JoinedStr, ast.BinOp)):
            continue
        text = _value_text(node, names)
        if text is None:
            continue
        for inner in ast.walk(node):
            seen.add(id(inner))
        yield node, text


def _prose(text: str) -> bool:
    """Whether a constant reads as text for people (not a regex, key or format)."""
    if _REGEX.search(text):
        return False
    return bool(_TWO_WORDS.search(text)) or text.lstrip().startswith("#")


_STR_METHODS = {"find", "rfind", "index", "startswith", "endswith", "split", "partition",
                "count", "replace", "search", "match"}  # fmt: skip


def _matching_use(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """Whether an expression is text to look for (compared, searched), not text to write."""
    parent = parents.get(id(node))
    if isinstance(parent, (ast.Tuple, ast.List, ast.Set)):
        parent = parents.get(id(parent))
    if isinstance(parent, ast.Compare):
        return True
    return (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Attribute)
        and parent.func.attr in _STR_METHODS
        and node is not parent.func.value
    )


def _matched_against(node: ast.expr, tree: ast.Module, parents: dict[int, ast.AST]) -> bool:
    """A literal only looked for: used in a comparison or a search, directly or through the
    one name it is bound to."""
    if _matching_use(node, parents):
        return True
    parent = parents.get(id(node))
    if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1):
        return False
    target = parent.targets[0]
    if not isinstance(target, ast.Name):
        return False
    uses = [
        n for n in ast.walk(tree)
        if isinstance(n, ast.Name) and n.id == target.id and isinstance(n.ctx, ast.Load)
    ]  # fmt: skip
    return bool(uses) and all(_matching_use(n, parents) for n in uses)


def fixed_text() -> list[tuple[str, str]]:
    """(text, source) for the prose constants of the summarizers and compaction."""
    from palimpsest.compaction.fallback import rule_based_fallback, static_fallback

    out: list[tuple[str, str]] = []
    for folder in ("summarizers", "compaction"):
        for path in sorted((ROOT / "src" / "palimpsest" / folder).glob("*.py")):
            if path.name in _PROMPT_MODULES:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            parents = _parents(tree)
            for node, text in _outermost_strings(tree):
                function = _function_of(node, parents)
                if function.split(".")[-1] in _PROMPT_FUNCTIONS:
                    continue
                if path.name == "summary.py" and not text.lstrip().startswith("#"):
                    continue  # the summarizer's template and preamble: only the headings
                if path.name == "verify.py" and node.lineno < 100:
                    continue  # the template's phrases the echo check looks for
                if _prose(text) and not _matched_against(node, tree, parents):
                    source = f"src/palimpsest/{folder}/{path.name}:{node.lineno}"
                    text = re.sub(r"\{\w*(?::[^}]*)?\}", "12", text)  # str.format fields
                    out.append((text.replace("%d", "12").replace("%s", "x"), source))
    for reason in SAMPLE_REASONS:
        out.append((static_fallback(12, reason), "compaction/fallback.py static_fallback"))
        note = rule_based_fallback("## Active Task\nNone.", 12, reason)
        out.append((note, "compaction/fallback.py rule_based_fallback"))
    return out


def _transcripts() -> list[Path]:
    data = ROOT / "tests" / "data"
    found = [p for p in (data / "transcripts").rglob("*") if p.is_file() and p.suffix != ".md"]
    found += [p for p in (data / "agent-histories").rglob("*") if p.is_file()]
    return sorted(found)


def _user_texts(messages: list[dict[str, Any]]) -> list[str]:
    from palimpsest.messages import content_text

    return [content_text(m.get("content")) for m in messages if m.get("role") == "user"]


def summary_lines() -> list[tuple[str, str, list[str]]]:
    """(summary text, source, user messages) for every summary the product writes for the
    test transcripts, with the planted-directive step off."""
    import palimpsest.summarizers.extractive as extractive
    from palimpsest.compaction.compressor import ContextCompressor
    from palimpsest.compaction.fallback import static_fallback
    from palimpsest.config import Settings
    from palimpsest.errors import TranscriptError
    from palimpsest.messages import content_text, load_transcript
    from palimpsest.messages.markers import END_MARKER, strip_summary_prefix
    from palimpsest.summarizers import ExtractiveSummarizer, SummaryRequest

    extractive.withhold_planted = lambda body, request: body  # type: ignore[assignment]
    summarizer = ExtractiveSummarizer()
    out: list[tuple[str, str, list[str]]] = []
    for path in _transcripts():
        name = str(path.relative_to(ROOT / "tests" / "data"))
        try:
            messages = [dict(m) for m in load_transcript(path)]
        except TranscriptError:
            continue
        turns = [m for m in messages if m.get("role") != "system"]
        if not turns:
            continue
        said = _user_texts(turns)

        def run(
            span: list[dict[str, Any]], budget: int, template: str, previous: str | None
        ) -> str:
            request = SummaryRequest(
                turns=span, previous_summary=previous, focus_topic=None,
                budget_tokens=budget, prompt="", template=template,
            )  # fmt: skip
            return summarizer.summarize(request)

        for template in ("handoff", "classic"):
            for budget in (300, 1_200, 4_000):
                out.append(
                    (run(turns, budget, template, None), f"{name} {template} {budget}", said)
                )
        half = max(1, len(turns) // 2)
        first = run(turns[:half], 1_200, "handoff", None)
        if turns[half:]:
            out.append((run(turns[half:], 1_200, "handoff", first), f"{name} update", said))
        for reason in SAMPLE_REASONS[:2]:
            previous = static_fallback(12, reason)
            out.append((run(turns[half:] or turns, 1_200, "handoff", previous),
                        f"{name} after fallback", said))  # fmt: skip
        for window in (4_000, 16_000):
            for focus in (None, "tests"):
                compressor = ContextCompressor.from_settings(
                    Settings(), context_length=window, quiet_mode=True
                )
                compressed = compressor.compress([dict(m) for m in messages], force=True,
                                                 focus_topic=focus)  # fmt: skip
                for message in compressed:
                    if message.get("_compressed_summary"):
                        # The prefix and end marker address the model on purpose and are
                        # not part of the body the check reads.
                        text = strip_summary_prefix(content_text(message["content"]))
                        text = text.split(END_MARKER)[0]
                        out.append((text, f"{name} compress {window} {focus or ''}".strip(), said))
    return out


def fixture_lines() -> list[tuple[str, str]]:
    """(text, source) for the summaries tests hand the product."""
    from palimpsest.summarizers.extractive import CLASSIC_HEADINGS, HANDOFF_HEADINGS

    headings = {h.lstrip("# ").lower() for h in HANDOFF_HEADINGS + CLASSIC_HEADINGS}
    heading_line = re.compile(r"^\s*#{1,6}\s*(.+?)\s*$|^\s*\*\*(.+?)\*\*:?\s*$", re.M)
    out: list[tuple[str, str]] = []
    for path in sorted((ROOT / "tests").glob("*.py")):
        if _ATTACK_TEST.search(path.name):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parents = _parents(tree)
        for node, text in _outermost_strings(tree):
            function = _function_of(node, parents)
            if _ATTACK_TEST.search(function):
                continue
            named = {(m.group(1) or m.group(2) or "").lower() for m in heading_line.finditer(text)}
            parent = parents.get(id(node))
            previous = isinstance(parent, ast.keyword) and parent.arg == "previous_summary"
            if isinstance(parent, ast.Assign):
                previous = any(
                    isinstance(t, ast.Name) and re.search(r"previous|summary", t.id, re.I)
                    for t in parent.targets
                )
            if named & headings or previous:
                out.append((text, f"tests/{path.name}:{node.lineno}"))
    return out


def _sentences(paragraph: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z`*\"'(])", paragraph) if s.strip()]


def doc_lines() -> list[tuple[str, str]]:
    """(text, source) for the sentences, list items and table cells of docs/*.md."""
    out: list[tuple[str, str]] = []
    for path in sorted((ROOT / "docs").glob("*.md")):
        if path.name in _SKIP_DOCS:
            continue
        fenced = False
        paragraph: list[str] = []
        start = 0
        name = f"docs/{path.name}"

        def flush(at: int, paragraph: list[str] = paragraph, name: str = name) -> None:
            if paragraph:
                for sentence in _sentences(" ".join(paragraph)):
                    out.append((sentence, f"{name}:{at}"))
                paragraph.clear()

        for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            line = raw.strip()
            if line.startswith(("```", "~~~")):
                flush(start)
                fenced = not fenced
                continue
            if fenced:
                continue
            if not line:
                flush(start)
                continue
            if line.startswith("|"):
                flush(start)
                for cell in line.strip("|").split("|"):
                    if cell.strip() and not set(cell.strip()) <= set("-: "):
                        out.append((cell.strip(), f"docs/{path.name}:{number}"))
                continue
            if line.startswith("#") or re.match(r"^(?:[-*+]|\d+[.)])\s", line):
                flush(start)
                start = number
                if line.startswith("#"):
                    out.append((line, f"docs/{path.name}:{number}"))
                    continue
            if not paragraph:
                start = number
            paragraph.append(line)
        flush(start)
    return [(t, s) for t, s in out if not _QUOTES_ATTACK.search(t)]


_YOU = re.compile(r"\byou(?:r|rs|rself|'re|'ll|'ve|'d)?\b", re.I)
_IMPERATIVE = re.compile(
    r"^(?:[-*+]\s+|\d+[.)]\s+)?(?:\*\*)?(?:add|avoid|call|change|check|choose|copy|create|delete|do|"
    r"don't|enable|disable|edit|export|give|import|install|keep|leave|let|make|mind|move|never|note|"
    r"open|pass|pick|pin|put|read|remember|remove|run|see|send|set|start|stop|switch|try|turn|use|"
    r"write)\b",
    re.I,
)


def addressed(text: str) -> bool:
    """Whether a doc line addresses its reader (second person or an imperative opening):
    such a line reads as an instruction to whoever reads it, so it is measured but not held
    to the no-flag requirement."""
    return bool(_YOU.search(text) or _IMPERATIVE.search(text))


def _training_texts() -> list[str]:
    texts: list[str] = []
    for name in TRAIN_SOURCES:
        for line in (TRAINING / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                texts.append(json.loads(line)["text"])
    return texts


def collect() -> list[dict[str, Any]]:
    from palimpsest.safety.threats.directives import _from_user, _UserWords

    rows: dict[str, dict[str, Any]] = {}

    def add(text: str, kind: str, source: str) -> None:
        line = text.strip()
        if len(re.findall(r"\w+", line)) < 1 or line in rows:
            return
        rows[line] = {"text": line, "kind": kind, "source": source}

    for body, source, said in summary_lines():
        users = _UserWords(said)
        for line in body.splitlines():
            if line.strip() and not _from_user(line, users):
                add(line, "summary_line", source)
    for text, source in fixed_text():
        for line in text.splitlines():
            add(line, "fixed_text", source)
    for text, source in fixture_lines():
        for line in text.splitlines():
            add(line, "fixture_line", source)
    for text, source in doc_lines():
        add(text, "doc_line", source)
        if text.strip() in rows and addressed(text) and rows[text.strip()]["kind"] == "doc_line":
            rows[text.strip()]["addressed"] = True
    training = _training_texts()
    exact = set(training)
    joined = "\n".join(training)
    for row in rows.values():
        # A doc sentence inside a training paragraph was training text; a short cell
        # ("30 s") is inside any text, so only sentences of 40 characters or more count.
        inside = row["kind"] == "doc_line" and len(row["text"]) >= 40 and row["text"] in joined
        if row["text"] in exact or inside:
            row["in_train"] = True
    order = {"summary_line": 0, "fixed_text": 1, "fixture_line": 2, "doc_line": 3}
    return sorted(rows.values(), key=lambda r: (order[r["kind"]], r["source"], r["text"]))


def check(rows: list[dict[str, Any]], top: int = 15) -> dict[str, Any]:
    """The directive check on ``rows`` and the model's margin on what it reads.

    Every row is checked as the product checks a summary line (:func:`planted_directives`,
    no user messages: the strictest case). The margin is the model's score of the text the
    check hands it (the line without attributed quotations; headings and lines of fewer
    than two long words are not read), against the model's threshold. Rows of docs that
    address their reader (``addressed``) are reported apart: they are not held to the
    requirement."""
    from palimpsest.safety.threats.directives import (
        _HEADING,
        _WORD,
        MIN_WORDS,
        _reported,
        planted_directives,
    )
    from palimpsest.safety.threats.learned import instruction_score

    threshold = instruction_score("a b c").threshold
    groups: dict[str, dict[str, Any]] = {}
    for row in rows:
        group = "doc_line (addressed)" if row.get("addressed") else row["kind"]
        g = groups.setdefault(group, {"rows": 0, "read": 0, "flagged": [], "scores": []})
        g["rows"] += 1
        text = row["text"]
        for hit in planted_directives(text):
            g["flagged"].append(f"{hit.category}: {text}")
        if _HEADING.match(text):
            continue
        candidate = _reported(text)
        if len(_WORD.findall(candidate)) < MIN_WORDS:
            continue
        g["read"] += 1
        g["scores"].append((instruction_score(candidate).logit, text))
    out: dict[str, Any] = {"threshold": round(threshold, 3), "groups": {}}
    for name, g in groups.items():
        scores = sorted(g["scores"], key=lambda pair: -pair[0])
        out["groups"][name] = {
            "rows": g["rows"],
            "read by the model": g["read"],
            "flagged": len(g["flagged"]),
            "flagged rows": g["flagged"],
            "highest score": round(scores[0][0], 3) if scores else None,
            "within 0.5 of the threshold": sum(1 for z, _ in scores if z > threshold - 0.5),
            "top": [(round(z, 3), t[:110]) for z, t in scores[:top]],
        }
    required = [g for n, g in out["groups"].items() if n != "doc_line (addressed)"]
    out["required: flagged"] = sum(g["flagged"] for g in required)
    out["required: highest score"] = max(
        (g["highest score"] for g in required if g["highest score"] is not None), default=None
    )
    return out


def load() -> list[dict[str, Any]]:
    return [json.loads(line) for line in OUT.read_text(encoding="utf-8").splitlines() if line]


def main() -> None:
    if "--weights" in sys.argv:  # experiments: score with other weights
        from palimpsest.safety.threats import learned

        learned.WEIGHTS_FILE = Path(sys.argv[sys.argv.index("--weights") + 1])
    if "--check" in sys.argv:
        result = check(
            load(), top=int(sys.argv[sys.argv.index("--top") + 1]) if "--top" in sys.argv else 5
        )
        if "--json" in sys.argv:
            print(json.dumps(result, indent=1, ensure_ascii=False))
            return
        print(
            f"threshold {result['threshold']}; required rows: flagged "
            f"{result['required: flagged']}, highest score {result['required: highest score']}"
        )
        for name, g in result["groups"].items():
            print(f"{name}: {g['rows']} rows ({g['read by the model']} read by the model), "
                  f"flagged {g['flagged']}, highest {g['highest score']}, "
                  f"within 0.5: {g['within 0.5 of the threshold']}")  # fmt: skip
            for row in g["flagged rows"]:
                print(f"    FLAGGED {row[:150]}")
            for logit, text in g["top"]:
                print(f"    {logit:7.3f} {text}")
        return
    if os.environ.get("PYTHONHASHSEED") != "0":
        # The extractive summary lists tied identifiers in set order, which follows the
        # process's string hash: fix it, so the file is the same on every run.
        argv = [sys.executable, *sys.argv]
        os.execve(sys.executable, argv, {**os.environ, "PYTHONHASHSEED": "0"})
    rows = collect()
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    replace_bytes(OUT, text.encode("utf-8"), temp_prefix=".product-lines-")
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["kind"]] = counts.get(row["kind"], 0) + 1
    print(f"wrote {len(rows)} rows to {OUT.relative_to(ROOT)}: {counts}, "
          f"in_train {sum(1 for r in rows if r.get('in_train'))}")  # fmt: skip


if __name__ == "__main__":
    main()
