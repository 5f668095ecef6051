"""``palimpsest trajectories compress``: errors, stdin to stdout, resume after SIGKILL.

The kill, the resume after it and a shadowed import run as real subprocesses; the rest goes
through the console script's ``main`` in this process (``cli_inproc``), in the same folder."""

from __future__ import annotations

import json
import os
import random
import signal
import stat
import subprocess
import sys
import time
from contextlib import chdir
from pathlib import Path

import pytest

from cli_inproc import invoke_cli

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "tests" / "data" / "trajectories" / "real_sharegpt.jsonl"
CONFIG = "compression:\n  target_max_tokens: 1500\n  summary_target_tokens: 150\n"


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "palimpsest.cli", "trajectories", "compress", *args]


def env(home: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PALIMPSEST_HOME": str(home),
            "PYTHONPATH": str(ROOT / "src")}  # fmt: skip


def cli(home: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command(*args), cwd=cwd, env=env(home), capture_output=True,
                          text=True, timeout=300, check=False)  # fmt: skip


def cli_here(
    home: Path, *args: str, cwd: Path, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """:func:`cli` in this process, run from ``cwd``."""
    with chdir(cwd):
        return invoke_cli("trajectories", "compress", *args, stdin=stdin,
                          env={"PALIMPSEST_HOME": str(home)})  # fmt: skip


def dataset(path: Path, copies: int) -> Path:
    """``copies`` entries cut from the real trajectories (different lengths, real turns)."""
    real = [json.loads(line) for line in REAL.read_text(encoding="utf-8").splitlines()]
    with path.open("w", encoding="utf-8") as out:
        for i in range(copies):
            src = real[i % len(real)]
            turns = src["conversations"]
            cut = 6 + (i * 7) % max(1, len(turns) - 8)
            body = turns[:cut] + turns[-2:]
            if body[cut - 1]["from"] == "gpt":  # never end the window on a lone tool call
                body = turns[: cut - 1] + turns[-2:]
            out.write(json.dumps({"id": i, "conversations": body, "meta": src["meta"]}) + "\n")
    return path


def test_compress_writes_the_tj02_output_metrics_and_a_summary(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The summary table on a screen wide enough for its absolute paths, however long the
    # temp dir makes them (a pytest-xdist worker adds popen-gwN/): at 80 columns a row
    # wraps. The CLI's stderr console read COLUMNS once, when the first test imported it.
    from palimpsest.cli.common import err_console

    monkeypatch.setattr(err_console, "_width", 300)
    source = dataset(tmp_path / "data.jsonl", 6)
    (tmp_path / "cfg.yaml").write_text(CONFIG)
    done = cli_here(
        isolated_home,
        str(source),
        "--trajectory-config",
        "cfg.yaml",
        "--workers",
        "1",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    out = tmp_path / "data_compressed.jsonl"
    entries = [json.loads(line) for line in out.read_text().splitlines()]
    assert [e["id"] for e in entries] == list(range(6))
    metrics = json.loads((tmp_path / "compression_metrics.json").read_text())
    assert metrics["total_trajectories"] == 6 and metrics["compressed"] >= 1
    assert "tokens saved" in done.stderr and "data_compressed.jsonl" in done.stderr
    summaries = [t["value"] for e in entries if "compression_metrics" in e
                 for t in e["conversations"] if t["value"].startswith("[CONTEXT SUMMARY]:")]  # fmt: skip
    assert summaries and all("None" not in s[:40] for s in summaries)


@pytest.mark.parametrize(
    ("args", "setup", "message"),
    [
        (["missing.jsonl"], None, "missing.jsonl: no such file or directory"),
        (
            ["data.jsonl", "--trajectory-config", "cfg.yaml"],
            "compression:\n  target_max_tokns: 5\n",
            "unknown key 'compression.target_max_tokns'",
        ),
        (["data.jsonl", "--tokenizer", "no_such_encoding"], None, "no_such_encoding"),
        (
            ["data.jsonl", "-o", "exists.jsonl"],
            None,
            "exists.jsonl already exists; pass --overwrite",
        ),
    ],
)
def test_user_mistakes_are_one_line_and_exit_2(
    tmp_path: Path, isolated_home: Path, args: list[str], setup: str | None, message: str
) -> None:
    dataset(tmp_path / "data.jsonl", 1)
    (tmp_path / "exists.jsonl").write_text("x\n")
    if setup is not None:
        (tmp_path / "cfg.yaml").write_text(setup)
    done = cli_here(isolated_home, *args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert (tmp_path / "exists.jsonl").read_text() == "x\n"


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("/dev/null", "is a character device"),
        ("fifo", "named pipe (FIFO)"),
        ("/dev/stdout", "standard stream"),
    ],
)
def test_an_output_that_is_not_a_regular_file_is_refused_even_with_overwrite(
    tmp_path: Path, isolated_home: Path, target: str, message: str
) -> None:
    """Issue 20: the output is checked before any work; --overwrite does not change that."""
    dataset(tmp_path / "data.jsonl", 1)
    os.mkfifo(tmp_path / "fifo")
    done = cli_here(isolated_home, "data.jsonl", "-o", target, "--overwrite", cwd=tmp_path)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert stat.S_ISFIFO(os.lstat(tmp_path / "fifo").st_mode)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_directory_input_refuses_a_file_output(tmp_path: Path, isolated_home: Path) -> None:
    (tmp_path / "in").mkdir()
    dataset(tmp_path / "in" / "data.jsonl", 1)
    (tmp_path / "out.txt").write_text("keep")
    done = cli_here(isolated_home, "in", "-o", "out.txt", "--overwrite", cwd=tmp_path)
    assert done.returncode == 2 and "out.txt: is not a directory" in done.stderr, done.stderr
    assert (tmp_path / "out.txt").read_text() == "keep"


def test_stdin_to_stdout(tmp_path: Path, isolated_home: Path) -> None:
    source = dataset(tmp_path / "data.jsonl", 3)
    done = cli_here(isolated_home, "-", "-o", "-", "--workers", "1", "--quiet", cwd=tmp_path,
                    stdin=source.read_text())  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["id"] for line in done.stdout.splitlines()] == [0, 1, 2]


def test_a_run_killed_at_a_random_point_resumes_to_identical_output(
    tmp_path: Path, isolated_home: Path
) -> None:
    source = dataset(tmp_path / "data.jsonl", 240)
    (tmp_path / "cfg.yaml").write_text(CONFIG)
    args = [
        str(source),
        "--trajectory-config",
        "cfg.yaml",
        "--workers",
        "1",
        "--chunk-size",
        "16",
        "--quiet",
    ]
    whole = cli_here(isolated_home, *args, "-o", "whole.jsonl", "--metrics", "whole.json",
                     cwd=tmp_path)  # fmt: skip
    assert whole.returncode == 0, whole.stderr

    resumed = [*args, "-o", "resumed.jsonl", "--metrics", "resumed.json"]
    work = tmp_path / "resumed.jsonl.partial"
    proc = subprocess.Popen(command(*resumed), cwd=tmp_path, env=env(isolated_home),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + 240
    # Wait until at least one chunk is committed, then kill at a random moment after that.
    while not list(work.glob("*/*.json")) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(random.uniform(0.0, 1.5))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the run finished before it could be killed"
    assert not (tmp_path / "resumed.jsonl").exists()
    committed = len(list(work.glob("*/*.json")))
    assert committed >= 1

    again = cli(isolated_home, *resumed, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "resumed.jsonl").read_bytes() == (tmp_path / "whole.jsonl").read_bytes()
    assert not work.exists()
    first = json.loads((tmp_path / "whole.json").read_text())
    second = json.loads((tmp_path / "resumed.json").read_text())
    first.pop("elapsed_seconds"), second.pop("elapsed_seconds")
    assert first == second


def test_a_changed_input_is_refused_on_resume(tmp_path: Path, isolated_home: Path) -> None:
    source = dataset(tmp_path / "data.jsonl", 40)
    args = [str(source), "--workers", "1", "--chunk-size", "8", "--quiet", "-o", "out.jsonl"]
    proc = subprocess.Popen(command(*args), cwd=tmp_path, env=env(isolated_home),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    work = tmp_path / "out.jsonl.partial"
    deadline = time.monotonic() + 240
    while not list(work.glob("*/*.json")) and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    if proc.returncode != -signal.SIGKILL:
        pytest.skip("the run finished before it could be killed")
    lines = source.read_text().splitlines()
    lines[0] = json.dumps({"id": "changed", "conversations": []})
    source.write_text("\n".join(lines) + "\n")
    again = cli_here(isolated_home, *args, cwd=tmp_path)
    assert again.returncode == 2
    assert "differ from the interrupted run's input" in again.stderr
    assert "out.jsonl.partial" in again.stderr


def test_parquet_without_pyarrow_names_the_extra(tmp_path: Path) -> None:
    """A Parquet input on an install without pyarrow: one line naming what to install."""
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "pyarrow.py").write_text("raise ImportError('no pyarrow here')\n")
    source = tmp_path / "in.parquet"
    source.write_bytes(b"PAR1")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(shadow), *sys.path])}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "palimpsest.cli",
            "trajectories",
            "compress",
            str(source),
            "-o",
            str(tmp_path / "out.parquet"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode != 0
    assert "pip install -e '.[trajectories]'" in done.stderr and "'pyarrow>=15'" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out.parquet").exists()
