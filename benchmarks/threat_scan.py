"""Block rate and false-positive rate of the memory threat scanner, per category.

    python benchmarks/threat_scan.py            # table
    python benchmarks/threat_scan.py --json     # machine-readable

Runs the corpus in tests/data/threats (attacks.jsonl, benign.jsonl) through the current
scanner in both modes and through the scanner as it was at f71e1ef
(benchmarks/_threats_baseline.py), separately for the tuned and the held-out split. The
held-out third was not used to tune the rules; the team also checks attack corpora we do
not have, so the held-out figures are the ones to trust.
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import _threats_baseline as baseline  # noqa: E402
from palimpsest.safety.threats import scan_threats  # noqa: E402

DATA = ROOT / "tests" / "data" / "threats"
Scanner = Callable[[str], bool]

SCANNERS: dict[str, Scanner] = {
    "baseline standard": lambda t: baseline.scan_threats(t, "standard") is not None,
    "baseline strict": lambda t: baseline.scan_threats(t, "strict") is not None,
    "standard": lambda t: scan_threats(t, "standard") is not None,
    "strict": lambda t: scan_threats(t, "strict") is not None,
}


def _load(name: str) -> list[dict[str, str]]:
    text = (DATA / name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _rates(rows: list[dict[str, str]], scanner: Scanner) -> dict[str, tuple[int, int]]:
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for row in rows:
        blocked = scanner(row["text"])
        for key in (row["category"], "all"):
            out[key][0] += blocked
            out[key][1] += 1
    return {k: (v[0], v[1]) for k, v in out.items()}


def measure() -> dict[str, object]:
    attacks, benign = _load("attacks.jsonl"), _load("benign.jsonl")
    result: dict[str, object] = {}
    for name, scanner in SCANNERS.items():
        start = time.perf_counter()
        per_split = {}
        for split in ("tuned", "holdout", "all"):
            pick = (lambda r: True) if split == "all" else (lambda r, s=split: r["split"] == s)
            per_split[split] = {
                "attacks": _rates([r for r in attacks if pick(r)], scanner),
                "benign": _rates([r for r in benign if pick(r)], scanner),
            }
        per_split["seconds"] = round(time.perf_counter() - start, 2)  # type: ignore[assignment]
        result[name] = per_split
    return result


def _pct(pair: tuple[int, int] | None) -> str:
    if not pair or not pair[1]:
        return "–"
    return f"{pair[0] / pair[1]:.1%} ({pair[0]}/{pair[1]})"


def render(result: dict[str, object]) -> str:
    names = list(SCANNERS)
    lines = []
    for split in ("all", "tuned", "holdout"):
        lines.append(f"\n### {split}: attacks blocked / benign notes blocked (false positives)\n")
        lines.append("| category | " + " | ".join(names) + " |")
        lines.append("|---|" + "---:|" * len(names))
        cats = sorted({c for n in names for c in result[n][split]["attacks"]} - {"all"})  # type: ignore[index]
        for kind in ("attacks", "benign"):
            bcats = sorted({c for n in names for c in result[n][split][kind]} - {"all"})  # type: ignore[index]
            for cat in (cats if kind == "attacks" else bcats) + ["all"]:
                cells = [_pct(result[n][split][kind].get(cat)) for n in names]  # type: ignore[index]
                label = f"**{kind}: {cat}**" if cat == "all" else f"{kind}: {cat}"
                lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    measured = measure()
    print(json.dumps(measured, indent=1) if "--json" in sys.argv else render(measured))
