"""The eval's own reading of a span, on hand-written transcripts whose answers are known."""

from __future__ import annotations

import json
from typing import Any

from palimpsest.eval.probes import score, span_facts

SYSTEM = {"role": "system", "content": "You are an agent."}
TASK = {"role": "user", "content": "Fix the rounding bug in TimeDelta."}
TRAILER = "\n(Open file: {f})\n(Current directory: /repo)\nbash-$"


def call(cid: str, name: str, **args: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": cid,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
        ],
    }


def result(cid: str, text: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": cid, "content": text}


def native_transcript() -> list[dict[str, Any]]:
    return [
        SYSTEM,
        TASK,
        {"role": "assistant", "content": "I will look at `serialize_delta` in fields.py."},
        {"role": "user", "content": "Please also keep the public API of FieldMapper stable."},
        call(
            "c1",
            "str_replace_editor",
            command="create",
            path="/repo/check_round.py",
            file_text="print(round_half(1))\n",
        ),
        result("c1", "File created successfully at: /repo/check_round.py"),
        call("c2", "bash", command="python check_round.py"),
        result(
            "c2", "Traceback (most recent call last):\nNameError: name 'round_half' is not defined"
        ),
        call(
            "c3",
            "bash",
            command="sed -i 's/int(/round(/' src/fields.py && pytest tests/test_fields.py",
        ),
        result(
            "c3",
            "Exit code 1\nFAILED tests/test_fields.py::test_timedelta_rounding\nAssertionError: 344 != 345",
        ),
        {"role": "assistant", "content": "The test test_timedelta_rounding still fails."},
    ]


def test_native_tool_calls_files_request_failure_and_identifiers() -> None:
    messages = native_transcript()
    facts = span_facts(messages, 2, len(messages))
    assert facts.files_modified == ("/repo/check_round.py", "src/fields.py")
    assert facts.request == "Please also keep the public API of FieldMapper stable."
    assert facts.last_failure is not None and not facts.last_failure.fixed
    assert facts.last_failure.error_line == "AssertionError: 344 != 345"
    assert facts.last_unresolved == facts.last_failure
    # test_timedelta_rounding first appears in pytest's output and the agent then names it;
    # serialize_delta and round_half are never used again after they appear
    assert facts.identifiers == ("test_timedelta_rounding",)
    assert facts.identifier_uses == {"test_timedelta_rounding": 1}
    assert "TimeDelta" not in facts.identifiers  # already in the head: not at risk


def test_a_failure_fixed_later_is_not_the_unresolved_one() -> None:
    messages = [
        *native_transcript()[:8],
        call("c4", "bash", command="python check_round.py"),
        result("c4", "1"),
    ]
    facts = span_facts(messages, 2, 8)
    assert facts.last_failure is not None and facts.last_failure.fixed
    assert facts.last_unresolved is None


def test_a_span_without_writes_is_not_applicable_not_a_pass() -> None:
    messages = [SYSTEM, TASK, call("c1", "bash", command="ls -la"), result("c1", "a.py\nb.py")]
    facts = span_facts(messages, 2, 4)
    assert facts.files_modified == ()
    verdict = score(facts, "anything", "summary")
    assert verdict.files_named is None
    assert verdict.request_kept is None
    assert verdict.unresolved_failure_kept is None


def test_swe_agent_text_actions_edit_the_open_file() -> None:
    messages = [
        SYSTEM,
        TASK,
        {
            "role": "assistant",
            "content": "Open it.\n<command>\nopen src/fields.py 1474\n</command>",
        },
        {
            "role": "user",
            "content": "[File: /repo/src/fields.py (1997 lines total)]\n1474:x"
            + TRAILER.format(f="/repo/src/fields.py"),
        },
        {
            "role": "assistant",
            "content": "Fix it.\n```\nedit 1475:1475\n        return int(round(value.total_seconds()))\nend_of_edit\n```",
        },
        {
            "role": "user",
            "content": "Your proposed edit has introduced new syntax error(s).\nERRORS:\n- E999 IndentationError: unexpected indent\nYour changes have NOT been applied."
            + TRAILER.format(f="/repo/src/fields.py"),
        },
        {
            "role": "assistant",
            "content": "<function=bash>\n<parameter=command>create notes.txt</parameter>\n</function>",
        },
        {"role": "user", "content": "OBSERVATION:\n[File: /repo/notes.txt (1 lines total)]"},
    ]
    later = {"role": "assistant", "content": "Now call total_seconds() on the delta."}
    facts = span_facts(messages, 2, len(messages), run=[*messages, later])
    assert facts.files_modified == ("notes.txt",)  # the rejected edit changed nothing
    assert facts.last_failure is not None
    assert facts.last_failure.key == "fields.py"
    assert facts.last_failure.error_line == "- E999 IndentationError: unexpected indent"
    assert facts.request is None  # observations are not requests
    assert "total_seconds" in facts.identifiers


def test_mini_swe_agent_bash_blocks_and_returncode() -> None:
    messages = [
        SYSTEM,
        TASK,
        {
            "role": "assistant",
            "content": "Write it.\n\n```bash\ncat > tests/missing_colon.py << 'EOF'\ndef division(a, b):\n    return safe_divide(a, b)\nEOF\n```",
        },
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\n</output>"},
        {"role": "assistant", "content": "Run it.\n\n```bash\npython3 tests/missing_colon.py\n```"},
        {
            "role": "user",
            "content": "<returncode>1</returncode>\n<output>\nNameError: name 'safe_divide' is not defined\n</output>",
        },
    ]
    later = {"role": "assistant", "content": "```bash\ngrep -rn safe_divide .\n```"}
    facts = span_facts(messages, 2, len(messages), run=[*messages, later])
    assert facts.files_modified == ("tests/missing_colon.py",)
    assert facts.last_unresolved is not None
    assert facts.last_unresolved.key == "python3 tests/missing_colon.py"
    assert "safe_divide" in facts.identifiers
    kept = "ran python3 tests/missing_colon.py -> NameError: name 'safe_divide' is not defined"
    verdict = score(facts, kept + " safe_divide", "Files: tests/missing_colon.py")
    assert verdict.files_named == (1, 1)
    assert verdict.unresolved_failure_kept is True
    assert score(facts, "ran python3 tests/missing_colon.py", "").unresolved_failure_kept is False


def test_files_are_looked_for_in_the_summary_only_when_there_is_one() -> None:
    messages = native_transcript()
    facts = span_facts(messages, 2, len(messages))
    kept_text = "check_round.py fields.py"
    assert score(facts, kept_text, "no files here").files_named == (0, 2)
    assert score(facts, kept_text, None).files_named == (2, 2)


def test_request_must_be_verbatim_modulo_whitespace() -> None:
    facts = span_facts(native_transcript(), 2, 11)
    assert score(facts, "Please also keep the public\n API of FieldMapper stable.", "").request_kept
    assert not score(facts, "Keep FieldMapper's API stable.", "").request_kept


def test_anthropic_blocks_codex_patch_and_xml_editor_calls() -> None:
    patch = "*** Begin Patch\n*** Update File: src/app.py\n@@\n-a\n+b\n*** Add File: docs/notes.md\n+x\n*** End Patch"
    messages = [
        SYSTEM,
        TASK,
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Writing."},
                {
                    "type": "tool_use",
                    "id": "tu1",
                    "name": "Write",
                    "input": {
                        "file_path": "/p/math_utils.py",
                        "content": "def add_numbers(a, b): ...",
                    },
                },
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "tu1", "content": "ok"}],
        },
        call("c2", "apply_patch", input=patch),
        result("c2", "Success."),
        {
            "role": "assistant",
            "content": "<function=str_replace_editor>\n<parameter=command>str_replace</parameter>\n<parameter=path>/testbed/setup.cfg</parameter>\n<parameter=old_str>a</parameter>\n<parameter=new_str>b</parameter>\n</function>",
        },
        {"role": "user", "content": "OBSERVATION:\nThe file /testbed/setup.cfg has been edited."},
        {
            "role": "assistant",
            "content": "<function=str_replace_editor>\n<parameter=command>view</parameter>\n<parameter=path>/testbed/README.md</parameter>\n</function>",
        },
        {"role": "user", "content": "OBSERVATION:\nHere's the result of running `cat -n`"},
    ]
    later = {"role": "assistant", "content": "add_numbers is in place."}
    facts = span_facts(messages, 2, len(messages), run=[*messages, later])
    assert facts.files_modified == (
        "/p/math_utils.py",
        "src/app.py",
        "docs/notes.md",
        "/testbed/setup.cfg",
    )
    assert "add_numbers" in facts.identifiers
    assert facts.request is None  # a tool_result block is not a person writing


def test_demonstrations_summaries_and_nags_are_not_requests() -> None:
    said = [
        "Here is a demonstration of how to correctly accomplish this task.",
        "[CONTEXT COMPACTION] earlier work",
        "Your output was not formatted correctly. You must always include one discussion",
        "<system-reminder>be brief</system-reminder>",
        "Rename `load_config` to `read_config`, see #4521.",
    ]
    messages = [SYSTEM, *({"role": "user", "content": text} for text in said)]
    messages.append(
        {"role": "assistant", "content": "On it.\n```bash\ngrep -rn load_config src\n```"}
    )
    messages.append({"role": "user", "content": "src/a.py:3: load_config()"})
    facts = span_facts(messages, 1, len(messages))
    assert facts.request == "Rename `load_config` to `read_config`, see #4521."


def test_identifiers_are_the_ones_used_later_wherever_they_first_appeared() -> None:
    messages = [
        SYSTEM,
        TASK,
        {
            "role": "assistant",
            "content": "The bug is in `Schema.dump_many` (see #1867); ParserState too.\n```\ngrep -n merge_dicts src/util.py\n```",
        },
        {
            "role": "user",
            "content": "12: def merge_dicts(a, b):\n13:     return output_only_name(a)\n14: unused_helper()",
        },
    ]
    later = [
        {"role": "assistant", "content": "`output_only_name` is the culprit, as in #1867."},
        {"role": "user", "content": "output_only_name again, in a tool's words"},
        {
            "role": "assistant",
            "content": "```\nsed -i 's/output_only_name/safe_name/' src/util.py\n```",
        },
    ]
    facts = span_facts(messages, 2, len(messages), run=[*messages, *later])
    # used by a later assistant message: the output's name counts, weighted by its uses
    assert facts.identifier_uses == {"#1867": 1, "output_only_name": 2}
    assert "dump_many" not in facts.identifiers  # named once, never again
    assert "unused_helper" not in facts.identifiers  # only ever in a tool's output
    verdict = score(facts, "output_only_name", None)
    assert verdict.identifiers_kept == (2, 3)  # weighted: 2 of 3 later uses
    assert verdict.identifier_names_kept == (1, 2)
    assert verdict.identifiers_missing == ("#1867",)


def test_a_failure_with_no_error_text_is_not_a_probe() -> None:
    messages = [
        SYSTEM,
        TASK,
        call("c1", "str_replace_editor", command="view", path="x.py"),
        {"role": "tool", "tool_call_id": "c1", "content": "ERROR:", "is_error": True},
        call("c2", "str_replace_editor", command="view", path="y"),
        result("c2", "ERROR:\nInvalid `path` parameter: y is not an absolute path"),
    ]
    facts = span_facts(messages, 2, 4)
    assert facts.last_failure is None and facts.unprobed_failures == 1
    facts = span_facts(messages, 2, len(messages))
    assert facts.last_failure is not None
    assert facts.last_failure.error_line == (
        "ERROR: Invalid `path` parameter: y is not an absolute path"
    )


def test_a_file_named_for_errors_is_not_a_failure() -> None:
    messages = [
        SYSTEM,
        TASK,
        call(
            "c1",
            "str_replace_editor",
            command="create",
            path="/x/reproduce_error.py",
            file_text="1",
        ),
        result("c1", "File created successfully at: /x/reproduce_error.py"),
        call("c2", "bash", command="python /x/reproduce_error.py"),
        result("c2", "Case 1\nBareiss failed with: TypeError Invalid NaN comparison"),
    ]
    facts = span_facts(messages, 2, len(messages))
    assert facts.files_modified == ("/x/reproduce_error.py",)
    assert facts.last_failure is not None
    assert facts.last_failure.key == "python /x/reproduce_error.py"
    assert facts.last_failure.error_line == "Bareiss failed with: TypeError Invalid NaN comparison"


def test_a_success_quoted_as_an_error_is_counted() -> None:
    messages = [
        SYSTEM,
        TASK,
        call(
            "c1",
            "str_replace_editor",
            command="create",
            path="/x/reproduce_error.py",
            file_text="1",
        ),
        result("c1", "File created successfully at: /x/reproduce_error.py"),
    ]
    facts = span_facts(messages, 2, len(messages))
    wrong = (
        "1. WRITE reproduce_error.py — error: File created successfully at: /x/reproduce_error.py"
    )
    right = "1. WRITE reproduce_error.py — 1 lines"
    assert score(facts, wrong, wrong).successes_as_failures == (
        "File created successfully at: /x/reproduce_error.p",  # the first 50 characters
    )
    assert score(facts, right, right).successes_as_failures == ()
    assert score(facts, wrong, None).successes_as_failures == ()  # no summary: not judged


def test_an_error_on_one_line_does_not_claim_the_next_lines_output() -> None:
    """The rule is "after error/failed on the same line": the summary's newlines were
    collapsed before matching, so a failed edit's error line followed by the next action
    (``4. EDIT /project/math_utils.py``) counted that path, a Glob's output, as a success
    quoted as an error."""
    messages = [
        SYSTEM,
        TASK,
        call("c1", "Glob", pattern="**/math_utils.py"),
        result("c1", "/project/math_utils.py"),
    ]
    facts = span_facts(messages, 2, len(messages))
    assert facts.successes == ("/project/math_utils.py",)
    summary = (
        "3. EDIT /project/math_utils.py — error: - E999 SyntaxError: unmatched ')' [tool: edit]\n"
        "4. EDIT /project/math_utils.py — ok [tool: Edit]"
    )
    assert score(facts, summary, summary).successes_as_failures == ()
    same_line = "3. GLOB — failed: /project/math_utils.py"
    assert score(facts, same_line, same_line).successes_as_failures == facts.successes
