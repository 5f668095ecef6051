"""load_transcript / dump_transcript against real agent transcripts and broken files."""

from __future__ import annotations

import io
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from palimpsest.errors import PalimpsestError, TranscriptError
from palimpsest.messages import (
    FORMATS,
    detect_format,
    dump_transcript,
    load_transcript,
    read_transcript_file,
    transcript_problems,
    validate_transcript,
)
from palimpsest.messages.content import ROLES, strip_internal_keys

HERE = Path(__file__).parent
TRANSCRIPTS = HERE / "data" / "transcripts"
SHARED = HERE.resolve().parents[1] / "shared" / "data" / "transcripts"
EXAMPLE = HERE.parent / "examples" / "marshmallow-1867.traj"

# Every real transcript, its format and its message count (counts as in the data README).
REAL = {
    "swe-agent/marshmallow-1867__function_calling.traj": ("swe-agent", 24),
    "swe-agent/marshmallow-1867__function_calling_replace_from_source.traj": ("swe-agent", 28),
    "swe-agent/pydicom-1458__gpt4_default.traj": ("swe-agent", 26),
    "swe-agent/ctf_web_i_got_id_demo.traj": ("swe-agent", 43),
    "swe-agent/marshmallow-1867__xml_command_tags.traj": ("swe-agent", 23),
    "swe-agent/ctf_crypto_katy.traj": ("swe-agent", 37),
    "swe-agent/humanevalfix-python-0.traj": ("swe-agent", 11),
    "mini-swe-agent/github_issue.traj.json": ("mini-swe-agent", 22),
    "mini-swe-agent/local.traj.json": ("mini-swe-agent", 6),
    # 8 lines: a summary (skipped), 2 user texts, 2 tool results, 3 assistant replies = 7
    "format-samples/claude-code_sample_session.jsonl": ("claude-code", 7),
    # 33 records, one message each: 6 user texts, 12 tool results, 15 assistant replies
    "format-samples/claude-code_sample_session.json": ("claude-code", 33),
    # session_meta is metadata: one user and one assistant message remain
    "format-samples/codex_sample_session.jsonl": ("codex", 2),
}

SWE_AGENT_EXTRA_KEYS = {"agent", "message_type", "is_demo", "thought", "action", "tool_call_ids"}


def raw_history(rel: str) -> list[dict[str, Any]]:
    data = json.loads((TRANSCRIPTS / rel).read_text())
    history = data["history"] if isinstance(data, dict) and "history" in data else data
    return history["messages"] if isinstance(history, dict) else history  # type: ignore[no-any-return]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def jsonl(*records: Any) -> str:
    return "\n".join(json.dumps(r) for r in records) + "\n"


# -- every real file ---------------------------------------------------------------------


def test_every_shared_transcript_has_a_test_copy() -> None:
    if not SHARED.is_dir():
        pytest.skip("shared data directory not present")
    shared = {str(p.relative_to(SHARED)) for p in SHARED.rglob("*") if p.is_file()}
    shared.discard("README.md")
    assert shared == set(REAL)
    for rel in shared:
        assert (TRANSCRIPTS / rel).read_bytes() == (SHARED / rel).read_bytes()


@pytest.mark.parametrize("rel", sorted(REAL))
def test_real_transcript_loads_detects_and_validates(rel: str) -> None:
    fmt, count = REAL[rel]
    path = TRANSCRIPTS / rel
    assert detect_format(path) == fmt
    messages = load_transcript(path)
    assert len(messages) == count
    assert load_transcript(str(path), format=fmt) == messages
    assert transcript_problems(messages) == []
    validate_transcript(messages, path=path)


def test_example_transcript_is_the_swe_agent_sample() -> None:
    messages = load_transcript(EXAMPLE)
    assert messages == load_transcript(
        TRANSCRIPTS / "swe-agent/marshmallow-1867__function_calling.traj"
    )


# -- SWE-agent and mini-swe-agent ----------------------------------------------------------


@pytest.mark.parametrize("rel", [r for r, (f, _) in REAL.items() if f == "swe-agent"])
def test_swe_agent_drops_framework_keys_and_keeps_text(rel: str) -> None:
    raw = raw_history(rel)
    messages = load_transcript(TRANSCRIPTS / rel)
    assert any(SWE_AGENT_EXTRA_KEYS & set(m) for m in raw), "sample should carry extra keys"
    for original, message in zip(raw, messages, strict=True):
        assert not SWE_AGENT_EXTRA_KEYS & set(message)
        # message_type and is_demo travel as internal keys for the reading; for_provider
        # (and dump_transcript) drop them.
        internal = {"_message_type", "_is_demo"}
        assert set(message) <= {"role", "content", "tool_calls", "tool_call_id", "name"} | internal
        assert set(strip_internal_keys(message)) <= {
            "role",
            "content",
            "tool_calls",
            "tool_call_id",
            "name",
        }
        assert message.get("_message_type") == original.get("message_type")
        assert message.get("_is_demo", False) == original.get("is_demo", False)
        assert message["role"] == original["role"]
        assert message["content"] == original["content"]


def test_swe_agent_tool_call_ids_become_tool_call_id() -> None:
    rel = "swe-agent/marshmallow-1867__function_calling.traj"
    messages = load_transcript(TRANSCRIPTS / rel)
    first_call = messages[2]["tool_calls"][0]
    assert first_call == {
        "id": "call_cyI71DYnRdoLHWwtZgIaW2wr",
        "type": "function",
        "function": {"name": "create", "arguments": '{"filename":"reproduce.py"}'},
    }
    assert messages[3]["role"] == "tool"
    assert messages[3]["tool_call_id"] == "call_cyI71DYnRdoLHWwtZgIaW2wr"
    assert messages[3]["content"].startswith("[File: reproduce.py (1 lines total)]")
    # The sample reuses call ids across turns; each is still answered within its own turn.
    ids = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    assert ids.count("call_5iDdbOYybq7L19vqXmR0DPaU") == 4


def test_text_action_swe_agent_keeps_demo_and_consecutive_user_messages() -> None:
    messages = load_transcript(TRANSCRIPTS / "swe-agent/pydicom-1458__gpt4_default.traj")
    assert [m["role"] for m in messages[:3]] == ["system", "user", "user"]
    assert len(messages[1]["content"]) == 19388  # the demonstration, kept whole
    assert "is_demo" not in messages[1]


def test_swe_agent_result_claiming_two_calls_is_refused(tmp_path: Path) -> None:
    history = [
        {"role": "user", "content": "go"},
        {"role": "tool", "content": "x", "tool_call_ids": ["a", "b"]},
    ]
    path = write(tmp_path, "two.traj", json.dumps({"history": history}))
    with pytest.raises(TranscriptError, match=r"history\[1\]: one tool result answers 2 tool"):
        load_transcript(path)


def test_swe_agent_cache_control_and_object_arguments_are_normalized(tmp_path: Path) -> None:
    history = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}],
            "cache_control": {"type": "ephemeral"},
        },
        {
            "role": "assistant",
            "content": "",
            "thought": "",
            "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {"q": "é"}}}],
        },
        {"role": "tool", "content": {"ok": True}, "tool_call_ids": ["c"]},
    ]
    path = write(tmp_path, "x.traj", json.dumps({"history": history, "info": {}}))
    messages = load_transcript(path)
    assert messages == [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c",
                    "type": "function",
                    "function": {"name": "f", "arguments": '{"q": "é"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c", "content": '{"ok": true}'},
    ]
    validate_transcript(messages)


def test_mini_swe_agent_messages_are_unchanged() -> None:
    for rel in ("mini-swe-agent/github_issue.traj.json", "mini-swe-agent/local.traj.json"):
        assert load_transcript(TRANSCRIPTS / rel) == raw_history(rel)


def test_mini_swe_agent_dict_form_drops_extra_keys(tmp_path: Path) -> None:
    data = {
        "trajectory_format": "mini-swe-agent-1",
        "info": {"mini_version": "1.0"},
        "messages": [{"role": "user", "content": "hi", "extra": {"t": 1}, "timestamp": 3.5}],
    }
    path = write(tmp_path, "run.json", json.dumps(data))
    assert detect_format(path) == "mini-swe-agent"
    assert load_transcript(path) == [{"role": "user", "content": "hi"}]


# -- Claude Code ---------------------------------------------------------------------------


def test_claude_code_tool_use_becomes_call_and_result_follows() -> None:
    messages = load_transcript(TRANSCRIPTS / "format-samples/claude-code_sample_session.jsonl")
    assert messages[0] == {"role": "user", "content": "Create a hello world function"}
    call_message = messages[1]
    assert call_message["content"] == "I'll create that function for you."
    (call,) = call_message["tool_calls"]
    assert call["id"] == "toolu_001"
    assert call["function"]["name"] == "Write"
    assert json.loads(call["function"]["arguments"]) == {
        "file_path": "/project/hello.py",
        "content": "def hello():\n    return 'Hello, World!'\n",
    }
    assert messages[2] == {
        "role": "tool",
        "tool_call_id": "toolu_001",
        "content": "File written successfully",
    }
    assert messages[3]["content"] is None and messages[3]["tool_calls"][0]["id"] == "toolu_002"
    assert not any("summary" in json.dumps(m).lower() for m in messages[:1])


def test_claude_code_json_variant_keeps_thinking_out_of_content() -> None:
    messages = load_transcript(TRANSCRIPTS / "format-samples/claude-code_sample_session.json")
    assert Counter(m["role"] for m in messages) == {"assistant": 15, "tool": 12, "user": 6}
    first_reply = messages[1]
    assert first_reply["_reasoning"].startswith("The user wants a simple addition function.")
    assert "addition function" not in json.dumps(first_reply["content"])
    assert first_reply["tool_calls"][0]["id"] == "toolu_write_001"
    assert messages[2]["tool_call_id"] == "toolu_write_001"
    failed = [m for m in messages if m.get("_is_error")]
    assert [m["tool_call_id"] for m in failed] == ["toolu_bash_004"]
    assert any(
        m["role"] == "user" and str(m["content"]).startswith("This is a session continuation")
        for m in messages
    )
    dumped = json.loads(dump_transcript(messages))
    assert not any(k.startswith("_") for m in dumped for k in m)


def test_claude_code_split_response_lines_merge_into_one_message(tmp_path: Path) -> None:
    def assistant(block: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "assistant",
            "message": {"id": "msg_1", "role": "assistant", "content": [block]},
        }

    def results(*blocks: dict[str, Any]) -> dict[str, Any]:
        return {"type": "user", "message": {"role": "user", "content": list(blocks)}}

    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "AAA"},
    }
    lines = [
        {"type": "file-history-snapshot", "snapshot": {}},
        {"type": "user", "message": {"role": "user", "content": "look"}},
        assistant({"type": "thinking", "thinking": "hmm"}),
        assistant({"type": "text", "text": "Checking."}),
        assistant({"type": "tool_use", "id": "t1", "name": "Read", "input": {"p": "a"}}),
        results(
            {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "A"}]}
        ),
        assistant({"type": "tool_use", "id": "t2", "name": "Read", "input": {"p": "b"}}),
        results(
            {"type": "tool_result", "tool_use_id": "t2", "content": [image]},
            {"type": "text", "text": "also this"},
        ),
        {"type": "user", "isSidechain": True, "message": {"role": "user", "content": "sub"}},
        {"type": "system", "content": "compacted"},
        {"type": "assistant", "message": {"id": "msg_2", "role": "assistant", "content": "Done"}},
    ]
    path = write(tmp_path, "session.jsonl", jsonl(*lines))
    assert detect_format(path) == "claude-code"
    messages = load_transcript(path)
    assert [m["role"] for m in messages] == [
        "user",
        "assistant",
        "tool",
        "tool",
        "user",
        "assistant",
    ]
    merged = messages[1]
    assert merged["content"] == "Checking."
    assert merged["_reasoning"] == "hmm"
    assert [c["id"] for c in merged["tool_calls"]] == ["t1", "t2"]
    assert messages[2]["content"] == "A"
    assert messages[3]["content"] == [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAA"}}
    ]
    assert messages[4] == {"role": "user", "content": "also this"}
    validate_transcript(messages)


def test_claude_code_tool_use_without_id_names_the_line(tmp_path: Path) -> None:
    lines = [
        {"type": "user", "message": {"role": "user", "content": "x"}},
        {
            "type": "assistant",
            "message": {"role": "assistant", "content": [{"type": "tool_use", "name": "Bash"}]},
        },
    ]
    path = write(tmp_path, "s.jsonl", jsonl(*lines))
    with pytest.raises(TranscriptError, match=r"s\.jsonl: line 2: tool_use block has no 'id'"):
        load_transcript(path)


# -- Codex ---------------------------------------------------------------------------------


def test_codex_sample_converts_parts_and_skips_metadata() -> None:
    messages = load_transcript(TRANSCRIPTS / "format-samples/codex_sample_session.jsonl")
    assert messages == [
        {"role": "user", "content": "Write a hello world function"},
        {
            "role": "assistant",
            "content": "Here is a simple hello world function.",
            "_reasoning": "I'll include a minimal example and keep it short.",
        },
    ]


def codex_item(payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "2025-01-01T00:00:00Z", "type": "response_item", "payload": payload}


def test_codex_function_calls_pair_with_their_outputs(tmp_path: Path) -> None:
    lines = [
        {"timestamp": "t", "type": "session_meta", "payload": {"id": "s"}},
        codex_item(
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "ls"}]}
        ),
        codex_item({"type": "reasoning", "summary": [], "encrypted_content": "xx"}),
        codex_item(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Listing."}],
            }
        ),
        codex_item(
            {
                "type": "function_call",
                "name": "shell",
                "arguments": '{"command":["ls"]}',
                "call_id": "c1",
            }
        ),
        codex_item(
            {
                "type": "function_call",
                "name": "shell",
                "arguments": '{"command":["pwd"]}',
                "call_id": "c2",
            }
        ),
        {"timestamp": "t", "type": "event_msg", "payload": {"type": "exec_command_end"}},
        codex_item({"type": "function_call_output", "call_id": "c1", "output": "a.py"}),
        codex_item(
            {
                "type": "function_call_output",
                "call_id": "c2",
                "output": {"output": "/w", "metadata": {}},
            }
        ),
        codex_item(
            {
                "type": "custom_tool_call",
                "name": "apply_patch",
                "input": "*** Begin",
                "call_id": "c3",
            }
        ),
        codex_item({"type": "custom_tool_call_output", "call_id": "c3", "output": "Done!"}),
        codex_item(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Ok"}],
            }
        ),
    ]
    path = write(tmp_path, "rollout.jsonl", jsonl(*lines))
    assert detect_format(path) == "codex"
    messages = load_transcript(path)
    assert [m["role"] for m in messages] == [
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    assert messages[1]["content"] == "Listing."
    assert [c["id"] for c in messages[1]["tool_calls"]] == ["c1", "c2"]
    assert messages[1]["tool_calls"][0]["function"] == {
        "name": "shell",
        "arguments": '{"command":["ls"]}',
    }
    assert messages[2] == {"role": "tool", "tool_call_id": "c1", "content": "a.py"}
    assert json.loads(messages[3]["content"]) == {"output": "/w", "metadata": {}}
    assert messages[4]["content"] is None
    assert json.loads(messages[4]["tool_calls"][0]["function"]["arguments"]) == {
        "input": "*** Begin"
    }
    assert messages[5] == {"role": "tool", "tool_call_id": "c3", "content": "Done!"}
    validate_transcript(messages)


def test_codex_unknown_item_type_is_skipped_and_counted(tmp_path: Path) -> None:
    lines = [
        codex_item({"type": "message", "role": "user", "content": "hi"}),
        codex_item({"type": "mystery_call", "call_id": "x"}),
        codex_item({"type": "mystery_call", "call_id": "y"}),
        {"timestamp": "t", "type": "new_envelope", "payload": {}},
    ]
    path = write(tmp_path, "r.jsonl", jsonl(*lines))
    loaded = read_transcript_file(path)
    assert loaded.messages == [{"role": "user", "content": "hi"}]
    assert loaded.notes == (
        "skipped 3 records of a type this reader does not know: "
        "item mystery_call x2, line new_envelope x1",
    )


def test_codex_older_bare_item_rollouts(tmp_path: Path) -> None:
    lines = [
        {"id": "s1", "timestamp": "2025-05-01T00:00:00Z", "instructions": None},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1"},
        {"type": "function_call_output", "call_id": "c1", "output": "ok"},
        {"record_type": "state"},
    ]
    path = write(tmp_path, "rollout-old.jsonl", jsonl(*lines))
    assert detect_format(path) == "codex"
    messages = load_transcript(path)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
    assert messages[0]["content"] == "hi"
    validate_transcript(messages)


@pytest.mark.parametrize(
    ("fmt", "phrase"),
    [
        ("claude-code", "not a Claude Code session log"),
        ("codex", "not a Codex CLI rollout: found JSONL whose line 1 is an object with keys"),
        ("swe-agent", "not a SWE-agent trajectory"),
    ],
)
def test_explicit_format_that_does_not_fit_the_file(tmp_path: Path, fmt: str, phrase: str) -> None:
    path = write(tmp_path, "chat.jsonl", jsonl(*CHAT))
    with pytest.raises(TranscriptError) as info:
        load_transcript(path, format=fmt)
    assert phrase in str(info.value)
    assert str(info.value).startswith(str(path))


# -- OpenAI, detection, streams ------------------------------------------------------------


CHAT = [
    {"role": "user", "content": "héllo"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    },
    {"role": "tool", "tool_call_id": "a", "content": "1"},
    {"role": "assistant", "content": "bye", "name": "bot"},
]


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("list.json", json.dumps(CHAT)),
        ("wrapped.json", json.dumps({"messages": CHAT})),
        ("lines.jsonl", jsonl(*CHAT)),
        ("crlf.jsonl", jsonl(*CHAT).replace("\n", "\r\n") + "\r\n\r\n"),
        # The extension is only a hint: a chat list in a .traj file is still openai.
        ("misnamed.traj", json.dumps(CHAT)),
    ],
)
def test_openai_shapes_load_unchanged(tmp_path: Path, name: str, text: str) -> None:
    path = write(tmp_path, name, text)
    assert detect_format(path) == "openai"
    assert load_transcript(path) == CHAT


def test_single_message_jsonl(tmp_path: Path) -> None:
    path = write(tmp_path, "one.jsonl", json.dumps(CHAT[0]) + "\n")
    assert load_transcript(path) == [CHAT[0]]


def test_openai_tool_result_dict_becomes_json_text(tmp_path: Path) -> None:
    data = [*CHAT[:2], {"role": "tool", "tool_call_id": "a", "content": {"rows": [1, 2]}}]
    messages = load_transcript(write(tmp_path, "t.json", json.dumps(data)))
    assert messages[2]["content"] == '{"rows": [1, 2]}'


def test_text_stream_with_path_hint() -> None:
    stream = io.StringIO(json.dumps(CHAT))
    assert load_transcript(stream, path_hint="chat.json") == CHAT
    with pytest.raises(TranscriptError) as info:
        load_transcript(io.StringIO("{nope"), path_hint="<stdin>")
    assert str(info.value).startswith("<stdin>: invalid JSON at line 1")


def test_stream_name_is_used_when_no_hint() -> None:
    stream = io.StringIO("")
    stream.name = "piped.json"
    with pytest.raises(TranscriptError, match=r"piped\.json: the file is empty"):
        load_transcript(stream)


# -- bad input -----------------------------------------------------------------------------


BAD = [
    pytest.param(
        "bad.json", '[\n  {"role": "user",\n  "content": }\n]', "invalid JSON at line 3", id="json"
    ),
    pytest.param(
        "bad.jsonl",
        jsonl(CHAT[0], CHAT[3]) + '{"role": "user", "content": "x"\n' + jsonl(CHAT[0]),
        "line 3: invalid JSON",
        id="jsonl-line-3",
    ),
    pytest.param("odd.json", '{"foo": 1}', "cannot tell the transcript format", id="unknown"),
    pytest.param(
        "odd.jsonl", '{"a": 1}\n{"b": 2}\n', "--format with one of: openai", id="unknown-jsonl"
    ),
    pytest.param("n.json", "42", "cannot tell the transcript format", id="number"),
    pytest.param("empty.json", "", "the file is empty", id="empty"),
    pytest.param("blank.jsonl", "\n  \n", "the file is empty", id="blank"),
    pytest.param("none.json", "[]", "contains no messages", id="empty-list"),
    pytest.param("none2.json", '{"messages": []}', "contains no messages", id="empty-messages"),
    pytest.param(
        "s.jsonl",
        jsonl({"type": "summary", "summary": "x", "leafUuid": "u"}),
        "contains no messages",
        id="summary-only",
    ),
    pytest.param(
        "m.json",
        json.dumps([CHAT[0], "text"]),
        "item 1: a message must be a JSON object",
        id="non-dict",
    ),
]


@pytest.mark.parametrize(("name", "text", "phrase"), BAD)
def test_bad_files_raise_transcript_error_with_path(
    tmp_path: Path, name: str, text: str, phrase: str
) -> None:
    path = write(tmp_path, name, text)
    with pytest.raises(TranscriptError) as info:
        load_transcript(path)
    assert str(path) in str(info.value)
    assert phrase in str(info.value)
    assert info.value.path == str(path)


def test_unknown_structure_lists_every_format(tmp_path: Path) -> None:
    path = write(tmp_path, "odd.json", '{"foo": 1}')
    with pytest.raises(TranscriptError) as info:
        load_transcript(path)
    assert all(fmt in str(info.value) for fmt in FORMATS)


def test_directory_missing_and_binary_files(tmp_path: Path) -> None:
    with pytest.raises(TranscriptError, match="is a directory") as info:
        load_transcript(tmp_path)
    assert str(tmp_path) in str(info.value)
    with pytest.raises(TranscriptError, match=r"nope\.json: file not found"):
        load_transcript(tmp_path / "nope.json")
    binary = tmp_path / "b.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(TranscriptError, match="not UTF-8 text"):
        load_transcript(binary)


def test_unknown_format_name(tmp_path: Path) -> None:
    path = write(tmp_path, "c.json", json.dumps(CHAT))
    with pytest.raises(TranscriptError) as info:
        load_transcript(path, format="gpt")
    assert str(info.value) == (
        f"{path}: unknown transcript format 'gpt'; use one of: auto, openai, swe-agent, "
        "mini-swe-agent, claude-code, codex, openhands, aider"
    )


# -- dump and round trips ------------------------------------------------------------------


def test_dump_strips_internal_keys_and_keeps_unicode() -> None:
    messages = [{"role": "user", "content": "naïve ✓", "_ts": 1}]
    text = dump_transcript(messages)
    assert "naïve ✓" in text
    assert json.loads(text) == [{"role": "user", "content": "naïve ✓"}]
    assert messages[0]["_ts"] == 1
    assert text.startswith("[\n  {")


def test_dump_writes_sdk_call_objects_as_dicts() -> None:
    class Fn:
        def __init__(self) -> None:
            self.name = "f"
            self.arguments = "{}"

    class Call:
        def __init__(self) -> None:
            self.id = "a"
            self.type = "function"
            self.function = Fn()

    text = dump_transcript([{"role": "assistant", "content": None, "tool_calls": [Call()]}])
    assert json.loads(text)[0]["tool_calls"] == [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    ]


texts = st.text(max_size=40)
parts = st.lists(
    st.one_of(
        st.builds(lambda t: {"type": "text", "text": t}, texts),
        st.builds(
            lambda u: {"type": "image_url", "image_url": {"url": u}},
            st.text(min_size=1, max_size=10),
        ),
        texts,
    ),
    max_size=3,
)
contents = st.one_of(texts, parts)
arguments = st.dictionaries(st.text(max_size=5), st.integers() | texts, max_size=3).map(json.dumps)


@st.composite
def transcripts(draw: st.DrawFn) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        messages.append(
            {"role": draw(st.sampled_from(["system", "developer"])), "content": draw(texts)}
        )
    counter = 0
    for _ in range(draw(st.integers(1, 4))):
        messages.append({"role": "user", "content": draw(contents)})
        for _ in range(draw(st.integers(0, 2))):
            n = draw(st.integers(1, 3))
            ids = [f"call_{counter + i}" for i in range(n)]
            counter += n
            calls = [
                {
                    "id": i,
                    "type": "function",
                    "function": {
                        "name": draw(st.sampled_from(["bash", "read"])),
                        "arguments": draw(arguments),
                    },
                }
                for i in ids
            ]
            messages.append(
                {"role": "assistant", "content": draw(st.none() | texts), "tool_calls": calls}
            )
            for cid in draw(st.permutations(ids)):
                messages.append({"role": "tool", "tool_call_id": cid, "content": draw(contents)})
        messages.append({"role": "assistant", "content": draw(contents)})
    return messages


@settings(max_examples=60, deadline=None)
@given(transcripts())
def test_generated_transcripts_validate_and_round_trip(messages: list[dict[str, Any]]) -> None:
    validate_transcript(messages)
    assert load_transcript(io.StringIO(dump_transcript(messages)), path_hint="x.json") == messages
    lines = "\n".join(json.dumps(m, ensure_ascii=False) for m in messages)
    assert load_transcript(io.StringIO(lines), path_hint="x.jsonl") == messages


def test_size_limit_is_checked_before_reading(tmp_path: Path) -> None:
    src = tmp_path / "t.json"
    src.write_text(json.dumps([{"role": "user", "content": "x" * 5_000}]))
    with pytest.raises(TranscriptError, match="over the input limit"):
        load_transcript(src, max_bytes=1_000)
    assert load_transcript(src, max_bytes=None)[0]["content"] == "x" * 5_000


def test_a_named_pipe_is_read_under_the_limit(tmp_path: Path) -> None:
    import os
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    text = json.dumps([{"role": "user", "content": "hi"}])
    writer = threading.Thread(target=fifo.write_text, args=(text,))
    writer.start()
    assert load_transcript(fifo)[0]["content"] == "hi"
    writer.join()


@pytest.mark.parametrize(
    ("text", "phrase"),
    [("[" * 50_000, "nested too deeply"), ("[" + "9" * 5_000 + "]", "5,000 digits")],
)
def test_hostile_json_is_a_transcript_error(text: str, phrase: str) -> None:
    with pytest.raises(TranscriptError, match=phrase):
        load_transcript(io.StringIO(text))


def test_lone_surrogates_are_replaced_and_pairs_kept() -> None:
    text = '[{"role": "user", "content": "\\ud83d\\ude00 \\udc00"}]'
    assert load_transcript(io.StringIO(text))[0]["content"] == "\U0001f600 \ufffd"


# -- never a message without a role ----------------------------------------------------------

_KEYS = st.sampled_from(
    [
        "role", "content", "type", "message", "history", "messages", "loglines", "action",
        "observation", "source", "args", "payload", "tool_calls", "tool_call_metadata",
        "instance_id", "extras", "cause", "id", "isMeta", "isSidechain", "record_type",
        "timestamp", "function_name", "tool_call_id", "call_id", "name", "output",
    ]
)  # fmt: skip
_WORDS = [
    "user", "assistant", "tool", "bot", "message", "run", "finish", "response_item",
    "function_call", "summary", "agent", "environment", "system", "x", "",
]  # fmt: skip
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(_WORDS))
json_values = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=5),
    max_leaves=25,
)
documents = st.one_of(
    st.lists(json_values, min_size=1, max_size=5),
    st.dictionaries(_KEYS, json_values, min_size=1, max_size=5),
)


@settings(max_examples=300, deadline=None)
@given(documents, st.booleans())
@example({"role": None, "source": None, "cause": [], "observation": "message"}, False)
def test_random_json_is_an_error_or_messages_with_roles(value: Any, as_lines: bool) -> None:
    if as_lines and isinstance(value, list):
        text = "\n".join(json.dumps(v) for v in value)
    else:
        text = json.dumps(value)
    try:
        messages = load_transcript(io.StringIO(text), path_hint="random.json")
    except PalimpsestError:
        return
    assert messages
    assert all(isinstance(m, dict) and m.get("role") in ROLES for m in messages)


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ('[{"content": "no role"}]', "cannot tell the transcript format"),
        ('[{"role": "user", "content": "a"}, {"content": "b"}]', "item 1: a message must be"),
        ('[{"role": "bot", "content": "a"}]', "message 0: unknown role 'bot'"),
        ('[{"role": 3, "content": "a"}]', "it looks like an OpenAI chat transcript, but item 0"),
        (
            '{"history": [{"action": "run", "source": "agent"}, {"content": "x"}]}',
            "it looks like a SWE-agent trajectory, but history[0]: a SWE-agent history item",
        ),
        ('{"history": [{"action": "run"}, {"content": "x"}]}', "it looks like an OpenHands run"),
    ],
)
def test_roleless_or_half_recognised_files_are_refused(text: str, phrase: str) -> None:
    with pytest.raises(TranscriptError, match=re.escape(phrase)):
        load_transcript(io.StringIO(text), path_hint="x.json")


# -- the documented formats are exactly the readers ------------------------------------------

ROOT = HERE.parent
SAMPLE_OF_FORMAT = {
    "openai": "fixtures/openai-chat-shapes.json",
    "swe-agent": "swe-agent/marshmallow-1867__function_calling.traj",
    "mini-swe-agent": "mini-swe-agent/local.traj.json",
    "claude-code": "fixtures/claude-code-not-requests.jsonl",
    "codex": "fixtures/codex-rollout-shell.jsonl",
    "openhands": "fixtures/openhands-eval-record.json",
    "aider": "fixtures/aider.chat.history.md",
}


def _readme_formats() -> tuple[list[str], list[str]]:
    readme = (ROOT / "README.md").read_text()
    listed = readme.split("Transcript formats (`--format`", 1)[1].split("\n\n", 2)[1]
    bullets = re.findall(r"^- `([a-z-]+)`:", listed, re.M)
    synopsis = re.search(r"\[--format auto\|([a-z|-]+)\]", readme)
    assert synopsis is not None
    return bullets, synopsis.group(1).split("|")


def _transcripts_md_tables() -> list[list[str]]:
    page = (ROOT / "docs" / "transcripts.md").read_text()
    tables = []
    for header in ("| format | what it reads |", "| format | requires |"):
        rows = page.split(header, 1)[1].split("\n\n", 1)[0].splitlines()[2:]
        tables.append([re.match(r"\| `([a-z-]+)` \|", row).group(1) for row in rows])  # type: ignore[union-attr]
    return tables


def test_documented_formats_are_exactly_the_readers() -> None:
    bullets, synopsis = _readme_formats()
    assert bullets == list(FORMATS)
    assert synopsis == list(FORMATS)
    reads, requires = _transcripts_md_tables()
    assert reads == list(FORMATS)
    assert sorted(requires) == sorted(FORMATS)
    sessions = (ROOT / "docs" / "sessions.md").read_text()
    assert f"[--format auto|{'|'.join(FORMATS)}]" in sessions


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_has_a_sample_that_it_reads(fmt: str) -> None:
    path = TRANSCRIPTS / SAMPLE_OF_FORMAT[fmt]
    assert detect_format(path) == fmt
    loaded = read_transcript_file(path)
    assert loaded.format == fmt and loaded.messages
