"""Extract large benign evaluation sets for the threat scanner from text nobody wrote for it.

    python benchmarks/threat_benign_extract.py   # writes tests/data/threats/training/real_benign_*.jsonl

The hand-written held-out negatives are 25-40 rows per file: too few to tell 1% of false
positives from 4%. This script takes text written by people who never saw the scanner's
rules, all of it already on a developer machine (no download):

- **developer notes**: entries of Debian package changelogs (``/usr/share/doc/*/
  changelog.Debian.gz``: what maintainers write when they change something), ``#`` comment
  blocks in the third-party packages installed in the virtualenv, and prose paragraphs of
  those packages' READMEs (the long description in ``*.dist-info/METADATA``);
- **ordinary questions**: the sentences ending in "?" in those READMEs and in the
  README/FAQ/NEWS files under ``/usr/share/doc`` (FAQ entries, "why does X …?"), and the
  user turns of the real agent transcripts in ``../shared/data/transcripts`` (requests).

The split is fixed here, before any tuning: every row belongs to a *unit* (one Debian
package, one Python distribution, one transcript file) and a unit goes wholly to train,
validation or test by a seeded hash of its name (60/20/20). Rows per unit are capped so
no single package dominates. The output is sorted and deterministic for a given machine
(package versions change what is extracted; the committed files are what was measured).

Screening: before the split was used, every row containing attack vocabulary
(``_VOCAB``) was read by hand, whatever its split; none was an instruction to a model, so
all rows are labelled benign. Rows are otherwise not read; the test split is only ever
reported as totals.
"""

from __future__ import annotations

import ast
import gzip
import hashlib
import itertools
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "threats" / "training"
FILES = {"dev_notes": "real_benign_notes.jsonl", "questions": "real_benign_questions.jsonl"}
SITE = (
    Path(sys.prefix)
    / "lib"
    / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    / "site-packages"
)
DEBIAN_DOC = Path("/usr/share/doc")
INFO = Path("/usr/share/info")
TRANSCRIPTS = ROOT.parent.parent / "shared" / "data" / "transcripts"
SEED = "benign-real-2026-11-27"
SPLITS = (("train", 60), ("validation", 20), ("test", 20))
CAP = {"changelog": 25, "comment": 40, "readme": 25, "question": 120, "transcript": 20}
_SKIP_DISTS = {"palimpsest"}
_VOCAB = re.compile(
    r"ignor|disregard|instruction|prompt|jailbreak|system message|you are now|from now on|"
    r"pretend|role-?play|unrestricted|override|bypass|exfiltrat|reveal|secret|password|token",
    re.IGNORECASE,
)
_SPACE = re.compile(r"\s+")
_LETTERS = re.compile(r"[A-Za-z]{3,}")


def _clean(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def _prose(text: str, low: int = 40, high: int = 700) -> bool:
    """Enough words to be prose, not code or a heading."""
    if not low <= len(text) <= high or len(_LETTERS.findall(text)) < 5:
        return False
    code = sum(text.count(c) for c in "{}=();<>[]_\\|")
    return code / len(text) < 0.04 and "http" not in text[:12]


def split_of(unit: str) -> str:
    point = int(hashlib.sha256(f"{SEED}:{unit}".encode()).hexdigest(), 16) % 100
    edge = 0
    for name, share in SPLITS:
        edge += share
        if point < edge:
            return name
    return SPLITS[-1][0]


def _capped(unit: str, kind: str, texts: Iterator[str], limit: int) -> Iterator[tuple[str, str]]:
    """At most ``limit`` texts of one unit, spread over the unit (every k-th)."""
    items = list(dict.fromkeys(texts))
    step = max(1, len(items) // limit)
    for text in items[::step][:limit]:
        yield unit, text


# --- developer notes ----------------------------------------------------------------------


def _changelog_entries(path: Path) -> Iterator[str]:
    text = gzip.decompress(path.read_bytes()).decode("utf-8", "replace")
    entry: list[str] = []
    for line in text.splitlines():
        bullet = re.match(r"^\s{2,4}[*-+] (.*)", line)
        if bullet or not line.startswith("    ") or not line.strip():
            if entry:
                yield _clean(" ".join(entry))
            entry = [bullet.group(1)] if bullet else []
        else:
            entry.append(line.strip())
    if entry:
        yield _clean(" ".join(entry))


def changelog_rows() -> Iterator[tuple[str, str, str]]:
    for path in sorted(DEBIAN_DOC.glob("*/changelog.Debian.gz")):
        unit = f"debian:{path.parent.name}"
        texts = (t for t in _changelog_entries(path) if _prose(t, 30))
        for u, t in _capped(unit, "dev_note", texts, CAP["changelog"]):
            yield u, "dev_note", t


def _dists() -> list[tuple[str, Path]]:
    out = []
    for info in sorted(SITE.glob("*.dist-info")):
        name = info.name.split("-")[0].lower()
        if name in _SKIP_DISTS:
            continue
        out.append((name, info))
    return out


def _dist_files(info: Path) -> list[Path]:
    record = info / "RECORD"
    if not record.exists():
        return []
    files = []
    for line in record.read_text(encoding="utf-8", errors="replace").splitlines():
        rel = line.split(",")[0]
        if rel.endswith(".py") and "/tests/" not in rel and not rel.startswith("../"):
            files.append(SITE / rel)
    return sorted(files)


def _comment_blocks(path: Path) -> Iterator[str]:
    block: list[str] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return
    for line in [*lines, ""]:
        stripped = line.strip()
        if stripped.startswith("#") and not stripped.startswith("#!"):
            block.append(stripped.lstrip("#").strip())
        else:
            if block:
                text = _clean(" ".join(block))
                if not re.search(
                    r"licen[cs]e|copyright|type: ?ignore|noqa|pragma|-\*-", text, re.I
                ):
                    yield text
            block = []


def comment_rows() -> Iterator[tuple[str, str, str]]:
    for name, info in _dists():
        texts = (t for f in _dist_files(info) for t in _comment_blocks(f) if _prose(t))
        for u, t in _capped(f"pypi:{name}", "dev_note", texts, CAP["comment"]):
            yield u, "dev_note", t


def _readme(info: Path) -> str:
    meta = info / "METADATA"
    if not meta.exists():
        return ""
    text = meta.read_text(encoding="utf-8", errors="replace")
    _, _, body = text.partition("\n\n")
    return body


def _paragraphs(text: str) -> Iterator[str]:
    fenced = False
    para: list[str] = []
    for line in [*text.splitlines(), ""]:
        if line.strip().startswith(("```", "~~~")):
            fenced = not fenced
            para = []
            continue
        if fenced or line.startswith(("    ", "\t", "|", ">>>", "$ ", "[!", "<", "..")):
            continue
        if not line.strip():
            if para:
                yield _clean(" ".join(para))
            para = []
        elif not re.match(r"^\s*(#+ |[=\-~^*]{3,}\s*$)", line):
            para.append(line.strip().lstrip("-* "))
    if para:
        yield _clean(" ".join(para))


_MARKUP = re.compile(r"!?\[([^\]]*)\]\([^)]*\)|`+|\*\*|<[^>]+>|:\w+:")


def readme_rows() -> Iterator[tuple[str, str, str]]:
    for name, info in _dists():
        paras = [_MARKUP.sub(r"\1", p) for p in _paragraphs(_readme(info))]
        texts = (p for p in paras if _prose(p, 60) and not p.endswith("?"))
        for u, t in _capped(f"pypi:{name}", "dev_note", texts, CAP["readme"]):
            yield u, "dev_note", t


# --- questions --------------------------------------------------------------------------

_DOC_NODES = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
_ASKS = re.compile(
    r"(?:What|How|Why|Can|Is|Does|Where|When|Who|Which|Could|Should|Do|Are|Would|Will)\b"
)
_SENTENCE = re.compile(r"(?<=[.!?:])\s+(?=[A-Z\"'(])")


def _questions(text: str) -> Iterator[str]:
    for para in _paragraphs(text):
        para = _MARKUP.sub(r"\1", para)
        for sentence in _SENTENCE.split(para):
            sentence = sentence.strip().lstrip("Q:").strip()
            if sentence.endswith("?") and _prose(sentence, 20, 300) and len(sentence.split()) >= 4:
                yield sentence


def _doc_text(path: Path) -> str:
    try:
        raw = path.read_bytes()[:2_000_000]
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
    except (OSError, EOFError, gzip.BadGzipFile):
        return ""
    if b"\0" in raw[:4096]:
        return ""
    return raw.decode("utf-8", "replace")


def _docstring_questions(path: Path) -> Iterator[str]:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return
    for node in ast.walk(tree):
        if isinstance(node, _DOC_NODES) and (doc := ast.get_docstring(node)):
            yield from _questions(doc)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value.strip()
            if _ASKS.match(text) and text.endswith("?") and "\n" not in text:
                yield from _questions(text)


def question_rows() -> Iterator[tuple[str, str, str]]:
    for name, info in _dists():
        texts = itertools.chain(
            _questions(_readme(info)),
            (q for f in _dist_files(info) for q in _docstring_questions(f)),
            (q for f in _dist_files(info) for b in _comment_blocks(f) for q in _questions(b)),
        )
        for u, t in _capped(f"pypi:{name}", "question", texts, CAP["question"]):
            yield u, "question", t
    for folder in sorted(p for p in DEBIAN_DOC.iterdir() if p.is_dir()):
        docs = sorted(
            p
            for p in folder.rglob("*")
            if p.is_file()
            and not p.name.startswith(("copyright", "changelog"))
            and p.suffix in {"", ".gz", ".txt", ".md", ".Debian"}
        )
        texts = (q for p in docs for q in _questions(_doc_text(p)))
        for u, t in _capped(f"debian:{folder.name}", "question", texts, CAP["question"]):
            yield u, "question", t
    for path in sorted(INFO.glob("*.info*.gz")):
        unit = f"info:{path.name.split('.')[0]}"
        texts = _questions(_doc_text(path))
        for u, t in _capped(unit, "question", texts, CAP["question"]):
            yield u, "question", t


def _user_turns(path: Path) -> Iterator[str]:
    raw = path.read_text(encoding="utf-8")
    try:
        data = json.loads(raw)
        messages = data.get("history", data.get("messages", [])) if isinstance(data, dict) else data
        items = [messages] if isinstance(messages, dict) else messages
    except json.JSONDecodeError:
        items = [json.loads(line) for line in raw.splitlines() if line.strip()]
    for item in items:
        message = item.get("message", item) if isinstance(item, dict) else {}
        payload = item.get("payload", {}) if isinstance(item, dict) else {}
        if isinstance(payload, dict) and payload.get("role") == "user":
            message = payload
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        if item.get("message_type") == "observation" or item.get("is_demo"):
            continue
        content = message.get("content")
        parts = [content] if isinstance(content, str) else content or []
        for part in parts:
            text = part if isinstance(part, str) else part.get("text", "")
            if isinstance(text, str) and 20 <= len(text.strip()) <= 6000:
                yield text.strip()


def transcript_rows() -> Iterator[tuple[str, str, str]]:
    for path in sorted(p for p in TRANSCRIPTS.rglob("*") if p.is_file()):
        if path.suffix not in {".traj", ".json", ".jsonl"}:
            continue
        turns = list(_user_turns(path))
        texts = iter(turns if path.suffix == ".jsonl" else turns[:1])
        for u, t in _capped(f"transcript:{path.name}", "request", texts, CAP["transcript"]):
            yield u, "request", t


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    seen: set[str] = set()
    rows: dict[str, list[dict[str, str]]] = {"dev_notes": [], "questions": []}
    sources = (
        ("debian_changelog", changelog_rows()),
        ("pypi_comments", comment_rows()),
        ("pypi_readme", readme_rows()),
        ("doc_questions", question_rows()),
        ("transcript_requests", transcript_rows()),
    )
    for source, produced in sources:
        for unit, kind, text in produced:
            if text in seen:
                continue
            seen.add(text)
            group = "dev_notes" if kind == "dev_note" else "questions"
            row = {"text": text, "label": "benign", "kind": kind, "lang": "en"}
            rows[group].append({**row, "source": source, "unit": unit, "split": split_of(unit)})
    for group, items in rows.items():
        path = OUT / FILES[group]
        path.write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in items), encoding="utf-8"
        )
        counts = {s: sum(r["split"] == s for r in items) for s, _ in SPLITS}
        print(f"{path.relative_to(ROOT)}: {len(items)} rows {counts}")
    vocab = [r for items in rows.values() for r in items if _VOCAB.search(r["text"])]
    if "--review" in sys.argv:  # the rows to read by hand (not committed)
        Path("benign_real_vocab_review.txt").write_text(
            "".join(f"{r['source']}\t{r['unit']}\t{r['text']}\n" for r in vocab), encoding="utf-8"
        )
    print(f"{len(vocab)} rows with attack vocabulary (read by hand before the split was used)")


if __name__ == "__main__":
    main()
