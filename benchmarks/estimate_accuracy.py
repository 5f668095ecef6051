"""How far the rough chars/4 estimate is from a real tokenizer, before and after calibration.

Run: ``python benchmarks/estimate_accuracy.py`` (from the repository root; ``--json`` for
machine output, ``--transcripts DIR`` to use other files).

Ground truth is the exact o200k_base count (``palimpsest.tokens.ExactCounter``, the
GPT-4o tokenizer, offline via bpe-openai) of the same message list. Every transcript is
replayed as an agent would send it: request *k* carries messages ``[0, k)``. For each
request the benchmark records the rough estimate and the exact count.

Calibration is replayed causally, the way the agent loop uses ``EstimateCalibrator``:
before request *k* the calibrator scales the rough estimate with what it learned from
requests ``< k``; after it, the exact count is fed back as the provider's "real" prompt
tokens (``observe``). So each calibrated estimate only uses earlier requests.

- *cold*: a fresh calibrator per transcript (a new session with nothing persisted);
- *warm*: one calibrator carried across the transcripts in the order listed (state
  persisted between sessions, as ``to_dict``/``from_dict`` allow).

Errors are relative, ``(estimate - exact) / exact``. Requests whose exact count is below
``MIN_TOKENS`` (256, the calibrator's own floor) are left out of the statistics because a
few tokens of framing dominate their ratio.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from palimpsest.calibration import DEFAULT_MIN_TOKENS, EstimateCalibrator
from palimpsest.tokens import ExactCounter, estimate_messages_tokens_rough

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DIR = ROOT.parent / "shared" / "data" / "transcripts"
MODEL = "gpt-4o"  # o200k_base is GPT-4o's tokenizer; the calibrator keys on the model name
MIN_TOKENS = DEFAULT_MIN_TOKENS


def load_messages(path: Path) -> list[dict[str, Any]]:
    """Messages of one transcript file, through the library's loader."""
    try:
        from palimpsest.messages import load_transcript
    except ImportError:  # the loader arrived in a later version than this benchmark
        data = json.loads(path.read_text(encoding="utf-8"))
        return list(data["messages"] if isinstance(data, dict) else data)
    return list(load_transcript(path))


@dataclass
class Series:
    name: str
    messages: int
    rough: list[int] = field(default_factory=list)
    exact: list[int] = field(default_factory=list)
    cold: list[int] = field(default_factory=list)
    warm: list[int] = field(default_factory=list)
    primed: list[bool] = field(default_factory=list)
    """Whether the cold calibrator had learned anything before this request."""

    def errors(self, estimates: list[int], *, primed_only: bool = False) -> list[float]:
        return [
            (est - ex) / ex
            for est, ex, primed in zip(estimates, self.exact, self.primed, strict=True)
            if ex >= MIN_TOKENS and (primed or not primed_only)
        ]


def replay(path: Path, counter: ExactCounter, warm: EstimateCalibrator) -> Series:
    messages = load_messages(path)
    cold = EstimateCalibrator()
    series = Series(name=str(path.relative_to(path.parents[1])), messages=len(messages))
    for k in range(1, len(messages) + 1):
        prefix = messages[:k]
        rough = estimate_messages_tokens_rough(prefix)
        exact = counter.count_messages(prefix)
        series.rough.append(rough)
        series.exact.append(exact)
        series.cold.append(cold.calibrated(MODEL, rough))
        series.primed.append(cold.state(MODEL) is not None)
        series.warm.append(warm.calibrated(MODEL, rough))
        cold.observe(MODEL, rough, exact)  # the response's real prompt tokens arrive
        warm.observe(MODEL, rough, exact)
    return series


def stats(errors: list[float]) -> tuple[float, float, float]:
    """(mean |error|, worst |error|, mean signed error) as fractions."""
    if not errors:
        return (float("nan"), float("nan"), float("nan"))
    absolute = [abs(e) for e in errors]
    return (statistics.fmean(absolute), max(absolute), statistics.fmean(errors))


def pct(x: float) -> str:
    return "n/a" if x != x else f"{100 * x:.1f}%"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--transcripts", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--json", action="store_true", help="print machine-readable results")
    args = parser.parse_args(argv)

    files = sorted(p for p in args.transcripts.rglob("*") if p.is_file() and p.suffix != ".md")
    if not files:
        print(f"no transcripts under {args.transcripts}", file=sys.stderr)
        return 2
    counter = ExactCounter("o200k_base")
    warm = EstimateCalibrator()
    started = time.perf_counter()
    all_series = [replay(p, counter, warm) for p in files]
    elapsed = time.perf_counter() - started

    rows = []
    pooled: dict[str, list[float]] = {"rough": [], "cold": [], "warm": []}
    primed: dict[str, list[float]] = {"rough": [], "cold": []}
    for s in all_series:
        full_err = (s.rough[-1] - s.exact[-1]) / s.exact[-1] if s.exact[-1] else float("nan")
        row: dict[str, Any] = {
            "transcript": s.name,
            "messages": s.messages,
            "exact_tokens": s.exact[-1],
            "rough_tokens": s.rough[-1],
            "full_error": full_err,
            "requests_scored": len(s.errors(s.rough)),
        }
        for key, estimates in (("rough", s.rough), ("cold", s.cold), ("warm", s.warm)):
            errors = s.errors(estimates)
            pooled[key].extend(errors)
            if key in primed:
                primed[key].extend(s.errors(estimates, primed_only=True))
            row[key] = dict(
                zip(("mean_abs", "worst_abs", "mean_signed"), stats(errors), strict=True)
            )
        rows.append(row)
    names = ("mean_abs", "worst_abs", "mean_signed")
    overall = {k: dict(zip(names, stats(v), strict=True)) for k, v in pooled.items()}
    seen = {k: dict(zip(names, stats(v), strict=True)) for k, v in primed.items()}

    if args.json:
        out = {"rows": rows, "overall": overall, "primed": seen, "factor": warm.factor(MODEL)}
        print(json.dumps(out, indent=2))
        return 0

    print(f"# Rough vs exact o200k token counts ({len(files)} transcripts, {args.transcripts})")
    print(
        f"machine: {platform.machine()}, Python {platform.python_version()}, "
        f"{elapsed:.1f} s for {sum(len(s.exact) for s in all_series)} requests"
    )
    print()
    print(
        "| transcript | msgs | exact | rough | full-transcript error | requests | "
        "rough mean / worst | cold-calibrated mean / worst | warm-calibrated mean / worst |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        cells = [
            f"{pct(r[k]['mean_abs'])} / {pct(r[k]['worst_abs'])}" for k in ("rough", "cold", "warm")
        ]
        print(
            f"| {r['transcript']} | {r['messages']} | {r['exact_tokens']:,} | "
            f"{r['rough_tokens']:,} | {100 * r['full_error']:+.1f}% | {r['requests_scored']} | "
            + " | ".join(cells)
            + " |"
        )
    cells = [
        f"**{pct(overall[k]['mean_abs'])} / {pct(overall[k]['worst_abs'])}**"
        for k in ("rough", "cold", "warm")
    ]
    print(f"| **all** | | | | | {len(pooled['rough'])} | " + " | ".join(cells) + " |")
    print()
    print(
        "mean signed error (negative = underestimate): "
        + ", ".join(
            f"{k} {100 * overall[k]['mean_signed']:+.1f}%" for k in ("rough", "cold", "warm")
        )
    )
    print(
        f"requests after the session's first observation ({len(primed['cold'])}): "
        f"rough {pct(seen['rough']['mean_abs'])} / {pct(seen['rough']['worst_abs'])}, "
        f"cold-calibrated {pct(seen['cold']['mean_abs'])} / {pct(seen['cold']['worst_abs'])} "
        "(mean / worst |error|)"
    )
    print(f"warm calibrator's final factor for {MODEL}: {warm.factor(MODEL):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
