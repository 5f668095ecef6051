"""Can this tool output be had again? Cheap, repeatable outputs are pointed at; others are kept.

When a tool output must leave the context, two kinds need opposite treatment. Reading a file
that has not changed, ``grep``, ``ls`` or ``find`` cost nothing to run again and give the same
answer, so saving their output only fills the disk: the context gets a pointer that says how
to re-run them. A test run, a build, a network call or data the user supplied may give a
different answer next time, or cannot be repeated at all, so their output is saved and stays
readable.

:func:`classify_command` reads a shell command line with :mod:`shlex` (operators split out)
and calls it repeatable only when every simple command in it is a known read-only program
and nothing writes a file. Anything it cannot be sure of (command substitution, unknown
programs, ``sed -i``, ``find -delete``, redirection into a file) counts as *not* repeatable:
a wrong "repeatable" loses an output, a wrong "not repeatable" only costs disk.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "NOT_REPEATABLE",
    "Rerun",
    "call_text",
    "classify_command",
    "repeatable_call",
]


@dataclass(frozen=True)
class Rerun:
    """Whether an output can be produced again, why, and the call that does it."""

    repeatable: bool
    reason: str
    """Short and human: ``"read-only command (grep)"``, ``"test run (pytest)"``, ..."""
    how: str | None = None
    """The call to make again, e.g. ``run_shell(command="grep -rn foo src")``; set only
    when ``repeatable``."""


NOT_REPEATABLE = Rerun(False, "tool not known to be repeatable")
"""The default for a tool that declares nothing: its output is kept."""

_READ_ONLY = frozenset(
    {
        "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "ag", "ack",
        "tree", "file", "stat", "du", "pwd", "echo", "printf", "uniq", "cut", "tr", "nl",
        "diff", "cmp", "basename", "dirname", "realpath", "readlink", "which", "type",
        "true", "column", "jq", "fd", "fdfind", "locate", "md5sum", "sha1sum",
        "sha256sum", "cd", "od", "xxd", "hexdump", "strings", "comm", "paste", "fold",
        "expand", "tac", "rev", "seq", "date", "printenv", "id", "whoami", "uname",
        "less", "more", "ldd", "nm", "objdump", "readelf", "look",
        "search_dir", "search_file", "find_file",
    }
)  # fmt: skip
"""Programs that only read (files, the environment) and print; the last three are
SWE-agent's documented search commands, which do the same."""

_GIT_READ_ONLY = frozenset(
    {
        "status", "log", "diff", "show", "grep", "ls-files", "ls-tree", "blame",
        "rev-parse", "describe", "cat-file", "shortlog", "reflog", "whatchanged",
    }
)  # fmt: skip

_TESTS = frozenset(
    {"pytest", "py.test", "tox", "nox", "unittest", "jest", "vitest", "mocha", "rspec",
     "phpunit", "ctest"}
)  # fmt: skip
_BUILDS = frozenset(
    {"make", "cmake", "ninja", "mvn", "gradle", "cargo", "go", "npm", "yarn", "pnpm",
     "bazel", "tsc", "gcc", "g++", "clang", "javac", "dotnet"}
)  # fmt: skip
_NETWORK = frozenset(
    {"curl", "wget", "http", "https", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "telnet",
     "ftp", "ping", "dig", "nslookup", "aws", "gcloud", "az", "kubectl", "docker", "gh"}
)  # fmt: skip
_GIT_NETWORK = frozenset({"fetch", "pull", "push", "clone", "ls-remote", "submodule"})

_OPERATORS = frozenset({"|", "||", "&&", ";", "&", "|&", ";;", "\n"})
_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_SAFE_TARGETS = frozenset({"/dev/null", "&1", "&2", "/dev/stdout", "/dev/stderr"})


def classify_command(command: str) -> Rerun:
    """Whether the shell command line ``command`` is cheap to run again with the same result."""
    how = call_text("run_shell", {"command": command})
    if any(mark in command for mark in ("$(", "`", "<(", ">(")):
        return Rerun(False, "command substitution: cannot tell what runs")
    try:
        tokens = _tokens(command)
    except ValueError:
        return Rerun(False, "command line could not be read")
    programs: list[str] = []
    for words in _simple_commands(tokens):
        verdict = _judge(words)
        if isinstance(verdict, Rerun):
            return verdict
        if verdict:
            programs.append(verdict)
    if not programs:
        return Rerun(False, "empty command")
    shown = ", ".join(dict.fromkeys(programs))
    return Rerun(True, f"read-only command ({shown})", how)


def repeatable_call(tool_name: str, arguments: Mapping[str, Any], reason: str) -> Rerun:
    """A repeatable verdict for a tool call, with the call spelled out as ``how``."""
    return Rerun(True, reason, call_text(tool_name, arguments))


def call_text(tool_name: str, arguments: Mapping[str, Any]) -> str:
    """``name(key=value, ...)`` with JSON values: what the model sends to run it again."""
    parts = [
        f"{key}={json.dumps(value, ensure_ascii=False, default=str)}"
        for key, value in arguments.items()
        if key != "context"
    ]
    return f"{tool_name}({', '.join(parts)})"


# --- reading the command line ------------------------------------------------------------


def _tokens(command: str) -> list[str]:
    lexer = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=";&|<>")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    return list(lexer)


def _simple_commands(tokens: list[str]) -> Iterator[list[str]]:
    """Split at ``|``, ``&&``, ``;`` ...; redirections stay with their command."""
    current: list[str] = []
    for token in tokens:
        if token in _OPERATORS:
            if current:
                yield current
            current = []
        else:
            current.append(token)
    if current:
        yield current


def _judge(words: list[str]) -> str | Rerun:
    """The read-only program's name, or the verdict that stops the whole line."""
    stripped = _strip_redirections(words)
    if isinstance(stripped, Rerun):
        return stripped
    words = stripped
    while words and "=" in words[0] and not words[0].startswith("="):
        words = words[1:]  # FOO=1 cmd
    if not words:
        return ""
    program = words[0].rsplit("/", 1)[-1]
    if program in ("sudo", "doas", "su"):
        return Rerun(False, f"runs as another user ({program})")
    if program == "xargs":
        rest = [w for w in words[1:] if not w.startswith("-")]
        return _judge(rest) if rest else Rerun(False, "xargs without a command")
    if program in ("command", "time", "nice", "timeout", "env"):
        rest = words[1:]
        while rest and rest[0].startswith("-"):
            rest = rest[1:]  # options of the wrapper (a value after one is read as the program)
        if program == "timeout" and rest:
            rest = rest[1:]  # the duration
        return _judge(rest) if rest else ""
    return _judge_program(program, words[1:])


def _judge_program(program: str, args: list[str]) -> str | Rerun:
    if program == "git":
        sub = next((a for a in args if not a.startswith("-")), "")
        if sub in _GIT_READ_ONLY:
            return f"git {sub}"
        if sub in _GIT_NETWORK:
            return Rerun(False, f"network call (git {sub})")
        return Rerun(False, f"git {sub or 'command'} may change the repository")
    if program in ("python", "python3") and args[:2] in (["-m", "pytest"], ["-m", "unittest"]):
        return Rerun(False, f"test run ({program} -m {args[1]})")
    if program in _TESTS:
        return Rerun(False, f"test run ({program})")
    if program in _BUILDS:
        kind = "test run" if "test" in args else "build or package command"
        return Rerun(False, f"{kind} ({program})")
    if program in _NETWORK:
        return Rerun(False, f"network call ({program})")
    if program == "find":
        if any(a in ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint") for a in args):
            return Rerun(False, "find that runs commands or deletes")
        return program
    if program == "sed":
        if any(a.startswith("-i") or a.startswith("--in-place") for a in args):
            return Rerun(False, "sed -i writes files")
        return program
    if program == "sort":
        if any(a == "-o" or a.startswith("--output") for a in args):
            return Rerun(False, "sort -o writes a file")
        return program
    if program in ("awk", "gawk", "mawk"):
        script = " ".join(args)
        if any(mark in script for mark in ("system", ">", "|", "getline")):
            return Rerun(False, "awk program that writes or runs commands")
        return program
    if program in _READ_ONLY:
        return program
    return Rerun(False, f"not a known read-only command ({program})")


def _strip_redirections(words: list[str]) -> list[str] | Rerun:
    """Drop ``2>&1``, ``> /dev/null`` and input redirections; a write to a file stops."""
    kept: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        bare = word.lstrip("0123456789")
        if bare in _REDIRECTS or bare == ">&":
            target = words[index + 1] if index + 1 < len(words) else ""
            if bare == ">&" or target in _SAFE_TARGETS or target.startswith("&"):
                index += 2
                continue
            return Rerun(False, "writes a file (redirection)")
        if bare in ("<", "<<", "<<<"):
            index += 2
            continue
        if word.isdigit() and index + 1 < len(words) and words[index + 1] in _REDIRECTS:
            index += 1
            continue
        kept.append(word)
        index += 1
    return kept
