"""Head and tail cut points (CC-46..CC-51, CC-56) and spec acceptance examples 8 and 9."""

from __future__ import annotations

from compaction_helpers import StubSummarizer, asst, call, sys_, tool, user
from palimpsest.compaction.boundaries import align_backward, align_forward, find_tail_cut
from palimpsest.compaction.compressor import ContextCompressor
from palimpsest.messages import validate_transcript


def example_8() -> list[dict]:
    return [
        sys_(),
        user("u1"),
        asst("a1"),
        user("u2"),
        asst(None, [call("c1"), call("c2")]),
        tool("c1", "r1"),
        tool("c2", "r2"),
        user("u3"),
        asst("a3"),
        user("u4"),
    ]


def test_align_forward_skips_results() -> None:
    msgs = [sys_(), user("u"), asst(None, [call("c1")]), tool("c1", "r"), user("v")]
    assert align_forward(msgs, 3) == 4
    assert align_forward(msgs, 1) == 1
    assert align_forward(msgs, 5) == 5


def test_align_backward_pulls_before_the_group() -> None:
    msgs = example_8()
    assert align_backward(msgs, 6) == 4
    assert align_backward(msgs, 7) == 7  # a finished group before a user message is whole
    assert align_backward(msgs, 5) == 4
    assert align_backward(msgs, 8) == 8
    assert align_backward(msgs, 0) == 0


def test_example_8_cut_moves_to_the_assistant() -> None:
    msgs = example_8()
    # A budget of 30 (ceiling 45) admits messages 9..6 at ~10 tokens each; the raw cut is
    # tool c2 at index 6, inside the group.
    assert find_tail_cut(msgs, 3, 30) == 4


def test_example_8_group_survives_whole_through_compress() -> None:
    compressor = ContextCompressor(
        200, summarizer=StubSummarizer(), quiet_mode=True, refuse_if_grow=False
    )
    compressor.tail_token_budget = 30
    out = compressor.compress(example_8())
    validate_transcript(out)
    ids = {c["id"] for m in out for c in m.get("tool_calls", [])}
    results = {m["tool_call_id"] for m in out if m["role"] == "tool"}
    assert ids == results and ids in ({"c1", "c2"}, set())


def test_example_9_last_user_message_stays_even_when_huge() -> None:
    msgs: list[dict] = [sys_(), user("start"), asst("ok")]
    for i in range(3, 20):
        if i == 12:
            msgs.append(user("HUGE REQUEST " + "x" * 40_000))
        else:
            msgs.append(asst(f"a{i}") if i % 2 else user(f"u{i}"))
    # Make index 12 the newest real user message: later messages are assistants only.
    for i in range(13, 20):
        msgs[i] = asst(f"a{i}")
    budget = 1_000
    cut = find_tail_cut(msgs, 3, budget)
    assert cut <= 12
    compressor = ContextCompressor(
        200_000, summarizer=StubSummarizer(), quiet_mode=True, refuse_if_grow=False
    )
    compressor.tail_token_budget = budget
    out = compressor.compress(msgs)
    text = msgs[12]["content"]
    holder = next(i for i, m in enumerate(out) if text in m["content"])
    summary_at = next(i for i, m in enumerate(out) if m.get("_compressed_summary"))
    # Either a message of its own after the summary, or merged with the summary before it.
    assert holder > summary_at or out[holder]["content"].endswith("\n\n" + text)
    assert out[holder]["role"] == "user"


def test_cut_never_inside_head_and_never_on_a_tool_result() -> None:
    msgs = [
        sys_(),
        user("u"),
        asst(None, [call("c1")]),
        tool("c1", "x" * 10_000),
        asst(None, [call("c2")]),
        tool("c2", "y" * 10_000),
        asst("done"),
    ]
    cut = find_tail_cut(msgs, 1, 10)
    assert cut >= 2
    assert msgs[cut]["role"] != "tool" if cut < len(msgs) else True


def test_last_visible_reply_is_kept() -> None:
    """CC-51: the newest assistant text stays in the tail even when the budget excludes it."""
    msgs = [
        sys_(),
        user("u0"),
        asst("a0"),
        user("summarize the logs"),
        asst("Here is what I found: " + "z" * 20_000),
        asst(None, [call("k")]),
        tool("k", "r"),
        user("thanks"),
    ]
    assert find_tail_cut(msgs, 3, 10) == 4


def test_completed_pair_at_head_boundary_is_summarized_together() -> None:
    """CC-50: the newest user message sits at head_end, so its whole exchange goes."""
    msgs = [
        sys_(),
        user("u1"),
        asst("a1"),
        user("run the migration"),
        asst(None, [call("c1")]),
        tool("c1", "migrated"),
        asst(None, [call("c2")]),
        tool("c2", "checked"),
        asst(None, [call("c3")]),
        tool("c3", "verified"),
    ]
    cut = find_tail_cut(msgs, 3, 10_000)
    assert cut == 6


def test_text_action_observation_is_not_the_newest_request() -> None:
    """A SWE-agent observation is a user message; taking it for the active task kept tool
    output verbatim in the tail while the person's request went into the summary."""
    msgs = [
        sys_(),
        user("task: fix the parser"),
        asst("looking\n```\nls\n```"),
        user("a.py b.py\n(Open file: n/a)\n(Current directory: /r)\nbash-$"),
        asst("now edit\n```\nedit 1:1\nx\nend_of_edit\n```"),
        user("OBSERVATION:\n[File: a.py]"),
        user("Actually, also update the docs."),
        asst("will do\n```\nopen docs.md\n```"),
        user("OBSERVATION:\n" + "doc line\n" * 50),
        asst("done"),
    ]
    cut = find_tail_cut(msgs, 2, budget=10)
    assert cut <= 6  # the real request stays in the tail
    only_outputs = msgs[:6] + msgs[7:]
    assert find_tail_cut(only_outputs, 2, budget=10) > 1


def test_tail_cut_reads_back_only_as_far_as_it_must_and_agrees_with_the_full_reading() -> None:
    """has_content_to_compress calls find_tail_cut every turn without readings; it reads
    windows from the end instead of the whole list, and must land on the same cut."""
    from pathlib import Path

    from palimpsest.messages import load_transcript
    from palimpsest.messages.reading import read_transcript

    data = Path(__file__).parent / "data" / "transcripts"
    paths = sorted(p for p in data.rglob("*") if p.suffix in (".traj", ".json", ".jsonl"))
    for path in paths:
        messages = load_transcript(path)
        readings = read_transcript(messages)
        for head_end in (1, 2, 3):
            for budget in (10, 500, 4000):
                if head_end >= len(messages):
                    continue
                expected = find_tail_cut(messages, head_end, budget, readings=readings)
                assert find_tail_cut(messages, head_end, budget) == expected, path.name
    long_run = [sys_(), user("task")] + [asst("x"), user("y")] * 2000
    full = read_transcript(long_run)
    assert find_tail_cut(long_run, 2, 50) == find_tail_cut(long_run, 2, 50, readings=full)


def _chat(sizes: list[int]) -> list[dict]:
    """A system message, then alternating user/assistant turns of the given rough sizes."""
    msgs: list[dict] = [sys_()]
    for i, size in enumerate(sizes):
        text = f"m{i} " + "x" * (size * 4)
        msgs.append(user(text) if i % 2 == 0 else asst(text))
    return msgs


def test_a_rest_between_budget_and_ceiling_gets_a_budget_shaped_tail() -> None:
    # 40 messages of ~600 tokens after a head of 1: 24K, over the 20K budget, under 30K.
    msgs = _chat([600] * 40)
    cut = find_tail_cut(msgs, 1, 20_000)
    from palimpsest.tokens import message_budget_tokens

    kept = sum(message_budget_tokens(m) for m in msgs[cut:])
    assert len(msgs) - cut > 3  # not CC-47 step 4's three-message fallback
    assert 20_000 - 700 < kept <= 20_000


def test_a_rest_under_the_budget_leaves_just_enough_to_summarize() -> None:
    msgs = _chat([500] * 20)  # 10K after the head, under a 20K budget
    cut = find_tail_cut(msgs, 1, 20_000)
    from palimpsest.tokens import message_budget_tokens

    rest = sum(message_budget_tokens(m) for m in msgs[1:])
    kept = sum(message_budget_tokens(m) for m in msgs[cut:])
    assert rest - 2_000 - 600 < kept <= rest - 2_000  # all but ~2K (one message of slack)
    small = _chat([100] * 15)  # 1.5K: too little to summarize for a saving
    assert len(small) - find_tail_cut(small, 1, 20_000) == 3


def test_min_user_messages_keeps_the_last_n_requests_in_the_tail() -> None:
    msgs = [sys_(), user("task")]
    for i in range(10):
        msgs += [user(f"request {i} " + "w " * 400), asst(f"answer {i} " + "v " * 400)]
    seed = find_tail_cut(msgs, 2, 300)
    kept = find_tail_cut(msgs, 2, 300, min_user_messages=4)
    requests = [i for i, m in enumerate(msgs) if m["role"] == "user" and i >= 2]
    assert seed > requests[-2]  # the seed keeps the newest request only
    assert kept == requests[-4]
    # More asked than exist: all but the first after the head (something must be summarized).
    assert find_tail_cut(msgs, 2, 300, min_user_messages=100) == 3


def test_compressor_keeps_the_last_n_user_messages_verbatim() -> None:
    msgs = [sys_(), user("task")]
    for i in range(10):
        msgs += [user(f"request {i} " + "w " * 400), asst(f"answer {i} " + "v " * 400)]
    engine = ContextCompressor(
        200_000, StubSummarizer(), threshold_percent=0.02, min_tail_user_messages=3
    )
    out = engine.compress(msgs)
    wanted = [m["content"] for m in msgs if m["role"] == "user"][-3:]
    texts = [m["content"] for m in out if m["role"] == "user"]
    assert all(w in texts for w in wanted)
    assert engine.last_stats.compressed
