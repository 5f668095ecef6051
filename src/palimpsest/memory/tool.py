"""The ``memory`` tool: its JSON schema and the handler that answers in JSON.

The handler never raises for anything the model did: every outcome is a JSON string with
``success`` and, on failure, an ``error`` that says what to do next, plus
``current_entries`` and ``usage`` where the model needs them to choose a fix (MEM-21..29).
Successful writes answer with the live state, so the model knows what is stored even though
the system prompt snapshot is frozen for the session.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import (
    MemoryCapacityError,
    MemoryMatchError,
    MemoryThreatError,
    MemoryToolError,
    StorageError,
)
from .entries import join_entries, preview, usage_text, validate_target
from .store import MemoryStore, WriteResult

__all__ = [
    "MAX_FAILURES_PER_TURN",
    "MEMORY_TOOL_NAME",
    "MEMORY_TOOL_SCHEMA",
    "MemoryTool",
    "ToolOutcome",
]

MEMORY_TOOL_NAME = "memory"
MAX_FAILURES_PER_TURN = 3
"""Capacity / no-match failures answered normally in one turn before the breaker (MEM-29)."""

_DESCRIPTION = """\
Save durable facts to persistent memory that is shown to you at the start of every future \
session. Two targets: 'user' is the user profile (preferences, communication style, habits, \
corrections they gave you); 'memory' is your own notes (environment facts, project \
conventions, tool quirks, lessons learned).

When to save: the user states a preference or corrects you, you learn a fact about their \
environment, or you notice a recurring pattern. Priority: user preferences > environment \
facts > procedures.
Skip: trivial information, task progress, logs of completed work and temporary TODO state \
(past sessions are searchable, so these need no memory).

Actions: add (content), replace (old_text + content: replaces the whole entry containing \
old_text), remove (old_text). old_text is a short unique substring of an existing entry.
Memory is small (characters are counted). When it is full, consolidate: merge overlapping \
entries into one shorter entry with replace, or remove stale ones, then retry.
Batch several changes in one call with operations=[{action, content, old_text}, ...]; they \
are applied all or nothing.
Writes are saved at once but the memory shown in your system prompt updates next session; \
the tool result shows what is stored now."""

MEMORY_TOOL_SCHEMA: dict[str, Any] = {
    "name": MEMORY_TOOL_NAME,
    "description": _DESCRIPTION,
    "parameters": {
        "type": "object",
        "properties": {
            "target": {
                "type": "string",
                "enum": ["memory", "user"],
                "description": "'user' for the user profile, 'memory' for your own notes.",
            },
            "action": {
                "type": "string",
                "enum": ["add", "replace", "remove"],
                "description": "What to do. Omit when using operations.",
            },
            "content": {
                "type": "string",
                "description": "The entry text, for add and replace.",
            },
            "old_text": {
                "type": "string",
                "description": "A short unique substring of the entry to replace or remove.",
            },
            "operations": {
                "type": "array",
                "description": "Several changes applied all or nothing.",
                "items": {
                    "type": "object",
                    "properties": {
                        "action": {"type": "string", "enum": ["add", "replace", "remove"]},
                        "content": {"type": "string"},
                        "old_text": {"type": "string"},
                    },
                    "required": ["action"],
                },
            },
        },
        "required": ["target"],
    },
}

_NOT_AVAILABLE = "Memory is not available. It may be disabled in config or this environment."
_BREAKER = (
    "Memory was not changed. Several memory calls failed this turn: stop retrying memory "
    "calls now, leave memory as it is, continue with your reply, and save the fact in a "
    "later turn after consolidating. Last error: {error}"
)


@dataclass(frozen=True)
class ToolOutcome:
    """The JSON answer for the model, and the write that succeeded (for mirroring)."""

    text: str
    result: WriteResult | None = None


def _dump(payload: Mapping[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False)


class MemoryTool:
    """Dispatches ``memory`` tool calls to a :class:`MemoryStore`.

    ``profile="refined"`` answers successes without echoing entries (MEM-25). Call
    :meth:`start_turn` at the start of each user turn to reset the failure breaker.
    """

    def __init__(
        self, store: MemoryStore | None, *, profile: Literal["seed", "refined"] = "seed"
    ) -> None:
        self.store = store
        self.profile = profile
        self._failures = 0

    def start_turn(self) -> None:
        self._failures = 0

    def __call__(self, args: Mapping[str, Any]) -> str:
        return self.call(args).text

    def call(self, args: Mapping[str, Any]) -> ToolOutcome:
        store = self.store
        if store is None:
            return ToolOutcome(_dump({"success": False, "error": _NOT_AVAILABLE}))
        try:
            target = validate_target(str(args.get("target")))
        except MemoryToolError as exc:
            return ToolOutcome(_dump({"success": False, "error": str(exc)}))
        try:
            result = self._dispatch(store, target, args)
        except MemoryToolError as exc:
            return ToolOutcome(self._failure(store, target, exc))
        except StorageError as exc:
            return ToolOutcome(_dump({"success": False, "error": str(exc)}))
        self._failures = 0
        return ToolOutcome(self._success(result), result)

    def _dispatch(self, store: MemoryStore, target: str, args: Mapping[str, Any]) -> WriteResult:
        operations = args.get("operations")
        if operations is not None:
            if not isinstance(operations, list):
                raise MemoryToolError("operations must be a list of {action, content, old_text}.")
            return store.apply(target, operations)
        action = args.get("action")
        content = args.get("content")
        old_text = args.get("old_text")
        if action == "add":
            if not isinstance(content, str):
                raise MemoryToolError("Content is required for 'add' action.")
            return store.add(target, content)
        if action == "replace":
            if not isinstance(content, str):
                raise MemoryToolError("content is required for 'replace' action.")
            return store.replace(target, self._old_text(old_text), content)
        if action == "remove":
            return store.remove(target, self._old_text(old_text))
        raise MemoryToolError(f"Unknown action '{action}'. Use: add, replace, remove")

    @staticmethod
    def _old_text(value: Any) -> str:
        if isinstance(value, str) and value.strip():
            return value
        # MEM-28: a bare "old_text is required" made some models loop on the same call.
        raise MemoryMatchError(
            "old_text is missing. It must be a short unique substring of the entry to "
            "change; none was provided. Reissue the call with part of one of the entries "
            "listed in current_entries as old_text.",
            old_text="",
        )

    def _state(self, store: MemoryStore, target: str) -> dict[str, Any]:
        # Errors show the live file as it is now, sanitized (MEM-16).
        entries = store.entries(target)
        return {
            "current_entries": store.sanitized(target, entries),
            "usage": f"{len(join_entries(entries)):,}/{store.limit(target):,}",
        }

    def _failure(self, store: MemoryStore, target: str, exc: MemoryToolError) -> str:
        error = str(exc).split("\nCurrent entries:", 1)[0]
        payload: dict[str, Any] = {"success": False, "error": error}
        counts = isinstance(exc, MemoryCapacityError) or (
            isinstance(exc, MemoryMatchError) and not exc.matches and exc.old_text
        )
        if isinstance(exc, MemoryThreatError):
            payload["threat"] = exc.pattern or exc.category
        elif isinstance(exc, MemoryCapacityError):
            payload["current_entries"] = exc.entries
            payload["usage"] = f"{exc.usage:,}/{exc.limit:,}"
        elif isinstance(exc, MemoryMatchError):
            if exc.matches:
                payload["matches"] = exc.matches
            elif exc.old_text:
                payload["error"] = (
                    f"{error} Retry with the exact text of an entry listed in current_entries."
                )
            store_state = self._refresh(store, target)
            payload.update(store_state)
        if counts:
            self._failures += 1
            if self._failures > MAX_FAILURES_PER_TURN:
                return _dump(
                    {"success": False, "done": True, "error": _BREAKER.format(error=error)}
                )
        return _dump(payload)

    def _refresh(self, store: MemoryStore, target: str) -> dict[str, Any]:
        # The store only updates its live lists on success; show the file as it is now.
        store.load_live(target)
        return self._state(store, target)

    @staticmethod
    def _change(result: WriteResult) -> list[dict[str, str]]:
        """What a replace or remove changed, entry by entry, so the model can check it."""
        changes = []
        for write in result.writes:
            if write.action == "replace":
                old = preview(write.previous_content or "")
                changes.append({"action": "replace", "old": old, "new": preview(write.content)})
            elif write.action == "remove":
                changes.append({"action": "remove", "old": preview(write.content)})
        return changes

    def _success(self, result: WriteResult) -> str:
        if self.profile == "refined":
            return _dump(
                {
                    "success": True,
                    "done": True,
                    "target": result.target,
                    "usage": result.usage,
                    "entry_count": len(result.entries),
                    "message": result.message,
                    **({"changed": changed} if (changed := self._change(result)) else {}),
                    "note": "Saved. This memory update is complete; do not repeat it.",
                }
            )
        return _dump(
            {
                "success": True,
                "target": result.target,
                "entries": result.entries,
                "usage": usage_text(result.usage_chars, result.limit),
                "entry_count": len(result.entries),
                "message": result.message,
                **({"changed": changed} if (changed := self._change(result)) else {}),
            }
        )
