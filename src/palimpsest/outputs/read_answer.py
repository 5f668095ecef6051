"""The text the ``read_output`` tool answers: a window of a saved output, or a grep in it.

One answer for every front end that offers the tool (the agent's built-in tool and the MCP
server's), so a model sees the same headers, the same "read on with offset=" hint and the
same listing of saved outputs whichever way it asked. Failures raise: ``ValueError`` for a
limit out of range, ``FileNotFoundError`` (listing what is saved) for an unknown name, and
the store's :class:`~palimpsest.errors.UserError` for an ambiguous prefix; the caller turns
them into its own kind of tool error.
"""

from __future__ import annotations

from .store import OutputStore

__all__ = ["DEFAULT_READ_LIMIT", "MAX_MATCHES", "MAX_READ_LIMIT", "read_output_text"]

DEFAULT_READ_LIMIT = 20_000
"""Bytes ``read_output`` returns when no ``limit`` is given."""
MAX_READ_LIMIT = 100_000
MAX_MATCHES = 50
"""Matching lines one grep answers with."""
_LISTED_OUTPUTS = 20


def read_output_text(
    outputs: OutputStore,
    name: str,
    offset: int = 0,
    limit: int = DEFAULT_READ_LIMIT,
    pattern: str = "",
) -> str:
    """Bytes ``offset``.. of the saved output ``name`` or, with ``pattern``, its matching lines."""
    if not 1 <= limit <= MAX_READ_LIMIT:
        raise ValueError(f"limit must be between 1 and {MAX_READ_LIMIT:,}")
    found = outputs.resolve(name)
    if found is None:
        raise FileNotFoundError(f"no saved output named {name!r}. {_listing(outputs)}")
    if not found.is_text:
        return (
            f"[output {found.digest[:12]}: {found.kind}, {found.size_bytes:,} bytes; "
            "binary data is not shown as text]"
        )
    label = f"output {found.digest[:12]}"
    if pattern:
        matches = outputs.grep(found.digest, pattern, max_matches=MAX_MATCHES)
        more = (
            " (the first ones; narrow the pattern for others)"
            if len(matches) == MAX_MATCHES
            else ""
        )
        lines = [f"[{label}: {len(matches)} lines contain {pattern!r}{more}]"]
        lines += [f"line {m.line_number} (offset {m.byte_offset}): {m.line}" for m in matches]
        return "\n".join(lines)
    window = outputs.read_window(found.digest, offset, limit)
    header = f"[{label}: bytes {window.start:,}-{window.end:,} of {window.total_bytes:,}]"
    footer = f"\n[read on with offset={window.end}]" if window.has_more else ""
    return f"{header}\n{window.text}{footer}"


def _listing(outputs: OutputStore) -> str:
    saved = outputs.list()
    if not saved:
        return "No outputs are saved."
    shown = ", ".join(item.digest[:12] for item in saved[:_LISTED_OUTPUTS])
    more = f" (+{len(saved) - _LISTED_OUTPUTS} more)" if len(saved) > _LISTED_OUTPUTS else ""
    return f"Saved outputs, newest first: {shown}{more}."
