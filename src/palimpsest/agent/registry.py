"""Turn plain Python functions into tools and dispatch the model's calls to them.

The model's tool calls are untrusted input: the name may not exist, the arguments may not
be JSON, may not match the schema, and the function may raise or hang. :meth:`ToolRegistry.call`
turns every one of those into a :class:`~.tools.ToolOutcome` with ``is_error=True`` whose
text tells the model what to fix, so a bad call costs one round, never the turn. Only
``KeyboardInterrupt`` and ``SystemExit`` propagate: they belong to the user.

Schemas come from signatures and docstrings (:mod:`.schema`) so a tool is one decorated
function; :meth:`ToolRegistry.schemas` lists them in registration order, because a stable
``tools`` block is part of the prompt-cache prefix.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any, overload

import jsonschema

from ..outputs.body import LargeOutput
from ..outputs.rerun import NOT_REPEATABLE, Rerun, repeatable_call
from ..safety.redact import redact
from .schema import accepts_context, schema_from_function, split_docstring
from .tools import DEFAULT_TOOL_TIMEOUT, RerunPolicy, Tool, ToolContext, ToolOutcome
from .waiting import JOIN_SLICE, join_for

__all__ = ["ToolRegistry", "render_result", "tool"]

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""Tool names every provider accepts (OpenAI's rule is the strictest)."""

_MAX_SCHEMA_ERRORS = 5
"""A call with many bad fields lists this many problems; the rest are counted."""

_SCHEMA_HINT_CHARS = 2_000
"""The expected-parameters hint is dropped when the schema is larger than this."""


# --- the decorator ---------------------------------------------------------------------------


@overload
def tool(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    parameters: dict[str, Any] | None = None,
    timeout: float | None = None,
    max_result_chars: float | None = None,
    repeatable: bool | RerunPolicy = False,
) -> Tool: ...


@overload
def tool(
    fn: None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    parameters: dict[str, Any] | None = None,
    timeout: float | None = None,
    max_result_chars: float | None = None,
    repeatable: bool | RerunPolicy = False,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    parameters: dict[str, Any] | None = None,
    timeout: float | None = None,
    max_result_chars: float | None = None,
    repeatable: bool | RerunPolicy = False,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a :class:`Tool` from a function; usable as ``@tool`` or ``@tool(name=...)``.

    The description is the docstring's first paragraph and the parameter schema comes from
    the signature and the docstring's per-parameter lines, unless given explicitly. A
    parameter named ``context`` is left out of the schema: it receives the
    :class:`ToolContext`. Raises ``TypeError`` for a signature that cannot be described
    and ``ValueError`` for a bad name, schema or timeout.
    """

    def build(function: Callable[..., Any]) -> Tool:
        if not callable(function):
            raise TypeError(f"@tool needs a function, got {type(function).__name__}")
        tool_name = name if name is not None else getattr(function, "__name__", "")
        summary, _ = split_docstring(inspect.getdoc(function))
        made = Tool(
            name=tool_name,
            description=description if description is not None else summary,
            parameters=parameters if parameters is not None else schema_from_function(function),
            function=function,
            timeout=timeout,
            max_result_chars=max_result_chars,
            repeatable=repeatable,
        )
        _check_tool(made)
        return made

    if fn is not None:
        return build(fn)
    return build


def _check_tool(item: Tool) -> None:
    """Refuse a tool no provider would accept, at definition time rather than mid-turn."""
    if not _NAME.match(item.name):
        raise ValueError(
            f"tool name {item.name!r} is not allowed: use 1-64 letters, digits, '_' or '-'"
        )
    if item.parameters.get("type", "object") != "object":
        raise ValueError(f"tool {item.name!r}: parameters must be a JSON schema of type 'object'")
    try:
        jsonschema.validators.validator_for(item.parameters).check_schema(item.parameters)
    except jsonschema.SchemaError as exc:
        raise ValueError(f"tool {item.name!r}: invalid parameters schema: {exc.message}") from exc
    if item.timeout is not None and not item.timeout > 0:
        raise ValueError(f"tool {item.name!r}: timeout must be a positive number of seconds")
    if item.max_result_chars is not None and not item.max_result_chars > 0:
        raise ValueError(f"tool {item.name!r}: max_result_chars must be positive (or math.inf)")


# --- the registry ----------------------------------------------------------------------------


class ToolRegistry:
    """The tools an agent offers, by name, in registration order."""

    def __init__(self, tools: Iterable[Tool | Callable[..., Any]] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._validators: dict[str, tuple[dict[str, Any], Any]] = {}
        for item in tools:
            self.register(item)

    def register(self, tool: Tool | Callable[..., Any]) -> Tool:
        """Add a tool (a plain callable is wrapped with :func:`tool`); a taken name is a
        ``ValueError``."""
        item = tool if isinstance(tool, Tool) else _make_tool(tool)
        if isinstance(tool, Tool):
            _check_tool(item)
        if item.name in self._tools:
            raise ValueError(f"a tool named {item.name!r} is already registered")
        self._tools[item.name] = item
        return item

    def unregister(self, name: str) -> None:
        """Remove a tool; an unknown name is a ``KeyError``."""
        if name not in self._tools:
            raise KeyError(f"no tool named {name!r} is registered")
        del self._tools[name]
        self._validators.pop(name, None)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def schemas(self) -> list[dict[str, Any]]:
        """The ``tools`` entries, in registration order (stable across turns: prompt cache)."""
        return [item.schema() for item in self._tools.values()]

    def call(
        self,
        name: str,
        arguments: str | Mapping[str, Any] | None,
        context: ToolContext | None = None,
    ) -> ToolOutcome:
        """Run one call and report it; never raises except ``KeyboardInterrupt``/``SystemExit``."""
        started = time.perf_counter()
        item = self._tools.get(name)
        if item is None:
            return _error(self._unknown(name), started)
        parsed = _parse_arguments(name, arguments)
        if isinstance(parsed, str):
            return _error(parsed, started)
        problem = self._validate(item, parsed)
        if problem is not None:
            return _error(problem, started)
        context = context if context is not None else ToolContext()
        if accepts_context(item.function):
            parsed["context"] = context
        timeout = item.timeout if item.timeout is not None else DEFAULT_TOOL_TIMEOUT
        try:
            return _run(item, parsed, timeout, started)
        except BaseException:
            context.cancelled.set()  # the caller gave up on the call: tell the tool
            raise

    def call_many(
        self,
        calls: Sequence[tuple[str, str | Mapping[str, Any] | None]],
        context: ToolContext | None = None,
        *,
        max_workers: int = 8,
    ) -> list[ToolOutcome]:
        """Run the calls in parallel threads; the outcomes come back in call order."""
        if max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        if len(calls) <= 1 or max_workers == 1:
            return [self.call(name, args, context) for name, args in calls]
        pool = ThreadPoolExecutor(
            max_workers=min(max_workers, len(calls)), thread_name_prefix="palimpsest-tools"
        )
        context = context if context is not None else ToolContext()
        futures = [pool.submit(self.call, name, args, context) for name, args in calls]
        try:
            pending = set(futures)
            while pending:  # in slices, as join_for waits (agent/waiting.py)
                _, pending = wait(pending, timeout=JOIN_SLICE)
        except BaseException:
            # An interrupt belongs to the user: the calls not yet started are dropped and
            # the running ones are told (``context.cancelled``) and abandoned instead of
            # being waited for.
            context.cancelled.set()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        return [future.result() for future in futures]

    def rerun(self, name: str, arguments: str | Mapping[str, Any] | None, content: str) -> Rerun:
        """Whether the output ``content`` of this call can be had again by repeating it
        (the tool's ``repeatable`` declaration); never raises."""
        item = self._tools.get(name)
        if item is None or item.repeatable is False:
            return NOT_REPEATABLE
        parsed = _parse_arguments(name, arguments)
        if isinstance(parsed, str):
            return NOT_REPEATABLE
        if item.repeatable is True:
            return repeatable_call(name, parsed, "declared repeatable by the tool")
        try:
            return item.repeatable(parsed, content)
        except Exception as exc:  # a policy's bug keeps the output: the safe side
            return Rerun(False, f"repeatability check failed: {_exception_text(exc)}")

    # --- helpers ---

    def _unknown(self, name: str) -> str:
        available = ", ".join(self._tools) if self._tools else "(none)"
        return redact(f"Unknown tool {name!r}. Available tools: {available}.")

    def _validate(self, item: Tool, arguments: dict[str, Any]) -> str | None:
        cached = self._validators.get(item.name)
        if cached is None or cached[0] is not item.parameters:
            cls = jsonschema.validators.validator_for(item.parameters)
            cached = (item.parameters, cls(item.parameters))
            self._validators[item.name] = cached
        errors = sorted(cached[1].iter_errors(arguments), key=lambda e: list(e.absolute_path))
        if not errors:
            return None
        lines = [f"Invalid arguments for tool {item.name!r}:"]
        lines += [f"- {_describe_schema_error(error)}" for error in errors[:_MAX_SCHEMA_ERRORS]]
        if len(errors) > _MAX_SCHEMA_ERRORS:
            lines.append(f"- ... and {len(errors) - _MAX_SCHEMA_ERRORS} more problems")
        expected = json.dumps(item.parameters, separators=(",", ":"), ensure_ascii=False)
        if len(expected) <= _SCHEMA_HINT_CHARS:
            lines.append(f"Expected parameters: {expected}")
        return redact("\n".join(lines))


def _make_tool(function: Callable[..., Any]) -> Tool:
    return tool(function)


def _describe_schema_error(error: jsonschema.ValidationError) -> str:
    """One line naming the field and what is wrong with it."""
    where = ".".join(str(part) for part in error.absolute_path)
    if error.validator == "required" and isinstance(error.validator_value, list):
        missing = [
            key
            for key in error.validator_value
            if isinstance(error.instance, dict) and key not in error.instance
        ]
        field = ".".join(part for part in (where, *missing[:1]) if part)
        return f"{field}: missing required field"
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        properties = error.schema.get("properties", {}) if isinstance(error.schema, Mapping) else {}
        allowed = set(properties)
        extra = sorted(key for key in error.instance if key not in allowed)
        field = where or "(arguments)"
        known = ", ".join(sorted(allowed)) or "none"
        return f"{field}: unexpected field(s) {', '.join(extra)} (allowed: {known})"
    return f"{where or '(arguments)'}: {error.message}"


def _parse_arguments(name: str, arguments: str | Mapping[str, Any] | None) -> dict[str, Any] | str:
    """The arguments as a fresh dict, or the error text for the model."""
    if arguments is None:
        return {}
    if isinstance(arguments, Mapping):
        return dict(arguments)
    if not arguments.strip():
        return {}
    try:
        value = json.loads(arguments)
    except json.JSONDecodeError as exc:
        return redact(
            f"Arguments for tool {name!r} are not valid JSON: {exc.msg} at line {exc.lineno} "
            f"column {exc.colno} (char {exc.pos}). Send a JSON object."
        )
    if not isinstance(value, dict):
        return (
            f"Arguments for tool {name!r} must be a JSON object, got {_json_kind(value)}. "
            'Send e.g. {"name": value}.'
        )
    return value


def _json_kind(value: object) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "null"


# --- running --------------------------------------------------------------------------------


def _run(item: Tool, kwargs: dict[str, Any], timeout: float, started: float) -> ToolOutcome:
    """Run the function in a daemon thread; abandon it when it outlives ``timeout``."""
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            result = item.function(**kwargs)
            if inspect.isawaitable(result):
                result = asyncio.run(_await(result))
            box["result"] = result
        except BaseException as exc:  # reported to the caller thread, re-raised there if fatal
            box["error"] = exc

    worker = threading.Thread(target=work, name=f"palimpsest-tool-{item.name}", daemon=True)
    worker.start()
    join_for(worker, timeout)  # in slices: a Ctrl-C reaches the caller at once
    if worker.is_alive():
        return _error(
            f"Tool {item.name!r} timed out after {timeout:g} s and was abandoned; "
            "try a smaller request.",
            started,
        )
    if "error" in box:
        exc = box["error"]
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            raise exc
        return _error(_exception_text(exc), started)
    result = box.get("result")
    body = result if isinstance(result, LargeOutput) else _binary_body(result)
    try:
        content = body.shown if body is not None else render_result(result)
    except Exception as exc:  # a result whose __str__ raises is the tool's bug, not ours
        return _error(
            f"Tool {item.name!r} returned an unprintable result: {_exception_text(exc)}", started
        )
    seconds = time.perf_counter() - started
    return ToolOutcome(content=content, is_error=False, seconds=seconds, body=body)


def _binary_body(result: object) -> LargeOutput | None:
    """Bytes that are not UTF-8 text travel whole, for the guard to save as bytes."""
    if not isinstance(result, bytes | bytearray | memoryview):
        return None
    data = bytes(result)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return LargeOutput(shown=render_result(data), data=data)
    return None


async def _await(awaitable: Any) -> Any:
    return await awaitable


def _exception_text(exc: BaseException) -> str:
    """``ExceptionType: message``, no traceback, secrets redacted."""
    message = str(exc)
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return redact(text)


def _error(content: str, started: float) -> ToolOutcome:
    return ToolOutcome(content=content, is_error=True, seconds=time.perf_counter() - started)


def render_result(result: object) -> str:
    """A tool's return value as history text (see the module docstring of :mod:`.tools`)."""
    if isinstance(result, str):
        return result
    if isinstance(result, LargeOutput):
        return result.shown
    if result is None:
        return "(no output)"
    if isinstance(result, bytes | bytearray | memoryview):
        data = bytes(result)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            digest = hashlib.sha256(data).hexdigest()
            return f"<binary output: {len(data)} bytes, sha256 {digest}>"
    if isinstance(result, Mapping | list | tuple):
        return json.dumps(
            result if not isinstance(result, Mapping) else dict(result),
            separators=(",", ":"),
            ensure_ascii=False,
            default=str,
        )
    return str(result)
