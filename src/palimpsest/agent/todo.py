"""The agent's task list: kept by code, written by the model, re-injected after compaction.

A summary may blur which steps are done; this list does not. After every compaction the
loop appends :meth:`TodoStore.format_for_injection` (spec agent-loop.md AL-17) so the model
sees its active tasks verbatim, and only the active ones, so it is not tempted to redo
finished work. The rules (AL-18):

* statuses are ``pending``, ``in_progress``, ``completed``, ``cancelled``; anything else
  becomes ``pending``;
* a write is all-or-nothing: an item with empty or missing content is a ``ValueError`` and
  the previous list is kept;
* content is capped at 4,000 characters (ending ``… [truncated]``), a list at 256 items;
* duplicate ids in one write: the last occurrence wins and takes the last position;
* subtasks (``parent``) render indented two spaces per level, and a parent stays visible
  in the injection while any descendant is active.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .registry import tool
from .tools import Tool

__all__ = [
    "INJECTION_HEADER",
    "MAX_CONTENT_CHARS",
    "MAX_ITEMS",
    "STATUSES",
    "TodoItem",
    "TodoStore",
    "todo_tool",
]

INJECTION_HEADER = "[Your active task list was preserved across context compression]"
"""First line of the post-compaction snapshot; the compressor recognises it (CC-53)."""

STATUSES = ("pending", "in_progress", "completed", "cancelled")
ACTIVE = frozenset({"pending", "in_progress"})
MARKERS = {"completed": "[x]", "in_progress": "[>]", "pending": "[ ]", "cancelled": "[~]"}
UNKNOWN_MARKER = "[?]"

MAX_CONTENT_CHARS = 4_000
MAX_ITEMS = 256
TRUNCATION_SUFFIX = "… [truncated]"


@dataclass(frozen=True)
class TodoItem:
    """One task. ``parent`` is the id of the task it belongs to, if any."""

    id: str
    content: str
    status: str
    parent: str | None = None


class TodoStore:
    """The current task list; safe to use from parallel tool calls."""

    def __init__(self) -> None:
        self._items: list[TodoItem] = []
        self._lock = threading.Lock()

    def write(self, items: Sequence[Mapping[str, Any]], *, merge: bool = False) -> list[TodoItem]:
        """Replace the list (or, with ``merge``, update and extend it by id); all or nothing."""
        given: object = items  # the model's JSON may be anything
        if isinstance(given, str | bytes) or not isinstance(given, Sequence):
            raise ValueError("todos must be a list of task objects")
        with self._lock:
            current = {item.id: item for item in self._items} if merge else {}
            incoming = _dedupe(
                [_read_entry(entry, index, current) for index, entry in enumerate(items)]
            )
            if merge:
                merged = list(self._items)
                positions = {item.id: i for i, item in enumerate(merged) if item.id}
                for item in incoming:
                    if item.id and item.id in positions:
                        merged[positions[item.id]] = item
                    else:
                        merged.append(item)
                incoming = merged
            self._items = incoming[:MAX_ITEMS]
            return list(self._items)

    def items(self) -> list[TodoItem]:
        with self._lock:
            return list(self._items)

    def render(self) -> str:
        """The whole list, one line per task, subtasks indented; ``(no tasks)`` when empty."""
        items = self.items()
        if not items:
            return "(no tasks)"
        return "\n".join(_line(item, depth) for item, depth in _walk(items))

    def format_for_injection(self) -> str | None:
        """The active tasks under the AL-17 header, or ``None`` when nothing is active."""
        items = self.items()
        keep = _active_with_ancestors(items)
        if not keep:
            return None
        lines = [_line(item, depth) for item, depth in _walk(items) if id(item) in keep]
        return "\n".join([INJECTION_HEADER, *lines])

    def counts(self) -> dict[str, int]:
        """How many tasks have each status."""
        counts = dict.fromkeys(STATUSES, 0)
        for item in self.items():
            counts[item.status] = counts.get(item.status, 0) + 1
        return counts

    def to_list(self) -> list[dict[str, Any]]:
        """The list as plain dicts, for persistence (``from_list`` reads it back)."""
        out: list[dict[str, Any]] = []
        for item in self.items():
            entry: dict[str, Any] = {"id": item.id, "content": item.content, "status": item.status}
            if item.parent is not None:
                entry["parent"] = item.parent
            out.append(entry)
        return out

    @classmethod
    def from_list(cls, data: Sequence[Mapping[str, Any]]) -> TodoStore:
        """A store holding a list saved by :meth:`to_list` (validated like a write)."""
        store = cls()
        store.write(data)
        return store


def _read_entry(entry: object, index: int, current: Mapping[str, TodoItem]) -> TodoItem:
    """One validated item; in a merge an existing id may omit what it does not change."""
    if not isinstance(entry, Mapping):
        raise ValueError(f"todo #{index + 1} must be an object with id, content and status")
    raw_id = entry.get("id")
    item_id = "" if raw_id is None else str(raw_id).strip()
    previous = current.get(item_id) if item_id else None
    content = entry.get("content", previous.content if previous else None)
    if not isinstance(content, str) or not content.strip():
        label = f"id {item_id!r}" if item_id else f"#{index + 1}"
        raise ValueError(
            f"todo {label} has empty or missing content; nothing was changed "
            "(every task needs a non-empty 'content' string)"
        )
    if len(content) > MAX_CONTENT_CHARS:
        content = content[: MAX_CONTENT_CHARS - len(TRUNCATION_SUFFIX)] + TRUNCATION_SUFFIX
    status = entry.get("status", previous.status if previous else "pending")
    status = str(status).strip().lower() if status is not None else "pending"
    if status not in STATUSES:
        status = "pending"
    parent_raw = entry.get("parent", previous.parent if previous else None)
    parent = None if parent_raw is None else str(parent_raw).strip()
    if not parent or parent == item_id:
        parent = None
    return TodoItem(id=item_id, content=content, status=status, parent=parent)


def _dedupe(items: list[TodoItem]) -> list[TodoItem]:
    """Last occurrence of an id wins and takes the last position; id-less items all stay."""
    last = {item.id: i for i, item in enumerate(items) if item.id}
    return [item for i, item in enumerate(items) if not item.id or last[item.id] == i]


def _walk(items: list[TodoItem]) -> list[tuple[TodoItem, int]]:
    """Items in display order (each subtask under its parent) with their depth."""
    ids = {item.id for item in items if item.id}
    children: dict[str, list[TodoItem]] = {}
    roots: list[TodoItem] = []
    for item in items:
        if item.parent is not None and item.parent in ids:
            children.setdefault(item.parent, []).append(item)
        else:
            roots.append(item)
    out: list[tuple[TodoItem, int]] = []
    seen: set[int] = set()

    def visit(item: TodoItem, depth: int) -> None:
        if id(item) in seen:
            return
        seen.add(id(item))
        out.append((item, depth))
        for child in children.get(item.id, []) if item.id else []:
            visit(child, depth + 1)

    for root in roots:
        visit(root, 0)
    for item in items:  # a parent cycle leaves items unreachable from any root
        visit(item, 0)
    return out


def _active_with_ancestors(items: list[TodoItem]) -> set[int]:
    """Identities of the active items and of every ancestor of one."""
    by_id = {item.id: item for item in items if item.id}
    keep: set[int] = set()
    for item in items:
        if item.status not in ACTIVE:
            continue
        node: TodoItem | None = item
        while node is not None and id(node) not in keep:
            keep.add(id(node))
            node = by_id.get(node.parent) if node.parent is not None else None
    return keep


def _line(item: TodoItem, depth: int) -> str:
    marker = MARKERS.get(item.status, UNKNOWN_MARKER)
    return f"{'  ' * depth}- {marker} {item.id or '?'}. {item.content} ({item.status})"


_TODO_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "todos": {
            "type": "array",
            "description": "The task list to write. Leave out to read the current list.",
            "maxItems": MAX_ITEMS,
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": ["string", "integer"], "description": "Short unique id."},
                    "content": {"type": "string", "description": "What the task is."},
                    "status": {
                        "type": "string",
                        "description": "pending | in_progress | completed | cancelled "
                        "(anything else counts as pending).",
                    },
                    "parent": {
                        "type": ["string", "integer", "null"],
                        "description": "Id of the parent task, for a subtask.",
                    },
                },
            },
        },
        "merge": {
            "type": "boolean",
            "description": "Update and extend the list by id instead of replacing it.",
            "default": False,
        },
    },
    "additionalProperties": False,
}


def todo_tool(store: TodoStore) -> Tool:
    """The ``todo`` tool over ``store``: read the list, or write it (replace or merge)."""

    def todo(todos: list[dict[str, Any]] | None = None, merge: bool = False) -> str:
        if todos is not None:
            store.write(todos, merge=merge)
        counts = store.counts()
        total = sum(counts.values())
        summary = (
            f"{total} task(s): {counts['pending']} pending, {counts['in_progress']} in progress, "
            f"{counts['completed']} completed, {counts['cancelled']} cancelled"
        )
        return f"{store.render()}\n\n{summary}"

    return tool(
        name="todo",
        description=(
            "Read or write your task list for multi-step work. Call with no arguments to read "
            "it; pass `todos` (id, content, status: pending | in_progress | completed | "
            "cancelled, optional parent id) to replace it, or with merge=true to update and "
            "add items by id. Active tasks are kept for you across context compression."
        ),
        parameters=_TODO_SCHEMA,
    )(todo)
