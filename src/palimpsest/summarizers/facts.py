"""One pass over the turns to summarize, collecting the facts a handoff summary needs.

The walk is linear and every message costs bounded work: user and assistant texts are read
up to a few KB, tool outputs through the windows of :mod:`.outcomes`, and every collection
is capped, so ten thousand turns of 20 KB tool output stay cheap.

Text-action agents (SWE-agent, mini-swe-agent) have no ``tool_calls``: the command sits in a
fenced block of the assistant's text and its output comes back as the next *user* message.
Such observations are recognised and never mistaken for the user's requests.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..compaction.markers import (
    SUMMARY_FLAG,
    is_compaction_summary_message,
    split_summary_content,
)
from ..messages.content import (
    call_arguments,
    call_id,
    call_name,
    content_text,
    role_of,
    tool_calls_of,
)
from .actions import Action, classify_call, classify_text_action, clip
from .outcomes import apply_result

__all__ = ["FileNote", "Question", "SpanFacts", "extract_facts"]

TEXT_SCAN = 4_000
"""Characters of a user or assistant message scanned for constraints, questions, decisions."""
OUTPUT_SCAN = 1_000
"""Characters at each end of a tool output scanned for path mentions and values."""
SCANNED_OUTPUTS = 400
"""Only the newest this many messages are scanned for mentions and values: the most
recent ones matter most, and the scan is the costliest per-message work."""

MAX_CONSTRAINTS = 12
MAX_DECISIONS = 10
MAX_CRITICAL = 60
MAX_MENTIONS = 40

# A sentence ends at . ! or ? followed by whitespace; "3.11" or "e.g." inside stays whole.
_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+(?=[^\s.!?])[^.!?\n]*)*[.!?]*")
_CONSTRAINT = re.compile(
    r"\b(must|never|always|don't|do not|dont|prefer|please use|should|avoid|make sure|only use)\b",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"\b(decided|instead of|because|I'll use|I will use|we'll use|rather than|"
    r"chose|choose to|opted|going with|switch(?:ed|ing)? to|the fix is|root cause)\b",
    re.IGNORECASE,
)
_DECISION_HINTS = (
    "decided", "instead of", "because", "i'll use", "i will use", "we'll use", "rather than",
    "chose", "choose to", "opted", "going with", "switch", "the fix is", "root cause",
)  # fmt: skip
_ONGOING = re.compile(
    r"\b(let me|let's|I'll|I will|now|next|going to|working on|trying|need to|continue)\b",
    re.IGNORECASE,
)
_FENCED = re.compile(r"```.*?(?:```|$)", re.S)
_TEST_COMMAND = re.compile(
    r"\b(?:pytest|unittest|jest|vitest|mocha|tox|nox|go test|cargo test|npm test|npm run test|yarn test|make test)\b"
)
_OBSERVATION_MARKS = ("<returncode>", "(Current directory:", "bash-$", "///PROCESS-DONE")
_MENTION = re.compile(
    r"(?<![\w/.:-])((?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.-]*\w|[\w-]+(?:\.[\w-]+)*\.(?:py|pyi|js|jsx|"
    r"ts|tsx|json|ya?ml|toml|md|rst|txt|cfg|ini|sh|go|rs|java|kt|c|h|cc|cpp|hpp|rb|php|html|"
    r"css|scss|sql|xml|csv|ipynb|lock|pl|cgi|env|conf|gradle|swift|vue|svelte))(?![\w/])"
)
_PORT = re.compile(
    r"\b(?:localhost|127\.0\.0\.1|0\.0\.0\.0)(?::(\d{2,5}))\b|\bport[ :=]+(\d{2,5})\b", re.I
)
_PORT_HINTS = ("localhost", "127.0.0.1", "0.0.0.0", "port")
_COMMIT = re.compile(r"^\[([\w./-]+) ([0-9a-f]{7,40})\]", re.M)
_URL = re.compile(r"https?://[^\s\"'<>)\]`]+")
_VERSION = re.compile(r"\b(?:version|v)\s?(\d+\.\d+(?:\.\d+)+)\b|==(\d+\.\d+(?:\.\d+)*)\b", re.I)


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


@dataclass
class Question:
    text: str
    answer: str | None = None


@dataclass
class SpanFacts:
    """Everything extracted from one span of turns, in the order it was seen."""

    actions: list[Action] = field(default_factory=list)
    files: dict[str, FileNote] = field(default_factory=dict)
    first_ask: str | None = None
    last_ask: str | None = None
    user_asks: int = 0
    constraints: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    blockers: dict[str, str] = field(default_factory=dict)
    critical: dict[str, None] = field(default_factory=dict)
    cwd: str | None = None
    tests: str | None = None  # "8/10 passing (last run: `pytest`)"
    last_assistant: str | None = None
    progress: str | None = None  # the newest assistant text after the newest user message
    ends_with_work: bool = False
    summaries: list[str] = field(default_factory=list)
    mentions: int = 0

    def note_file(self, path: str, note: str) -> None:
        path = path.strip().strip("'\"`").rstrip(".,:;")
        if not path or len(path) > 300:
            return
        known = self.files.get(path)
        if known is None:
            if note == "mentioned":
                if self.mentions >= MAX_MENTIONS:
                    return
                self.mentions += 1
            known = self.files[path] = FileNote(path, note)
        elif known.written and note in FileNote.WRITES:
            # a deletion, or a re-creation after one, changes the note; otherwise the first
            # change decides: a file created here stays "created", an existing one "modified"
            if note == "deleted" or known.note == "deleted":
                known.note = note
        elif FileNote.RANK[note] > FileNote.RANK[known.note]:
            # a file that was read here already existed: writing it modifies it
            known.note = "modified" if note == "created" and known.note == "read" else note
        if note in ("modified", "created"):
            known.edits += 1

    def add_critical(self, item: str) -> None:
        if len(self.critical) < MAX_CRITICAL or item in self.critical:
            self.critical.pop(item, None)
            self.critical[item] = None


def _sentences(text: str, pattern: re.Pattern[str]) -> list[str]:
    found = []
    for match in _SENTENCE.finditer(text[:TEXT_SCAN]):
        sentence = match.group(0).strip()
        if len(sentence) > 8 and pattern.search(sentence):
            found.append(clip(sentence, 220))
    return found


def _add_unique(items: list[str], new: list[str], cap: int) -> None:
    for item in new:
        if len(items) >= cap:
            return
        if item not in items:
            items.append(item)


def _is_observation(text: str) -> bool:
    head, tail = text[:200], text[-200:]
    return any(mark in head or mark in tail for mark in _OBSERVATION_MARKS)


class _Walker:
    """Holds the walk's state: pending tool calls, the open file, the current directory."""

    def __init__(self) -> None:
        self.facts = SpanFacts()
        self.pending: dict[str, list[Action]] = {}
        # calls still waiting for a result, oldest first (a dict: O(1) removal by identity)
        self.unmatched: dict[int, Action] = {}
        self.open_file: str | None = None
        self.observation_for: Action | None = None
        self.text_actions = True
        self.scan = True
        self.open_questions: list[Question] = []

    def run(self, turns: Sequence[Any]) -> SpanFacts:
        # Fenced commands are actions only for agents without native tool calls; elsewhere
        # a ```bash block is an example shown to the user.
        self.text_actions = not any(
            isinstance(m, Mapping) and (m.get("tool_calls") or m.get("role") == "tool")
            for m in turns
        )
        scan_from = len(turns) - SCANNED_OUTPUTS
        for index, message in enumerate(turns):
            if type(message) is not dict and not isinstance(message, Mapping):
                continue
            self.scan = index >= scan_from
            role = role_of(message)
            if role == "assistant":
                self._assistant(message, turns, index)
            elif role == "tool":
                self._tool(message)
            elif role == "user":
                self._user(message)
        return self.facts

    # --- assistant ----------------------------------------------------------------------

    def _assistant(self, message: Mapping[str, Any], turns: Sequence[Any], index: int) -> None:
        text = content_text(message.get("content"))
        if _maybe_summary(message, text) and is_compaction_summary_message(message):
            body, original = split_summary_content(message)
            self.facts.summaries.append(body)
            # a summary merged into a message keeps that message's own text and calls
            text = content_text(original) if original is not None else ""
        calls = tool_calls_of(message)
        self.observation_for = None
        for call in calls:
            name = call_name(call)
            raw = call_arguments(call)
            action = classify_call(name, _parse(raw), raw, self.open_file)
            self._record(action)
            self.pending.setdefault(call_id(call), []).append(action)
            self.unmatched[id(action)] = action
        if self.text_actions and not calls and text and index + 1 < len(turns):
            following = turns[index + 1]
            if isinstance(following, Mapping) and role_of(following) == "user":
                text_action = classify_text_action(text, self.open_file)
                if text_action is not None:
                    self._record(text_action)
                    self.observation_for = text_action
        if text.strip():
            self._assistant_text(text, bool(calls) or self.observation_for is not None)
        elif calls:
            self.facts.ends_with_work = True
            self.facts.progress = None

    def _assistant_text(self, text: str, acting: bool) -> None:
        facts = self.facts
        # Code blocks are actions or examples, not prose to quote back.
        text = _FENCED.sub(" ", text[:TEXT_SCAN]).strip() or text[:TEXT_SCAN]
        facts.last_assistant = facts.progress = text
        facts.ends_with_work = acting or _ONGOING.search(text[:600]) is not None
        lower = text.lower()
        if any(hint in lower for hint in _DECISION_HINTS):
            # keep the newest decisions: later ones usually supersede earlier ones
            for sentence in _sentences(text, _DECISION):
                if sentence not in facts.decisions:
                    facts.decisions.append(sentence)
            del facts.decisions[:-MAX_DECISIONS]
        if self.open_questions:
            answer = _first_sentence(text)
            for question in self.open_questions:
                question.answer = answer
            self.open_questions = []

    def _record(self, action: Action) -> None:
        facts = self.facts
        facts.actions.append(action)
        for path, note in action.writes:
            facts.note_file(path, note)
            if action.verb in ("EDIT", "WRITE") and note != "deleted":
                self.open_file = path
        for path in action.reads:
            facts.note_file(path, "read")
            self.open_file = path if action.verb == "READ" else self.open_file
        if action.cwd:
            facts.cwd = action.cwd
        if action.verb == "RUN" and "http" in action.target:
            for url in _URL.findall(action.target[:2_000])[:3]:
                facts.add_critical(f"URL used: {url}")

    # --- results ------------------------------------------------------------------------

    def _tool(self, message: Mapping[str, Any]) -> None:
        queue = self.pending.get(str(message.get("tool_call_id") or ""))
        action = queue.pop(0) if queue else next(iter(self.unmatched.values()), None)
        if action is None:
            return
        self.unmatched.pop(id(action), None)
        self._result(action, content_text(message.get("content")))

    def _result(self, action: Action, text: str) -> None:
        facts = self.facts
        open_file, cwd = apply_result(action, text)
        if open_file:
            self.open_file = open_file
            if action.verb in ("EDIT", "WRITE") and not action.writes and not action.failed:
                action.writes.append(
                    (open_file, "modified" if action.verb == "EDIT" else "created")
                )
                facts.note_file(open_file, action.writes[-1][1])
                if action.target == "(open file)":
                    action.target = open_file
        if cwd and cwd != "n/a":
            facts.cwd = cwd
        key = action.key
        if action.failed:
            reason = action.error or action.outcome
            facts.blockers.pop(key, None)
            facts.blockers[key] = f"{action.verb} {action.target} — {reason}"
            if action.error:
                facts.add_critical(f"Error: {action.error}")
            if action.exit_code not in (None, 0):
                facts.add_critical(f"exit {action.exit_code} from {action.target}")
        else:
            facts.blockers.pop(key, None)
        if action.tests is not None:
            passed, bad = action.tests
            facts.tests = f"{passed}/{passed + bad} passing (last run: {action.target})"
        elif action.verb == "RUN" and action.failed and _TEST_COMMAND.search(action.target):
            facts.tests = f"last test run failed ({action.outcome}; {action.target})"
        if self.scan:
            self._scan_output(text)

    def _scan_output(self, text: str) -> None:
        facts = self.facts
        edges = (
            text
            if len(text) <= 2 * OUTPUT_SCAN
            else text[:OUTPUT_SCAN] + "\n" + text[-OUTPUT_SCAN:]
        )
        if facts.mentions < MAX_MENTIONS and ("/" in edges or "." in edges):
            for match in _MENTION.finditer(edges):
                token = match.group(1)
                if _plausible_path(token):
                    facts.note_file(token, "mentioned")
                if facts.mentions >= MAX_MENTIONS:
                    break
        for branch, sha in _COMMIT.findall(edges[:OUTPUT_SCAN])[:2]:
            facts.add_critical(f"commit {sha} on {branch}")
        self._values(edges, versions=False)

    def _values(self, text: str, versions: bool = True) -> None:
        lower = text.lower()
        if any(key in lower for key in _PORT_HINTS):
            for a, b in _PORT.findall(text)[:3]:
                self.facts.add_critical(f"port {a or b}")
        if versions and ("version" in lower or "==" in text):
            for a, b in _VERSION.findall(text)[:3]:
                self.facts.add_critical(f"version {a or b}")

    # --- user ---------------------------------------------------------------------------

    def _user(self, message: Mapping[str, Any]) -> None:
        facts = self.facts
        if _maybe_summary(message, None) and is_compaction_summary_message(message):
            body, original = split_summary_content(message)
            facts.summaries.append(body)
            if original is None:
                return
            text = content_text(original)
        else:
            text = content_text(message.get("content"))
        action, self.observation_for = self.observation_for, None
        if action is not None or (self.unmatched and _is_observation(text)):
            if action is None:
                action = self.unmatched.pop(next(iter(self.unmatched)))
            self._result(action, text)
            return
        if not text.strip():
            return
        facts.user_asks += 1
        facts.progress, facts.ends_with_work = None, False
        if facts.first_ask is None:
            facts.first_ask = text
        facts.last_ask = text
        if len(facts.constraints) < MAX_CONSTRAINTS and _CONSTRAINT.search(text, 0, TEXT_SCAN):
            _add_unique(facts.constraints, _sentences(text, _CONSTRAINT), MAX_CONSTRAINTS)
        for sentence in _SENTENCE.findall(text[:TEXT_SCAN]) if "?" in text[:TEXT_SCAN] else ():
            if sentence.strip().endswith("?") and len(sentence.strip()) > 3:
                question = Question(clip(sentence.strip(), 200))
                facts.questions.append(question)
                self.open_questions.append(question)
                break
        for url in _URL.findall(text[:TEXT_SCAN])[:3] if "http" in text[:TEXT_SCAN] else ():
            facts.add_critical(f"URL mentioned: {url}")
        self._values(text[:TEXT_SCAN])


_EXTENSION = re.compile(r"\.[A-Za-z][\w-]{0,9}$")


def _plausible_path(token: str) -> bool:
    """Drop prose such as ``n/a`` or ``start/end`` and diff headers (``a/src/x.py``)."""
    if token.startswith(("a/", "b/")) or not any(c.isalpha() for c in token):
        return False
    if _EXTENSION.search(token.rsplit("/", 1)[-1]):
        return True
    return token.startswith(("/", "./", "../", "~/")) and len(token) > 4


def _maybe_summary(message: Mapping[str, Any], text: str | None) -> bool:
    """Cheap pre-check: summaries carry a flag or start with ``[``."""
    if message.get(SUMMARY_FLAG):
        return True
    content = message.get("content") if text is None else text
    return not isinstance(content, str) or content.lstrip()[:1] == "["


def _first_sentence(text: str) -> str:
    for match in _SENTENCE.finditer(text[:2_000]):
        sentence = match.group(0).strip()
        if sentence:
            return clip(sentence, 200)
    return clip(text, 200)


def _parse(raw: str) -> dict[str, Any]:
    if not raw.lstrip().startswith("{"):
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def extract_facts(turns: Sequence[Any]) -> SpanFacts:
    """Walk ``turns`` once (oldest first) and return the collected :class:`SpanFacts`."""
    return _Walker().run(turns)
