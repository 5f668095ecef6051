"""Peak memory and time to take a huge shell output out of the context, streamed vs in memory.

A command prints ``--size-mb`` MiB of log lines (``yes '<line>' | head -c N``: one line says
``password=...`` so that redaction has something to do). Two ways to keep that output out
of the context, each in its own fresh process so that its peak memory (``ru_maxrss``) is
its own:

- **streamed** (palimpsest): ``run_shell``'s runner spools the output to a file as it
  arrives; :class:`~palimpsest.outputs.guard.OutputGuard` stores it in the
  content-addressed store (hashed and redacted chunk by chunk) and builds the preview
  block from the stored file's head and tail;
- **in memory** (the baseline, what a loop does when a tool returns its output as a string,
  as the reference design's terminal tool does): ``subprocess.run(capture_output=True)``,
  decode, then the same guard and store given the string.

Both end with the same preview block and the same stored object (checked). Run:

    python benchmarks/tool_output.py [--size-mb 1024] [--skip-baseline]

Memory is the process's peak resident size, which includes the interpreter and the imports
(about 60-80 MiB here): the ``import only`` row measures that floor.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

LINE = "2026-11-26 12:00:00 INFO worker-3 processed batch 1234 of 99999 in 0.42 s, ok"
SECRET_LINE = "config loaded: password=hunter2hunter2 region=eu-west-1"


def _command(size: int) -> str:
    return f"(echo '{SECRET_LINE}'; yes '{LINE}') | head -c {size}"


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _child(mode: str, size: int, root: str) -> dict[str, Any]:
    """One measurement, run in a fresh process (``--child``)."""
    from palimpsest.agent.shell_run import run_command
    from palimpsest.outputs.guard import OutputGuard
    from palimpsest.outputs.store import OutputStore

    result: dict[str, Any] = {"mode": mode, "floor_mib": round(_peak_mib(), 1)}
    if mode == "import":
        result["peak_mib"] = result["floor_mib"]
        return result
    store = OutputStore(Path(root) / mode)
    guard = OutputGuard(store, session_id="bench")
    started = time.perf_counter()
    if mode == "streamed":
        produced = run_command(_command(size), Path(root), timeout=3600, output_cap=30_000)
        ran = time.perf_counter()
        block = guard.admit(produced, tool_name="run_shell", call_id="c1", registry_max=100_000)
    else:
        done = subprocess.run(
            ["bash", "-c", _command(size)], capture_output=True, check=True, timeout=3600
        )
        text = done.stdout.decode("utf-8", errors="replace") + "\nexit code: 0\n"
        del done
        ran = time.perf_counter()
        block = guard.admit(text, tool_name="run_shell", call_id="c1", registry_max=100_000)
    finished = time.perf_counter()
    saved = store.list()
    result.update(
        peak_mib=round(_peak_mib(), 1),
        command_s=round(ran - started, 2),
        store_s=round(finished - ran, 2),
        total_s=round(finished - started, 2),
        block_chars=len(block),
        stored_bytes=saved[0].size_bytes if saved else None,
        redacted="hunter2hunter2" not in block
        and b"hunter2hunter2" not in (saved[0].path.read_bytes()[:4096] if saved else b""),
    )
    store.close()
    return result


def _run_child(mode: str, size: int, root: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", mode, "--bytes", str(size), "--root", root],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{mode} failed:\n{done.stderr}")
    parsed: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return parsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=1024.0)
    parser.add_argument("--skip-baseline", action="store_true")
    parser.add_argument("--child", choices=["import", "streamed", "in_memory"])
    parser.add_argument("--bytes", type=int, default=0)
    parser.add_argument("--root", default="")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(args.child, args.bytes, args.root)))
        return
    size = int(args.size_mb * 1024 * 1024)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    print(f"output: {size:,} bytes ({args.size_mb:g} MiB) of log lines from a shell command\n")
    modes = ["import", "streamed"] + ([] if args.skip_baseline else ["in_memory"])
    rows = []
    with tempfile.TemporaryDirectory(prefix="palimpsest-bench-") as root:
        for mode in modes:
            rows.append(_run_child(mode, size, root))
            print(json.dumps(rows[-1]))
    print()
    print(
        f"{'mode':<10} {'peak MiB':>9} {'command s':>10} {'store s':>8} {'total s':>8}  stored bytes"
    )
    for row in rows:
        print(
            f"{row['mode']:<10} {row['peak_mib']:>9} {row.get('command_s', ''):>10} "
            f"{row.get('store_s', ''):>8} {row.get('total_s', ''):>8}  {row.get('stored_bytes', '')}"
        )
    by_mode = {row["mode"]: row for row in rows}
    if "in_memory" in by_mode:
        streamed, baseline = by_mode["streamed"], by_mode["in_memory"]
        print(
            f"\npeak memory, streamed / in memory: {streamed['peak_mib'] / baseline['peak_mib']:.3f}"
            f"; total time, streamed / in memory: {streamed['total_s'] / baseline['total_s']:.2f}"
        )
        same = streamed["stored_bytes"] == baseline["stored_bytes"]
        print(f"same stored object size: {same}")


if __name__ == "__main__":
    main()
