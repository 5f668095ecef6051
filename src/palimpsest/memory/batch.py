"""The batch form of the memory tool: several operations applied to a copy, all or nothing.

Kept apart from the store because it is pure: it takes the entries read under the lock and
returns the new list plus the writes to mirror, or raises with the failing operation named
(``Operation <i> (<action>): <reason>``, MEM-26). The store does the locking and capacity
check on the final state.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import MemoryMatchError, MemoryToolError
from .entries import MemoryWrite, Target, find_entry

__all__ = ["apply_operations"]

_NOTHING_APPLIED = " No operations were applied."


def _field(op: Mapping[str, Any], name: str) -> str:
    value = op.get(name)
    return value.strip() if isinstance(value, str) else ""


def apply_operations(
    target: Target,
    entries: Sequence[str],
    shown: Sequence[str],
    operations: Sequence[Mapping[str, Any]],
) -> tuple[list[str], list[MemoryWrite]]:
    """``(new entries, writes)`` after applying ``operations`` in order to a copy."""
    work = list(entries)
    view = list(shown)
    writes: list[MemoryWrite] = []
    for i, op in enumerate(operations):
        action = op.get("action") if isinstance(op, Mapping) else None
        where = f"Operation {i} ({action})"
        content, old_text = (_field(op, "content"), _field(op, "old_text")) if action else ("", "")
        try:
            if action == "add":
                if not content:
                    raise MemoryToolError("content is required.")
                if content not in work:
                    work.append(content)
                    view.append(content)
                    writes.append(MemoryWrite("add", target, content))
            elif action in ("replace", "remove"):
                if not old_text:
                    raise MemoryMatchError("old_text is required.", old_text="")
                if action == "replace" and not content:
                    raise MemoryToolError("content is required.")
                index = find_entry(work, view, old_text)
                previous = work[index]
                if action == "replace":
                    work[index] = view[index] = content
                    writes.append(MemoryWrite("replace", target, content, old_text, previous))
                else:
                    del work[index], view[index]
                    writes.append(MemoryWrite("remove", target, previous, old_text, previous))
            else:
                raise MemoryToolError("Unknown action. Use: add, replace, remove.")
        except MemoryMatchError as exc:
            raise MemoryMatchError(
                f"{where}: {exc}{_NOTHING_APPLIED}", old_text=exc.old_text, matches=exc.matches
            ) from None
        except MemoryToolError as exc:
            raise MemoryToolError(f"{where}: {exc}{_NOTHING_APPLIED}") from None
    return work, writes
