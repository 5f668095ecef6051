"""The draft of an extractive summary: what it will say, before it is cut to a budget.

:mod:`.extractive` builds one :class:`Draft` per summary from the span's facts
(:mod:`.facts`) and the previous summary (:mod:`.previous`), merged: actions keep their
numbers, files, constraints and decisions carry over, task and state are refreshed, the
focus topic's items come first. Rendering it at a level of detail and fitting the budget
is the summarizer's own work; this module only decides the content.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .actions import Action, clip
from .facts import SpanFacts
from .previous import PreviousSummary, is_written_note

__all__ = ["AWAITING", "MAX_BLOCKERS", "MAX_NAMES", "NAMES_LABEL", "Draft", "Entry", "build_draft"]

MAX_BLOCKERS = 5
MAX_NAMES = 400  # identifiers a summary may list when the budget has room
NAMES_LABEL = "Identifiers worked with:"
AWAITING = "Last command:"


@dataclass
class Entry:
    """One numbered Completed Actions line, from this span or carried over."""

    raw: str | None = None
    action: Action | None = None
    informative: bool = False
    written: bool = False
    focused: bool = False  # mentions the focus topic: kept first, quoted at more length

    def render(self, limit: int) -> str:
        if self.action is None:
            return clip(self.raw or "", max(limit, 160))
        a = self.action
        target = a.target if a.writes else clip(a.target, max(limit // 2, 60))
        return f"{a.verb} {target} — {clip(a.outcome, limit)} [tool: {a.tool}]"


@dataclass
class Draft:
    """Merged content of previous summary and new span, not yet cut to a level."""

    ask: str | None = None
    prev_task: str | None = None
    goal: str | None = None
    focus: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    last_failure: str | None = None
    constraints: list[str] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)
    collapsed: list[str] = field(default_factory=list)
    state: list[str] = field(default_factory=list)
    tests: str | None = None
    awaiting: str | None = None  # the command whose output opens the kept tail
    in_progress: str | None = None
    blocked: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    resolved: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    remaining: list[str] = field(default_factory=list)
    critical: list[str] = field(default_factory=list)


def _dedup(items: list[str]) -> list[str]:
    return list(dict.fromkeys(i for i in items if i))


def _focus_words(focus: str | None) -> list[str]:
    words = [w.strip(".,;:!?'\"`()").lower() for w in (focus or "").split()]
    return [w for w in words if len(w) >= 3]


def _focus_first(items: list[str], words: list[str]) -> list[str]:
    """Items that mention the focus topic first, each group in its own order."""
    if not words:
        return items
    hits = [i for i in items if any(w in i.lower() for w in words)]
    chosen = set(hits)
    return hits + [i for i in items if i not in chosen]


def build_draft(
    facts: SpanFacts, prev: PreviousSummary, focus: str | None, goal: str | None
) -> Draft:
    d = Draft()
    d.ask = facts.newest_request
    d.prev_task = prev.text("Active Task")
    d.goal = prev.text("Goal") or goal or facts.first_request
    d.constraints = _dedup(prev.items("Constraints & Preferences") + facts.constraints)
    focus_words = d.focus = _focus_words(focus)
    d.names = facts.key_names(focus_words, limit=MAX_NAMES)
    _carry_names(d, prev)
    for raw in prev.actions:
        low = raw.lower()
        hit = any(w in low for w in focus_words)
        d.entries.append(
            Entry(raw=raw, written=low.startswith(("edit", "write", "delete")), informative=(
                low.startswith(("edit", "write", "delete")) or "error" in low or "failed" in low
                or hit
            ), focused=hit)
        )  # fmt: skip
    d.collapsed = list(prev.collapsed)
    prev_progress = prev.text("In Progress")
    done_actions = [a for a in facts.actions if not a.failed and a.outcome != "no result in span"]
    if prev_progress and done_actions and not facts.blockers:
        d.entries.append(Entry(raw=f"FINISH {clip(prev_progress, 200)} — done in later turns "
                                "[tool: none]"))  # fmt: skip
    for action in facts.actions:
        hit = any(w in action.target.lower() for w in focus_words)
        d.entries.append(
            Entry(
                action=action,
                informative=action.informative or hit,
                written=bool(action.writes),
                focused=hit,
            )
        )
    _state(d, facts, prev)
    if facts.ends_with_work and facts.progress:
        d.in_progress = facts.progress
    elif facts.ends_with_work and facts.actions:
        last = facts.actions[-1]
        d.in_progress = f"{last.verb} {last.target} — {last.outcome}"
    elif not facts.actions and facts.last_assistant is None:
        d.in_progress = prev_progress
    _blocked(d, facts, prev)
    tried = [f"Tried and abandoned: {a}" for a in facts.approaches]
    d.decisions = _focus_first(
        _dedup(prev.items("Key Decisions") + facts.decisions + tried), focus_words
    )
    failure = facts.last_failure()
    if failure is not None:
        d.last_failure = f"Last failure: {failure.render()}"
    _questions(d, facts, prev)
    for path, note in prev.files:
        d.files[path] = note
    for entry in facts.files.values():
        old = d.files.get(entry.path)
        if old is None or not (is_written_note(old) and not entry.written):
            d.files[entry.path] = entry.render().split(" — ", 1)[1]
    d.remaining = [f"Unanswered user ask: {q}" for q in d.pending]
    d.remaining += [f"Still failing: {b}" for b in d.blocked]
    if d.in_progress:
        d.remaining.append(f"Work under way when compacted: {clip(d.in_progress, 200)}")
    if not d.remaining and not facts.actions:
        d.remaining = prev.items("Remaining Work")
    carried = [i for i in prev.items("Critical Context") if not i.startswith(NAMES_LABEL)]
    d.critical = _focus_first(_dedup(carried + prev.extra + list(facts.critical)), focus_words)
    if focus_words:
        d.files = {p: d.files[p] for p in _focus_first(list(d.files), focus_words)}
    return d


def _state(d: Draft, facts: SpanFacts, prev: PreviousSummary) -> None:
    if facts.cwd:
        d.state.append(f"Working directory: {facts.cwd}")
    for note in facts.files.values():
        if note.written:
            d.state.append(f"{note.note.capitalize()}: {note.path}" + (
                f" (edited {note.edits}×)" if note.edits > 1 else ""))  # fmt: skip
    if facts.tests is not None:
        d.tests = f"Tests: {facts.tests}"
    last = facts.actions[-1] if facts.actions else None
    if last is not None and last.outcome == "no result in span" and not last.writes:
        d.awaiting = f"{AWAITING} {last.verb} {clip(last.target, 300)} (output after this summary)"
    if not d.state and d.tests is None:
        d.state = prev.items("Active State")


def _blocked(d: Draft, facts: SpanFacts, prev: PreviousSummary) -> None:
    succeeded = {
        a.target for a in facts.actions if not a.failed and a.outcome != "no result in span"
    }
    kept = [b for b in prev.items("Blocked") if not any(t in b for t in succeeded if len(t) > 4)]
    d.blocked = _dedup(kept + list(facts.blockers.values()))[-MAX_BLOCKERS:]


def _questions(d: Draft, facts: SpanFacts, prev: PreviousSummary) -> None:
    d.resolved = prev.items("Resolved Questions")
    for item in prev.items("Pending User Asks"):
        if facts.last_assistant:
            d.resolved.append(f"{item} — answered later: {clip(facts.last_assistant, 200)}")
        else:
            d.pending.append(item)
    for question in facts.questions:
        if question.answer:
            d.resolved.append(f"Q: '{question.text}' — A: {question.answer}")
        else:
            d.pending.append(f"'{question.text}'")
    d.resolved = _dedup(d.resolved)
    d.pending = _dedup(d.pending)


def _carry_names(d: Draft, prev: PreviousSummary) -> None:
    """An update keeps the earlier summary's identifiers (after the span's own), once."""
    for item in prev.items("Critical Context"):
        if item.startswith(NAMES_LABEL):
            names = re.findall(r"`([^`]+)`", item)
            known = set(d.names)
            d.names += [n for n in names if n not in known][: max(MAX_NAMES - len(d.names), 0)]
