"""ExtractiveSummarizer: a handoff summary built from the turns themselves, with no model.

It is the offline default and the deterministic fallback. Every section of the handoff
template (spec CC-66, or the classic layout of CC-67) is filled by rules: the user's latest
request verbatim, a numbered list of the tool calls and what came of them, the files that
were changed, unresolved errors, questions asked and answered. The same input always gives
the same text.

Guarantees:

* Every path a tool call wrote, edited, created or deleted appears under Relevant Files,
  whatever the budget (the one thing allowed to push a summary over it).
* Otherwise the body fits ``request.budget_tokens`` rough tokens: detail is shed in a fixed
  order (long texts shortened, the action list collapsed into a counted line, lists
  trimmed) until it does.
* On an update (``previous_summary`` set) nothing still relevant is lost: actions keep
  their numbers and new ones continue after them; files, constraints, decisions and
  answered questions carry over; task, state and pending asks are refreshed.
* The final body is redacted (:func:`palimpsest.safety.redact.redact`).
* Text from tool output that addresses the model ("ignore all previous instructions…")
  is never carried as an instruction: such lines are withheld (:mod:`.planted`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..safety.redact import redact
from ..tokens import estimate_tokens_rough
from .actions import clip
from .base import RedactedText, SummaryRequest
from .draft import MAX_BLOCKERS, NAMES_LABEL, Draft, Entry, build_draft
from .facts import extract_facts
from .planted import withhold_planted
from .previous import COMPACT_WRITTEN, is_written_note, parse_previous

__all__ = ["CLASSIC_HEADINGS", "HANDOFF_HEADINGS", "NAMES_LABEL", "ExtractiveSummarizer"]

HANDOFF_HEADINGS = (
    "## Active Task", "## Goal", "## Constraints & Preferences", "## Completed Actions",
    "## Active State", "## In Progress", "## Blocked", "## Key Decisions",
    "## Resolved Questions", "## Pending User Asks", "## Relevant Files",
    "## Remaining Work", "## Critical Context",
)  # fmt: skip
"""The handoff layout (CC-66), in order."""

CLASSIC_HEADINGS = (
    "## Goal", "## Constraints & Preferences", "## Progress", "### Done", "### In Progress",
    "### Blocked", "## Key Decisions", "## Relevant Files", "## Next Steps",
    "## Critical Context",
)  # fmt: skip
"""The classic layout (CC-67), in order."""

NONE = "None."
TRUNCATED = " ...[truncated]"
MAX_QUOTED_LINES = 40  # a request with more lines is quoted on one line, clipped


@dataclass(frozen=True)
class _Level:
    """How much detail one rendering keeps; levels are tried from the first to the last."""

    ask: int  # characters of the Active Task quote
    text: int  # characters of other free texts
    items: int  # entries of each bullet list
    actions: int | None  # numbered actions listed (None: all)
    files: int  # read or mentioned files listed
    names: int  # identifiers listed
    compact_written: bool = False
    terse: bool = False  # only sections that say something (see _terse)


_LEVELS = (
    # identifiers give way more slowly than actions: a name costs a few tokens and is what
    # a resumed agent searches for; an action line costs twenty and most say "ran ls"
    _Level(1_385, 400, 12, None, 40, 80),
    _Level(1_000, 300, 10, 200, 30, 80),
    _Level(600, 200, 8, 100, 20, 80),
    _Level(400, 160, 6, 50, 12, 60),
    _Level(300, 120, 4, 25, 8, 45),
    _Level(200, 100, 3, 12, 4, 30),
    _Level(160, 80, 2, 6, 2, 6),
    _Level(120, 60, 1, 3, 0, 3),
    _Level(80, 40, 0, 0, 0, 0, compact_written=True),
    _Level(80, 40, 0, 0, 0, 8, compact_written=True, terse=True),
)
UNCHANGED_TASK = (
    "No new user request in the compacted turns: the task is still the Goal below (the "
    "original request is kept verbatim at the start of the conversation)."
)
_ALL_ACTIONS_LIMIT = 400  # above this many, level 0 already collapses


# --- rendering -------------------------------------------------------------------------------


def _bullets(
    items: list[str], cap: int, limit: int, newest: bool = False, focus: Sequence[str] = ()
) -> list[str]:
    """Up to ``cap`` items (the newest or the first); those naming the focus come first."""
    hits = [i for i in items if any(w in i.lower() for w in focus)][:cap] if focus else []
    chosen_hits = set(hits)
    rest = [i for i in items if i not in chosen_hits] if hits else items
    room = max(cap - len(hits), 0)
    chosen = hits + ((rest[-room:] if newest else rest[:room]) if room else [])
    lines = [f"- {clip(item, limit * 2 if item in hits else limit)}" for item in chosen]
    if len(items) > len(chosen):
        lines.append(f"- … and {len(items) - len(chosen)} more")
    return lines or [NONE]


def _select(entries: list[Entry], cap: int | None) -> tuple[list[Entry], list[Entry]]:
    if cap is None or len(entries) <= cap:
        return entries, []
    informative = [i for i, e in enumerate(entries) if e.informative]
    keep = set(informative[-cap:]) if cap else set()
    room = cap - len(keep)
    if room > 0:
        keep.update([i for i, e in enumerate(entries) if not e.informative][-room:])
    kept = [e for i, e in enumerate(entries) if i in keep]
    dropped = [e for i, e in enumerate(entries) if i not in keep]
    return kept, dropped


def _collapsed_line(dropped: list[Entry]) -> str:
    written = sum(1 for e in dropped if e.written)
    other = len(dropped) - written
    parts = []
    if other:
        parts.append(f"{other} more reads/commands")
    if written:
        parts.append(f"{written} more edits/writes (files listed under Relevant Files)")
    return "… and " + ", ".join(parts)


def _actions(d: Draft, level: _Level) -> list[str]:
    cap = level.actions
    if cap is None and len(d.entries) > _ALL_ACTIONS_LIMIT:
        cap = _ALL_ACTIONS_LIMIT
    kept, dropped = _select(d.entries, cap)
    lines = [
        f"{n}. {e.render(level.text * 2 if e.focused else level.text)}"
        for n, e in enumerate(kept, 1)
    ]
    lines += d.collapsed[-2:]
    if dropped:
        lines.append(_collapsed_line(dropped))
    return lines or [NONE]


def _files(d: Draft, level: _Level) -> list[str]:
    written = [(p, n) for p, n in d.files.items() if is_written_note(n)]
    others = [(p, n) for p, n in d.files.items() if not is_written_note(n)]
    if level.compact_written and written:
        lines = [f"- {COMPACT_WRITTEN}" + ", ".join(p for p, _ in written)]
    else:
        lines = [f"- {p} — {n}" for p, n in written]
    lines += [f"- {p} — {n}" for p, n in others[: level.files]]
    if len(others) > level.files:
        lines.append(f"- … and {len(others) - level.files} more files read or mentioned")
    return lines or [NONE]


def _quote(ask: str, limit: int) -> str:
    """A short request word for word (its lines kept); a long one clipped to ``limit``
    (one no longer than ``limit`` and the truncation marker stays whole: cutting it would
    not make it shorter)."""
    text = ask.strip()
    if len(text) <= limit + len(TRUNCATED) and text.count("\n") <= MAX_QUOTED_LINES:
        # a line starting with "#" is escaped so the quote never reads as a heading
        return "\n".join(_unheading(line.rstrip()) for line in text.splitlines())
    return clip(text, limit, TRUNCATED)


def _task(d: Draft, level: _Level) -> str:
    if d.ask:
        return f"User asked: '{_quote(d.ask, level.ask)}'"
    if d.prev_task:
        return _unheading(clip(d.prev_task, level.ask + 40, TRUNCATED))
    return UNCHANGED_TASK if d.goal else NONE


def _state_lines(d: Draft, level: _Level) -> list[str]:
    cap = max(level.items, 1)
    lines = [f"- {clip(s, level.text)}" for s in d.state[:cap]]
    if len(d.state) > cap:
        lines.append(f"- … and {len(d.state) - cap} more (see Relevant Files)")
    if d.tests:
        lines.append(f"- {clip(d.tests, level.text + 40)}")
    if d.awaiting:
        lines.append(f"- {d.awaiting}")
    if d.last_failure:
        lines.append(f"- {clip(d.last_failure, level.text + 200)}")
    return lines or [NONE]


def _unheading(line: str) -> str:
    """Escape a leading ``#`` so quoted text never reads as a section heading."""
    return "\\" + line if line.startswith("#") else line


def _text(value: str | None, limit: int) -> str:
    return _unheading(clip(value, limit)) if value else NONE


def _redacted(text: str) -> RedactedText:
    """``redact(text)``, marked as such for the compressor (see :class:`.base.RedactedText`)."""
    return RedactedText(redact(text))


def _more_names(d: Draft, level: _Level, template: str, body: str, budget: int) -> str:
    """Spend what is left of the budget on more identifiers (they are cheap and they are
    what a resumed agent searches for); keep ``body`` if the longer one does not fit."""
    if level.names <= 0 or len(d.names) <= level.names:
        return body
    room = (budget - estimate_tokens_rough(body)) * 4 - 64
    cap = level.names
    while cap < len(d.names) and room > len(d.names[cap]) + 4:
        room -= len(d.names[cap]) + 4
        cap += 1
    longer = body
    if cap > level.names:
        longer = _redacted(_render(d, replace(level, names=cap), template))
        longer = longer if estimate_tokens_rough(longer) <= budget else body
    at = _LEVELS.index(level)
    if cap < len(d.names) and not _LEVELS[at + 1].terse:
        # names the run uses later are still left out: the next level's shorter detail
        # with every name, when that fits (a name costs a few tokens, an outcome line 100)
        every = replace(_LEVELS[at + 1], names=len(d.names))
        fuller = _redacted(_render(d, every, template))
        if estimate_tokens_rough(fuller) <= budget:
            return fuller
    return longer


def _names(d: Draft, level: _Level) -> list[str]:
    """The identifiers line: the names the agent worked with, most used first."""
    if not d.names or level.names <= 0:
        return []
    shown = d.names[: level.names]
    more = f" (+{len(d.names) - len(shown)} more)" if len(d.names) > len(shown) else ""
    return [f"- {NAMES_LABEL} " + ", ".join(f"`{n}`" for n in shown) + more]


def _critical(d: Draft, level: _Level, items: list[str]) -> list[str]:
    names = _names(d, level)
    bullets = _bullets(items, 2 * level.items, level.text, True, d.focus) if items else []
    return names + (bullets if bullets != [NONE] else []) or [NONE]


def _render(d: Draft, level: _Level, template: str) -> str:
    n, t, f = level.items, level.text, d.focus
    if template == "classic":
        next_steps = [f"- Latest request: {_task(d, level)}"] if d.ask or d.prev_task else []
        next_steps += _bullets(d.remaining, n, t) if d.remaining else []
        critical = d.critical[-n:] + [f"Answered: {r}" for r in d.resolved[-n:]] if n else []
        critical += [d.last_failure] if d.last_failure and n else []
        blocks = [
            ("## Goal", [_text(d.goal, t)]),
            ("## Constraints & Preferences", _bullets(d.constraints, n, t)),
            ("## Progress", []),
            ("### Done", _actions(d, level)),
            ("### In Progress", [_text(d.in_progress, t)]),
            ("### Blocked", _bullets(d.blocked, MAX_BLOCKERS, t + 100, newest=True)),
            ("## Key Decisions", _bullets(d.decisions, n, t, True, f)),
            ("## Relevant Files", _files(d, level)),
            ("## Next Steps", next_steps or [NONE]),
            ("## Critical Context", _critical(d, level, critical)),
        ]
    else:
        blocks = [
            ("## Active Task", [_task(d, level)]),
            ("## Goal", [_text(d.goal, t)]),
            ("## Constraints & Preferences", _bullets(d.constraints, n, t)),
            ("## Completed Actions", _actions(d, level)),
            ("## Active State", _state_lines(d, level)),
            ("## In Progress", [_text(d.in_progress, t)]),
            ("## Blocked", _bullets(d.blocked, MAX_BLOCKERS, t + 100, newest=True)),
            ("## Key Decisions", _bullets(d.decisions, n, t, True, f)),
            ("## Resolved Questions", _bullets(d.resolved, n, t + 100, newest=True)),
            ("## Pending User Asks", _bullets(d.pending, max(n, 1), t)),
            ("## Relevant Files", _files(d, level)),
            ("## Remaining Work", _bullets(d.remaining, max(n, 1), t)),
            ("## Critical Context", _critical(d, level, d.critical)),
        ]
    if level.terse:
        blocks = _terse(blocks)
    parts = []
    for heading, lines in blocks:
        parts.append(heading if not lines else heading + "\n" + "\n".join(lines))
    return "\n\n".join(parts)


_COUNTED_ONLY = re.compile(r"^(?:- )?… and \d+ more\b")
_LABEL = re.compile(r"^[A-Z][A-Za-z ]{0,24}:\s*")


def _terse(blocks: list[tuple[str, list[str]]]) -> list[tuple[str, list[str]]]:
    """The last resort for a window with almost no room: only lines that say something.

    Left out: empty sections, the note that the task is unchanged (the request is in the
    head), lines that only count what was left out, lines cut short (a few words of a
    longer text mislead more than they tell), and a line whose text an earlier line already
    carries (a blocker that is also the last failure). The files changed, the last failure
    and the identifiers stay.
    """
    kept: list[tuple[str, list[str]]] = []
    seen: list[str] = []
    for heading, lines in blocks:
        useful = []
        for line in lines:
            body = line.removeprefix("- ").strip()
            if not body or body in (NONE, UNCHANGED_TASK) or _COUNTED_ONLY.match(line):
                continue
            key = _LABEL.sub("", body)
            if key.endswith("…") or not key or any(key in earlier for earlier in seen):
                continue
            seen.append(line)
            useful.append(line)
        if useful:
            kept.append((heading, useful))
    return kept


class ExtractiveSummarizer:
    """Deterministic, offline :class:`~palimpsest.summarizers.Summarizer`.

    ``summarize(request)`` returns the summary body (no prefix) in the layout named by
    ``request.template`` (``"classic"``; anything else gets the handoff layout).
    """

    needs_prompt = False
    """It reads ``request.turns`` itself, so the compressor skips rendering the LLM prompt."""

    def summarize(self, request: SummaryRequest) -> str:
        body = self._summarize(request)
        checked = withhold_planted(body, request)
        # a body with no planted line comes back as it went in: still redact()'s output
        return checked if checked is body else str(checked)

    def _summarize(self, request: SummaryRequest) -> str:
        facts = extract_facts(request.turns, request.readings, request.tail)
        previous = request.previous_summary
        if not previous and facts.summaries:
            previous = facts.summaries[-1]
        draft = build_draft(facts, parse_previous(previous), request.focus_topic, request.goal)
        budget = max(int(request.budget_tokens), 0)
        body = ""
        for level in _LEVELS:
            if level.terse:
                terse = _redacted(_render(draft, level, request.template))
                # only when it is what fits: otherwise every heading, over the budget
                return terse if estimate_tokens_rough(terse) <= budget else body
            body = _render(draft, level, request.template)
            if estimate_tokens_rough(body) > budget * 1.25 and level is not _LEVELS[-2]:
                continue  # clearly too long: skip the redaction pass for this level
            body = _redacted(body)
            if estimate_tokens_rough(body) <= budget:
                return _more_names(draft, level, request.template, body, budget)
        return body
