"""Continuity probes: what a compacted context must still say about the span it replaced.

:func:`span_facts` reads the ORIGINAL span (with :mod:`.spans`, the eval's own parsing) and
the prefix around it: files modified in the span, the newest real user request in it, the
last failing command and its error line (and whether a later step with the same command,
or on the same file, succeeded), and the identifiers the agent used. :func:`score`
checks a compacted result against those facts.

Matching rules, so every figure can be reproduced by hand:

- Text is compared with whitespace runs collapsed to one space.
- A file is named when its path or its basename appears as a word.
- A request is kept when its whole text appears; a request over
  :data:`REQUEST_WHOLE_LIMIT` characters is checked on its first
  :data:`REQUEST_OPENING_CHARS` characters (the summary spec keeps long ones trimmed).
- A failing command is kept when its key (the command's first line, clipped to
  :data:`COMMAND_CHARS`; for an editor action, the edited file's basename) and its error
  line (clipped to :data:`ERROR_CHARS`) both appear.
- Identifiers that already appear in the head are not at risk and are not counted; the
  identifier figure is weighted (an identifier counts once per later assistant message
  that used it), and the plain count is reported beside it.
- A failure whose output has no error text to quote (``ERROR:`` alone, an empty output
  marked as an error) is not a probe; it is counted as ``unprobed_failures``.
- "Kept" looks in the result after the head: the head is never compacted, and SWE-agent
  heads quote demonstration commands that would otherwise match by accident.
- A success is listed as a failure when the summary quotes the first output line of a
  step that succeeded (its first :data:`SUCCESS_LINE_CHARS` characters, when that line
  has at least :data:`SUCCESS_LINE_MIN`) after ``error``/``failed`` on the same line.
- A probe with nothing to check is ``None`` (shown as n/a), never a pass or a fail.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..messages.content import call_name, content_text, tool_calls_of
from .actions import is_shell_action
from .identifiers import identifier_present
from .later_use import later_used_names
from .spans import Step, read_steps, user_requests

__all__ = [
    "COMMAND_CHARS",
    "ERROR_CHARS",
    "REQUEST_OPENING_CHARS",
    "REQUEST_WHOLE_LIMIT",
    "Failure",
    "ProbeScore",
    "SpanFacts",
    "messages_text",
    "score",
    "span_facts",
]

REQUEST_WHOLE_LIMIT = 1_000
REQUEST_OPENING_CHARS = 300
COMMAND_CHARS = 60
ERROR_CHARS = 80
SUCCESS_LINE_MIN = 12
SUCCESS_LINE_CHARS = 50


@dataclass(frozen=True, slots=True)
class Failure:
    """A failing command: what to look for, and whether a later step fixed it."""

    index: int
    command: str
    key: str
    error_line: str
    fixed: bool


@dataclass(frozen=True)
class SpanFacts:
    """What the span holds, read from the original messages."""

    files_modified: tuple[str, ...]
    request: str | None
    last_failure: Failure | None
    last_unresolved: Failure | None
    identifiers: tuple[str, ...]
    """Identifiers of the span that a later assistant message used (:mod:`.later_use`)."""
    identifier_uses: dict[str, int] = field(default_factory=dict)
    """Each identifier's weight: how many later assistant messages used it."""
    unprobed_failures: int = 0
    """Failures with no error text to look for (``ERROR:`` alone): not probes."""
    successes: tuple[str, ...] = ()
    """The first output line of each step of the span that succeeded: a summary that
    quotes one as an error has listed a success as a failure."""

    @property
    def nothing_to_probe(self) -> bool:
        """True when the span holds no file change, request, failure or used identifier."""
        return not (self.files_modified or self.request or self.last_failure or self.identifiers)


@dataclass(frozen=True)
class ProbeScore:
    """One system's result against the facts; ``None`` marks a probe that does not apply."""

    files_named: tuple[int, int] | None
    files_missing: tuple[str, ...]
    request_kept: bool | None
    last_failure_kept: bool | None
    unresolved_failure_kept: bool | None
    identifiers_kept: tuple[int, int] | None
    """Kept and total weight: each identifier counts once per later use."""
    identifiers_missing: tuple[str, ...] = field(default=())
    identifier_names_kept: tuple[int, int] | None = None
    """Kept and total identifiers, each counted once."""
    successes_as_failures: tuple[str, ...] = ()
    """Successful steps' output lines that the summary quotes as an error."""


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _norm_lines(text: str) -> str:
    """``text`` with each line's whitespace runs collapsed, its line breaks kept (a rule
    that says "on the same line" must see where a line ends)."""
    return "\n".join(_norm(line) for line in text.splitlines())


def _flatten(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return "\n".join(_flatten(v) for v in value.values())
    if isinstance(value, list):
        return "\n".join(_flatten(v) for v in value)
    return "" if value is None else str(value)


def messages_text(messages: Sequence[Mapping[str, Any]]) -> str:
    """All text of ``messages``: content, tool names and decoded tool arguments."""
    chunks: list[str] = []
    for message in messages:
        chunks.append(content_text(message.get("content")))
        content = message.get("content")
        if isinstance(content, list):  # tool_use inputs and tool_result bodies
            chunks.extend(
                _flatten(p.get("input") or p.get("content"))
                for p in content
                if isinstance(p, Mapping) and p.get("type") in ("tool_use", "tool_result")
            )
        for call in tool_calls_of(message):
            chunks.append(call_name(call))
            fn = call.get("function") if isinstance(call, Mapping) else None
            raw = fn.get("arguments") if isinstance(fn, Mapping) else None
            try:
                chunks.append(_flatten(json.loads(raw) if isinstance(raw, str) else raw))
            except ValueError:
                chunks.append(str(raw))
    return "\n".join(c for c in chunks if c)


def _basename(path: str) -> str:
    return posixpath.basename(path.rstrip("/")) or path


def _clean_path(path: str) -> str:
    path = path.strip().strip("'\"")
    return path[2:] if path.startswith("./") else path


def _add_path(files: list[str], path: str) -> None:
    """Add ``path`` once: ``x.py`` and ``/repo/x.py`` are one file, the longer form kept."""
    if not path:
        return
    for i, known in enumerate(files):
        if known == path or known.endswith("/" + path):
            return
        if path.endswith("/" + known):
            files[i] = path
            return
    files.append(path)


def _step_key(step: Step) -> str:
    """Same key = same attempt: the edited file for editor actions, else the command line."""
    if step.targets and not is_shell_action(step.action):
        return _basename(_clean_path(step.targets[0]))
    first = step.action.command.strip().split("\n", 1)[0]
    return _norm(first)[:COMMAND_CHARS]


def _failures(steps: Sequence[Step], start: int, end: int) -> list[Failure]:
    found: list[Failure] = []
    for i, step in enumerate(steps):
        if not (start <= step.index < end) or not step.failed or step.outcome is None:
            continue
        key = _step_key(step)
        fixed = any(
            later.outcome is not None and not later.failed and _step_key(later) == key
            for later in steps[i + 1 :]
        )
        found.append(
            Failure(step.index, step.action.command, key, step.outcome.error_line or "", fixed)
        )
    return found


def span_facts(
    messages: Sequence[Mapping[str, Any]],
    start: int,
    end: int,
    head: int | None = None,
    run: Sequence[Mapping[str, Any]] | None = None,
) -> SpanFacts:
    """Facts of the span ``messages[start:end]`` of a prefix; ``head`` defaults to ``start``.

    ``run`` is the whole transcript the prefix was cut from (default: ``messages``): an
    identifier counts when any later assistant message of the run uses it.
    """
    head = start if head is None else head
    steps = read_steps(messages)
    files: list[str] = []
    for step in steps:
        if start <= step.index < end:
            for path in step.writes:
                _add_path(files, _clean_path(path))
    requests = [text for index, text in user_requests(messages) if start <= index < end]
    every = _failures(steps, start, end)
    failures = [f for f in every if f.error_line]
    unresolved = [f for f in failures if not f.fixed]
    head_text = messages_text(messages[:head])
    successes = tuple(
        dict.fromkeys(
            _first_line(step.outcome.text)
            for step in steps
            if start <= step.index < end
            and step.outcome is not None
            and not step.failed
            and len(_first_line(step.outcome.text)) >= SUCCESS_LINE_MIN
        )
    )
    used = [
        u
        for u in later_used_names(run if run is not None else messages, start, end)
        if not identifier_present(u.name, head_text)
    ]
    return SpanFacts(
        files_modified=tuple(files),
        request=requests[-1] if requests else None,
        last_failure=failures[-1] if failures else None,
        last_unresolved=unresolved[-1] if unresolved else None,
        identifiers=tuple(u.name for u in used),
        identifier_uses={u.name: u.uses for u in used},
        unprobed_failures=len(every) - len(failures),
        successes=successes,
    )


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return _norm(line)[:SUCCESS_LINE_CHARS]
    return ""


def _quoted_as_error(line: str, summary: str) -> bool:
    pattern = r"(?i)\b(?:error|errors|failed|failure)\b:?[^\n]{0,80}?" + re.escape(line)
    return re.search(pattern, summary) is not None


def _named(path: str, text: str) -> bool:
    for needle in (path, _basename(path)):
        if re.search(r"(?<![\w.-])" + re.escape(needle) + r"(?![\w-])", text):
            return True
    return False


def _request_kept(request: str, text: str) -> bool:
    needle = _norm(request)
    if len(needle) > REQUEST_WHOLE_LIMIT:
        needle = needle[:REQUEST_OPENING_CHARS]
    return needle in text


def _failure_kept(failure: Failure, text: str) -> bool:
    key = _norm(failure.key)
    error = _norm(failure.error_line)[:ERROR_CHARS]
    return key in text and error in text


def score(facts: SpanFacts, kept_text: str, summary_text: str | None) -> ProbeScore:
    """Score one system: ``kept_text`` is its result after the head; ``summary_text`` its
    summary (``None`` for systems without one, whose files are looked for in ``kept_text``)."""
    flat = _norm(kept_text)
    files_in = summary_text if summary_text is not None else kept_text
    missing = tuple(p for p in facts.files_modified if not _named(p, files_in))
    ids_missing = tuple(n for n in facts.identifiers if not identifier_present(n, kept_text))
    n_files, n_ids = len(facts.files_modified), len(facts.identifiers)
    weight = sum(facts.identifier_uses.get(n, 1) for n in facts.identifiers)
    lost = sum(facts.identifier_uses.get(n, 1) for n in ids_missing)
    return ProbeScore(
        files_named=(n_files - len(missing), n_files) if n_files else None,
        files_missing=missing,
        request_kept=_request_kept(facts.request, flat) if facts.request else None,
        last_failure_kept=_failure_kept(facts.last_failure, flat) if facts.last_failure else None,
        unresolved_failure_kept=(
            _failure_kept(facts.last_unresolved, flat) if facts.last_unresolved else None
        ),
        identifiers_kept=(weight - lost, weight) if n_ids else None,
        identifiers_missing=ids_missing,
        identifier_names_kept=(n_ids - len(ids_missing), n_ids) if n_ids else None,
        successes_as_failures=(
            tuple(x for x in facts.successes if _quoted_as_error(x, _norm_lines(summary_text)))
            if summary_text
            else ()
        ),
    )
