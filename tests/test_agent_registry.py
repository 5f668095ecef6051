"""ToolRegistry: every bad call becomes an error outcome the model can act on."""

from __future__ import annotations

import json
import signal
import threading
import time
from typing import Any

import pytest

from palimpsest.agent.registry import ToolRegistry, render_result, tool
from palimpsest.agent.tools import Tool, ToolContext


@tool
def add(a: int, b: int = 2) -> int:
    """Add two integers.

    a: the first number
    b: the second number
    """
    return a + b


@tool(name="echo_ctx", timeout=5)
def echo_context(text: str, context: ToolContext) -> str:
    """Echo the text and the session id."""
    return f"{text}:{context.session_id}:{context.turn}"


def registry() -> ToolRegistry:
    return ToolRegistry([add, echo_context])


class TestDecorator:
    def test_bare_and_called_forms_build_tools(self) -> None:
        assert isinstance(add, Tool)
        assert add.name == "add"
        assert add.description == "Add two integers."
        assert add.parameters == {
            "type": "object",
            "properties": {
                "a": {"type": "integer", "description": "the first number"},
                "b": {"type": "integer", "description": "the second number", "default": 2},
            },
            "required": ["a"],
            "additionalProperties": False,
        }
        assert echo_context.name == "echo_ctx"
        assert echo_context.timeout == 5
        assert "context" not in echo_context.parameters["properties"]

    def test_explicit_parameters_and_description_win(self) -> None:
        schema = {"type": "object", "properties": {"q": {"type": "string"}}}

        @tool(description="Look it up.", parameters=schema)
        def lookup(**kwargs: Any) -> str:
            return json.dumps(kwargs)

        assert lookup.description == "Look it up."
        assert lookup.parameters is schema
        assert ToolRegistry([lookup]).call("lookup", '{"q": "x"}').content == '{"q": "x"}'

    @pytest.mark.parametrize("bad", ["has space", "", "x" * 65, "dots.not.ok"])
    def test_bad_names_are_refused(self, bad: str) -> None:
        with pytest.raises(ValueError, match="not allowed"):
            tool(name=bad)(lambda: None)

    def test_bad_timeout_and_bad_schema_are_refused(self) -> None:
        with pytest.raises(ValueError, match="timeout"):
            tool(name="f", timeout=0)(lambda: None)
        with pytest.raises(ValueError, match="invalid parameters schema"):
            tool(name="f", parameters={"type": "object", "properties": {"a": {"type": 3}}})(
                lambda a: a
            )
        with pytest.raises(ValueError, match="type 'object'"):
            tool(name="f", parameters={"type": "array"})(lambda: None)


class TestRegistry:
    def test_register_get_names_contains_len(self) -> None:
        reg = registry()
        assert reg.names() == ["add", "echo_ctx"]
        assert "add" in reg and "nope" not in reg and 3 not in reg
        assert len(reg) == 2
        assert reg.get("add") is add
        assert reg.get("nope") is None

    def test_plain_callable_is_wrapped(self) -> None:
        def shout(text: str) -> str:
            """Upper-case the text."""
            return text.upper()

        reg = ToolRegistry()
        made = reg.register(shout)
        assert made.name == "shout" and made.description == "Upper-case the text."
        assert reg.call("shout", {"text": "hi"}).content == "HI"

    def test_duplicate_name_is_refused_and_unregister_frees_it(self) -> None:
        reg = registry()
        with pytest.raises(ValueError, match="already registered"):
            reg.register(add)
        reg.unregister("add")
        assert reg.names() == ["echo_ctx"]
        reg.register(add)
        assert reg.names() == ["echo_ctx", "add"]
        with pytest.raises(KeyError):
            reg.unregister("add-missing")

    def test_schemas_are_in_registration_order_and_stable(self) -> None:
        reg = registry()
        first = reg.schemas()
        assert [s["function"]["name"] for s in first] == ["add", "echo_ctx"]
        assert first[0]["type"] == "function"
        assert json.dumps(first) == json.dumps(reg.schemas())


class TestCallErrors:
    def test_unknown_tool_lists_the_available_names(self) -> None:
        outcome = registry().call("ad", '{"a": 1}')
        assert outcome.is_error
        assert "Unknown tool 'ad'" in outcome.content
        assert "add, echo_ctx" in outcome.content

    def test_arguments_that_are_not_json_quote_the_parse_error(self) -> None:
        outcome = registry().call("add", '{"a": 1,')
        assert outcome.is_error
        assert "not valid JSON" in outcome.content
        assert "line 1 column 9 (char 8)" in outcome.content

    @pytest.mark.parametrize(
        ("raw", "kind"), [("[1, 2]", "an array"), ('"x"', "a string"), ("3", "a number")]
    )
    def test_arguments_that_are_not_an_object(self, raw: str, kind: str) -> None:
        outcome = registry().call("add", raw)
        assert outcome.is_error
        assert f"must be a JSON object, got {kind}" in outcome.content

    def test_schema_mismatch_names_the_field_and_problem(self) -> None:
        reg = registry()
        wrong_type = reg.call("add", '{"a": "one"}')
        assert wrong_type.is_error
        assert "a: 'one' is not of type 'integer'" in wrong_type.content
        missing = reg.call("add", "{}")
        assert missing.is_error and "a: missing required field" in missing.content
        extra = reg.call("add", '{"a": 1, "c": 3}')
        assert extra.is_error and "unexpected field(s) c (allowed: a, b)" in extra.content
        assert "Expected parameters:" in extra.content

    def test_nested_mismatch_names_the_path(self) -> None:
        def tag(names: list[str], weights: dict[str, float] | None = None) -> str:
            return ",".join(names)

        reg = ToolRegistry([tool(tag, name="tagger")])
        outcome = reg.call("tagger", {"names": ["a", 3], "weights": {"x": "heavy"}})
        assert outcome.is_error
        assert "- names.1: 3 is not of type 'string'" in outcome.content
        assert "- weights.x: 'heavy' is not of type 'number'" in outcome.content
        assert reg.call("tagger", {"names": ["a", "b"], "weights": None}).content == "a,b"

    def test_many_problems_are_counted(self) -> None:
        def wide(a: int, b: int, c: int, d: int, e: int, f: int, g: int) -> None:
            return None

        outcome = ToolRegistry([wide]).call("wide", {k: "x" for k in "abcdefg"})
        assert outcome.content.count("\n- ") == 6
        assert "- ... and 2 more problems" in outcome.content

    def test_function_raising_gives_type_and_message_redacted(self) -> None:
        def leak() -> str:
            raise RuntimeError("auth failed for sk-proj-abcdefghijklmnop1234567890")

        outcome = ToolRegistry([leak]).call("leak", None)
        assert outcome.is_error
        assert outcome.content.startswith("RuntimeError: auth failed for ")
        assert "abcdefghijklmnop1234567890" not in outcome.content
        assert "[REDACTED]" in outcome.content
        assert "Traceback" not in outcome.content

    def test_keyboard_interrupt_propagates(self) -> None:
        def stop() -> None:
            raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            ToolRegistry([stop]).call("stop", "")

    @pytest.mark.parametrize("calls", [1, 2])
    def test_ctrl_c_delivered_to_a_tool_thread_stops_the_caller_at_once(self, calls: int) -> None:
        # Linux may deliver a terminal's SIGINT to any thread; Python runs the handler in
        # the main thread, which must notice it while the tool still runs (CI saw a
        # second Ctrl-C wait out an 8 s shell command).
        release = threading.Event()

        def nap(n: int) -> str:
            if n == 0:
                signal.pthread_kill(threading.get_ident(), signal.SIGINT)
            release.wait(5)
            return "late"

        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        started = time.monotonic()
        try:
            with pytest.raises(KeyboardInterrupt):
                if calls == 1:
                    ToolRegistry([nap]).call("nap", {"n": 0})
                else:
                    ToolRegistry([nap]).call_many([("nap", {"n": 0}), ("nap", {"n": 1})])
            assert time.monotonic() - started < 2
        finally:
            release.set()
            signal.signal(signal.SIGINT, previous)

    def test_an_interrupted_call_is_told_through_its_context(self) -> None:
        seen = threading.Event()

        def watch(context: ToolContext) -> str:
            signal.pthread_kill(threading.get_ident(), signal.SIGINT)
            if context.cancelled.wait(5):
                seen.set()
            return "done"

        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            with pytest.raises(KeyboardInterrupt):
                ToolRegistry([watch]).call("watch", {})
            assert seen.wait(2)
        finally:
            signal.signal(signal.SIGINT, previous)

    def test_timeout_abandons_the_call(self) -> None:
        release = threading.Event()

        @tool(timeout=0.2)
        def hang() -> str:
            release.wait(5)
            return "late"

        started = time.perf_counter()
        outcome = ToolRegistry([hang]).call("hang", "{}")
        release.set()
        assert outcome.is_error
        assert "timed out after 0.2 s" in outcome.content
        assert 0.2 <= outcome.seconds < 2
        assert time.perf_counter() - started < 2


class TestCallResults:
    def test_context_is_passed_and_defaults_when_missing(self) -> None:
        reg = registry()
        ctx = ToolContext(session_id="s1", turn=4)
        assert reg.call("echo_ctx", '{"text": "hi"}', ctx).content == "hi:s1:4"
        assert reg.call("echo_ctx", {"text": "hi"}).content == "hi:None:0"

    def test_empty_and_missing_arguments_mean_no_arguments(self) -> None:
        def ping() -> str:
            return "pong"

        reg = ToolRegistry([ping])
        for raw in ("", "  ", None, "{}", {}):
            assert reg.call("ping", raw).content == "pong"

    def test_seconds_is_wall_time(self) -> None:
        def nap() -> str:
            time.sleep(0.05)
            return "ok"

        outcome = ToolRegistry([nap]).call("nap", None)
        assert not outcome.is_error and outcome.seconds >= 0.05

    def test_async_tool_is_awaited(self) -> None:
        async def later(x: int) -> int:
            return x * 3

        assert ToolRegistry([later]).call("later", '{"x": 2}').content == "6"

    @pytest.mark.parametrize(
        ("value", "text"),
        [
            ("plain", "plain"),
            ("héllo".encode(), "héllo"),
            ({"a": [1, 2], "b": "é"}, '{"a":[1,2],"b":"é"}'),
            ([1, "x"], '[1,"x"]'),
            (None, "(no output)"),
            (3.5, "3.5"),
        ],
    )
    def test_render_result(self, value: object, text: str) -> None:
        assert render_result(value) == text

    def test_binary_result_is_described_not_dumped(self) -> None:
        def blob() -> bytes:
            return b"\xff\xfe\x00\x01"

        outcome = ToolRegistry([blob]).call("blob", None)
        assert not outcome.is_error
        assert outcome.content.startswith("<binary output: 4 bytes, sha256 ")
        assert len(outcome.content.split("sha256 ")[1].rstrip(">")) == 64

    def test_unprintable_result_is_an_error(self) -> None:
        class Bad:
            def __str__(self) -> str:
                raise ValueError("no")

        def bad() -> Bad:
            return Bad()

        outcome = ToolRegistry([bad]).call("bad", None)
        assert outcome.is_error and "ValueError: no" in outcome.content


class TestCallMany:
    def test_runs_in_parallel_and_keeps_call_order(self) -> None:
        barrier = threading.Barrier(3, timeout=5)

        def meet(n: int) -> int:
            barrier.wait()  # only returns when three calls run at the same time
            time.sleep(0.01 * (3 - n))
            return n

        reg = ToolRegistry([meet])
        outcomes = reg.call_many([("meet", {"n": 1}), ("meet", '{"n": 2}'), ("meet", {"n": 3})])
        assert [o.content for o in outcomes] == ["1", "2", "3"]
        assert not any(o.is_error for o in outcomes)

    def test_bad_calls_do_not_disturb_good_ones(self) -> None:
        outcomes = registry().call_many(
            [("add", '{"a": 1}'), ("nope", None), ("add", "not json")],
            ToolContext(session_id="s"),
        )
        assert [o.is_error for o in outcomes] == [False, True, True]
        assert outcomes[0].content == "3"

    def test_empty_and_bad_worker_count(self) -> None:
        assert registry().call_many([]) == []
        with pytest.raises(ValueError):
            registry().call_many([("add", "{}")], max_workers=0)


class TestOutputDeclarations:
    """What a tool declares for the output budgets: a size limit and repeatability."""

    def test_binary_bytes_travel_whole_for_the_guard(self) -> None:
        png = b"\x89PNG\r\n\x1a\n" + bytes(range(256))

        @tool
        def screenshot() -> bytes:
            """Take a screenshot."""
            return png

        outcome = ToolRegistry([screenshot]).call("screenshot", {})
        assert outcome.content.startswith("<binary output: 264 bytes, sha256 ")
        assert outcome.body is not None and outcome.body.data == png

    def test_text_bytes_and_strings_have_no_body(self) -> None:
        @tool
        def text() -> bytes:
            """Some text."""
            return "héllo".encode()

        outcome = ToolRegistry([text]).call("text", {})
        assert outcome.content == "héllo" and outcome.body is None

    def test_a_large_output_result_shows_its_cut(self, tmp_path: Any) -> None:
        from palimpsest.outputs.body import LargeOutput

        spool = tmp_path / "all.txt"
        spool.write_text("everything")

        @tool
        def big() -> LargeOutput:
            """Big output."""
            return LargeOutput(shown="the cut", path=spool)

        outcome = ToolRegistry([big]).call("big", {})
        assert outcome.content == "the cut" and outcome.body is not None
        assert outcome.body.path == spool and outcome.body.size_bytes == 10

    def test_max_result_chars_must_be_positive(self) -> None:
        def f() -> str:
            """F."""
            return ""

        with pytest.raises(ValueError, match="max_result_chars must be positive"):
            tool(max_result_chars=0)(f)
        assert tool(max_result_chars=float("inf"))(f).max_result_chars == float("inf")

    def test_rerun_follows_the_declaration(self) -> None:
        @tool(repeatable=True)
        def listing(path: str) -> str:
            """List a directory."""
            return path

        @tool
        def fetch(url: str) -> str:
            """Fetch a URL."""
            return url

        def only_short(arguments: dict[str, Any], output: str) -> Any:
            from palimpsest.outputs.rerun import Rerun

            if len(output) > 3:
                raise RuntimeError("cannot tell")
            return Rerun(True, "short", "checked()")

        checked = tool(name="checked", repeatable=only_short)(lambda: "x")
        registry = ToolRegistry([listing, fetch, checked])
        verdict = registry.rerun("listing", '{"path": "src"}', "a\nb")
        assert verdict.repeatable and verdict.how == 'listing(path="src")'
        assert not registry.rerun("fetch", {"url": "http://x"}, "page").repeatable
        assert not registry.rerun("nosuch", {}, "").repeatable
        assert not registry.rerun("listing", "{not json", "").repeatable
        assert registry.rerun("checked", {}, "abc").repeatable
        failed = registry.rerun("checked", {}, "abcdef")
        assert not failed.repeatable and "RuntimeError: cannot tell" in failed.reason
