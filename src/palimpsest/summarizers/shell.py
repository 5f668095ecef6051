"""Which files a shell command writes, reads or deletes, and where it ``cd``s to.

Agents often change files through the shell rather than an editor tool: ``cat > f <<EOF``,
``sed -i … f``, ``tee f``, ``echo … >> f``, ``touch``, ``rm``, ``mv``, ``cp``. A summary
that misses those loses the list of modified files, so commands are scanned for them.
The scan is deliberately shallow (no full shell grammar): heredoc bodies are skipped, only
the first few KB of a command are read, and anything that does not look like a path is
ignored.

Agents run the same commands again and again (``pytest``, ``git status``, ``ls``), so a
summarizer run parses each distinct command once: inside :func:`parse_once` results are
kept for that run only (never process-wide), and treated as read-only by callers. A
one-line command without quotes, redirections or separators whose program touches no
file is answered without tokenizing it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

__all__ = ["ShellEffects", "parse_once", "shell_effects", "split_command"]

MAX_COMMAND_CHARS = 4_000

_SEPARATORS = {"&&", "||", ";", "|", "&"}
_ENV_ASSIGN = re.compile(r"^[A-Za-z_]\w*=")
_REDIRECT_TOKEN = re.compile(r"^[12]?(>>?)(?!&)(\S*)$")
_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")
_PATHLIKE = re.compile(r"^[\w.~/@+-][\w.~/@+,:=-]*$")
_READERS = {"cat", "head", "tail", "less", "more", "nl", "wc", "bat"}
_TOKEN = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"|\S+")


@dataclass
class ShellEffects:
    """What a command did to files, as far as a shallow scan can tell."""

    writes: list[tuple[str, str]] = field(default_factory=list)  # (path, created|modified|deleted)
    reads: list[str] = field(default_factory=list)
    cwd: str | None = None
    heredoc: bool = False
    simple_write: str | None = None  # "write" or "edit" when the command only writes files


def split_command(command: str) -> list[str]:
    """Whitespace tokens of the first line, with surrounding quotes removed."""
    first = command[:MAX_COMMAND_CHARS].split("\n", 1)[0]
    return [_unquote(t) for t in _TOKEN.findall(first)]


def _unquote(token: str) -> str:
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "'\"":
        return token[1:-1]
    return token


def _is_path(token: str) -> bool:
    return (
        bool(token)
        and _PATHLIKE.match(token) is not None
        and not token.startswith("-")
        and not token.isdigit()
        and token not in ("/dev/null", "/dev/stdout", "/dev/stderr", ".", "..")
        and not token.startswith("$")
    )


def _command_lines(command: str) -> tuple[list[str], bool]:
    """The lines that are shell, with heredoc bodies removed."""
    lines: list[str] = []
    heredoc = False
    delimiter: str | None = None
    for line in command[:MAX_COMMAND_CHARS].split("\n"):
        if delimiter is not None:
            if line.strip() == delimiter:
                delimiter = None
            continue
        lines.append(line)
        match = _HEREDOC.search(line)
        if match:
            delimiter = match.group(1)
            heredoc = True
    return lines, heredoc


def _add(effects: ShellEffects, path: str, kind: str) -> None:
    path = path.rstrip(",;")
    if _is_path(path) and all(p != path for p, _ in effects.writes):
        effects.writes.append((path, kind))


def _segments(line: str) -> list[list[str]]:
    """Quote-aware split of one line into simple commands (raw tokens, quotes kept)."""
    segments: list[list[str]] = [[]]
    for token in _TOKEN.findall(line):
        if token in _SEPARATORS:
            segments.append([])
            continue
        trailing = token.endswith(";") and not token.startswith(("'", '"'))
        segments[-1].append(token.rstrip(";") if trailing else token)
        if trailing:
            segments.append([])
    return [s for s in segments if s and s[0]]


def _program_effects(
    effects: ShellEffects, program: str, words: list[str], args: list[str], kinds: set[str]
) -> None:
    if program == "cd" and args:
        effects.cwd = args[0]
    elif program == "sed" and any(w.startswith("-i") or w == "--in-place" for w in words):
        if len(args) >= 2:
            _add(effects, args[-1], "modified")
            kinds.add("edit")
    elif program == "tee" and args:
        for arg in args:
            _add(effects, arg, "modified" if "-a" in words else "created")
        kinds.add("write")
    elif program == "touch":
        for arg in args:
            _add(effects, arg, "created")
        kinds.add("write")
    elif program == "rm":
        for arg in args:
            _add(effects, arg, "deleted")
        kinds.add("delete")
    elif program in ("mv", "cp") and len(args) >= 2:
        _add(effects, args[-1], "created")
        kinds.add("write")
    elif program in _READERS and not any(w.startswith(">") for w in words):
        effects.reads.extend(a for a in args if _is_path(a))


_MEMO: ContextVar[dict[str, ShellEffects] | None] = ContextVar("shell_memo", default=None)
_FILE_PROGRAMS = frozenset({"cd", "sed", "tee", "touch", "rm", "mv", "cp", *_READERS})
"""Programs :func:`_program_effects` reads arguments of; any other program touches no file
unless a redirection or a separator says so."""
_SHELL_SYNTAX = re.compile(r"[<>|;&'\"\n\\]")


@contextmanager
def parse_once() -> Iterator[None]:
    """Within this block, :func:`shell_effects` parses each distinct command once."""
    token = _MEMO.set({})
    try:
        yield
    finally:
        _MEMO.reset(token)


def shell_effects(command: str) -> ShellEffects:
    """Scan ``command`` for cd targets and files written, edited, deleted or read.

    The result is shared inside :func:`parse_once`: read it, do not change it.
    """
    memo = _MEMO.get()
    if memo is None:
        return _scan(command)
    effects = memo.get(command)
    if effects is None:
        effects = memo[command] = _scan(command)
    return effects


def _touches_nothing(command: str) -> bool:
    """A plain one-line command (no quotes, redirections, separators, heredoc) whose
    program, after any ``VAR=value`` prefix, is not one that reads or writes files."""
    if _SHELL_SYNTAX.search(command, 0, MAX_COMMAND_CHARS) is not None:
        return False
    for word in command[:MAX_COMMAND_CHARS].split():
        if not _ENV_ASSIGN.match(word):
            return word not in _FILE_PROGRAMS
    return True


def _scan(command: str) -> ShellEffects:
    if not command or _touches_nothing(command):
        return ShellEffects()
    return _parse(command)


def _parse(command: str) -> ShellEffects:
    effects = ShellEffects()
    if not command:
        return effects
    lines, effects.heredoc = _command_lines(command)
    kinds: set[str] = set()
    programs: list[str] = []
    for line in lines:
        for words in _segments(line):
            while len(words) > 1 and _ENV_ASSIGN.match(words[0]):
                words = words[1:]
            program = _unquote(words[0])
            programs.append(program)
            args: list[str] = []
            skip_next = False
            for i, word in enumerate(words[1:], 1):
                if skip_next:
                    skip_next = False
                    continue
                redirect = _REDIRECT_TOKEN.match(word)
                if redirect:
                    target = redirect.group(2) or (words[i + 1] if i + 1 < len(words) else "")
                    skip_next = not redirect.group(2)
                    if target and not target.startswith("&"):
                        _add(
                            effects,
                            _unquote(target),
                            "modified" if redirect.group(1) == ">>" else "created",
                        )
                        kinds.add("write")
                elif not word.startswith(("-", "<")) and (word[0] in "'\"" or ">" not in word):
                    args.append(_unquote(word))
            _program_effects(effects, program, words, args, kinds)
    if effects.writes and programs and kinds <= {"write", "edit"}:
        first = programs[0]
        if first in ("cat", "echo", "printf", "tee", "touch"):
            effects.simple_write = "write"
        elif first == "sed":
            effects.simple_write = "edit"
    return effects
