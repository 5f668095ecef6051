"""How every command's help and usage read: plain metavars, listed choices, whole defaults.

Typer renders a type label for every parameter: ``--json <bool>`` on a flag that takes
no value (``--help`` included), ``{input}`` around a required argument in the usage line,
``<list[str]>`` for a repeatable option and ``<str>`` where the choices should be. This
module restyles a finished command tree the way well-kept click tools print it: flags
show nothing, values show one upper-case word (``TEXT``, ``INTEGER``, ``PATH``), choices
show ``[a|b|c]``, arguments are named in upper case (``INPUT``, optional ones in square
brackets) with no type label.

:func:`style_tree` swaps the class of each command and parameter for a subclass that only
overrides how it is displayed (no new state, so the swap is safe and idempotent); parsing,
validation, completion and error handling are Typer's own. Typer builds its click tree
lazily, so the swap is applied to the tree :func:`typer.main.get_command` returns, once,
in :func:`palimpsest.cli.app.main` (and by the help test on the same tree).
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

__all__ = ["StyledArgument", "StyledCommand", "StyledGroup", "StyledOption", "style_tree"]

_TYPE_WORDS = {
    "str": "TEXT",
    "int": "INTEGER",
    "float": "FLOAT",
    "bool": "BOOLEAN",
    "Path": "PATH",
    "PurePath": "PATH",
    "datetime": "DATETIME",
}


def _value_word(param: TyperArgument | TyperOption) -> str:
    """One word for what a parameter takes: ``[a|b]`` for choices, ``TEXT``, ``PATH``..."""
    desc = param.type_descriptor
    choices = desc.choices
    if choices is not None:
        return "[" + "|".join(str(getattr(c, "value", c)) for c in choices) + "]"
    if desc.is_path:
        return desc.path_type.upper()
    # ``list[str]`` is a repeatable option: each occurrence takes one TEXT.
    word = param.bare_type().removeprefix("list[").removesuffix("]")
    return _TYPE_WORDS.get(word, word.upper())


class StyledArgument(TyperArgument):
    """An argument named in upper case, without a type label or ``{}`` in the usage."""

    def display_type_rich(self, ctx: Any) -> str | None:
        return None if self.type_descriptor.choices is None else _value_word(self)

    def _usage_display_name(self) -> str:
        name = self.display_name_raw
        if not self.required:
            name = f"[{name}]"
        return name + ("..." if self.nargs != 1 else "")


class StyledOption(TyperOption):
    """A flag with no label; an option with one word for its value."""

    def display_type_rich(self, ctx: Any) -> str | None:
        if self.is_flag or self.count:
            return None
        if self.metavar is not None:
            return self.metavar
        return _value_word(self)


LONG_CHOICES = 24
"""Choices longer than this as ``[a|b|c]`` would be folded mid-word in an 80-column type
column; they are listed in the help text instead, after a one-word metavar."""


def _style_param(param: Any) -> None:
    if isinstance(param, TyperArgument) and not isinstance(param, StyledArgument):
        param.__class__ = StyledArgument
        if param.metavar is None and param.name:
            param.metavar = param.name.upper()
    elif isinstance(param, TyperOption) and not isinstance(param, StyledOption):
        param.__class__ = StyledOption
        choices = param.type_descriptor.choices
        word = _value_word(param) if choices is not None else ""
        if choices is not None and param.metavar is None and len(word) > LONG_CHOICES:
            param.metavar = (param.name or "value").upper()
            listed = ", ".join(str(getattr(c, "value", c)) for c in choices)
            param.help = f"{(param.help or '').rstrip()} One of: {listed}.".lstrip()


class StyledCommand(TyperCommand):
    """A command whose parameters (its lazily made ``--help`` too) are styled."""

    def get_params(self, ctx: Any) -> list[Any]:
        params = super().get_params(ctx)
        for param in params:
            _style_param(param)
        return params


class StyledGroup(TyperGroup):
    """A group whose parameters are styled; its commands are styled by :func:`style_tree`."""

    def get_params(self, ctx: Any) -> list[Any]:
        params = super().get_params(ctx)
        for param in params:
            _style_param(param)
        return params


def style_tree(command: Any) -> Any:
    """Restyle ``command`` and everything under it in place; return it."""
    if isinstance(command, TyperGroup):
        if not isinstance(command, StyledGroup):
            command.__class__ = StyledGroup
        for sub in command.commands.values():
            style_tree(sub)
    elif isinstance(command, TyperCommand) and not isinstance(command, StyledCommand):
        command.__class__ = StyledCommand
    for param in command.params:
        _style_param(param)
    return command
