"""The names an agent worked with: functions, classes, tests, issue ids, config keys.

After a compaction the agent still needs the vocabulary of its work (``TimeDelta``,
``_serialize``, ``test_timedelta_precision``, ``#1867``, ``compression.threshold``). Those
names sit in the assistant's own prose, its commands and its edits, and a list of them,
ranked by how often they were used, carries most of what plain observation masking keeps
by keeping assistant text verbatim.

A token counts when it is code-shaped: it has an underscore (``snake_case``,
``SCREAMING_CASE``, ``__init__``), an inner capital (``CamelCase``, ``camelCase``), a dot
between two names (``module.attr``, ``a.b.c``; file names are left to Relevant Files), a
call (``name(``, also a method called on a call's or an item's result: ``tobytes`` in
``arr.flatten().tobytes()``, ``as_long`` in ``model[b].as_long()``), or it is an issue id
(``#123``, ``PROJ-42``) or a backticked single word. Plain English words never qualify, so prose costs nothing but the scan. Each text is read
up to :data:`SCAN_CHARS`, so the work per message is bounded.
"""

from __future__ import annotations

import re
from collections import Counter

from ..safety.redact import redact
from ..safety.redact_bare import random_letters

__all__ = ["SCAN_CHARS", "IdentifierTally", "accept_name", "text_context"]

SCAN_CHARS = 3_000
"""Characters of one text (assistant prose, a command, an edit) scanned for names."""
_CONTEXT = 60  # characters kept on each side of a name's first use, to check it for secrets
_WORD_REACH = 512  # how much further the context may widen to keep whole words
MAX_DISTINCT = 2_000
"""Distinct names tracked; beyond this only names already known are counted."""

# Only code-shaped tokens match, so prose words are rejected inside the regex engine.
# The possessive quantifiers (*+, ++) match what plain ones would: what follows each can
# never start with a character the run gave back, so backtracking into it only costs time.
_TOKEN = re.compile(
    r"`([A-Za-z_][\w.]*+)(?:\(\))?`"  # a backticked name
    r"|(?<![\w#-])(#\d{1,7}+|[A-Z][A-Z0-9]{1,9}+-\d{1,6}+)\b"  # issue ids
    r"|(?:(?<![\w.])|(?<=[)\]]\.))"  # not inside a name; a method of a call's or an item's result
    r"([A-Za-z_]\w*+(?:\.[A-Za-z_]\w*+)+|[A-Za-z]*+_\w*|[a-z]++[A-Z]\w*"
    r"|[A-Z]++[a-z0-9]++[A-Z]\w*|[A-Za-z]\w*+(?=\())"
)
_PARTS = re.compile(r"[._-]")
_CODE_SHAPE = re.compile(r"_|[a-z][A-Z]|[A-Z]{2,}[a-z]|\.")
_FILE_SUFFIXES = frozenset(
    [
        "py",
        "pyi",
        "js",
        "jsx",
        "ts",
        "tsx",
        "json",
        "yaml",
        "yml",
        "toml",
        "md",
        "rst",
        "txt",
        "cfg",
        "ini",
        "sh",
        "go",
        "rs",
        "java",
        "kt",
        "c",
        "h",
        "cc",
        "cpp",
        "hpp",
        "rb",
        "php",
        "html",
        "css",
        "scss",
        "sql",
        "xml",
        "csv",
        "ipynb",
        "lock",
        "log",
        "cgi",
        "conf",
        "png",
        "jpg",
        "gif",
        "so",
        "o",
        "exe",
    ]
)
_NOISE = frozenset(
    ["e.g", "i.e", "etc.etc", "self.assert", "__main__", "os.path", "sys.argv", "end_of_edit"]
)  # too generic to help a reader
_COMMON_CALLS = frozenset(
    [
        "print",
        "len",
        "str",
        "int",
        "float",
        "list",
        "dict",
        "set",
        "tuple",
        "range",
        "open",
        "type",
        "isinstance",
        "super",
        "return",
        "if",
        "for",
        "while",
        "and",
        "or",
        "not",
        "in",
        "is",
        "format",
        "join",
        "split",
        "strip",
        "append",
        "get",
        "items",
        "keys",
        "values",
        "echo",
        "cat",
        "ls",
        "cd",
        "grep",
        "find",
        "python",
        "pip",
        "sed",
        "awk",
        "head",
        "tail",
    ]
)


def _secret_like(name: str) -> bool:
    """Keys and tokens (``ghp_FAKE123…``, ``AKIA…``) are code-shaped too: leave them out.

    Out of their context (``Bearer …``, ``key=…``) redaction would not know them, so a
    long run that mixes letters and digits never counts as a name, nor does a long run of
    random letters of both cases (the digit-free piece of a key wrapped over lines).
    """
    for part in _PARTS.split(name):
        if len(part) >= 12 and any(c.isdigit() for c in part) and any(c.isalpha() for c in part):
            return True
        if random_letters(part):
            return True
    return sum(c.isdigit() for c in name) >= 6


def _context(text: str, start: int, end: int) -> str:
    """The text around a name's first use: :data:`_CONTEXT` characters each side, widened to
    whole whitespace-delimited words (at most :data:`_WORD_REACH` more), so a name cut out
    of a long key (``sk-ant-...-xRcL...``) is judged with the key's recognisable start."""
    lo, hi = max(start - _CONTEXT, 0), min(end + _CONTEXT, len(text))
    before = text[max(lo - _WORD_REACH, 0) : lo]
    cut = max(before.rfind(" "), before.rfind("\n"), before.rfind("\t"))
    lo -= len(before) - cut - 1 if cut >= 0 else len(before)
    after = text[hi : hi + _WORD_REACH]
    stops = [i for i in (after.find(" "), after.find("\n"), after.find("\t")) if i >= 0]
    hi += min(stops) if stops else len(after)
    return text[lo:hi]


def _accept(name: str, call: bool, backticked: bool) -> bool:
    if len(name) < 3 or len(name) > 80 or name in _NOISE or _secret_like(name):
        return False
    if "." in name:
        last = name.rsplit(".", 1)[1].lower()
        if last in _FILE_SUFFIXES or name[0].isdigit():
            return False
        return not name.replace(".", "").isdigit()
    if (_CODE_SHAPE.search(name) and not name.isupper()) or "_" in name:
        return name.strip("_") != ""
    if call or backticked:
        return name.lower() not in _COMMON_CALLS and not name.isdigit()
    return False


def accept_name(name: str, call: bool = False) -> bool:
    """True when ``name`` is code-shaped enough to list (see the module docstring);
    ``call``: it was seen followed by ``(``."""
    return _accept(name, call, False)


def text_context(text: str, start: int, end: int) -> str:
    """The text around ``text[start:end]`` that redaction judges a name by (:func:`_context`)."""
    return _context(text, start, end)


class IdentifierTally:
    """Counts code-shaped names across texts; :meth:`ranked` lists them by use."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.first: dict[str, int] = {}
        self.context: dict[str, str] = {}  # where each name was first seen
        # _accept's verdicts: the same names recur in every turn of a long span, and the
        # test is pure. Held by the tally, so it lives no longer than one span's walk.
        self._verdicts: dict[tuple[str, bool, bool], bool] = {}

    def add(self, text: str) -> list[str]:
        """Count the names in the first :data:`SCAN_CHARS` characters of ``text``; return
        the names counted, in order (a name once per use)."""
        found_names: list[str] = []
        if not text:
            return found_names
        counts, first, verdicts = self.counts, self.first, self._verdicts
        for match in _TOKEN.finditer(text, 0, SCAN_CHARS):
            backticked, issue, name = match.groups()
            if issue:
                found = issue
            else:
                if backticked:
                    key = (backticked.rstrip("."), False, True)
                elif name:
                    key = (name, text[match.end() : match.end() + 1] == "(", False)
                else:
                    continue
                verdict = verdicts.get(key)
                if verdict is None:
                    verdict = verdicts[key] = _accept(*key)
                if not verdict:
                    continue
                found = key[0]
            if found not in first:
                if len(first) >= MAX_DISTINCT:
                    continue
                first[found] = len(first)
                self.context[found] = _context(text, *match.span())
            counts[found] += 1
            found_names.append(found)
        return found_names

    def is_clean(self, name: str) -> bool:
        """False when redaction removes ``name`` from the text it was first seen in: a
        password after ``--password`` or a token in a URL is a secret, not a name."""
        return name in redact(self.context.get(name, name))

    def ranked(self, focus_words: list[str] | None = None, limit: int = 100) -> list[str]:
        """Up to ``limit`` names by use (most first, ties by first use); focus matches lead.

        A name that redaction removes from the text it was first seen in (a password after
        ``--password``, a token in a URL) is a secret, not a name, and is left out.
        """
        first = self.first
        names = sorted(self.counts, key=lambda n: (-self.counts[n], first[n]))
        if focus_words:
            hits = [n for n in names if any(w in n.lower() for w in focus_words)]
            chosen = set(hits)
            names = hits + [n for n in names if n not in chosen]
        kept: list[str] = []
        for name in names:
            if len(kept) >= limit:
                break
            if self.is_clean(name):
                kept.append(name)
        return kept
