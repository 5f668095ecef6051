"""Which lines of a program's output report an error, read from their form, not their words.

A failure is recognised from what happened: a traceback, an exception line, an error line
printed by any program (``Error: …``, ``error: …``, ``fatal: …``, ``<Name>Error: …``,
``<x> failed with: TypeError …``), a pytest ``E   AssertionError`` or ``FAILED`` line, a
compiler's ``file:line: error:``, a shell's ``command not found``. The word "error" inside
a name (``reproduce_error.py``, ``test_error_message``) or a success message
(``File created successfully at: /x/reproduce_error.py``) is never one.

:func:`error_lines` lists the error lines of a text in order; the summary quotes the last
one, because the last error a program printed is what the next step has to deal with.
An error form with nothing after its label (``ERROR:`` alone) says nothing and is skipped.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = [
    "TRACEBACK",
    "error_lines",
    "is_error_line",
    "last_error_line",
    "last_error_line_at_end",
    "mentions_failure",
]

TRACEBACK = "Traceback (most recent call last)"

# Each form with the literals every match of it contains (case as written; a form is
# tried on a text only when one of them occurs: :func:`_forms_for`).
_BRANCHES: tuple[tuple[str, tuple[str, ...]], ...] = (
    # an exception at the start of a line: `ValueError: x`, `pkg.mod.CustomError`, `KeyError`
    (
        r"^\s*(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Interrupt|Failure)\b(?::\s*\S|\s*$)",
        ("Error", "Exception", "Interrupt", "Failure"),
    ),
    # a labelled error line with something after the label: `Error: …`, `error[E0308]: …`
    (
        r"^\s*(?:error|Error|ERROR|fatal|Fatal|FATAL|panic)(?:\[\w+\])?:\s*\S",
        ("error", "Error", "ERROR", "fatal", "Fatal", "FATAL", "panic"),
    ),
    (r"^npm ERR! \S", ("npm ERR! ",)),
    # `<prog>: error: …` (argparse, git, compilers without a line number)
    (r"^\s*[\w./-]+: (?:error|fatal error|fatal|ERROR):\s*\S", (": error", ": fatal", ": ERROR")),
    # a compiler diagnostic: `src/a.c:12:5: error: …`
    (r"^\s*[^\s:]+:\d+(?::\d+)?:\s*(?:fatal )?error\b", ("error",)),
    # pytest: `E   AssertionError`, `FAILED tests/t.py::test_x - …`, a failed summary line
    (r"^E\s{2,}\S", ("E",)),
    (r"^FAILED\b", ("FAILED",)),
    (r"^=+ .*\b\d+ (?:failed|errors?)\b", (" failed", " error")),
    # `<x> failed with: TypeError …`, `… raised ValueError: …`, `… ValueError: …` mid-line
    (r"\bfailed with:?\s+\S", ("failed with",)),
    (r"\b(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)\b: +\S", ("Error: ", "Exception: ")),
    # shell and OS errors
    (r": command not found\b", (": command not found",)),
    (r": No such file or directory\b", (": No such file or directory",)),
    (r": Permission denied\b", (": Permission denied",)),
    (r"^Segmentation fault\b", ("Segmentation fault",)),
    (r"\bcore dumped\b", ("core dumped",)),
    (r"^\s*" + re.escape(TRACEBACK), (TRACEBACK,)),
)
_FORMS = re.compile("|".join(branch for branch, _ in _BRANCHES), re.M)


@lru_cache(maxsize=256)
def _compiled(kept: tuple[int, ...]) -> re.Pattern[str]:
    return re.compile("|".join(_BRANCHES[i][0] for i in kept), re.M)


def _forms_for(text: str) -> re.Pattern[str] | None:
    """:data:`_FORMS` without the forms that cannot match ``text`` (none of their literals
    occurs in it), or ``None`` when no form can.

    A form that matches nowhere in a text changes no match of the alternation, so the
    result finds exactly what ``_FORMS`` finds, but Python's regex engine tries every form
    at every position, and on a 600-character output the full alternation costs about
    ten times what the two or three forms whose words occur cost.
    """
    kept = tuple(i for i, (_, words) in enumerate(_BRANCHES) if any(w in text for w in words))
    if not kept:
        return None
    return _FORMS if len(kept) == len(_BRANCHES) else _compiled(kept)


_FAST_KEYS = ("rror", "xception", "ERR", "fatal", "Fatal", "FATAL", "FAIL", "fail", "panic",
              "Interrupt", "Failure", "E  ", "not found", "No such", "denied", "Segmentation",
              "core dumped", "Traceback")  # fmt: skip
_FAST_KEY_RE = re.compile("|".join(re.escape(key) for key in _FAST_KEYS))
# A file tool's success message: whatever path or name it carries, it did not fail.
_SUCCESS = re.compile(
    r"^\s*(?:File created successfully|The file \S.* has been (?:edited|updated|created)"
    r"|File (?:edited|updated|written|saved) successfully|Successfully (?:wrote|created|edited|"
    r"updated|replaced|applied)|Applied edit to\b|Edit applied\b)",
    re.I,
)
# Words that mean a file tool refused, checked with names and paths taken out of the line.
_REFUSAL = re.compile(
    r"\b(?:error|errors|failed|exception|traceback|not found|no such file|does not exist"
    r"|permission denied|invalid|cannot|could not|unable to|did not appear|not been applied"
    r"|no replacement)\b",
    re.I,
)
_BARE_LABEL_LINE = re.compile(
    r"^[ \t]*(?:error|Error|ERROR|fatal|Fatal|FATAL)[ \t]*:?[ \t]*$", re.M
)
_NAME_OR_PATH = re.compile(r"\S*(?:[/_\\]|\w\.\w)\S*|`[^`]*`|'[^']*'|\"[^\"]*\"")


def is_error_line(line: str) -> bool:
    """True when ``line`` has the form of an error report (see the module docstring)."""
    if not any(key in line for key in _FAST_KEYS):
        return False
    forms = _forms_for(line)
    return forms is not None and forms.search(line) is not None and not _SUCCESS.match(line)


def _line_at(text: str, index: int) -> tuple[int, str]:
    """The start and the text of the line holding ``text[index]``."""
    start = text.rfind("\n", 0, index) + 1
    stop = text.find("\n", index)
    return start, text[start : stop if stop != -1 else len(text)]


def error_lines(text: str) -> list[str]:
    """Every error line of ``text`` in order, stripped; a traceback's marker line left out.

    A bare label (``ERROR:`` on a line of its own, as OpenHands' editor answers) is read
    with the next non-blank line: ``ERROR: Invalid `path` parameter: …``. The lines are
    found by searching the whole text (in C), not by testing it line by line.
    """
    if not any(key in text for key in _FAST_KEYS):
        return []
    found: dict[int, str] = {}
    forms = _forms_for(text)
    for match in forms.finditer(text) if forms is not None else ():
        at = match.start() + len(match.group()) - len(match.group().lstrip())
        start, line = _line_at(text, min(at, len(text) - 1))
        stripped = line.strip()
        if start in found or not stripped or stripped.startswith(TRACEBACK):
            continue
        if not _SUCCESS.match(line):
            found[start] = stripped
    for match in _BARE_LABEL_LINE.finditer(text):
        rest = text[match.end() :].lstrip()
        if rest:
            found[match.start()] = f"{match.group().strip()} {rest.split(chr(10), 1)[0].strip()}"
    return [found[k] for k in sorted(found)]


def last_error_line(text: str) -> str | None:
    """The error line a reader needs: the last one a program printed, ``None`` if none.

    After a traceback that is its exception line; a pytest run's last line is its
    ``FAILED``/summary line, which names the test and the error.
    """
    lines = error_lines(text)
    return lines[-1] if lines else None


def last_error_line_at_end(text: str, window: int) -> str | None:
    """:func:`last_error_line` of the last ``window`` characters of ``text``, cheaply.

    Only the lines that hold one of the fast keys are searched, each with the text line
    after it (a bare ``ERROR:`` label is read with its next line), so a long output without
    errors costs one scan for the keys, not the full pattern.
    """
    tail = text[-window:]
    if not any(key in tail for key in _FAST_KEYS):
        return None  # most outputs: one memory-speed scan per key, ~5x cheaper than the regex
    starts: set[int] = set()
    done = -1  # the start of the last line whose keys were handled
    for hit in _FAST_KEY_RE.finditer(tail):
        start = tail.rfind("\n", 0, hit.start()) + 1
        if start == done:
            continue
        done = start
        starts.add(start)
        # the line after it, past blank ones (a bare label is read with the next text)
        stop = tail.find("\n", hit.end())
        while stop != -1:
            starts.add(stop + 1)
            after = tail.find("\n", stop + 1)
            if tail[stop + 1 : len(tail) if after == -1 else after].strip():
                break
            stop = after
    if not starts:
        return None
    picked = []
    for start in sorted(starts):
        stop = tail.find("\n", start)
        picked.append(tail[start : stop if stop != -1 else len(tail)])
    return last_error_line("\n".join(picked))


def mentions_failure(line: str) -> bool:
    """A file tool's one-line answer that reports a refusal (``The path /x does not exist``,
    ``No replacement was performed``): an error form, or a refusal word outside any name,
    path or quoted text. A success message never does, whatever name it carries."""
    if _SUCCESS.match(line):
        return False
    if is_error_line(line):
        return True
    return _REFUSAL.search(_NAME_OR_PATH.sub(" ", line)) is not None
