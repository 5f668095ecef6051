"""Moving conversations in and out of the store as transcript files.

Export gives OpenAI-format messages, the library's own format; import accepts every
format :func:`palimpsest.messages.load_transcript` reads. ``export(import(f))`` equals
``load_transcript(f)`` message for message (the codec keeps keys it has no column for).

A chain export (``chain=True``) reconstructs the whole logical conversation: the first
session's messages, then for each compression continuation only the messages it gained
after it was created. The compacted copy a continuation starts with (summary, protected
head and tail, all duplicates of the parent's originals) is skipped, so the result is the
lossless original history in order, not a mix of originals and summaries.

Import refuses what ``compress`` refuses (:mod:`.import_check`; ``lenient`` repairs first),
so that whatever the store holds exports as a valid transcript.

Import records a hash of the transcript's content (its messages as canonical JSON, so
the same conversation saved with other whitespace or key order is the same) in
``state_meta``; importing it again raises :class:`DuplicateTranscriptError` naming the
session that holds it, unless ``again=True`` asks for another copy.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import IO

import apsw

from ..errors import DuplicateTranscriptError
from ..messages import Message, content_text, load_transcript
from .archive import original_messages
from .contract import Store as SessionStore
from .import_check import checked_for_import
from .session_admin import import_key
from .session_ids import new_session_id
from .titles import MAX_TITLE_LENGTH, next_title_in_lineage, sanitize_title

__all__ = [
    "content_digest",
    "export_messages",
    "find_import",
    "import_file",
    "import_messages",
    "import_stream",
]


def export_messages(store: SessionStore, session_id: str, *, chain: bool = False) -> list[Message]:
    """The session's messages, or with ``chain`` its compression chain's originals."""
    store.require_session(session_id)
    if not chain:
        return store.get_messages(session_id)
    ids = store.compression_chain(session_id)
    out: list[Message] = []
    for index, sid in enumerate(ids):
        messages = original_messages(store, sid)  # what in-place compactions archived too
        skip = store.seed_message_count(sid) if index else 0
        out.extend(messages[skip:])
    return out


def content_digest(messages: Sequence[Message]) -> str:
    """SHA-256 of the messages as canonical JSON (sorted keys, no spacing)."""
    text = json.dumps(
        list(messages), sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def find_import(con: apsw.Connection, digest: str) -> str | None:
    """The stored session a transcript with this digest was imported as, if it still exists."""
    found = con.execute(
        "SELECT s.id FROM state_meta AS m JOIN sessions AS s ON s.id = m.value WHERE m.key = ?",
        (import_key(digest),),
    ).fetchall()
    return str(found[0][0]) if found else None


def import_messages(
    store: SessionStore,
    messages: Sequence[Message],
    *,
    source: str = "import",
    title: str | None = None,
    again: bool = False,
    origin: str | None = None,
    lenient: bool = False,
) -> str:
    """Store ``messages`` as a new session and return its id.

    ``messages`` must pass :func:`~palimpsest.messages.validate_transcript`, as ``compress``
    requires, else :class:`~palimpsest.errors.TranscriptError` names the message and
    nothing is stored; ``lenient`` first repairs what the compressor repairs
    (:mod:`.import_check`). A title already in use gets the next number (``notes.json #2``); the first system
    message also becomes the session's ``system_prompt``. When the same content was
    imported before and that session still exists, :class:`DuplicateTranscriptError`
    names it, unless ``again``. ``origin`` (a file name) only words the error.
    """
    batch = checked_for_import(messages, lenient=lenient, origin=origin)
    digest = content_digest(batch)
    wanted = sanitize_title(title)
    system = next((m for m in batch if m.get("role") == "system"), None)
    prompt = content_text(system.get("content")) if system is not None else None
    sid = new_session_id()

    def store_all(con: apsw.Connection) -> None:
        existing = find_import(con, digest)
        if existing is not None and not again:
            raise DuplicateTranscriptError(existing, digest, origin)
        # Nested store calls join this transaction, so the import lands whole or not at all.
        store.create_session(sid, source=source, system_prompt=prompt)
        if wanted is not None:
            store.set_session_title(sid, next_title_in_lineage(con, wanted))
        store.append_messages(sid, batch)
        if existing is None:  # the first live copy keeps the record
            con.execute(
                "INSERT OR REPLACE INTO state_meta (key, value) VALUES (?, ?)",
                (import_key(digest), sid),
            )

    store.database.write(store_all)
    return sid


def import_stream(
    store: SessionStore,
    stream: IO[str],
    *,
    format: str = "auto",
    source: str = "import",
    title: str | None = None,
    again: bool = False,
    name: str = "<stdin>",
    lenient: bool = False,
) -> str:
    """Like :func:`import_file`, reading the transcript from an open text stream."""
    messages = load_transcript(stream, format=format, path_hint=name)
    return import_messages(
        store, messages, source=source, title=title, again=again, origin=name, lenient=lenient
    )


def import_file(
    store: SessionStore,
    path: str | Path,
    *,
    format: str = "auto",
    source: str = "import",
    title: str | None = None,
    again: bool = False,
    lenient: bool = False,
) -> str:
    """Store the transcript at ``path`` as a new session and return its id.

    The title defaults to the file name; see :func:`import_messages` for numbering, for
    the duplicate check (``again`` to store another copy) and for validation (``lenient``
    to repair what the compressor repairs). A file that cannot be read, or that is not a
    valid transcript, raises ``TranscriptError`` before anything is written.
    """
    messages = load_transcript(path, format=format)
    wanted = sanitize_title(title) or sanitize_title(Path(path).name[:MAX_TITLE_LENGTH])
    return import_messages(
        store,
        messages,
        source=source,
        title=wanted,
        again=again,
        origin=str(path),
        lenient=lenient,
    )
