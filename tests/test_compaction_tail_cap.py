"""A giant assistant message in the kept tail is cut to the cap, with a session_search pointer."""

from __future__ import annotations

from compaction_helpers import StubSummarizer, asst, sys_, user
from palimpsest.compaction.compressor import ContextCompressor
from palimpsest.compaction.tail_cap import cap_tail_assistants, is_cut


def test_only_assistant_text_over_the_cap_is_cut() -> None:
    big = "B" * 40_000 + "THE END"
    tail = [user("x" * 40_000), asst(big), asst("small")]
    out, cut = cap_tail_assistants(tail, 1_000)
    assert cut == 1
    assert out[0] is tail[0] and out[2] is tail[2]
    text = out[1]["content"]
    assert len(text) < 4_400 and is_cut(text) and "session_search" in text
    assert text.startswith("BBB") and text.endswith("THE END")
    assert tail[1]["content"] == big  # the input is never modified
    assert cap_tail_assistants(tail, None) == (tail, 0)


def test_the_compressor_caps_the_tail_when_configured() -> None:
    msgs = [sys_(), user("task")]
    for i in range(12):
        msgs += [user(f"q{i} " + "w " * 800), asst(f"a{i} " + "v " * 800)]
    msgs += [user("write the report"), asst("R" * 60_000)]
    capped = ContextCompressor(
        200_000, StubSummarizer(), threshold_percent=0.1, max_tail_assistant_tokens=2_000
    )
    out = capped.compress(msgs)
    assert capped.last_stats.tail_capped_messages == 1
    assert is_cut(out[-1]["content"])
    whole = ContextCompressor(200_000, StubSummarizer(), threshold_percent=0.1).compress(msgs)
    assert whole[-1]["content"] == "R" * 60_000  # the seed default keeps it whole


def _long_history(pairs: int, chars: int) -> list[dict]:
    out = []
    for i in range(pairs):
        out.append(user(f"request {i}: " + f"need {i} " * (chars // 7)))
        out.append(asst(f"answer {i}: " + f"done {i} " * (chars // 7)))
    return out


def test_through_the_agent_the_last_users_survive_and_a_giant_reply_is_cut(tmp_path) -> None:
    from agent_helpers import make_agent
    from palimpsest.config import settings_from_dict
    from palimpsest.storage.archive import archived_messages

    seeded = _long_history(8, 12_000)
    seeded[-1] = asst("the report: " + "R" * 40_000 + " END")
    users = [m["content"] for m in seeded if m["role"] == "user"]

    def compacted(settings: dict) -> tuple[list[dict], object]:
        agent = make_agent(
            tmp_path / str(len(settings)),
            messages=seeded,
            context_length=40_000,
            settings=settings_from_dict({"compression": settings}),
        )
        event = agent.compress()
        assert event.compacted
        return agent.messages, agent

    seed_messages, _ = compacted({})
    kept = [m["content"] for m in seed_messages if m["role"] == "user"]
    assert not all(u in kept for u in users[-3:])  # the seed keeps fewer than three
    assert seed_messages[-1]["content"] == seeded[-1]["content"]

    messages, agent = compacted({"min_tail_user_messages": 3, "max_tail_assistant_tokens": 1_000})
    kept = [m["content"] for m in messages if m["role"] == "user"]
    assert all(u in kept for u in users[-3:])  # verbatim, whole
    last = messages[-1]["content"]
    assert is_cut(last) and "session_search" in last and last.endswith(" END")
    # the full text stays in the store: archived in place (the default), same session
    archived = archived_messages(agent.store, agent.session_id)
    assert archived[-1]["content"] == seeded[-1]["content"]
