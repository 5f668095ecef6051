"""Outcomes and user requests, read by the eval itself."""

from __future__ import annotations

from palimpsest.eval.spans import read_outcome, read_steps, user_requests


def test_explicit_exit_status_wins_over_words() -> None:
    assert not read_outcome("<returncode>0</returncode>\n<output>\nError: none\n</output>").failed
    failed = read_outcome("<returncode>2</returncode>\n<output>\nusage: x\n</output>")
    assert failed.failed and failed.exit_code == 2 and failed.error_line == "usage: x"
    assert read_outcome("Exit code 1\nboom").failed
    assert read_outcome("hello///PROCESS-DONE:1:PROCESS-DONE///").failed
    assert not read_outcome("hello///PROCESS-DONE:0:PROCESS-DONE///").failed
    assert read_outcome("fine", is_error=True).failed


def test_failure_words_and_the_error_line() -> None:
    tb = read_outcome(
        "Traceback (most recent call last):\n  File x\nKeyError: 'a'\n(Current directory: /r)\nbash-$"
    )
    assert tb.failed and tb.error_line == "KeyError: 'a'"
    assert read_outcome("bash: foo: command not found").failed
    assert not read_outcome("345\n(Open file: /r/a.py)\n(Current directory: /r)\nbash-$").failed


def test_results_pair_by_call_id_even_out_of_order() -> None:
    def call(cid: str, cmd: str) -> dict[str, object]:
        return {
            "id": cid,
            "type": "function",
            "function": {"name": "bash", "arguments": f'{{"command": "{cmd}"}}'},
        }

    messages = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("a", "true"), call("b", "false")],
        },
        {"role": "tool", "tool_call_id": "b", "content": "Exit code 1"},
        {"role": "tool", "tool_call_id": "a", "content": "ok"},
    ]
    first, second = read_steps(messages)
    assert not first.failed and second.failed


def test_user_messages_after_a_text_action_are_observations() -> None:
    messages = [
        {"role": "user", "content": "Fix the bug."},
        {"role": "assistant", "content": "```\nls\n```"},
        {"role": "user", "content": "Fix the bug."},  # same words, but it is ls's output
        {"role": "assistant", "content": "Done, anything else?"},
        {"role": "user", "content": "Yes: add a test."},
        {"role": "user", "content": "OBSERVATION:\nstale"},
    ]
    assert user_requests(messages) == [(0, "Fix the bug."), (4, "Yes: add a test.")]


def test_a_json_tool_answer_is_read_for_its_output() -> None:
    raw = '{"output": "F.\\nFAILED tests/t.py::test_a\\n1 failed", "metadata": {"exit_code": 1}}'
    outcome = read_outcome(raw)
    assert outcome.failed and outcome.exit_code == 1
    assert outcome.error_line == "FAILED tests/t.py::test_a"
