"""``palimpsest sessions delete`` and ``sessions compress`` as a user runs them.

In-process (``cli_inproc``: the console script's ``main``, streams swapped) where a process
adds nothing; a real process for compress's entry point and the confirmation prompt in a real
terminal (pexpect on a pty).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pexpect
import pytest

from cli_inproc import invoke_cli
from cli_run import SRC, run_cli
from palimpsest.storage.sessions import SessionStore

LONG = Path(__file__).parent / "data" / "transcripts" / "swe-agent"
TRANSCRIPT = LONG / "marshmallow-1867__function_calling.traj"


@pytest.fixture
def chain(isolated_home: Path) -> tuple[str, str, str]:
    """A -> B by compression, and a lone session C."""
    with SessionStore() as store:
        store.create_session("20260101_090000_aaaaaa", "cli", title="Build API")
        store.append_messages(
            "20260101_090000_aaaaaa",
            [{"role": "user", "content": "build it"}, {"role": "assistant", "content": "ok"}],
        )
        store.start_continuation(
            "20260101_090000_aaaaaa",
            session_id="20260101_100000_bbbbbb",
            messages=[{"role": "user", "content": "[summary]"}],
        )
        store.create_session("20260102_000000_cccccc", "cli", title="Lone")
        store.append_message("20260102_000000_cccccc", "user", "hi")
    return "20260101_090000_aaaaaa", "20260101_100000_bbbbbb", "20260102_000000_cccccc"


def _ids() -> set[str]:
    with SessionStore() as store, store.connection_for_reads() as con:
        return {str(r[0]) for r in con.execute("SELECT id FROM sessions")}


def test_a_linked_session_is_refused_alone(chain: tuple[str, str, str]) -> None:
    a, b, _ = chain
    for sid, needle in ((a, f"continued in {b}"), (b, f"parent {a}")):
        result = invoke_cli("sessions", "delete", sid, "--yes")
        assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
        assert needle in result.stderr and "--chain" in result.stderr
    assert len(_ids()) == 3


def test_chain_deletes_the_whole_lineage(chain: tuple[str, str, str]) -> None:
    _, b, c = chain
    result = invoke_cli("sessions", "delete", b[:10], "--chain", "--yes")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "deleted 2 sessions (3 messages)\n"
    assert _ids() == {c}
    with SessionStore() as store:
        assert store.verify() == [] and store.message_count() == 1
        with store.connection_for_reads() as con:
            keys = [str(r[0]) for r in con.execute("SELECT key FROM state_meta")]
        assert not any(b in key for key in keys)


def test_without_yes_and_without_a_terminal_nothing_is_deleted(
    chain: tuple[str, str, str],
) -> None:
    _, _, c = chain
    result = invoke_cli("sessions", "delete", c)  # stdin is empty: no answer
    assert result.returncode == 1 and "Nothing deleted" in result.stderr
    assert c in _ids()


def _spawn(*args: str) -> pexpect.spawn:
    env = dict(os.environ)
    env.update(PYTHONPATH=str(SRC), TERM="dumb", NO_COLOR="1", PYTHONUNBUFFERED="1")
    return pexpect.spawn(
        sys.executable,
        ["-m", "palimpsest.cli", *args],
        env=env,
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 120),
    )


def test_the_prompt_in_a_terminal(chain: tuple[str, str, str]) -> None:
    _, _, c = chain
    child = _spawn("sessions", "delete", c)
    child.expect_exact("'Lone' (1 messages)")
    child.expect_exact("Delete this session? [y/N]:")
    child.sendline("n")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1 and "Nothing deleted" in str(child.before)
    assert c in _ids()

    child = _spawn("sessions", "delete", c)
    child.expect_exact("Delete this session? [y/N]:")
    child.sendline("y")
    child.expect_exact("deleted 1 session (1 messages)")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and c not in _ids()


def test_compress_makes_a_linked_continuation(isolated_home: Path) -> None:
    imported = invoke_cli("sessions", "import", str(TRANSCRIPT))
    sid = imported.stdout.strip()
    result = invoke_cli("sessions", "compress", sid, "--context-length", "8000", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    new = report["continuation_id"]
    assert report["session_id"] == sid and new and new != sid
    assert report["tokens_after"] < report["tokens_before"]
    assert report["messages_after"] < report["messages_before"] == 24
    with SessionStore() as store:
        assert store.get_compression_tip(sid) == new
        assert store.require_session(sid)["end_reason"] == "compression"
        assert store.message_count(sid) == 24  # the originals stay
        assert any(m.get("_compressed_summary") for m in store.get_messages(new))
    # The old id is no longer the one to compress; the message names the tip.
    again = invoke_cli("sessions", "compress", sid)
    assert again.returncode == 2 and f"sessions compress {new}'" in again.stderr


def test_compress_prints_the_new_id_and_token_figures(isolated_home: Path) -> None:
    sid = invoke_cli("sessions", "import", str(TRANSCRIPT)).stdout.strip()
    result = invoke_cli(
        "sessions",
        "compress",
        sid[:12],
        "--focus",
        "the marshmallow field",
        "--context-length",
        "8000",
    )
    assert result.returncode == 0, result.stderr
    new = result.stdout.strip()
    assert new != sid and f"compacted {sid}: 24 messages" in result.stderr
    assert "tokens ->" in result.stderr and "% smaller" in result.stderr
    assert invoke_cli("sessions", "tip", sid).stdout.strip() == new


def test_compress_with_nothing_to_compress_makes_nothing(isolated_home: Path) -> None:
    with SessionStore() as store:
        store.create_session("20260101_000000_tinyyy", "cli")
        store.append_message("20260101_000000_tinyyy", "user", "hi")
    result = run_cli("sessions", "compress", "20260101_000000_tinyyy")  # a real process
    assert result.returncode == 0 and result.stdout.strip() == "20260101_000000_tinyyy"
    assert "no continuation was made" in result.stderr
    assert _ids() == {"20260101_000000_tinyyy"}


def test_compress_applies_the_threshold_unless_forced(isolated_home: Path) -> None:
    sid = invoke_cli("sessions", "import", str(TRANSCRIPT)).stdout.strip()
    # ~7K tokens against the default 200K window: under the 100K threshold, like `compress`.
    left = invoke_cli("sessions", "compress", sid)
    assert left.returncode == 0, left.stderr
    assert left.stdout.strip() == sid and "No compression needed" in left.stderr
    assert "--force" in left.stderr and "UTF-8 bound" in left.stderr
    assert _ids() == {sid}
    forced = invoke_cli("sessions", "compress", sid, "--force", "--json")
    assert forced.returncode == 0, forced.stderr
    report = json.loads(forced.stdout)
    assert report["continuation_id"] and report["token_count"] == "exact"
    assert report["tail_messages"] > 3  # the tail takes what its budget allows


def test_compress_says_why_the_fallback_summary_was_used(isolated_home: Path) -> None:
    sid = invoke_cli("sessions", "import", str(TRANSCRIPT)).stdout.strip()
    result = invoke_cli(
        "sessions",
        "compress",
        sid,
        "--force",
        "--model",
        "openai-compatible:nothing-here",
        "--base-url",
        "http://127.0.0.1:9/v1",
    )
    assert result.returncode == 0, result.stderr
    assert "fallback summary used (" in result.stderr
    assert "fallback summary used (the summary model" not in result.stderr  # a real reason
