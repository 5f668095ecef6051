"""The ``read_output`` answer text, shared by the agent's tool and the MCP server.

The agent-facing behaviour (through the tool registry) is covered in
test_agent_builtin_tools.py; these check the function itself: its limits, the grep cap,
the listing of saved outputs, and that a window's ``offset=`` hint reads on exactly.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from palimpsest.outputs.read_answer import MAX_MATCHES, MAX_READ_LIMIT, read_output_text
from palimpsest.outputs.store import OutputStore


@pytest.fixture
def outputs(tmp_path: Path) -> Iterator[OutputStore]:
    with OutputStore(tmp_path / "outputs") as store:
        yield store


@pytest.mark.parametrize("limit", [0, MAX_READ_LIMIT + 1])
def test_a_limit_out_of_range_is_refused(outputs: OutputStore, limit: int) -> None:
    saved = outputs.put_text("text")
    with pytest.raises(ValueError, match="limit must be between 1 and 100,000"):
        read_output_text(outputs, saved.digest, limit=limit)


def test_following_the_offset_hints_reads_the_whole_output_once(outputs: OutputStore) -> None:
    body = "".join(f"row {i} é\n" for i in range(40))
    saved = outputs.put_text(body)
    pieces, offset = [], 0
    while True:
        answer = read_output_text(outputs, saved.digest, offset, limit=37)
        header, _, rest = answer.partition("\n")
        assert header.startswith(f"[output {saved.digest[:12]}: bytes {offset:,}-")
        text, hint, after = rest.rpartition("\n[read on with offset=")
        if not hint:
            pieces.append(rest)
            break
        pieces.append(text)
        offset = int(after.rstrip("]"))
    assert "".join(pieces) == body


def test_a_grep_stops_at_the_cap_and_says_so(outputs: OutputStore) -> None:
    saved = outputs.put_text("".join(f"ERROR {i}\n" for i in range(MAX_MATCHES + 5)))
    answer = read_output_text(outputs, saved.digest, pattern="ERROR").splitlines()
    assert answer[0].endswith(
        "50 lines contain 'ERROR' (the first ones; narrow the pattern for others)]"
    )
    assert len(answer) == MAX_MATCHES + 1


def test_an_unknown_name_lists_the_newest_saved_outputs(outputs: OutputStore) -> None:
    saved = [outputs.put_text(f"output number {i}") for i in range(22)]
    with pytest.raises(FileNotFoundError) as caught:
        read_output_text(outputs, "feedfacefeedface")
    message = str(caught.value)
    assert message.startswith(
        "no saved output named 'feedfacefeedface'. Saved outputs, newest first: "
    )
    assert message.endswith("(+2 more).")
    assert sum(item.digest[:12] in message for item in saved) == 20
