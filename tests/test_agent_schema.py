"""Tool schemas read from signatures and docstrings."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import jsonschema
import pytest

from palimpsest.agent.schema import (
    accepts_context,
    schema_from_function,
    split_docstring,
    type_schema,
)
from palimpsest.agent.tools import ToolContext


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@pytest.mark.parametrize(
    ("hint", "schema"),
    [
        (str, {"type": "string"}),
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (Path, {"type": "string"}),
        (Any, {}),
        (list[str], {"type": "array", "items": {"type": "string"}}),
        (list, {"type": "array"}),
        (Sequence[int], {"type": "array", "items": {"type": "integer"}}),
        (tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
        (
            tuple[int, str],
            {
                "type": "array",
                "prefixItems": [{"type": "integer"}, {"type": "string"}],
                "minItems": 2,
                "maxItems": 2,
            },
        ),
        (dict, {"type": "object"}),
        (dict[str, int], {"type": "object", "additionalProperties": {"type": "integer"}}),
        (Literal["a", "b"], {"type": "string", "enum": ["a", "b"]}),
        (Literal[1, "b"], {"enum": [1, "b"]}),
        (Color, {"type": "string", "enum": ["red", "blue"]}),
        (str | None, {"type": ["string", "null"]}),
        (Literal["a"] | None, {"anyOf": [{"type": "string", "enum": ["a"]}, {"type": "null"}]}),
        (int | str, {"anyOf": [{"type": "integer"}, {"type": "string"}]}),
        (Annotated[int, "how many"], {"type": "integer", "description": "how many"}),
    ],
)
def test_type_schema(hint: Any, schema: dict[str, Any]) -> None:
    assert type_schema(hint) == schema
    jsonschema.Draft202012Validator.check_schema(schema)


def test_type_without_json_form_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="no JSON-schema form"):
        type_schema(complex)


class TestDocstrings:
    def test_plain_name_lines(self) -> None:
        doc = """Find files.

        It walks the tree.

        pattern: a glob
            matched against names
        limit: at most this many
        """
        summary, params = split_docstring(doc, ["pattern", "limit"])
        assert summary == "Find files."
        assert params == {"pattern": "a glob matched against names", "limit": "at most this many"}

    def test_google_style_and_sphinx_style(self) -> None:
        google = """Search.

        Args:
            query (str): what to look for
            limit: how many results
                at most.

        Returns:
            the hits
        """
        assert split_docstring(google, ["query", "limit"])[1] == {
            "query": "what to look for",
            "limit": "how many results at most.",
        }
        sphinx = "Search.\n\n:param query: what to look for\n"
        assert split_docstring(sphinx, ["query"])[1] == {"query": "what to look for"}

    def test_multi_line_summary_and_no_docstring(self) -> None:
        assert split_docstring("One\ntwo.\n\nMore.")[0] == "One two."
        assert split_docstring(None) == ("", {})
        assert split_docstring("Args:\n  a: x", ["a"]) == ("", {"a": "x"})


class TestFunctionSchema:
    def test_defaults_context_and_kwargs(self) -> None:
        def f(path: str, mode: Literal["r", "w"] = "r", *, context: ToolContext) -> str:
            """Open a file.

            path: where
            """
            return path

        assert schema_from_function(f) == {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "where"},
                "mode": {"type": "string", "enum": ["r", "w"], "default": "r"},
            },
            "required": ["path"],
            "additionalProperties": False,
        }
        assert accepts_context(f)

        def g(**kwargs: Any) -> None:
            return None

        assert schema_from_function(g) == {"type": "object", "properties": {}}
        assert not accepts_context(g)

    def test_positional_only_and_bad_types_are_refused(self) -> None:
        def pos(a: int, /) -> None:
            return None

        def bad(a: complex) -> None:
            return None

        with pytest.raises(TypeError, match="positional-only"):
            schema_from_function(pos)
        with pytest.raises(TypeError, match="parameter 'a'"):
            schema_from_function(bad)

    def test_callable_object(self) -> None:
        class Counter:
            def __call__(self, step: int = 1) -> int:
                return step

        schema = schema_from_function(Counter())
        assert schema["properties"] == {"step": {"type": "integer", "default": 1}}

    def test_unresolvable_return_hint_does_not_matter(self) -> None:
        def f(a: int) -> Missing:  # type: ignore[name-defined]  # noqa: F821
            return a

        assert schema_from_function(f)["properties"] == {"a": {"type": "integer"}}
