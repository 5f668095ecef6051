"""The facts of one span of turns that a handoff summary (and its verifier) relies on.

:func:`extract_facts` walks the span once (see :mod:`.walk`) on top of the one reading of
the transcript (:mod:`palimpsest.messages.reading`): which messages are real user
requests, which assistant messages act and how, which messages carry an action's output.
Nothing here guesses what a message is.

Three facts are also the checklist a model-written summary is held to (verified
compaction), so they are exposed as documented accessors:

* :attr:`SpanFacts.newest_request`: the newest real user request in the span (verbatim);
* :meth:`SpanFacts.modified_files`: the files created, modified or deleted, each once,
  relative to the run's root where it is known;
* :meth:`SpanFacts.unresolved_error`: the newest failing command or edit that no later
  step fixed, with its error line.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..messages.reading import MessageReading, read_transcript
from .actions import Action
from .identifiers import IdentifierTally
from .later_use import NameUse, tail_uses
from .paths import display_path, resolve_path, tail_owner
from .shell import parse_once

__all__ = ["Failure", "FileNote", "Question", "SpanFacts", "extract_facts"]

MAX_MENTIONS = 40
"""Files named only in prose that are listed; changed files are never capped."""
MAX_CRITICAL = 60


@dataclass
class FileNote:
    """What happened to one path; the strongest note wins (created > modified > read)."""

    path: str
    note: str
    edits: int = 0

    RANK: ClassVar[dict[str, int]] = {
        "mentioned": 0,
        "read": 1,
        "modified": 2,
        "deleted": 2,
        "created": 3,
    }
    WRITES: ClassVar[tuple[str, ...]] = ("modified", "created", "deleted")

    @property
    def written(self) -> bool:
        return self.note in self.WRITES

    def render(self) -> str:
        extra = f", edited {self.edits}×" if self.edits > 1 else ""
        return f"{self.path} — {self.note}{extra}"

    def update(self, note: str) -> None:
        """Apply a later note to this path."""
        if self.written and note in self.WRITES:
            # a deletion, or a re-creation after one, changes the note; otherwise the first
            # change decides: a file created here stays "created", an existing one "modified"
            if note == "deleted" or self.note == "deleted":
                self.note = note
        elif self.RANK[note] > self.RANK[self.note]:
            # a file that was read here already existed: writing it modifies it
            self.note = "modified" if note == "created" and self.note == "read" else note
        if note in ("modified", "created"):
            self.edits += 1

    def absorb(self, other: FileNote) -> None:
        """Merge the notes of another name for the same file (seen after this one)."""
        edits = self.edits + other.edits
        self.update(other.note)
        self.edits = edits


@dataclass
class Question:
    text: str
    answer: str | None = None


@dataclass
class Failure:
    """A command or edit that failed: what ran, its error line, and what fixed it later."""

    command: str
    error: str
    key: str
    fixed_by: str | None = None

    def render(self) -> str:
        fixed = f"; fixed later by {self.fixed_by}" if self.fixed_by else "; not fixed yet"
        return f"{self.command} — {self.error}{fixed}"


@dataclass
class SpanFacts:
    """Everything extracted from one span of turns, in the order it was seen."""

    actions: list[Action] = field(default_factory=list)
    files: dict[str, FileNote] = field(default_factory=dict)
    first_request: str | None = None
    newest_request: str | None = None
    """The newest real user request in the span, verbatim; ``None`` when there is none."""
    user_asks: int = 0
    constraints: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    blockers: dict[str, str] = field(default_factory=dict)
    failures: list[Failure] = field(default_factory=list)
    approaches: list[str] = field(default_factory=list)
    identifiers: IdentifierTally = field(default_factory=IdentifierTally)
    name_use: NameUse | None = None
    """Names tools printed and their later use (set by the walk; :mod:`.later_use`)."""
    tail_uses: Counter[str] = field(default_factory=Counter)
    """Words of the kept tail's assistant messages: how many messages use each."""
    critical: dict[str, None] = field(default_factory=dict)
    cwd: str | None = None
    root: str | None = None
    tests: str | None = None  # "8/10 passing (last run: `pytest`)"
    last_assistant: str | None = None
    progress: str | None = None  # the newest assistant text after the newest user message
    ends_with_work: bool = False
    summaries: list[str] = field(default_factory=list)
    mentions: int = 0

    # --- the verifier's checklist ---------------------------------------------------------

    def modified_files(self) -> list[str]:
        """Paths created, modified or deleted in the span, each once, in first-seen order."""
        return [note.path for note in self.files.values() if note.written]

    def unresolved_error(self) -> Failure | None:
        """The newest failure that no later step fixed, or ``None``."""
        for failure in reversed(self.failures):
            if failure.fixed_by is None:
                return failure
        return None

    def last_failure(self) -> Failure | None:
        """The newest failure, fixed or not."""
        return self.failures[-1] if self.failures else None

    def key_names(self, focus_words: list[str] | None = None, limit: int = 100) -> list[str]:
        """The span's identifiers, those used later first (:meth:`NameUse.ranked`)."""
        if self.name_use is None:
            return self.identifiers.ranked(focus_words, limit=limit)
        return self.name_use.ranked(self.tail_uses, focus_words, limit=limit)

    # --- collecting -----------------------------------------------------------------------

    def note_file(self, path: str, note: str) -> None:
        """Record ``note`` for ``path``, resolved against the current working directory."""
        path = resolve_path(path, self.cwd)
        if not path or len(path) > 300 or path in (".", "/"):
            return
        known = self.files.get(path)
        if known is None:
            if note == "mentioned":
                if self.mentions >= MAX_MENTIONS:
                    return
                self.mentions += 1
            self.files[path] = known = FileNote(path, "mentioned" if note == "mentioned" else note)
            if note in ("modified", "created"):
                known.edits = 1
            return
        known.update(note)

    def add_critical(self, item: str) -> None:
        if len(self.critical) < MAX_CRITICAL or item in self.critical:
            self.critical.pop(item, None)
            self.critical[item] = None

    def set_cwd(self, cwd: str) -> None:
        """Change directory (a relative ``cd`` resolves against the current one)."""
        resolved = resolve_path(cwd, self.cwd) if cwd != "~" else cwd
        self.cwd = resolved or self.cwd
        if self.root is None and self.cwd and self.cwd.startswith("/"):
            self.root = self.cwd

    def finish(self) -> None:
        """Show paths relative to the root and give each file one entry."""
        shown: dict[str, FileNote] = {}
        for note in self.files.values():
            path = display_path(note.path, self.root)
            known = shown.get(path)
            if known is None:
                note.path = path
                shown[path] = note
            else:
                known.absorb(note)
        by_name: dict[str, list[str]] = {}
        for path in shown:
            by_name.setdefault(path.rsplit("/", 1)[-1], []).append(path)
        for path in list(shown):
            owner = tail_owner(path, by_name[path.rsplit("/", 1)[-1]])
            if owner is not None and owner in shown:
                shown[owner].absorb(shown.pop(path))
        self.files = shown
        if self.root:
            prefix = self.root.rstrip("/") + "/"
            for action in self.actions:
                # file actions name their path; commands are quoted as the agent wrote them
                if action.target.startswith(prefix):
                    action.target = action.target.replace(prefix, "")
                    action.writes = [(display_path(p, self.root), n) for p, n in action.writes]
            for key, blocker in self.blockers.items():
                self.blockers[key] = _unrooted(blocker, prefix)
            for failure in self.failures:
                failure.command = _unrooted(failure.command, prefix)
                if failure.fixed_by:
                    failure.fixed_by = _unrooted(failure.fixed_by, prefix)

    def shown_path(self, path: str) -> str:
        """``path`` as the summary shows it: resolved, then relative to the root."""
        return display_path(resolve_path(path, self.cwd), self.root)


def _unrooted(line: str, prefix: str) -> str:
    """``VERB /root/path …`` as ``VERB path …``; a command line stays as the agent wrote it."""
    verb, _, rest = line.partition(" ")
    if verb == "RUN" or not rest.startswith(prefix):
        return line
    return f"{verb} {rest[len(prefix) :]}"


def extract_facts(
    turns: Sequence[Any],
    readings: Sequence[MessageReading] | None = None,
    tail: Sequence[Any] | None = None,
) -> SpanFacts:
    """Walk ``turns`` once (oldest first) and return the collected :class:`SpanFacts`.

    ``readings`` is :func:`~palimpsest.messages.reading.read_transcript` of ``turns`` when
    the caller already has it (one reading per turn; otherwise the turns are read here).
    ``tail`` is the messages kept after ``turns``, when known: the names its assistant
    messages use rank first among the span's identifiers.
    """
    from .text_actions import recover_text_actions
    from .walk import Walker  # the walk imports this module's types

    if readings is None or len(readings) != len(turns):
        readings = read_transcript(turns)
    readings = recover_text_actions(readings)
    with parse_once():  # a command the agent ran many times is parsed once per walk
        facts = Walker(turns).run(readings)
    facts.tail_uses = tail_uses(tail)
    return facts
