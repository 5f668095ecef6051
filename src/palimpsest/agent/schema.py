"""A tool's JSON schema, read from its Python signature and docstring.

Writing a schema by hand next to a function is the classic place for the two to drift
apart; here the signature is the single source. Type hints map to JSON-schema types
(``str``, ``int``, ``float``, ``bool``, ``list[...]``, ``tuple[...]``, ``dict[...]``,
``Literal``, ``Enum``, ``Optional``/unions, ``Annotated[T, "description"]``, ``Path``), a
parameter with a default is optional, and the docstring supplies the descriptions: its
first paragraph describes the tool and ``name: text`` lines (plain, Google-style ``Args:``
with an optional ``(type)``, or ``:param name: text``) describe parameters. A parameter
named ``context`` is never in the schema: the registry passes the call's ``ToolContext``.

A type that has no JSON form is a ``TypeError`` when the tool is defined, not a surprise
when the model calls it.
"""

from __future__ import annotations

import enum
import functools
import inspect
import json
import re
import types
import typing
from collections import abc
from collections.abc import Callable, Collection
from pathlib import PurePath
from typing import Any

__all__ = ["CONTEXT_PARAMETER", "accepts_context", "schema_from_function", "split_docstring"]

CONTEXT_PARAMETER = "context"
"""The parameter name that receives the ToolContext instead of a model argument."""

_PARAM_LINE = re.compile(r"^(\s*)(?::param\s+)?\*{0,2}([A-Za-z_]\w*)\s*(?:\([^)]*\))?\s*:\s?(.*)$")
_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Params|Returns|Raises|Yields)\s*:\s*$")


def split_docstring(doc: str | None, names: Collection[str] = ()) -> tuple[str, dict[str, str]]:
    """The docstring's first paragraph and the descriptions of the parameters in ``names``."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    summary_lines: list[str] = []
    for line in lines:
        if not line.strip() or _SECTION.match(line):
            break
        summary_lines.append(line.strip())
    summary = " ".join(summary_lines)
    return summary, _parameter_lines(lines[len(summary_lines) :], set(names))


def _parameter_lines(lines: list[str], names: set[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    current: str | None = None
    indent = 0
    for line in lines:
        match = _PARAM_LINE.match(line)
        if match and match.group(2) in names:
            current, indent = match.group(2), len(match.group(1))
            found[current] = match.group(3).strip()
            continue
        stripped = line.strip()
        continues = len(line) - len(line.lstrip()) > indent
        if current is not None and stripped and continues:
            found[current] = f"{found[current]} {stripped}".strip()
        else:
            current = None
    return {name: text for name, text in found.items() if text}


@functools.lru_cache(maxsize=1024)
def _signature(function: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(function)
    except (TypeError, ValueError):
        return None


def accepts_context(function: Callable[..., Any]) -> bool:
    """Whether the function takes the call's ToolContext (a parameter named ``context``)."""
    try:
        signature = _signature(function)
    except TypeError:  # unhashable callable: no cache
        signature = _signature.__wrapped__(function)
    if signature is None:
        return False
    parameter = signature.parameters.get(CONTEXT_PARAMETER)
    return parameter is not None and parameter.kind in (
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.KEYWORD_ONLY,
    )


def schema_from_function(function: Callable[..., Any]) -> dict[str, Any]:
    """The ``parameters`` JSON schema (type ``object``) of a tool function."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"cannot read the signature of {function!r}: pass parameters=") from exc
    hints = _type_hints(function)
    names = [name for name in signature.parameters if name != CONTEXT_PARAMETER]
    _, described = split_docstring(inspect.getdoc(function), names)
    properties: dict[str, Any] = {}
    required: list[str] = []
    open_ended = False
    for name, parameter in signature.parameters.items():
        if name == CONTEXT_PARAMETER:
            continue
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            continue
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            open_ended = True
            continue
        if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise TypeError(
                f"parameter {name!r} of {_label(function)} is positional-only; "
                "tools are called with keyword arguments"
            )
        annotation = hints.get(name, parameter.annotation)
        try:
            prop = type_schema(annotation)
        except TypeError as exc:
            raise TypeError(
                f"parameter {name!r} of {_label(function)}: {exc}; pass parameters= to "
                "describe it by hand"
            ) from exc
        if name in described and "description" not in prop:
            prop["description"] = described[name]
        if parameter.default is inspect.Parameter.empty:
            required.append(name)
        elif _is_json(parameter.default):
            prop["default"] = parameter.default
        properties[name] = prop
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    if not open_ended:
        schema["additionalProperties"] = False
    return schema


def _type_hints(function: Callable[..., Any]) -> dict[str, Any]:
    # a callable object's hints live on its __call__ method
    target = function if inspect.isroutine(function) else type(function).__call__
    try:
        return typing.get_type_hints(target, include_extras=True)
    except Exception:
        pass
    # Only the parameters matter: an unresolvable return hint must not block the tool.
    annotations = dict(getattr(target, "__annotations__", {}))
    annotations.pop("return", None)
    stand_in = types.SimpleNamespace(
        __annotations__=annotations, __globals__=getattr(target, "__globals__", {})
    )
    try:
        return typing.get_type_hints(stand_in, include_extras=True)
    except Exception as exc:
        if any(isinstance(a, str) for a in annotations.values()):
            raise TypeError(f"cannot resolve the type hints of {_label(function)}: {exc}") from exc
        return {}


def _label(function: Callable[..., Any]) -> str:
    return getattr(function, "__qualname__", None) or repr(function)


def _is_json(value: object) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


_SCALARS: dict[Any, str] = {str: "string", bool: "boolean", int: "integer", float: "number"}
_ARRAYS: tuple[Any, ...] = (
    list,
    set,
    frozenset,
    tuple,
    abc.Sequence,
    abc.MutableSequence,
    abc.Set,
    abc.Iterable,
)
_OBJECTS: tuple[Any, ...] = (dict, abc.Mapping, abc.MutableMapping)


def type_schema(annotation: Any) -> dict[str, Any]:
    """The JSON schema of one type hint; ``TypeError`` when it has none."""
    if annotation is inspect.Parameter.empty or annotation is Any or annotation is object:
        return {}
    if annotation is None or annotation is type(None):
        return {"type": "null"}
    if annotation in _SCALARS:
        return {"type": _SCALARS[annotation]}
    if isinstance(annotation, type) and issubclass(annotation, PurePath):
        return {"type": "string"}
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return _enum_schema([member.value for member in annotation])
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        inner = type_schema(args[0])
        notes = [note for note in args[1:] if isinstance(note, str)]
        if notes:
            inner["description"] = " ".join(notes)
        return inner
    if origin is typing.Literal:
        return _enum_schema(list(args))
    if origin is typing.Union or origin is types.UnionType:
        return _union_schema(args)
    if origin is tuple and args:
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": type_schema(args[0])}
        items = [type_schema(arg) for arg in args]
        return {
            "type": "array",
            "prefixItems": items,
            "minItems": len(items),
            "maxItems": len(items),
        }
    if annotation in _ARRAYS or origin in _ARRAYS:
        return _array_schema(args)
    if annotation in _OBJECTS or origin in _OBJECTS:
        schema: dict[str, Any] = {"type": "object"}
        if len(args) == 2 and args[1] is not Any:
            schema["additionalProperties"] = type_schema(args[1])
        return schema
    raise TypeError(f"type {annotation!r} has no JSON-schema form")


def _array_schema(args: tuple[Any, ...]) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "array"}
    if args and args[0] is not Any:
        schema["items"] = type_schema(args[0])
    return schema


def _enum_schema(values: list[Any]) -> dict[str, Any]:
    schema: dict[str, Any] = {"enum": values}
    kinds = {_json_type(value) for value in values}
    if len(kinds) == 1 and None not in kinds:
        schema = {"type": kinds.pop(), "enum": values}
    return schema


def _json_type(value: object) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return None


def _union_schema(args: tuple[Any, ...]) -> dict[str, Any]:
    nullable = type(None) in args
    members = [type_schema(arg) for arg in args if arg is not type(None)]
    if len(members) == 1:
        only = members[0]
        if not nullable or not only:
            return only
        kind = only.get("type")
        if isinstance(kind, str) and set(only) <= {"type", "items", "additionalProperties"}:
            return {**only, "type": [kind, "null"]}
        return {"anyOf": [only, {"type": "null"}]}
    if nullable:
        members.append({"type": "null"})
    return {"anyOf": members}
