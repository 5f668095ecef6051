"""A second, independent scorer for the continuity eval, used only by the tests.

It reads the same prefix and span and the same compacted results as
:mod:`palimpsest.eval`, but with its own rules and its own regular expressions, written
from the eval's documented specification (docs/benchmarks.md, continuity section) and not
from its code. It imports nothing of ``palimpsest.eval`` nor of the summarizers: if both
readings agree, a bug would have to be made twice to hide.

What it computes, per system, over every compacted case:

* modified files named by the summary (by path or basename as a word);
* the last failing command of the span (its first line, or the edited file for an
  editor) and its error line, both present after the head;
* identifiers of the span that a later assistant message used, weighted by those uses,
  present after the head.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from palimpsest.compaction.markers import is_compaction_summary_message, split_summary_content

Message = Mapping[str, Any]

# --- text --------------------------------------------------------------------------------


def _text(value: Any) -> str:
    """Every string inside ``value`` (content parts, tool inputs, decoded arguments)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return "\n".join(_text(v) for k, v in value.items() if k not in ("type", "id"))
    if isinstance(value, list):
        return "\n".join(_text(v) for v in value)
    return str(value)


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return {"input": raw}
    return dict(raw) if isinstance(raw, Mapping) else {"input": raw}


def message_text(message: Message) -> str:
    parts = [_text(message.get("content"))]
    for call in message.get("tool_calls") or []:
        fn = call.get("function") or {}
        parts.append(str(fn.get("name") or ""))
        parts.append(_text(_arguments(fn.get("arguments"))))
    return "\n".join(p for p in parts if p)


def flat(text: str) -> str:
    return " ".join(text.split())


# --- actions and their outputs -----------------------------------------------------------

_FN = re.compile(r"<function=([\w.-]+)>(.*?)(?:</function>|$)", re.S)
_PARAM = re.compile(r"<parameter=([\w.-]+)>\n?(.*?)\n?</parameter>", re.S)
_CMD = re.compile(r"<command>\n?(.*?)\n?</command>", re.S)
_FENCE = re.compile(r"^```[ \t]*(\w*)[^\n]*\n(.*?)^```", re.S | re.M)


@dataclass
class Act:
    index: int
    name: str  # lower-case tool, or TEXT_ACTION for a command written in the message text
    args: dict[str, Any]
    call_id: str | None
    output: str | None = None
    is_error: bool = False

    @property
    def line(self) -> str:
        """The shell line, or the agent command line."""
        for key in ("command", "cmd"):
            value = self.args.get(key)
            if isinstance(value, list):
                value = " ".join(str(v) for v in value)
            if isinstance(value, str) and (self.name in SHELLS or self.name == TEXT_ACTION):
                return re.sub(r"^(?:ba|z)?sh -l?c ", "", value)
        return ""


TEXT_ACTION = "(text)"
SHELLS = {"bash", "shell", "execute_bash", "run", "run_command", "terminal", "exec_command"}
EDITORS = {"str_replace_editor", "str_replace_based_edit_tool", "text_editor", "edit_anthropic"}
EDITOR_WRITES = {"create", "str_replace", "insert", "undo_edit", "write"}
FILE_WRITERS = {
    "write", "write_file", "create_file", "create", "edit", "edit_file", "multiedit", "insert",
    "append", "append_file", "replace", "notebookedit",
}  # fmt: skip


def _acts_of(index: int, message: Message) -> list[Act]:
    found: list[Act] = []
    for call in message.get("tool_calls") or []:
        fn = call.get("function") or {}
        found.append(
            Act(index, str(fn.get("name") or "").lower(), _arguments(fn.get("arguments")),
                str(call.get("id") or "") or None)
        )  # fmt: skip
    content = message.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, Mapping) and block.get("type") == "tool_use":
                found.append(
                    Act(index, str(block.get("name") or "").lower(),
                        _arguments(block.get("input")), str(block.get("id") or "") or None)
                )  # fmt: skip
    if found:
        return found
    text = _text(content)
    fn_match = _FN.search(text)
    if fn_match:
        params = dict(_PARAM.findall(fn_match.group(2)))
        return [Act(index, fn_match.group(1).lower(), params, None)]
    commands = _CMD.findall(text)
    if commands:
        return [Act(index, TEXT_ACTION, {"command": commands[-1]}, None)]
    fences = [
        body
        for lang, body in _FENCE.findall(text)
        if lang.lower() in ("", "bash", "sh", "shell", "mswea_bash_command")
    ]
    if fences:
        return [Act(index, TEXT_ACTION, {"command": fences[-1].strip()}, None)]
    return []


def acts(messages: Sequence[Message]) -> list[Act]:
    """Every action with its output attached (by call id, else the next user message)."""
    out: list[Act] = []
    waiting_text: Act | None = None
    by_id: dict[str, Act] = {}
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "assistant":
            new = _acts_of(index, message)
            out.extend(new)
            by_id.update({a.call_id: a for a in new if a.call_id})
            waiting_text = next((a for a in new if a.call_id is None), None)
            continue
        if role in ("tool", "function"):
            target = by_id.get(str(message.get("tool_call_id") or ""))
            if target is None:
                target = next((a for a in out if a.output is None and a.call_id), None)
            if target is not None:
                target.output = _text(message.get("content"))
                target.is_error = bool(message.get("is_error") or message.get("_is_error"))
            continue
        content = message.get("content")
        blocks = [
            b for b in (content if isinstance(content, list) else [])
            if isinstance(b, Mapping) and b.get("type") == "tool_result"
        ]  # fmt: skip
        for block in blocks:
            target = by_id.get(str(block.get("tool_use_id") or ""))
            if target is not None:
                target.output = _text(block.get("content"))
                target.is_error = bool(block.get("is_error"))
        if role == "user" and not blocks and waiting_text is not None:
            waiting_text.output = _text(content)
            waiting_text = None
    return out


# --- failure -----------------------------------------------------------------------------

_STATUS = (
    re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>"),
    re.compile(r"PROCESS-DONE:(-?\d+):"),
    re.compile(r"^\s*(?:Exit code|exit code:?|Process exited with code)\s*:?\s*(-?\d+)", re.M),
    re.compile(r'"exit_code"\s*:\s*(-?\d+)'),
)
_BAD_OUTPUT = re.compile(
    r"Traceback \(most recent call last\)|introduced new syntax error|NOT been applied"
    r"|No replacement was performed|did not appear verbatim|: command not found"
    r"|No such file or directory|^FAILED\b|^=+ .*\d+ failed|^Segmentation fault"
    r"|^(?:Error|ERROR|error|fatal|FATAL|Fatal)(?:\[\w+\])?: *\S"
    r"|^(?:ERROR|Error|error):[ \t]*\n[ \t]*\S"
    r"|^[\w./-]+: (?:error|fatal):|^[^\s:]+:\d+(?::\d+)?: (?:fatal )?error\b"
    r"|failed with:? +[A-Z]\w*(?:Error|Exception)"
    r"|^\s*(?:\w+\.)*[A-Z]\w*(?:Error|Exception)(?:: |$)|^E {2,}[A-Z]\w*(?:Error|Exception)",
    re.M,
)
_ERRORISH = re.compile(
    r"(?:\w+\.)*[A-Z]\w*(?:Error|Exception|Interrupt):(?: |$)"
    r"|^(?:Error|ERROR|error|fatal|FATAL|Fatal)(?:\[\w+\])?: *\S|^[\w./-]+: (?:error|fatal):"
    r"|^[^\s:]+:\d+(?::\d+)?: (?:fatal )?error\b|failed with:? +[A-Z]\w*(?:Error|Exception)"
    r"|^\s*(?:\w+\.)*[A-Z]\w*(?:Error|Exception)(?:: |$)|^E {2,}[A-Z]\w*(?:Error|Exception)"
)
_ERROR_WORD = re.compile(
    r"(?i)\b(?:error|fatal|failed|failure|not found|no such file|denied|invalid|cannot)\b"
)
_LABEL_ONLY = re.compile(r"(?i)^(?:error|fatal|failed|failure|exception)\s*:?$")


def _decoded(output: str) -> str:
    """A JSON tool answer (``{"output": ..., "metadata": {"exit_code": N}}``) as its text."""
    if output.lstrip().startswith("{"):
        try:
            value = json.loads(output)
        except ValueError:
            return output
        if isinstance(value, dict) and isinstance(value.get("output"), str):
            return value["output"]
    return output


def _bare(output: str) -> str:
    output = _decoded(output)
    text = re.sub(r"^\s*OBSERVATION:\s*", "", output)
    for pattern in _STATUS:
        text = pattern.sub("", text)
    text = re.sub(r"</?output(?:_head|_tail)?>", "", text)
    text = re.sub(r"^\s*(?:\(Open file: .*\)|\(Current directory: .*\)|bash-\$)\s*$", "", text,
                  flags=re.M)  # fmt: skip
    return text.strip()


def failed(act: Act) -> bool:
    if act.output is None:
        return False
    for pattern in _STATUS:
        match = pattern.search(act.output)
        if match:
            return int(match.group(1)) != 0 or act.is_error
    return act.is_error or _BAD_OUTPUT.search(_bare(act.output)) is not None


def error_line(output: str) -> str:
    rows = [r.strip() for r in _bare(output).splitlines() if r.strip()]
    merged: list[str] = []
    for i, row in enumerate(rows):
        if _LABEL_ONLY.match(row):
            if i + 1 < len(rows):
                merged.append(row + " " + rows[i + 1])
        else:
            merged.append(row)
    loud = [r for r in merged if _ERRORISH.search(r)]
    if loud:
        return loud[-1]
    for row in merged:
        if _ERROR_WORD.search(row) and not row.startswith("Your changes have NOT"):
            return row
    return merged[0] if merged else ""


# --- files written -----------------------------------------------------------------------

_REDIRECT = re.compile(r"(?<![<>&\d])>{1,2}\|?\s*(['\"]?)([^\s;&|'\"<>]+)\1")
_OPEN = re.compile(r"\(Open file: ([^)\n]+)\)|\[File: (\S+) \(\d+ lines total\)\]")


def _shell_targets(line: str) -> list[str]:
    body = line.split("<<", 1)[0] if "<<" in line else line
    body = re.sub(r"'[^']*'|\"[^\"]*\"", lambda m: m.group(0) if ">" not in m.group(0) else "''",
                  body)  # fmt: skip
    found = [m.group(2) for m in _REDIRECT.finditer(body)]
    for piece in re.split(r"&&|\|\||;|\|", body):
        words = piece.split()
        while words and words[0] in ("sudo", "env", "time", "nohup"):
            words = words[1:]
        if not words:
            continue
        name = words[0].rsplit("/", 1)[-1]
        plain = [w.strip("'\"") for w in words[1:] if not w.startswith("-") and ">" not in w]
        if name in ("sed", "perl") and any(w.startswith("-") and "i" in w for w in words[1:]):
            explicit = any(w == "-e" for w in words[1:])
            found.extend(plain if explicit else plain[1:])
        elif name in ("touch", "rm", "tee", "truncate") or (name == "mv" and len(plain) >= 2):
            found.extend(plain)
        elif name == "cp" and len(plain) >= 2:
            found.append(plain[-1])
    return [f for f in found if f not in ("/dev/null", "-") and not re.search(r"[*?$`{}]", f)]


def _written(act: Act, open_file: str | None) -> list[str]:
    args = act.args
    path = next((str(args[k]) for k in ("path", "file_path", "filename", "file",
                                         "notebook_path", "target_file") if args.get(k)), None)  # fmt: skip
    if act.name in EDITORS:
        return [path] if path and args.get("command") in EDITOR_WRITES else []
    if act.name == "apply_patch":
        patch = _text(args)
        return re.findall(r"^\*\*\* (?:Update|Add|Delete) File: (.+?)\s*$", patch, re.M)
    if act.name in FILE_WRITERS:
        if path:
            return [path]
        return [open_file] if act.name in ("edit", "insert", "append") and open_file else []
    line = act.line
    if not line:
        return []
    first = line.strip().split("\n", 1)[0].split()
    if first and first[0] == "create" and len(first) > 1:
        return [first[1]]
    if (
        first
        and first[0] in ("edit", "insert", "append")
        and (len(first) == 1 or ":" in first[1] or first[1].isdigit())
    ):
        return [open_file] if open_file else []
    if first and first[0] in EDITORS:
        return [first[2]] if len(first) > 2 and first[1] in EDITOR_WRITES else []
    return _shell_targets(line)


def _is_shell(act: Act) -> bool:
    line = act.line
    if not line:
        return False
    head = line.strip().split(maxsplit=1)[0] if line.strip() else ""
    return head not in ("create", "edit", "insert", "append", *EDITORS)


# --- identifiers -------------------------------------------------------------------------

_TOKEN = re.compile(r"(?<![\w$/-])([A-Za-z_][A-Za-z0-9_]*)(\(?)")  # not inside a path
_ISSUE = re.compile(r"(?<![\w&/])#\d{2,}\b|\b[A-Z][A-Z0-9]{1,9}-\d+\b")
_SKIP = {
    "end_of_edit", "str_replace_editor", "str_replace_based_edit_tool", "find_file",
    "search_dir", "search_file", "scroll_down", "scroll_up", "file_text", "old_str", "new_str",
    "view_range", "insert_line", "replacement_text", "start_line", "end_line", "line_number",
    "execute_bash", "file_path", "old_string", "new_string", "replace_all", "in_progress",
    "mswea_bash_command", "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT",
    "MINI_SWE_AGENT_FINAL_OUTPUT",
}  # fmt: skip


def _shaped(name: str, call: bool, language: frozenset[str]) -> bool:
    if len(name) < 3 or name in _SKIP:
        return False
    core = name.strip("_")
    if "_" in core and any(c.isalpha() for c in core):
        return True
    if re.search(r"[a-z0-9][A-Z]", name) or re.match(r"[A-Z]{2,}[a-z]", name):
        return True
    return call and name not in language


def names(text: str, language: frozenset[str]) -> set[str]:
    found = {m.group(0) for m in _ISSUE.finditer(text)}
    for match in _TOKEN.finditer(text):
        if _shaped(match.group(1), bool(match.group(2)), language):
            found.add(match.group(1))
    return found


def present(name: str, text: str) -> bool:
    return re.search(r"(?<![\w$])" + re.escape(name) + r"(?![\w$])", text) is not None


# --- scoring -----------------------------------------------------------------------------


@dataclass
class Tally:
    files: list[int]
    fail: list[int]
    names: list[int]

    @staticmethod
    def empty() -> Tally:
        return Tally([0, 0], [0, 0], [0, 0])


def _summary(messages: Sequence[Message]) -> str:
    return "\n".join(
        split_summary_content(m)[0] or "" for m in messages if is_compaction_summary_message(m)
    )


def _spans(prefix: Sequence[Message], start: int, end: int) -> Iterator[tuple[Act, str | None]]:
    open_file: str | None = None
    for act in acts(prefix):
        yield act, open_file
        if act.output:
            opened = _OPEN.findall(act.output)
            if opened:
                last = opened[-1][0] or opened[-1][1]
                open_file = None if last.strip() == "n/a" else last.strip()


def span_probes(
    run: Sequence[Message], prefix: Sequence[Message], head: int, start: int, end: int,
    language: frozenset[str],
) -> tuple[list[str], tuple[str, str] | None, dict[str, int]]:  # fmt: skip
    """(files written, (failure key, error line) of the last failure, {identifier: uses})."""
    files: list[str] = []
    last: tuple[str, str] | None = None
    for act, open_file in _spans(prefix, start, end):
        if not (start <= act.index < end):
            continue
        bad = failed(act)
        if not bad or _is_shell(act):
            for path in _written(act, open_file):
                path = path.strip().strip("'\"").removeprefix("./")
                if not any(p == path or p.endswith("/" + path) for p in files):
                    files = [path if path.endswith("/" + p) else p for p in files]
                    if path not in files:
                        files.append(path)
        if bad and act.output is not None:
            err = error_line(act.output)
            if not err:
                continue
            written = _written(act, open_file)
            if written and not _is_shell(act):
                key = written[0].strip().strip("'\"").removeprefix("./").rstrip("/")
                key = key.rsplit("/", 1)[-1]
            else:
                line = act.line
                key = flat(line.strip().split("\n", 1)[0])[:60] if line else ""
                if not line:
                    shown = [act.name] + [
                        f"{k}={v}" for k, v in act.args.items()
                        if isinstance(v, str) and len(v) <= 80 and "\n" not in v
                    ]  # fmt: skip
                    key = flat(" ".join(shown))[:60]
            last = (key, err)
    head_text = "\n".join(message_text(m) for m in prefix[:head])
    first_seen: dict[str, int] = {}
    for index in range(start, end):
        message = prefix[index]
        if message.get("role") == "system":
            continue
        for name in names(message_text(message), language):
            first_seen.setdefault(name, index)
    later = [
        (i, set(re.findall(r"#\d+|[A-Z][A-Z0-9]{1,9}-\d+|[A-Za-z_$][\w$]*", message_text(m))))
        for i, m in enumerate(run)
        if m.get("role") == "assistant" and i > start
    ]
    uses: dict[str, int] = {}
    for name, seen in first_seen.items():
        count = sum(1 for i, words in later if i > seen and name in words)
        if count and not present(name, head_text):
            uses[name] = count
    return files, last, uses


def score_case(
    run: Sequence[Message], prefix: Sequence[Message], head: int, start: int, end: int,
    results: Mapping[str, Sequence[Message]], language: frozenset[str],
) -> dict[str, Tally]:  # fmt: skip
    """Each system's counts on one case: files (named, total), failure (kept, 1), names."""
    files, last, uses = span_probes(run, prefix, head, start, end, language)
    out: dict[str, Tally] = {}
    for system, messages in results.items():
        kept = "\n".join(message_text(m) for m in messages[head:])
        where = _summary(messages) if system == "palimpsest" else kept
        tally = Tally.empty()
        for path in files:
            tally.files[1] += 1
            base = path.rstrip("/").rsplit("/", 1)[-1]
            if any(re.search(r"(?<![\w.-])" + re.escape(n) + r"(?![\w-])", where)
                   for n in (path, base)):  # fmt: skip
                tally.files[0] += 1
        if last is not None:
            key, err = last
            tally.fail[1] += 1
            text = flat(kept)
            if flat(key) in text and flat(err)[:80] in text:
                tally.fail[0] += 1
        for name, weight in uses.items():
            tally.names[1] += weight
            if present(name, kept):
                tally.names[0] += weight
        out[system] = tally
    return out
