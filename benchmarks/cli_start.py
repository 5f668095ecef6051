"""How long the CLI takes to start, against importing the libraries it is built on.

Issue 27: ``palimpsest --help`` imported the whole package (store, compressor, agent,
pydantic settings) before printing a line. The floor is ``python -c "import typer, rich"``,
the two libraries every help screen needs, timed alternately with the commands below in
the same run so that the machine's load falls on both. Prints wall-clock medians of
``--repeat`` runs of each, and each command's ratio to the floor.

Usage: ``python benchmarks/cli_start.py [--repeat 10] [--json]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

CASES: dict[str, list[str]] = {
    "floor: import typer, rich": ["-c", "import typer, rich"],
    "import palimpsest": ["-c", "import palimpsest"],
    "palimpsest --help": ["-m", "palimpsest.cli", "--help"],
    "palimpsest --version": ["-m", "palimpsest.cli", "--version"],
    "palimpsest config path": ["-m", "palimpsest.cli", "config", "path"],
    "palimpsest sessions --help": ["-m", "palimpsest.cli", "sessions", "--help"],
}


def _time(args: list[str]) -> float:
    env = {"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin", "COLUMNS": "80"}
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], env=env, capture_output=True, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    opts = parser.parse_args()
    for args in CASES.values():  # warm the file cache and the .pyc files
        _time(args)
    times: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(opts.repeat):  # alternate, so load drifts hit every case alike
        for name, args in CASES.items():
            times[name].append(_time(args))
    medians = {name: statistics.median(values) for name, values in times.items()}
    floor = medians["floor: import typer, rich"]
    if opts.json:
        print(json.dumps({n: {"median_s": m, "ratio": m / floor} for n, m in medians.items()}))
        return
    print(f"{'command':<32} {'median ms':>10} {'x floor':>8}")
    for name, median in medians.items():
        print(f"{name:<32} {median * 1000:>10.1f} {median / floor:>8.2f}")


if __name__ == "__main__":
    main()
