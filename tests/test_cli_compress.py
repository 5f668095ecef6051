"""``palimpsest compress``: the README's main command, reports, and user mistakes."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from llamacpp_server import gguf_path, llama_server
from palimpsest.cli import app
from palimpsest.messages import for_provider, load_transcript, validate_transcript
from palimpsest.summarizers.llm import clean_summary

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "marshmallow-1867.traj"
runner = CliRunner()


def run(*args: str, input: str | None = None):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["compress", *args], input=input)


def test_readme_main_command_in_a_real_process(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "palimpsest.cli",
            "compress",
            str(EXAMPLE),
            "--context-length",
            "8000",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    messages = json.loads(out.read_text())
    validate_transcript(messages)
    assert len(messages) < len(load_transcript(EXAMPLE))
    for needle in (
        "Compressed: 24 →",
        "messages",
        "tokens (exact o200k_base)",
        "head ",
        "tool results pruned",
        "summary:",
        "time:",
    ):
        assert needle in proc.stderr


def test_stdout_is_pure_json_and_report_file(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    result = run(str(EXAMPLE), "--context-length", "8000", "--report", str(report))
    assert result.exit_code == 0, result.stderr
    messages = json.loads(result.stdout)
    assert any("[CONTEXT COMPACTION" in str(m.get("content")) for m in messages)
    assert all(not k.startswith("_") for m in messages for k in m)
    data = json.loads(report.read_text())
    assert data["compressed"] is True
    assert data["messages_before"] == 24 and data["messages_after"] == len(messages)
    assert data["tokens_after"] < data["tokens_before"]
    assert data["head_messages"] + data["middle_messages"] + data["tail_messages"] == 24


def test_under_threshold_says_so_and_writes_the_transcript_unchanged() -> None:
    result = run(str(EXAMPLE))
    assert result.exit_code == 0
    assert "No compression needed" in result.stderr
    # Proven by the UTF-8 upper bound alone: no tokenizer is loaded for a clear case.
    assert "tokens (UTF-8 bound)" in result.stderr
    # The loader keeps SWE-agent's message_type as an internal key; output never has those.
    assert json.loads(result.stdout) == for_provider(load_transcript(EXAMPLE))


def test_force_and_focus_and_exact_tokens() -> None:
    result = run(str(EXAMPLE), "--force", "--focus", "TimeDelta rounding", "--exact-tokens")
    assert result.exit_code == 0, result.stderr
    assert "tokens (exact o200k_base)" in result.stderr


DENSE = Path(__file__).parent / "data" / "transcripts" / "dense"


@pytest.mark.parametrize("name", sorted(p.name for p in DENSE.glob("*.json")))
def test_dense_output_is_never_called_under_the_threshold_on_a_rough_count(
    name: str, tmp_path: Path
) -> None:
    # The case: chars/4 said ~78K of 182K real tokens and "No compression needed".
    # Each dense file's exact count is 2-7x its rough count; the window puts the threshold
    # between the two, so a rough decision would leave the transcript alone.
    from palimpsest.tokens import ExactCounter, RoughCounter

    messages = load_transcript(DENSE / name)
    rough = RoughCounter().count_messages(messages)
    exact = ExactCounter().count_messages(messages)
    window = rough + exact  # threshold 0.5 -> (rough + exact) / 2
    report = tmp_path / "r.json"
    result = run(
        str(DENSE / name),
        "--context-length",
        str(window),
        "--threshold",
        "0.5",
        "-o",
        str(tmp_path / "o.json"),
        "--report",
        str(report),
    )
    assert "No compression needed" not in result.stderr
    assert "tokens (exact o200k_base)" in result.stderr
    data = json.loads(report.read_text())
    assert data["tokens_before"] == exact and data["token_count"] == "exact"
    if data["fits"]:
        out = json.loads((tmp_path / "o.json").read_text())
        assert ExactCounter().count_messages(out) <= data["fit_target_tokens"]
    else:
        assert result.exit_code == 3


def test_reads_standard_input() -> None:
    text = EXAMPLE.read_text()
    result = run("-", "--context-length", "8000", input=text)
    assert result.exit_code == 0, result.stderr
    assert "Compressed:" in result.stderr


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("{not json", "bad.json"),
        (
            '[{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "x", "content": "r"}]',
            "message 1",
        ),
        ("", "bad.json"),
        # half-recognised: a history of OpenHands events with one item that is not an event
        (
            '{"history": [{"action": "message", "source": "user", "args": {"content": "x"}}, 3]}',
            "it looks like an OpenHands run, but history[1]",
        ),
        # a history whose items are neither SWE-agent messages nor events: never roleless
        ('{"history": [{"content": "x"}]}', "looks like a SWE-agent trajectory, but history[0]"),
        ("#### fix it\n\n> Applied edit to a.py\n", "looks like an Aider chat history"),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path: Path, content: str, needle: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    result = run(str(bad))
    assert result.exit_code == 2
    assert needle in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_what_the_reader_passed_over_is_said_on_stderr(tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    lines = [
        {"type": "user", "message": {"role": "user", "content": "Fix the bug in app.py"}},
        {"type": "brand-new-record", "x": 1},
        {"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": "Done."}},
    ]
    log.write_text("\n".join(json.dumps(line) for line in lines) + '\n{"type": "user", "mess')
    result = run(str(log), "--format", "claude-code")
    assert result.exit_code == 0, result.stderr
    assert f"note: {log}: line 4 (the last line) is cut off" in result.stderr
    assert f"note: {log}: skipped 1 record of a type this reader does not know" in result.stderr
    assert json.loads(result.stdout)[0]["content"] == "Fix the bug in app.py"


def test_missing_file_and_unknown_format(tmp_path: Path) -> None:
    result = run(str(tmp_path / "nope.json"))
    assert result.exit_code == 2 and "nope.json" in result.stderr
    result = run(str(EXAMPLE), "--format", "xml")
    assert result.exit_code == 2 and "'xml' is not one of" in result.stderr


def test_unknown_config_key_names_the_key(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("compression:\n  treshold: 0.4\n")
    result = run(str(EXAMPLE), "--config", str(config))
    assert result.exit_code == 2
    assert "compression.treshold" in result.stderr


# -- input that is not a transcript, and output that must survive (issue 8) ---------------


def run_process(*args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "palimpsest.cli", "compress", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        **kwargs,
    )


def one_line(stderr: str) -> bool:
    return "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_character_devices_are_refused_in_a_real_process() -> None:
    """Issue 8: `palimpsest compress /dev/zero` read until MemoryError."""
    proc = run_process("/dev/zero")
    assert proc.returncode == 2 and one_line(proc.stderr)
    assert "not a regular file" in proc.stderr


def test_input_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_text(json.dumps([{"role": "user", "content": "x" * 3_000_000}]))
    result = run(str(big), "--max-input-mb", "1")
    assert result.exit_code == 2 and one_line(result.stderr)
    assert "over the input limit of 1 MiB" in result.stderr and "--max-input-mb" in result.stderr
    config = tmp_path / "config.yaml"
    config.write_text("compression:\n  max_input_mb: 1\n")
    result = run(str(big), "--config", str(config))
    assert result.exit_code == 2 and "input limit" in result.stderr
    assert run("-", "--max-input-mb", "1", input=big.read_text()).exit_code == 2


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('[{"role": "user", "content": ' + "7" * 100_000 + "}]", "100,000 digits"),
        ('[{"role": "user", "content": "hi"}, 5]', "item 1"),
    ],
    ids=["deep", "long-integer", "not-a-dict"],
)
def test_hostile_json_is_one_line_exit_2(tmp_path: Path, text: str, needle: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    result = run(str(bad))
    assert result.exit_code == 2 and one_line(result.stderr), result.stderr
    assert needle in result.stderr


def test_a_lone_surrogate_escape_becomes_a_replacement_character(tmp_path: Path) -> None:
    src = tmp_path / "s.json"
    src.write_text(
        '[{"role": "user", "content": "a\\ud800b"}, {"role": "assistant", "content": "ok"}]'
    )
    out = tmp_path / "out.json"
    result = run(str(src), "-o", str(out))
    assert result.exit_code == 0, result.stderr
    assert json.loads(out.read_bytes().decode("utf-8"))[0]["content"] == "a\ufffdb"


def test_tool_calls_null_is_accepted(tmp_path: Path) -> None:
    """Issue 8: every SWE-agent file with "tool_calls": null was refused."""
    msgs = [
        {"role": "system", "content": "s", "tool_calls": None},
        {"role": "user", "content": "go", "tool_calls": None},
        {"role": "assistant", "content": "ok", "tool_calls": None},
    ]
    src = tmp_path / "n.json"
    src.write_text(json.dumps(msgs))
    result = run(str(src), "--force")
    assert result.exit_code == 0, result.stderr
    validate_transcript(json.loads(result.stdout), strict=True)


def test_a_result_that_cannot_fit_warns_and_exits_3(tmp_path: Path) -> None:
    msgs = [{"role": "system", "content": "policy " * 20_000}]
    for i in range(10):
        msgs += [{"role": "user", "content": f"q{i} " + "w" * 800}]
        msgs += [{"role": "assistant", "content": f"a{i}"}]
    src = tmp_path / "huge-prompt.json"
    src.write_text(json.dumps(msgs))
    report = tmp_path / "report.json"
    result = run(str(src), "--context-length", "8000", "--report", str(report))
    assert result.exit_code == 3
    assert "does not fit" in result.stderr and "system prompt" in result.stderr
    data = json.loads(report.read_text())
    assert data["fits"] is False and data["fit_target_tokens"] == 6_000
    validate_transcript(json.loads(result.stdout))


def test_readme_example_fits_and_reports_it(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    result = run(str(EXAMPLE), "--context-length", "8000", "--report", str(report))
    assert result.exit_code == 0
    data = json.loads(report.read_text())
    assert data["fits"] is True and data["tokens_after"] <= data["fit_target_tokens"]


def test_threshold_flag_wins_over_the_floor(tmp_path: Path) -> None:
    """Issue 8: at a 16K window the threshold was 13,600 whatever --threshold said."""
    report = tmp_path / "report.json"
    run(str(EXAMPLE), "--context-length", "16000", "--threshold", "0.3", "--report", str(report))
    assert json.loads(report.read_text())["threshold_tokens"] == 4_800


def _limit_file_size(limit: int) -> None:
    import resource
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write over the limit fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_a_failing_write_leaves_the_old_output_whole(tmp_path: Path) -> None:
    """Issue 8: `-o existing.json` was left at 0 bytes after a crash."""
    out = tmp_path / "existing.json"
    out.write_text("OLD CONTENT\n")
    proc = run_process(
        str(EXAMPLE), "--force", "-o", str(out), preexec_fn=lambda: _limit_file_size(1_000)
    )
    assert proc.returncode == 2 and one_line(proc.stderr), proc.stderr
    assert out.read_text() == "OLD CONTENT\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["existing.json"]


@pytest.mark.skipif(sys.platform == "win32", reason="signals are POSIX")
def test_a_killed_write_leaves_the_old_output_whole(tmp_path: Path) -> None:
    out = tmp_path / "existing.json"
    out.write_text("OLD CONTENT\n")

    def die_on_big_write() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (1_000, 1_000))  # SIGXFSZ kills the writer

    proc = run_process(str(EXAMPLE), "--force", "-o", str(out), preexec_fn=die_on_big_write)
    assert proc.returncode != 0
    assert out.read_text() == "OLD CONTENT\n"


# -- what -o and --report point at (issue 20): palimpsest/files.py decides, before any work --


def test_output_through_a_symlink_writes_the_file_it_points_to(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old\n")
    real.chmod(0o755)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    result = run(str(EXAMPLE), "--force", "-o", str(link), "--report", str(link) + ".report")
    assert result.exit_code == 0, result.stderr
    assert link.is_symlink()
    validate_transcript(json.loads(real.read_text()))
    assert oct(real.stat().st_mode & 0o777) == oct(0o755)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "link.json",
        "link.json.report",
        "real.json",
    ]


@pytest.mark.parametrize("mode", [0o755, 0o640])
def test_an_existing_output_and_report_keep_their_modes(tmp_path: Path, mode: int) -> None:
    out, report = tmp_path / "out.json", tmp_path / "report.json"
    for path in (out, report):
        path.write_text("old\n")
        path.chmod(mode)
    result = run(str(EXAMPLE), "--force", "-o", str(out), "--report", str(report))
    assert result.exit_code == 0, result.stderr
    assert (out.stat().st_mode & 0o777, report.stat().st_mode & 0o777) == (mode, mode)
    assert json.loads(report.read_text())["compressed"] is True


def _special_targets(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    directory = tmp_path / "dir"
    directory.mkdir()
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "missing-dir" / "x.json")
    return {
        "fifo": (fifo, "named pipe (FIFO)"),
        "directory": (directory, "is a directory"),
        "null": (Path("/dev/null"), "character device"),
        "full": (Path("/dev/full"), "character device"),
        "stdout": (Path("/dev/stdout"), "standard stream"),
        "dangling": (dangling, "does not exist"),
    }


@pytest.mark.parametrize("kind", ["fifo", "directory", "null", "full", "stdout", "dangling"])
@pytest.mark.parametrize("option", ["-o", "--report"])
def test_a_target_that_is_not_a_regular_file_is_refused_before_any_work(
    tmp_path: Path, kind: str, option: str
) -> None:
    target, problem = _special_targets(tmp_path)[kind]
    if not target.exists() and kind in ("null", "full"):
        pytest.skip(f"{target} does not exist here")
    before = os.lstat(target) if os.path.lexists(target) else None
    # The input does not exist: a refusal that names the target came before reading it.
    result = run(str(tmp_path / "no-such-input.json"), option, str(target))
    assert result.exit_code == 2
    assert one_line(result.stderr) and str(target) in result.stderr and problem in result.stderr
    assert "no-such-input" not in result.stderr and ".tmp" not in result.stderr
    if before is not None:
        after = os.lstat(target)
        assert (after.st_mode, after.st_ino, after.st_rdev) == (
            before.st_mode,
            before.st_ino,
            before.st_rdev,
        )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_dev_full_is_refused_in_a_real_process_even_as_root() -> None:
    """Issue 20: `-o /dev/full` returned 0, and as root `-o /dev/null` replaced /dev/null."""
    for device in ("/dev/full", "/dev/null"):
        before = os.stat(device)
        proc = run_process(str(EXAMPLE), "--force", "-o", device)
        assert proc.returncode == 2 and one_line(proc.stderr), proc.stderr
        assert f"{device}: is a character device" in proc.stderr
        after = os.stat(device)
        assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino


# -- --model: a summary model over HTTP, verified before it is used --------------------------


class ChatServer:
    """A real HTTP server on 127.0.0.1 speaking the OpenAI chat-completions shape.

    ``answer(prompt)`` gives each reply's content; every request body is kept.
    """

    def __init__(self, answer: Callable[[str], str]) -> None:
        self.answer = answer
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                content = server.answer(body["messages"][-1]["content"])
                reply = json.dumps(
                    {
                        "id": f"chatcmpl-{len(server.requests)}",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body["model"],
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": content},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {
                            "prompt_tokens": 100,
                            "completion_tokens": 50,
                            "total_tokens": 150,
                        },
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> ChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


def deterministic_body() -> str:
    """The extractive summary `compress` writes for EXAMPLE: a good answer for a model."""
    result = run(str(EXAMPLE), "--context-length", "8000")
    message = next(
        m for m in json.loads(result.stdout) if "[CONTEXT COMPACTION" in str(m["content"])
    )
    return clean_summary(message["content"]).split("\n--- END OF CONTEXT SUMMARY")[0]


def test_model_summary_accepted_over_http(tmp_path: Path) -> None:
    good = deterministic_body()
    report = tmp_path / "report.json"
    with ChatServer(lambda prompt: good) as server:
        result = run(
            str(EXAMPLE), "--context-length", "8000", "--report", str(report),
            "--model", "openai-compatible:local", "--base-url", server.base_url,
        )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert len(server.requests) == 1 and server.requests[0]["model"] == "local"
    assert "TURNS TO SUMMARIZE" in server.requests[0]["messages"][0]["content"]
    data = json.loads(report.read_text())
    assert (data["summary_model"], data["summary_check"], data["fallback_used"]) == (
        "local",
        "accepted",
        False,
    )
    assert "summary model local: model summary accepted" in result.stderr


def test_model_summary_none_is_rejected_then_fallback(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    with ChatServer(lambda prompt: "None.") as server:
        result = run(
            str(EXAMPLE), "--context-length", "8000", "--report", str(report),
            "--model", "openai-compatible:local", "--base-url", server.base_url,
        )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert len(server.requests) == 2
    assert "YOUR PREVIOUS ANSWER WAS REJECTED" in server.requests[1]["messages"][0]["content"]
    data = json.loads(report.read_text())
    assert data["summary_check"] == "rejected" and data["fallback_used"] is True
    assert len(data["summary_rejections"]) == 2
    assert "rejected → deterministic fallback" in result.stderr
    summary = next(
        m for m in json.loads(result.stdout) if "[CONTEXT COMPACTION" in str(m["content"])
    )
    assert "## Relevant Files" in summary["content"]


def test_config_keys_choose_the_summary_model(tmp_path: Path) -> None:
    good = deterministic_body()
    with ChatServer(lambda prompt: good) as server:
        config = tmp_path / "config.yaml"
        config.write_text(
            "auxiliary:\n  compression:\n    model: local\n    provider: openai-compatible\n"
            f"    base_url: {server.base_url}\n    context_length: 32000\n"
        )
        result = run(str(EXAMPLE), "--context-length", "8000", "--config", str(config))
    assert result.exit_code == 0, result.stderr
    assert len(server.requests) == 1
    assert "summary model local: model summary accepted" in result.stderr


@pytest.mark.parametrize(
    ("args", "config", "needle"),
    [
        (["--model", "nosuch:x"], "", "nosuch"),
        (["--model", "openai:gpt-4o-mini"], "", "OPENAI_API_KEY"),
        (["--model", "anthropic:claude-haiku-4-5"], "", "ANTHROPIC_API_KEY"),
        (["--model", "openai-compatible:local"], "", "base_url"),
        (["--model", "gpt-4o-mini"], "", "<provider>:<model>"),
        (["--base-url", "http://127.0.0.1:9/v1"], "", "--model"),
        ([], "compression:\n  summary_model: gpt-4o-mini\n", "auxiliary.compression.provider"),
        ([], "auxiliary:\n  compression:\n    model: openai:gpt-4o-mini\n", "OPENAI_API_KEY"),
        (
            [],
            "compression:\n  summary_model: openai:a\nauxiliary:\n  compression:\n    model: openai:b\n",
            "disagree",
        ),
    ],
)
def test_a_model_that_cannot_be_used_is_exit_2(
    tmp_path: Path, args: list[str], config: str, needle: str
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(config or "{}\n")
    result = run(str(EXAMPLE), "--config", str(path), *args)
    assert result.exit_code == 2, result.stderr
    assert needle in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.llamacpp
def test_real_local_model_over_llama_cpp_server(tmp_path: Path) -> None:
    """`--model openai-compatible:local` against llama.cpp's server with the 0.5B model:
    an accepted summary, or the deterministic fallback, never an unchecked one."""
    model = gguf_path()
    report = tmp_path / "report.json"
    with llama_server(model, tmp_path / "server.log") as base_url:
        started = time.monotonic()
        result = run(
            str(EXAMPLE), "--context-length", "8000", "--report", str(report),
            "--model", "openai-compatible:local", "--base-url", base_url,
        )  # fmt: skip
        seconds = time.monotonic() - started
    assert result.exit_code == 0, result.stderr
    data = json.loads(report.read_text())
    print(f"\nllama.cpp compress: {seconds:.1f}s, check={data['summary_check']}, "
          f"rejections={data['summary_rejections']}, error={data['summary_error']}")  # fmt: skip
    assert data["summary_model"] == "local"
    if data["fallback_used"]:
        assert data["summary_check"] in ("rejected", None)
    else:
        assert data["summary_check"] in ("accepted", "retried")
    validate_transcript(json.loads(result.stdout))


SWE = Path(__file__).parent / "data" / "transcripts" / "swe-agent"


def _long_swe_agent_run(extra: bool) -> list[dict[str, Any]]:
    """62 real SWE-agent messages (pydicom's head and turns, then the CTF run's turns), or
    102 with the crypto run's turns too: long runs built from real turns, as issue 23's
    62-message django run was (that file is not in the shared data)."""
    pydicom = load_transcript(SWE / "pydicom-1458__gpt4_default.traj")
    web = load_transcript(SWE / "ctf_web_i_got_id_demo.traj")
    run = pydicom + web[2:38]
    if extra:
        run += web[38:] + load_transcript(SWE / "ctf_crypto_katy.traj")[2:]
    return for_provider(run)


@pytest.mark.parametrize("extra", [False, True])
def test_forced_compaction_keeps_the_tail_its_budget_allows(tmp_path: Path, extra: bool) -> None:
    from palimpsest.tokens import message_budget_tokens

    messages = _long_swe_agent_run(extra)
    source = tmp_path / "long.json"
    source.write_text(json.dumps(messages))
    report = tmp_path / "r.json"
    result = run(str(source), "--force", "-o", str(tmp_path / "o.json"), "--report", str(report))
    assert result.exit_code == 0, result.stderr
    data = json.loads(report.read_text())
    out = json.loads((tmp_path / "o.json").read_text())
    tail = out[len(out) - data["tail_messages"] :]
    # The summary may be merged into the first tail message: not part of what was kept.
    kept = (
        sum(message_budget_tokens(m) for m in tail)
        - data["summary_tokens"] * data["summary_merged"]
    )
    rest = sum(message_budget_tokens(m) for m in messages[data["head_messages"] :])
    assert data["tail_token_budget"] == 20_000
    if not extra:
        # 62 messages, ~14K after the head: all of it fits the 20K budget, so the forced
        # compaction keeps all but ~2K to summarize (before: tail 3).
        assert len(messages) == 62
        assert data["tail_messages"] >= 10 and rest - 4_000 <= kept <= rest - 2_000
    else:
        # ~21K after the head: over the budget, under its 1.5x ceiling; the tail is
        # budget-shaped (before: the three-message fallback).
        assert rest > 20_000
        assert rest - 4_000 < kept <= min(20_000, rest - 2_000)
    assert f"tail {data['tail_messages']} messages" in result.stderr
