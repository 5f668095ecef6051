"""The state ledger: what the agent did, kept by code, so a compaction cannot lose it.

A summary written by a model may drop a file it edited, forget that the last test run
failed, or answer a question the user never got an answer to. The loop feeds every real
user request, every final answer and every tool call into a :class:`StateLedger`; after a
compaction :meth:`StateLedger.render` is injected verbatim, so these facts survive however
the summary turned out. The summarizer is told (:meth:`StateLedger.summarizer_note`) that
the ledger carries them, so it can spend its budget on reasoning and decisions instead.

What a call did is read with the summarizers' own vocabulary
(:func:`palimpsest.summarizers.actions.classify_call`, which already knows the workspace
tools, other agents' editor tools, ``apply_patch`` and the files shell commands write), so
there is one shell scanner in the package, not two. Everything rendered is redacted.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..messages.markers import LEDGER_HEADER
from ..safety.redact import redact
from ..summarizers.actions import Action, classify_call, clip, is_shell_tool
from ..summarizers.error_lines import last_error_line
from ..summarizers.outcomes import apply_result
from ..summarizers.paths import display_path, resolve_path
from .tools import ToolOutcome

if TYPE_CHECKING:
    from .todo import TodoStore

__all__ = ["LEDGER_HEADER", "Failure", "FileRecord", "StateLedger"]

# First line of the rendered ledger; defined with the reading, which reads a message that
# starts with it as synthetic, never as the user's request (CC-53).

MAX_ASKS = 5
"""Pending user requests kept: the newest ones."""
MAX_ASK_CHARS = 400
MAX_READS_SHOWN = 15
MAX_MODIFIED_SHOWN = 60
MAX_FAILURES = 5
"""Distinct failing commands remembered (the newest); the render shows the first three."""
MAX_FAILURES_SHOWN = 3

_SHELL_NAMES = frozenset({"run_shell", "bash", "shell"})
_EXIT_TRAILER = re.compile(r"(?:^|\n)exit code: (-?\d+)\s*$")
_ERROR_WORDS = re.compile(r"\b[A-Z]\w*(?:Error|Exception)\b|\berror\b|\bERROR\b|\bFAILED\b")


@dataclass
class FileRecord:
    """A file the agent changed: where, its content hash after the call, when, how often."""

    path: str
    sha256: str | None
    turn: int
    edits: int = 1


@dataclass
class Failure:
    """The newest failing call of one kind; ``fixed`` once the same thing later succeeded."""

    command: str
    error: str
    turn: int
    fixed: bool = False
    key: str = ""


class StateLedger:
    """Facts about the session recorded as they happen; see the module docstring."""

    def __init__(self, workdir: Path | None = None) -> None:
        self.workdir = workdir
        self._roots = _roots(workdir)
        self._lock = threading.Lock()
        self._modified: dict[str, FileRecord] = {}
        self._read: dict[str, int] = {}
        self._failures: list[Failure] = []
        self._asks: list[tuple[int, str]] = []
        self._answered: set[int] = set()
        self._background: dict[str, str] = {}

    # --- recording ---

    def record_user(self, text: str, turn: int) -> None:
        """A real user request (not a synthetic message such as a todo snapshot)."""
        if not text.strip():
            return
        with self._lock:
            self._asks = [(t, a) for t, a in self._asks if t != turn]
            self._asks.append((turn, clip(redact(text), MAX_ASK_CHARS)))
            self._asks = self._asks[-MAX_ASKS * 4 :]

    def record_answer(self, turn: int) -> None:
        """Turn ``turn`` ended with a final answer: its request is no longer pending."""
        with self._lock:
            self._answered.add(turn)

    def record_call(
        self, name: str, arguments: Mapping[str, Any], outcome: ToolOutcome, turn: int
    ) -> None:
        """Read what one tool call did to files and whether it failed."""
        action = classify_call(name, arguments, "")
        shell = name.lower() in _SHELL_NAMES or is_shell_tool(name) or action.verb == "RUN"
        code = _exit_trailer(outcome.content) if shell else None
        if shell:
            apply_result(action, outcome.content, exit_code=code)
        if code is not None:
            failed = outcome.is_error or code != 0
        else:
            failed = outcome.is_error or (shell and action.failed)
        cwd = self._cwd(action.cwd)
        with self._lock:
            if not outcome.is_error:
                for raw, _kind in action.writes:
                    self._touch(self._normal(raw, cwd), turn)
            if not failed:
                for raw in action.reads:
                    path = self._normal(raw, cwd)
                    self._read.pop(path, None)
                    self._read[path] = turn
            keys = self._keys(name, arguments, action, cwd)
            if failed:
                shown = _shell_shown(arguments) if shell else None
                shown = shown or _shown(name, action)
                self._fail(keys[0], shown, _error_line(action, outcome), turn)
            else:
                for failure in self._failures:
                    if failure.key in keys:
                        failure.fixed = True

    def start_background(self, key: str, description: str) -> None:
        with self._lock:
            self._background[key] = clip(redact(description), 200)

    def finish_background(self, key: str) -> None:
        with self._lock:
            self._background.pop(key, None)

    # --- reading ---

    def files_modified(self) -> list[str]:
        """Changed files, each once, oldest change first."""
        with self._lock:
            return list(self._modified)

    def modified_records(self) -> list[FileRecord]:
        with self._lock:
            return [FileRecord(**asdict(r)) for r in self._modified.values()]

    def files_read(self) -> list[str]:
        """Files read successfully, each once, oldest read first."""
        with self._lock:
            return list(self._read)

    def last_failure(self) -> Failure | None:
        """The newest unfixed failure, else the newest fixed one, else ``None``."""
        with self._lock:
            ordered = self._ordered_failures()
            return Failure(**asdict(ordered[0])) if ordered else None

    def pending_asks(self) -> list[str]:
        """The newest (up to five) user requests whose turn has not ended with an answer."""
        with self._lock:
            return [a for t, a in self._asks if t not in self._answered][-MAX_ASKS:]

    def background(self) -> dict[str, str]:
        with self._lock:
            return dict(self._background)

    # --- rendering ---

    def render(self, todos: TodoStore | None = None, present: Sequence[str] = ()) -> str | None:
        """The ledger as one message to inject after a compaction; ``None`` when empty.

        ``present`` are the texts still in the context after the compaction: a pending
        request found there verbatim is not repeated (it is the turn's own question)."""
        sections: list[str] = []
        modified = self.modified_records()
        if modified:
            shown = modified[-MAX_MODIFIED_SHOWN:]
            lines = [f"Files modified ({len(modified)}):"]
            if len(modified) > len(shown):
                lines.append(f"- … {len(modified) - len(shown)} earlier files not shown")
            lines += [_file_line(record) for record in shown]
            sections.append("\n".join(lines))
        changed = {r.path for r in modified}
        read = [p for p in self.files_read() if p not in changed]
        if read:
            shown_reads = read[-MAX_READS_SHOWN:]
            more = f", newest {len(shown_reads)} shown" if len(read) > len(shown_reads) else ""
            sections.append(
                "\n".join([f"Files read ({len(read)}{more}):", *(f"- {p}" for p in shown_reads)])
            )
        with self._lock:
            failures = self._ordered_failures()[:MAX_FAILURES_SHOWN]
        if failures:
            lines = ["Last failure:" if len(failures) == 1 else "Recent failures (unfixed first):"]
            lines += [_failure_line(f) for f in failures]
            sections.append("\n".join(lines))
        seen = "\n".join(present)
        asks = [a for a in self.pending_asks() if a.rstrip("…").strip()[:200] not in seen]
        if asks:
            sections.append("\n".join(["Pending user requests:", *(f"- {a}" for a in asks)]))
        snapshot = todos.format_for_injection() if todos is not None else None
        if snapshot:
            sections.append("Active tasks:\n" + snapshot.split("\n", 1)[1])
        work = self.background()
        if work:
            sections.append(
                "\n".join(["Background work in flight:", *(f"- {k}: {d}" for k, d in work.items())])
            )
        if not sections:
            return None
        return redact("\n\n".join([LEDGER_HEADER, *sections]))

    def summarizer_note(self) -> str:
        """One line for the summarizer: what it need not repeat."""
        return (
            "After compaction the agent re-injects a state ledger listing the files modified "
            "and read, the last failed command, pending user requests, active tasks and "
            "background work; do not repeat those lists, summarize reasoning and decisions."
        )

    # --- persistence ---

    def to_dict(self) -> dict[str, Any]:
        with self._lock:
            return {
                "version": 1,
                "modified": [asdict(r) for r in self._modified.values()],
                "read": [[p, t] for p, t in self._read.items()],
                "failures": [asdict(f) for f in self._failures],
                "asks": [[t, a] for t, a in self._asks],
                "answered": sorted(self._answered),
                "background": dict(self._background),
            }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], workdir: Path | None = None) -> StateLedger:
        """A ledger saved by :meth:`to_dict`; malformed data is a ``ValueError``."""
        ledger = cls(workdir)
        try:
            if data.get("version", 1) != 1:
                raise ValueError(f"unsupported ledger version {data.get('version')!r}")
            for item in data.get("modified", []):
                record = FileRecord(**item)
                ledger._modified[record.path] = record
            ledger._read = {str(p): int(t) for p, t in data.get("read", [])}
            ledger._failures = [Failure(**item) for item in data.get("failures", [])]
            ledger._asks = [(int(t), str(a)) for t, a in data.get("asks", [])]
            ledger._answered = {int(t) for t in data.get("answered", [])}
            ledger._background = {str(k): str(v) for k, v in data.get("background", {}).items()}
        except (TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"not a saved state ledger: {exc}") from exc
        return ledger

    # --- helpers (callers hold the lock where state changes) ---

    def _cwd(self, cwd: str | None) -> str | None:
        base = str(self._roots[0]) if self._roots else None
        if cwd is None:
            return base
        return resolve_path(cwd, base)

    def _normal(self, path: str, cwd: str | None) -> str:
        absolute = resolve_path(path, cwd)
        for root in self._roots:
            shown = display_path(absolute, str(root))
            if shown != absolute:
                return shown
        return absolute

    def _touch(self, path: str, turn: int) -> None:
        previous = self._modified.pop(path, None)
        edits = previous.edits + 1 if previous else 1
        self._modified[path] = FileRecord(path, self._hash(path), turn, edits)

    def _hash(self, path: str) -> str | None:
        target = Path(path)
        if not target.is_absolute():
            if not self._roots:
                return None
            target = self._roots[0] / target
        try:
            digest = hashlib.sha256()
            with target.open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
        except OSError:  # deleted, a directory, unreadable: no hash, never a fake one
            return None
        return digest.hexdigest()

    def _keys(
        self, name: str, arguments: Mapping[str, Any], action: Action, cwd: str | None
    ) -> list[str]:
        """What a later success must match to fix this call's failure (first key = own)."""
        files = [f"FILE {self._normal(p, cwd)}" for p, _ in action.writes]
        if action.verb == "RUN":
            return [action.key, *files]
        if action.verb in ("WRITE", "EDIT") and files:
            return files
        shown = ",".join(f"{k}={arguments[k]!r}" for k in sorted(arguments))
        return [f"CALL {name} {shown[:300]}", *files]

    def _fail(self, key: str, command: str, error: str, turn: int) -> None:
        self._failures = [f for f in self._failures if f.key != key]
        self._failures.append(Failure(redact(command), redact(error), turn, False, key))
        self._failures = self._failures[-MAX_FAILURES:]

    def _ordered_failures(self) -> list[Failure]:
        newest_first = list(reversed(self._failures))
        return [f for f in newest_first if not f.fixed] + [f for f in newest_first if f.fixed]


def _roots(workdir: Path | None) -> list[Path]:
    if workdir is None:
        return []
    roots = [workdir.absolute()]
    resolved = workdir.resolve()
    if resolved != roots[0]:
        roots.append(resolved)
    return roots


def _exit_trailer(content: str) -> int | None:
    """The workspace shell's last line, ``exit code: N``."""
    match = _EXIT_TRAILER.search(content[-200:])
    return int(match.group(1)) if match else None


def _shell_shown(arguments: Mapping[str, Any]) -> str | None:
    """The command line of a shell call, as the failure names it."""
    value = next((arguments[k] for k in ("command", "cmd", "script") if k in arguments), None)
    if isinstance(value, list):
        value = value[-1] if len(value) >= 3 and value[1].startswith("-") else " ".join(value)
    if not isinstance(value, str) or not value.strip():
        return None
    return f"`{clip(value.strip().splitlines()[0], 120)}`"


def _shown(name: str, action: Action) -> str:
    if action.verb == "RUN":
        return action.target
    return f"{name} {action.target}"


def _error_line(action: Action, outcome: ToolOutcome) -> str:
    """The most informative line: a traceback's last line, the last line in an error's form
    (``Error: …``, ``x failed with: TypeError …``), an error word, else the first."""
    if action.error:
        return action.error
    lines = [line.strip() for line in outcome.content.splitlines() if line.strip()]
    lines = [line for line in lines if not _EXIT_TRAILER.search("\n" + line)]
    printed = last_error_line("\n".join(lines))
    if printed is not None and "Traceback (most recent call last):" not in lines:
        return clip(printed, 240)
    if "Traceback (most recent call last):" in lines:
        after = lines[lines.index("Traceback (most recent call last):") + 1 :]
        errors = [line for line in after if _ERROR_WORDS.search(line)]
        if errors:
            return clip(errors[-1], 240)
    for line in lines:
        if _ERROR_WORDS.search(line):
            return clip(line, 240)
    return clip(lines[0], 240) if lines else "(no output)"


def _file_line(record: FileRecord) -> str:
    times = "1 edit" if record.edits == 1 else f"{record.edits} edits"
    state = f"sha256 {record.sha256[:12]}" if record.sha256 else "not on disk"
    return f"- {record.path} ({times}, last turn {record.turn}, {state})"


def _failure_line(failure: Failure) -> str:
    state = "fixed since" if failure.fixed else "NOT fixed"
    return f"- {failure.command} (turn {failure.turn}, {state}): {failure.error}"
