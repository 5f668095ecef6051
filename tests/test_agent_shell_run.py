"""run_command on real subprocesses; cap_output's head and tail."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from palimpsest.agent.shell_run import SPOOL_PREFIX, cap_output, run_command, sweep_spools
from palimpsest.outputs.body import LargeOutput


def test_cap_output_keeps_head_and_tail() -> None:
    assert cap_output("short", 10) == "short"
    text = "A" * 50 + "B" * 50
    capped = cap_output(text, 20)
    assert capped == "A" * 10 + "\n[... 80 chars omitted ...]\n" + "B" * 10


def test_exit_code_is_the_last_line(tmp_path: Path) -> None:
    out = run_command("printf 'a\\nb'; exit 7", tmp_path, timeout=10, output_cap=1000)
    assert out == "a\nb\nexit code: 7"


def test_stdin_is_closed(tmp_path: Path) -> None:
    started = time.perf_counter()
    out = run_command("cat; echo done", tmp_path, timeout=10, output_cap=1000)
    assert out == "done\nexit code: 0"
    assert time.perf_counter() - started < 8


def test_a_background_child_holding_the_pipe_is_killed(tmp_path: Path) -> None:
    started = time.perf_counter()
    out = run_command("sleep 30 & echo parent done", tmp_path, timeout=2, output_cap=1000)
    assert time.perf_counter() - started < 8
    assert out.startswith("parent done\n")
    assert "processes it started kept running past 2 s; they were killed" in out
    assert out.endswith("exit code: 0")


def _set_once_exists(event: threading.Event, path: Path, limit: float = 30.0) -> None:
    """Set ``event`` as soon as ``path`` exists (or after ``limit`` seconds), in a thread."""

    def watch() -> None:
        deadline = time.monotonic() + limit
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        event.set()

    threading.Thread(target=watch, daemon=True).start()


def test_cancel_kills_the_command_and_its_children(tmp_path: Path) -> None:
    cancel = threading.Event()
    marker = tmp_path / "late"
    ready = tmp_path / "ready"
    # Cancelled once the command has printed and forked its child, not after a fixed
    # delay: on a loaded machine (or beside another test worker) the shell may not have
    # started at all within half a second.
    _set_once_exists(cancel, ready)
    started = time.perf_counter()
    out = run_command(
        f"echo started; (sleep 2; touch '{marker}') & touch '{ready}'; sleep 30",
        tmp_path,
        timeout=60,
        output_cap=1000,
        cancel=cancel,
    )
    assert time.perf_counter() - started < 8
    assert out.startswith("started\n")
    assert "[stopped by the user; the command and its child processes were killed]" in out
    time.sleep(2.5)
    assert not marker.exists()  # the background child went with the group


def test_undecodable_output_is_replaced_not_fatal(tmp_path: Path) -> None:
    out = run_command("printf '\\377ok'", tmp_path, timeout=10, output_cap=1000)
    assert out == "\ufffdok\nexit code: 0"


def test_small_output_leaves_no_spool_file(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    spool.mkdir()
    out = run_command("echo hi", tmp_path, timeout=10, output_cap=1000, spool_dir=spool)
    assert out == "hi\nexit code: 0"
    assert list(spool.iterdir()) == []


def test_a_huge_output_is_spooled_not_held(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    spool.mkdir()
    out = run_command(
        "echo FIRST; yes 'a line of log output' | head -n 200000; echo LAST; exit 4",
        tmp_path,
        timeout=30,
        output_cap=1000,
        spool_dir=spool,
    )
    assert isinstance(out, LargeOutput) and out.path is not None
    assert out.path.parent == spool
    assert out.shown.startswith("FIRST\n") and out.shown.endswith("LAST\nexit code: 4")
    assert "bytes omitted ...]" in out.shown and len(out.shown) < 1_200
    whole = out.path.read_text()
    assert whole.count("a line of log output") == 200_000
    assert whole.endswith("LAST\nexit code: 4\n")
    out.discard()
    assert list(spool.iterdir()) == []


def test_secrets_in_the_cut_are_redacted(tmp_path: Path) -> None:
    out = run_command(
        "echo 'token: ghp_abcdefghijklmnopqrstuvwxyz0123456789'; seq 1 5000",
        tmp_path,
        timeout=10,
        output_cap=400,
    )
    assert isinstance(out, LargeOutput)
    assert "ghp_abcdefghijklmnop" not in out.shown
    out.discard()


def test_a_killed_runs_spool_is_swept_by_the_next_process(tmp_path: Path) -> None:
    """SIGKILL leaves the spool behind; the next process to run a command in that spool
    directory removes it, and never a live process's spool."""
    spools = tmp_path / "spools"
    spools.mkdir()
    script = (
        "import sys\nfrom pathlib import Path\n"
        "from palimpsest.agent.shell_run import run_command\n"
        "run_command('echo started; sleep 30', cwd=sys.argv[1], timeout=60,"
        " output_cap=1000, spool_dir=Path(sys.argv[1]))\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script, str(spools)])
    deadline = time.monotonic() + 30
    while not list(spools.glob(f"{SPOOL_PREFIX}*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    (orphan,) = spools.glob(f"{SPOOL_PREFIX}{child.pid}-*")
    live = spools / f"{SPOOL_PREFIX}{os.getpid()}-keepme.out"
    live.write_text("a live process's spool")
    other = spools / "palimpsest-shell-notes.txt"
    other.write_text("not a spool")
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert orphan.exists()  # nothing ran to remove it
    assert "exit code: 0" in str(
        run_command("true", cwd=tmp_path, timeout=10, output_cap=100, spool_dir=spools)
    )
    assert not orphan.exists()
    assert live.exists() and other.exists()
    assert sweep_spools(spools) == 0  # once per directory and process
