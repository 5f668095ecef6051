"""One pass over a span's readings, collecting :class:`~.facts.SpanFacts`.

The walk is linear and every message costs bounded work: requests and assistant prose are
read up to :data:`TEXT_SCAN` characters, outputs through the windows of :mod:`.outcomes`,
and every collection is capped, so ten thousand turns of 20 KB tool output stay cheap.

What a message is comes from :mod:`palimpsest.messages.reading` alone: only ``request``
readings are the user's words (the task, constraints, questions); actions are the
reading's actions, whatever their style; an observation answers the action its reading
names (by call id, by the acting message's index, or else the oldest unanswered one).
Names printed by a tool (an ``ls`` listing, ``find`` results) are never taken for files
the agent worked on: files come from actions, and mentions only from prose.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..compaction.markers import SUMMARY_FLAG, split_summary_content
from ..messages.content import content_text
from ..messages.reading import MessageReading, Observation, read_transcript
from .actions import Action, classify_reading, clip
from .facts import MAX_MENTIONS, Failure, Question, SpanFacts
from .later_use import NameUse
from .outcomes import apply_result, mark_failed, trailer_hints

__all__ = ["Walker"]

TEXT_SCAN = 4_000
"""Characters of a user or assistant message scanned for constraints, questions, decisions."""
OUTPUT_SCAN = 1_000
"""Characters at the start of a tool output scanned for commits and ports."""
SCANNED_OUTPUTS = 400
"""Only the newest this many messages have their outputs scanned for values and their
prose for file mentions: the most recent matter most, and the scans cost the most."""
NAMED_TURNS = 2_000
"""Only the newest this many messages are read for identifiers, and only there is a
command's output read for its outcome; older commands keep the exit status their format
states (edits and writes are always read). This bounds the work on huge spans; real agent
runs of a few hundred messages are read whole."""

OUTPUT_NAME_WINDOW = 1_500
"""Characters at each end of a tool output split into words for later-use counting
(:mod:`.later_use`): a grep hit, a traceback's last frames, a test summary."""

MAX_CONSTRAINTS = 12
MAX_DECISIONS = 10
MAX_FAILURES = 20
MAX_APPROACHES = 8

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
    r"\b(?:pytest|unittest|jest|vitest|mocha|tox|nox|go test|cargo test|npm test|npm run test"
    r"|yarn test|make test)\b"
)
_MENTION = re.compile(
    r"(?<![\w/.:-])((?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.-]*\w|[\w-]+(?:\.[\w-]+)*\.(?:py|pyi|js|jsx|"
    r"ts|tsx|json|ya?ml|toml|md|rst|txt|cfg|ini|sh|go|rs|java|kt|c|h|cc|cpp|hpp|rb|php|html|"
    r"css|scss|sql|xml|csv|ipynb|lock|pl|cgi|env|conf|gradle|swift|vue|svelte))(?![\w/])"
)
_EXTENSION = re.compile(r"\.[A-Za-z][\w-]{0,9}$")
_PORT = re.compile(
    r"\b(?:localhost|127\.0\.0\.1|0\.0\.0\.0)(?::(\d{2,5}))\b|\bport[ :=]+(\d{2,5})\b", re.I
)
_PORT_HINTS = ("localhost", "127.0.0.1", "0.0.0.0", "port")
_COMMIT = re.compile(r"^\[([\w./-]+) ([0-9a-f]{7,40})\]", re.M)
_URL = re.compile(r"https?://[^\s\"'<>)\]`]+")
_VERSION = re.compile(r"\b(?:version|v)\s?(\d+\.\d+(?:\.\d+)+)\b|==(\d+\.\d+(?:\.\d+)*)\b", re.I)
_EDIT_TEXT_KEYS = frozenset((
    "new_str", "old_str", "replacement_text", "replace", "search", "text", "file_text",
    "content", "insert_line_text", "patch", "input",
    "new_string", "old_string",  # Claude Code's Edit (and each of MultiEdit's "edits")
))  # fmt: skip


class Walker:
    """Holds the walk's state: unanswered actions, the open file, recent edits."""

    def __init__(self, turns: Sequence[Any]) -> None:
        self.turns = turns
        self.facts = SpanFacts()
        self.uses = self.facts.name_use = NameUse(self.facts.identifiers)
        self.at = 0
        self.by_call: dict[str, list[Action]] = {}
        self.by_message: dict[int, list[Action]] = {}
        # actions still waiting for output, oldest first (a dict: O(1) removal by identity)
        self.unmatched: dict[int, Action] = {}
        self.open_file: str | None = None
        self.scan = True
        self.open_questions: list[Question] = []
        self.recent_edits: list[str] = []
        self.names = True
        # The prose whose "still working" test is pending: only the last assistant turn's
        # verdict survives the walk, so the regex runs once, at the end, not per turn.
        self.ongoing_text: str | None = None

    def run(self, readings: Sequence[MessageReading]) -> SpanFacts:
        scan_from = len(readings) - SCANNED_OUTPUTS
        names_from = len(readings) - NAMED_TURNS
        for position, reading in enumerate(readings):
            self.scan = position >= scan_from
            self.names = position >= names_from
            self.at = reading.index  # the index space of actions and observations
            kind = reading.kind
            if kind == "assistant":
                self._assistant(reading)
            elif kind == "observation":
                # a message of several tool_result blocks answers several calls
                found = reading.extra.get("observations") or (reading.observation,)
                errors = _flagged(self._message(position))
                for observation in found:
                    if isinstance(observation, Observation):
                        flagged = errors is True or (
                            isinstance(errors, set) and observation.call_id in errors
                        )
                        self._observation(position, observation, flagged)
            elif kind == "request":
                self._request(reading.text)
            elif kind == "summary":
                self._summary(position, reading)
        for action in self.unmatched.values():
            # the output is past the span (or lost): the change most likely happened
            self._note_writes(action)
        if self.ongoing_text is not None:
            self.facts.ends_with_work = _ONGOING.search(self.ongoing_text[:600]) is not None
        self.facts.finish()
        return self.facts

    def _message(self, position: int) -> Mapping[str, Any] | None:
        message = self.turns[position] if position < len(self.turns) else None
        return message if isinstance(message, Mapping) else None

    def _summary(self, position: int, reading: MessageReading) -> None:
        message = self._message(position)
        body, original = split_summary_content(message) if message else (reading.text, None)
        self.facts.summaries.append(body or reading.text)
        if original is None or message is None:
            return
        # a summary merged into a message: that message's own content and calls still count
        plain = dict(message, content=original)
        plain.pop(SUMMARY_FLAG, None)
        unwrapped = read_transcript([plain])[0]
        if unwrapped.kind == "assistant":
            self._assistant(replace(unwrapped, index=reading.index))
        elif unwrapped.kind == "request":
            self._request(unwrapped.text)

    # --- assistant ----------------------------------------------------------------------

    def _assistant(self, reading: MessageReading) -> None:
        tally = self.facts.identifiers
        used: list[str] = []  # the texts the agent wrote, for later-use counting
        for read_action in reading.actions:
            arguments = read_action.arguments
            if not isinstance(arguments, dict):  # a lazy mapping: parse it once, here
                arguments = dict(arguments) if isinstance(arguments, Mapping) else {}
            action = classify_reading(read_action, self.open_file, arguments)
            self._record(action)
            if read_action.call_id:
                self.by_call.setdefault(read_action.call_id, []).append(action)
            self.by_message.setdefault(reading.index, []).append(action)
            self.unmatched[id(action)] = action
            if self.names:
                tally.add(read_action.command or "")
                used.append(read_action.command or "")
                for value in _edit_texts(arguments):
                    tally.add(value)
                    used.append(value)
        text = reading.text
        if text and not text.isspace() and self.names:
            tally.add(text)
            used.append(text)
        if used and self.scan:  # outputs are only read there, so uses only count there
            self.uses.agent_used(reading.index, used)
        if text and not text.isspace():
            self._assistant_text(text, bool(reading.actions))
        elif reading.actions:
            self.facts.ends_with_work = True
            self.facts.progress = None
            self.ongoing_text = None

    def _assistant_text(self, text: str, acting: bool) -> None:
        facts = self.facts
        # Code blocks are actions or examples, not prose to quote back.
        head = text[:TEXT_SCAN]
        # most prose has no fence: the substring test is far cheaper than a regex pass
        text = (_FENCED.sub(" ", head) if "```" in head else head).strip() or head
        facts.last_assistant = facts.progress = text
        facts.ends_with_work = acting
        self.ongoing_text = None if acting else text
        lower = text.lower()
        # substring checks first: the regex over 4 KB of prose costs five times more
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
        self._mentions(text)

    def _record(self, action: Action) -> None:
        facts = self.facts
        facts.actions.append(action)
        if action.cwd:
            facts.set_cwd(action.cwd)
        for path in action.reads:
            facts.note_file(path, "read")
            self.open_file = path if action.verb == "READ" else self.open_file
        for path, note in action.writes:
            if action.verb in ("EDIT", "WRITE") and note != "deleted":
                self.open_file = path
        if action.verb == "RUN" and "http" in action.target:
            for url in _URL.findall(action.target[:2_000])[:3]:
                facts.add_critical(f"URL used: {url}")

    def _note_writes(self, action: Action) -> None:
        for path, note in action.writes:
            self.facts.note_file(path, note)

    # --- outputs ------------------------------------------------------------------------

    def _observation(self, position: int, observation: Observation, flagged: bool) -> None:
        """``flagged``: the format marked this result as an error (``is_error``)."""
        action = self._answered(observation)
        if action is None:
            return
        self.unmatched.pop(id(action), None)
        message = self._message(position)
        raw = content_text(message.get("content")) if message is not None else ""
        open_file, cwd = trailer_hints(raw)
        self._result(action, observation, open_file, cwd, flagged)
        if self.scan:
            # names a tool printed count once the agent uses them (see .later_use); like
            # the other output scans, only the newest SCANNED_OUTPUTS messages are read
            self.uses.saw_output(self.at, observation.output, OUTPUT_NAME_WINDOW)

    def _answered(self, observation: Observation) -> Action | None:
        """The action ``observation`` is the output of, removed from the waiting lists.

        An observation that names its action (by call id or message index) answers that
        action or, when the action lies before the span, nothing; one that names none
        answers the oldest action still waiting.
        """
        queue = self.by_call.get(observation.call_id or "")
        if not queue and observation.action_index is not None:
            queue = self.by_message.get(observation.action_index)
        while queue:
            action = queue.pop(0)
            if id(action) in self.unmatched:
                return action
        if observation.call_id or observation.action_index is not None:
            return None
        return next(iter(self.unmatched.values()), None)

    def _result(
        self,
        action: Action,
        observation: Observation,
        open_file: str | None,
        cwd: str | None,
        flagged: bool = False,
    ) -> None:
        facts = self.facts
        if cwd and cwd != "n/a":
            facts.set_cwd(cwd)
        if self.names or action.verb in ("EDIT", "WRITE") or action.writes:
            hinted, hinted_cwd = apply_result(action, observation.output, observation.exit_code)
        else:
            hinted = hinted_cwd = None
            _stated_outcome(action, observation.exit_code)
        if flagged and not action.failed:
            mark_failed(action, observation.output)
        open_file = open_file or hinted
        if hinted_cwd and hinted_cwd != "n/a" and not cwd:
            facts.set_cwd(hinted_cwd)
        if open_file:
            self.open_file = open_file
            if action.on_open_file and action.writes:
                _retarget(action, open_file)
            if action.verb in ("EDIT", "WRITE") and not action.writes and not action.failed:
                action.writes.append(
                    (open_file, "modified" if action.verb == "EDIT" else "created")
                )
                if action.target == "(open file)":
                    action.target = open_file
        if not action.failed:
            self._note_writes(action)  # a failed edit changed nothing
        if action.failed:
            self._failed(action)
        else:
            self._succeeded(action)
        if action.tests is not None:
            passed, bad = action.tests
            facts.tests = f"{passed}/{passed + bad} passing (last run: {action.target})"
        elif action.verb == "RUN" and action.failed and _TEST_COMMAND.search(action.target):
            facts.tests = f"last test run failed ({action.outcome}; {action.target})"
        if self.scan:
            self._scan_output(observation.output)

    def _failed(self, action: Action) -> None:
        facts = self.facts
        reason = action.error or action.outcome
        command = f"{action.verb} {action.target}"
        facts.blockers.pop(action.key, None)
        facts.blockers[action.key] = f"{command} — {reason}"
        facts.failures.append(Failure(command, reason, action.key))
        del facts.failures[:-MAX_FAILURES]
        target = facts.shown_path(action.target) if action.verb != "RUN" else action.target
        tried = [e for e in self.recent_edits if e != target]
        if action.verb in ("EDIT", "WRITE"):
            facts.approaches.append(f"edit of {target} rejected: {reason}")
        elif tried:
            facts.approaches.append(
                f"changed {', '.join(tried[-3:])}, then {command} failed: {reason}"
            )
        else:
            facts.approaches.append(f"{command} failed: {reason}")
        del facts.approaches[:-MAX_APPROACHES]
        self.recent_edits = []
        if action.error:
            facts.add_critical(f"Error: {action.error}")
        if action.exit_code not in (None, 0):
            facts.add_critical(f"exit {action.exit_code} from {action.target}")

    def _succeeded(self, action: Action) -> None:
        facts = self.facts
        facts.blockers.pop(action.key, None)
        if action.writes:
            for path, _ in action.writes:
                shown = facts.shown_path(path)
                if shown not in self.recent_edits:
                    self.recent_edits.append(shown)
            del self.recent_edits[:-6]
        if action.outcome == "no result in span":
            return
        for failure in facts.failures:
            if failure.fixed_by is None and failure.key == action.key:
                failure.fixed_by = f"{action.verb} {action.target} ({action.outcome})"

    def _scan_output(self, text: str) -> None:
        head = text[:OUTPUT_SCAN]
        for branch, sha in _COMMIT.findall(head)[:2]:
            self.facts.add_critical(f"commit {sha} on {branch}")
        self._values(head, versions=False)

    def _values(self, text: str, versions: bool = True) -> None:
        lower = text.lower()
        if any(key in lower for key in _PORT_HINTS):
            for a, b in _PORT.findall(text)[:3]:
                self.facts.add_critical(f"port {a or b}")
        if versions and ("version" in lower or "==" in text):
            for a, b in _VERSION.findall(text)[:3]:
                self.facts.add_critical(f"version {a or b}")

    def _mentions(self, text: str, request: bool = False) -> None:
        facts = self.facts
        if not (self.scan or request) or facts.mentions >= MAX_MENTIONS or "." not in text:
            return
        for match in _MENTION.finditer(text, 0, TEXT_SCAN):
            if _plausible_path(match.group(1)):
                facts.note_file(match.group(1), "mentioned")

    # --- user ---------------------------------------------------------------------------

    def _request(self, text: str) -> None:
        facts = self.facts
        if not text or text.isspace():
            return
        text = text.strip()
        facts.user_asks += 1
        facts.progress, facts.ends_with_work = None, False
        self.ongoing_text = None
        if facts.first_request is None:
            facts.first_request = text
        facts.newest_request = text
        facts.identifiers.add(text)
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
        self._mentions(text, request=True)


def _retarget(action: Action, open_file: str) -> None:
    """An ``edit`` of the file assumed open whose answer names another open file edited
    that one (the assumption was stale: a span that starts mid-run, a failed ``open``)."""
    path = action.writes[0][0]
    if path == open_file or path.endswith("/" + open_file) or open_file.endswith("/" + path):
        return
    action.writes = [(open_file, "modified")]
    action.target = open_file
    action.key = f"EDIT {open_file}"


def _edit_texts(arguments: Mapping[str, Any]) -> list[str]:
    """The texts an edit writes or replaces, MultiEdit's list of edits included."""
    texts = [
        v for k in _EDIT_TEXT_KEYS.intersection(arguments) if isinstance(v := arguments[k], str)
    ]
    edits = arguments.get("edits")
    if isinstance(edits, list):
        for edit in edits[:50]:
            if isinstance(edit, Mapping):
                texts.extend(_edit_texts(edit))
    return texts


def _flagged(message: Mapping[str, Any] | None) -> bool | set[str]:
    """What a message marks as an error: the whole message (a ``tool`` message with
    ``is_error``), or the call ids of its ``tool_result`` blocks with ``is_error``."""
    if message is None:
        return False
    if message.get("is_error") is True or message.get("_is_error") is True:
        return True
    content = message.get("content")
    if not isinstance(content, list):
        return False
    return {
        str(part.get("tool_use_id"))
        for part in content
        if isinstance(part, Mapping) and part.get("is_error") is True
    }


def _stated_outcome(action: Action, exit_code: int | None) -> None:
    """An old command's outcome from the exit status alone, its output unread."""
    action.exit_code = exit_code
    action.failed = exit_code not in (None, 0)
    action.outcome = "output not read (older turn)" if exit_code is None else f"exit {exit_code}"


def _plausible_path(token: str) -> bool:
    """Drop prose such as ``n/a`` or ``start/end`` and diff headers (``a/src/x.py``)."""
    if token.startswith(("a/", "b/")) or not any(c.isalpha() for c in token):
        return False
    if "://" in token or token.startswith("//"):
        return False
    if _EXTENSION.search(token.rsplit("/", 1)[-1]):
        return True
    return token.startswith(("/", "./", "../", "~/")) and len(token) > 4


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


def _first_sentence(text: str) -> str:
    for match in _SENTENCE.finditer(text[:2_000]):
        sentence = match.group(0).strip()
        if sentence:
            return clip(sentence, 200)
    return clip(text, 200)
