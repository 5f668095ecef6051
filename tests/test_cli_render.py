"""How agent events look on a terminal: one line each, shortened, redacted, no false zeros."""

from __future__ import annotations

import io
import json

from rich.console import Console

from palimpsest.agent.events import (
    CompactionEvent,
    TextDelta,
    ToolCallEvent,
    ToolResultEvent,
    TurnEnd,
    UsageEvent,
    WarningEvent,
)
from palimpsest.cli.render import (
    LINE_WIDTH,
    EventRenderer,
    compaction_line,
    human_size,
    status_line,
    tool_call_line,
    tool_result_line,
    turn_end_line,
)
from palimpsest.usage import CanonicalUsage

SECRET = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"


def _console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=200, color_system=None, highlight=False), out


class TestToolLines:
    def test_call_shows_name_and_short_arguments(self) -> None:
        long = "x" * 300
        event = ToolCallEvent("c1", "run_shell", json.dumps({"command": "ls -la", "note": long}))
        line = tool_call_line(event)
        assert line.startswith('→ run_shell command="ls -la" note="xxx')
        assert "…" in line
        assert len(line) <= LINE_WIDTH

    def test_call_with_arguments_that_are_not_json_shows_them_raw(self) -> None:
        line = tool_call_line(ToolCallEvent("c1", "edit", "{not json"))
        assert line == "→ edit {not json"

    def test_call_arguments_are_redacted(self) -> None:
        line = tool_call_line(ToolCallEvent("c1", "run_shell", json.dumps({"command": SECRET})))
        assert SECRET not in line
        assert "REDACTED" in line

    def test_result_shows_first_line_size_and_time(self) -> None:
        content = "first line\nsecond\nthird"
        line = tool_result_line(ToolResultEvent("c1", "run_shell", content, seconds=0.25))
        assert line == "  ← first line (23 B, 3 lines, 0.25 s)"

    def test_failed_result_is_marked_and_redacted(self) -> None:
        event = ToolResultEvent("c1", "run_shell", f"error: bad key {SECRET}", is_error=True)
        line = tool_result_line(event)
        assert line.startswith("  ✗ error: bad key")
        assert SECRET not in line

    def test_empty_result(self) -> None:
        assert tool_result_line(ToolResultEvent("c", "t", "")).startswith("  ← (empty) (0 B")

    def test_sizes(self) -> None:
        assert human_size("a" * 10) == "10 B"
        assert human_size("a" * 2048) == "2.0 KB"
        assert human_size("a" * (3 * 1024 * 1024)) == "3.0 MB"


class TestCompactionLine:
    def test_a_compaction_names_path_sizes_time_and_sessions(self) -> None:
        event = CompactionEvent(
            path="after_round",
            before_messages=40,
            after_messages=12,
            before_tokens=12345,
            after_tokens=3210,
            compacted=True,
            session_id="20260101_101502_9f3a2c",
            parent_session_id="20260101_101502_1b7e40",
            seconds=0.125,
        )
        assert compaction_line(event) == (
            "⟳ compaction (after_round): 40 → 12 messages, 12,345 → 3,210 tokens, 0.12 s"
            " · session 20260101_101502_9f3a2c (parent 20260101_101502_1b7e40)"
        )

    def test_nothing_compacted_says_why(self) -> None:
        event = CompactionEvent("manual", 3, 3, 100, 100, compacted=False, reason="nothing to do")
        assert compaction_line(event) == "⟳ compaction (manual) did not compact: nothing to do"


class TestStatusLine:
    def test_the_documented_shape(self) -> None:
        status = {
            "used": 12345,
            "window": 128000,
            "threshold": 64000,
            "percent": 9.64,
            "compactions": 1,
            "session_id": "ab12cd34",
        }
        assert status_line(status) == (
            "ctx 12,345/128,000 (9.6%, next request) · threshold 64,000 · 1 compaction · session ab12cd34"
        )

    def test_estimated_figures_are_marked(self) -> None:
        status = {"used": 900, "window": 4096, "percent": 22.0, "estimated": True}
        line = status_line(status)
        assert line.startswith("ctx ~900/4,096 (~22.0%, next request)")
        assert "0 compactions" in line and "session ?" in line

    def test_the_agents_long_key_names(self) -> None:
        status = {
            "tokens": 5000,
            "context_length": 8192,
            "threshold_tokens": 6963,
            "percent_of_window": 61.03,
            "compactions": 2,
            "session_id": "20260101_101010_abcdef",
            "estimated": False,
        }
        assert status_line(status) == (
            "ctx 5,000/8,192 (61.0%, next request) · threshold 6,963 · 2 compactions · session 20260101_101010_abcdef"
        )

    def test_a_foreign_long_id_is_cut(self) -> None:
        assert status_line({"session_id": "x" * 40}).endswith("session " + "x" * 24)

    def test_unknown_usage_is_never_zero(self) -> None:
        line = status_line({"used": None, "window": 4096, "percent": 0.0, "threshold": 2048})
        assert line.startswith("ctx ?/4,096 · threshold 2,048")


class TestTurnEnd:
    def test_lines(self) -> None:
        assert turn_end_line(TurnEnd(completed=True, text="hi")) is None
        assert "interrupted" in (turn_end_line(TurnEnd(completed=False, interrupted=True)) or "")
        line = turn_end_line(TurnEnd(completed=False, error=f"bad {SECRET}"))
        assert line is not None and line.startswith("turn stopped: bad") and SECRET not in line


class TestEventRenderer:
    def test_text_streams_and_other_events_start_their_own_line(self) -> None:
        console, out = _console()
        renderer = EventRenderer(console)
        for event in (
            TextDelta("Hel"),
            TextDelta("lo"),
            ToolCallEvent("c1", "read_file", '{"path": "a.txt"}'),
            ToolResultEvent("c1", "read_file", "contents"),
            WarningEvent("w", "careful"),
            UsageEvent(CanonicalUsage(input_tokens=5)),
            TextDelta("Done."),
            TurnEnd(completed=True, text="Done."),
        ):
            renderer.render(event)
        assert out.getvalue().splitlines() == [
            "Hello",
            '→ read_file path="a.txt"',
            "  ← contents (8 B, 0.00 s)",
            "warning: careful",
            "Done.",
        ]

    def test_usage_lines_when_asked(self) -> None:
        console, out = _console()
        renderer = EventRenderer(console, usage=True)
        renderer.render(UsageEvent(CanonicalUsage(input_tokens=1200, output_tokens=30)))
        estimate = CanonicalUsage(input_tokens=900, output_tokens=5)
        renderer.render(UsageEvent(None, True, estimate=estimate))
        renderer.render(UsageEvent(None, True))
        assert out.getvalue().splitlines() == [
            "usage: 1,200 in, 30 out",
            "usage: not reported (~900 in by estimate)",
            "usage: not reported",
        ]

    def test_markup_in_events_is_printed_literally(self) -> None:
        console, out = _console()
        renderer = EventRenderer(console)
        renderer.render(TextDelta("[bold]x[/bold]"))
        renderer.render(WarningEvent("w", "[red]y"))
        renderer.finish()
        assert out.getvalue().splitlines() == ["[bold]x[/bold]", "warning: [red]y"]
