"""Make a handoff summary shorter by whole lines, the least needed first.

The fit step (:mod:`.fit`) sometimes has to shrink the summary itself. Cutting out the
middle of its text removes whatever happens to sit there, and in a short summary that is
the list of changed files or the last failure: the facts a resumed agent needs most. This
module drops whole lines instead, in an order of need (lowest first, oldest first within a
rank):

0. lines that say nothing (``None.``, a count of what was left out, the note that the task
   is unchanged) and lines whose text another line already carries (a blocker that is also
   the last failure, an error quoted again under Critical Context);
1. older progress detail: numbered actions (the newest last), decisions, resolved
   questions, remaining work, the in-progress note, constraints, anything unrecognised;
2. the goal, the newest action, blockers, state lines such as the working directory or
   the test count, other critical context;
3. from :data:`AIM_RANK` up, the facts, in this order: the identifiers the run worked
   with (3); the user's newest request (Active Task, Latest request, pending asks; 4); the
   files changed, the last failing command with its error, and the last command when its
   output is in the kept tail (:data:`TOP_RANK`, 5).

A heading goes when the last line under it goes. The first line (the summary prefix) and
the end marker are never dropped. It works on any summary in the handoff or classic
layout, written by a model or by the extractive summarizer; a line it does not recognise
ranks with progress detail. No marker is left where lines went (in the windows where this
matters, a marker costs as much as the line it replaces); the fit result says the summary
was shrunk.
"""

from __future__ import annotations

import re

from .markers import END_MARKER, HISTORICAL_PREFIXES, SHORT_SUMMARY_PREFIX, SUMMARY_PREFIX

__all__ = ["AIM_RANK", "TOP_RANK", "drop_summary_lines", "line_ranks"]

AIM_RANK = 3
"""Lines from this rank up carry the facts a resumed agent needs; they go last."""
TOP_RANK = 5
"""The changed files and the last failure."""

MIN_LINE_KEPT = 200
"""A line is shortened rather than dropped when this many of its characters can stay."""
_SHORTENED = " …"

_PREFIXES = (SUMMARY_PREFIX, SHORT_SUMMARY_PREFIX, *HISTORICAL_PREFIXES)
_HEADING = re.compile(r"^(#{1,6})\s")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_LABEL = re.compile(r"^[A-Za-z][A-Za-z &/-]{0,30}:\s*")
_SAYS_NOTHING = re.compile(
    r"^(?:none\.?|n/a|nothing\.?|… and \d+ more\b.*|no new user request in the compacted turns\b.*)$",
    re.IGNORECASE,
)
_WRITTEN = r"(?:modified|created|deleted|written|edited|changed)"
_NAMES_LINE = re.compile(r"^(?:identifiers worked with|key names)\s*:", re.IGNORECASE)
_ASK_LINE = re.compile(r"^(?:user asked|latest request)\s*:", re.IGNORECASE)
_TOP_LINE = re.compile(rf"^(?:last failure|last command|{_WRITTEN})\s*:", re.IGNORECASE)
_WRITTEN_FILE = re.compile(rf"\s—\s{_WRITTEN}\b", re.IGNORECASE)
_AIM_SECTIONS = ("active task", "pending user asks", "next steps")
_KEPT_SECTIONS = ("goal", "blocked", "critical context", "active state")
_ACTION_SECTIONS = ("completed actions", "done")


def line_ranks(lines: list[str]) -> list[int | None]:
    """The rank of each line of a summary text; ``None`` for lines never dropped on their
    own (the prefix, the end marker, headings, blank lines)."""
    ranks: list[int | None] = []
    section = ""
    last_action = _last_actions(lines)
    for i, line in enumerate(lines):
        stripped = line.strip()
        heading = _HEADING.match(stripped)
        if heading:
            section = stripped[heading.end() :].strip().lower()
            ranks.append(None)
        elif not stripped or stripped == END_MARKER or (i == 0 and line.startswith(_PREFIXES)):
            ranks.append(None)
        else:
            ranks.append(_rank(stripped, section, i in last_action))
    _rank_repeats(lines, ranks)
    return ranks


def _last_actions(lines: list[str]) -> set[int]:
    """Index of the last line of each numbered action list (the newest action)."""
    out: set[int] = set()
    section, last = "", None
    for i, line in enumerate([*lines, "# end"]):
        heading = _HEADING.match(line.strip())
        if heading:
            if section in _ACTION_SECTIONS and last is not None:
                out.add(last)
            section, last = line.strip()[heading.end() :].strip().lower(), None
        elif re.match(r"^\s*\d+[.)]\s", line):
            last = i
    return out


def _body(line: str) -> str:
    return _BULLET.sub("", line).strip()


def _rank(line: str, section: str, newest_action: bool) -> int:
    body = _body(line)
    if _SAYS_NOTHING.match(body):
        return 0
    if _TOP_LINE.match(body) or _WRITTEN_FILE.search(body):
        return TOP_RANK
    if _ASK_LINE.match(body) or section in _AIM_SECTIONS:
        return AIM_RANK + 1
    if _NAMES_LINE.match(body):
        return AIM_RANK
    if section == "relevant files":
        return 1  # a file only read or mentioned
    if section in _KEPT_SECTIONS or newest_action:
        return 2
    return 1


def _key(line: str) -> str:
    """What a line says, without its bullet, label and a trailing status."""
    body = _LABEL.sub("", _body(line))
    return body.split("; not fixed yet")[0].split("; fixed later by")[0].strip(" .`")


def _rank_repeats(lines: list[str], ranks: list[int | None]) -> None:
    """A line whose text a line of the same or a higher rank carries ranks 0 (one copy
    stays: among equals, the first)."""
    keys = [_key(line) if rank is not None else "" for line, rank in zip(lines, ranks, strict=True)]
    for i, rank in enumerate(ranks):
        if rank is None or rank == 0 or len(keys[i]) < 12:
            continue
        for j, other in enumerate(ranks):
            if j == i or other is None or other == 0 or keys[i] not in lines[j]:
                continue
            if other > rank or (other == rank and (j < i or keys[j] != keys[i])):
                ranks[i] = 0
                break


def drop_summary_lines(
    text: str, goal_chars: int, max_rank: int = AIM_RANK - 1, headings: bool = False
) -> str:
    """``text`` (a summary, prefix to end marker) without its least needed lines, dropped
    one at a time until it is at most ``goal_chars`` long or no line of rank ``max_rank``
    or lower is left; with ``headings``, the headings go after every line below
    :data:`AIM_RANK` and before the facts' lines. A line long enough that :data:`MIN_LINE_KEPT` of its characters can
    stay is shortened instead (its start kept), and that is the last change. ``text``
    itself when nothing can be dropped."""
    if len(text) <= goal_chars:
        return text
    lines = text.split("\n")
    ranks = line_ranks(lines)
    order = sorted(
        (i for i, r in enumerate(ranks) if r is not None and r <= max_rank),
        key=lambda i: (ranks[i], i),
    )
    if headings:  # the headings go after every other line and before the facts' lines
        heads = [i for i, line in enumerate(lines) if _HEADING.match(line.strip())]
        below = [i for i in order if (ranks[i] or 0) < AIM_RANK]
        order = below + heads + [i for i in order if (ranks[i] or 0) >= AIM_RANK]
    dropped: set[int] = set()
    out = text
    for i in order:
        short = None if ranks[i] is None else _shortened(lines[i], len(out) - goal_chars)
        if short is not None:
            # one long line would overshoot by more than it is worth: its start stays, cut
            # where the goal is met (a model's long paragraph, a long list of names)
            return _render([*lines[:i], short, *lines[i + 1 :]], dropped)
        dropped.add(i)
        out = _render(lines, dropped)
        if len(out) <= goal_chars:
            break
    return out


def _shortened(line: str, need: int) -> str | None:
    """``line`` less ``need`` characters at its end, or ``None`` when too little would be
    left: a list (``a, b, c``) is cut between items and keeps at least one, other text keeps
    at least :data:`MIN_LINE_KEPT` characters."""
    keep = len(line) - need - len(_SHORTENED)
    if keep <= 0:
        return None
    cut = line.rfind(", ", 0, keep)
    if cut > 0 and line.count(", ") >= 2:
        return line[:cut] + _SHORTENED
    if keep >= MIN_LINE_KEPT:
        return line[:keep].rstrip() + _SHORTENED
    return None


def _render(lines: list[str], dropped: set[int]) -> str:
    kept_flags = [i not in dropped for i in range(len(lines))]
    out: list[str] = []
    for i, line in enumerate(lines):
        if not kept_flags[i]:
            continue
        heading = _HEADING.match(line.strip())
        if heading and _emptied(lines, i, len(heading.group(1)), dropped):
            continue
        out.append(line)
    return "\n".join(_squeeze_blanks(out))


def _emptied(lines: list[str], at: int, level: int, dropped: set[int]) -> bool:
    """True when the section under the heading at ``at`` had lines and all were dropped."""
    had = False
    for j in range(at + 1, len(lines)):
        stripped = lines[j].strip()
        heading = _HEADING.match(stripped)
        if heading and len(heading.group(1)) <= level:
            break
        if stripped == END_MARKER:
            break
        if stripped and not heading:
            had = True
            if j not in dropped:
                return False
    return had


def _squeeze_blanks(lines: list[str]) -> list[str]:
    out: list[str] = []
    for line in lines:
        if not line.strip() and (not out or not out[-1].strip()):
            continue
        out.append(line)
    return out
