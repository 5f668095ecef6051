"""The eval's identifier probe: names of a span that a later assistant message used."""

from __future__ import annotations

from typing import Any

from palimpsest.eval.later_use import UsedName, later_used_names


def _say(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def test_names_from_any_message_count_once_used_later_weighted_by_uses() -> None:
    run = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "Fix `load_config`."},
        _say("```bash\ngrep -rn load_config src\n```"),
        {"role": "user", "content": "src/a.py:3: def load_config(path): return parse_toml(path)"},
        _say("parse_toml is the culprit."),
        _say("I will patch parse_toml and load_config."),
        _say("Done with parse_toml."),
    ]
    used = {u.name: u for u in later_used_names(run, 1, 4)}
    assert used["parse_toml"] == UsedName("parse_toml", 3, 3, from_output=True)
    assert used["load_config"].first == 1 and used["load_config"].uses == 2
    assert not used["load_config"].from_output  # first seen in the request


def test_tool_result_blocks_are_output_and_a_name_never_reused_is_not_probed() -> None:
    run = [
        {"role": "user", "content": "go"},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ValueErrorX raised in check_week()"}],
        },
        _say("check_week needs a guard."),
    ]  # fmt: skip
    used = later_used_names(run, 1, 2)
    assert [(u.name, u.from_output) for u in used] == [("check_week", True)]
    assert later_used_names(run, 2, 3) == []  # nothing after the last message
