"""Moving conversations in and out of the store as transcript files.

Export gives OpenAI-format messages, the library's own format; import accepts every
format :func:`palimpsest.messages.load_transcript` reads. ``export(import(f))`` equals
``load_transcript(f)`` message for message (the codec keeps keys it has no column for).

A chain export (``chain=True``) reconstructs the whole logical conversation: the first
session's messages, then for each compression continuation only the messages it gained
after it was created. The compacted copy a continuation starts with (summary, protected
head and tail, all duplicates of the parent's originals) is skipped, so the result is the
lossless original history in order, not a mix of originals and summaries.
"""

from __future__ import annotations

from pathlib import Path

import apsw

from ..messages import Message, content_text, load_transcript
from .sessions import SessionStore, new_session_id
from .titles import MAX_TITLE_LENGTH, next_title_in_lineage, sanitize_title

__all__ = ["export_messages", "import_file"]


def export_messages(store: SessionStore, session_id: str, *, chain: bool = False) -> list[Message]:
    """The session's messages, or with ``chain`` its compression chain's originals."""
    store.require_session(session_id)
    if not chain:
        return store.get_messages(session_id)
    ids = store.compression_chain(session_id)
    out: list[Message] = []
    for index, sid in enumerate(ids):
        messages = store.get_messages(sid)
        skip = store.seed_message_count(sid) if index else 0
        out.extend(messages[skip:])
    return out


def import_file(
    store: SessionStore,
    path: str | Path,
    *,
    format: str = "auto",
    source: str = "import",
    title: str | None = None,
) -> str:
    """Store the transcript at ``path`` as a new session and return its id.

    The title defaults to the file name; a title already in use gets the next number
    (``notes.json #2``). The first system message also becomes the session's
    ``system_prompt``. A file that cannot be read raises ``TranscriptError`` before
    anything is written.
    """
    messages = load_transcript(path, format=format)
    wanted = sanitize_title(title) or sanitize_title(Path(path).name[:MAX_TITLE_LENGTH])
    system = next((m for m in messages if m.get("role") == "system"), None)
    prompt = content_text(system.get("content")) if system is not None else None
    sid = new_session_id()

    def store_all(con: apsw.Connection) -> None:
        # Nested store calls join this transaction, so the import lands whole or not at all.
        store.create_session(sid, source=source, system_prompt=prompt)
        if wanted is not None:
            store.set_session_title(sid, next_title_in_lineage(con, wanted))
        store.append_messages(sid, messages)

    store.database.write(store_all)
    return sid
