"""The door of ``sessions import``: what the store takes in must go back out as a transcript.

``compress`` refuses a transcript that :func:`~palimpsest.messages.validate_transcript`
rejects; import applies the same rule, so that ``export`` never hands back something a
provider (or ``compress``) would refuse. A refusal is a
:class:`~palimpsest.errors.TranscriptError` naming the file and the message index, raised
before anything is stored.

``lenient=True`` first applies the repairs the compressor applies to a host's messages
(:func:`~palimpsest.compaction.repair.normalize_messages`: non-string content becomes its
JSON text, calls get ids, names and JSON ``arguments``, legacy ``function`` messages become
tool results; then :func:`~palimpsest.compaction.assemble.sanitize_tool_pairs`: orphan
results go, an unanswered call gets a result saying none was recorded). What those repairs cannot fix (a role that
is not a string or not a known role, ``tool_calls`` that are not a list, a message that is
not an object) is refused in lenient mode too, and the repaired list is validated again.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import TranscriptError
from ..messages import validate_transcript

__all__ = ["MISSING_RESULT", "checked_for_import"]

MISSING_RESULT = "[No result was recorded for this call in the imported transcript.]"
"""Content of the result ``lenient`` adds for a call the transcript left unanswered."""


def checked_for_import(
    messages: Sequence[Any], *, lenient: bool = False, origin: str | Path | None = None
) -> list[dict[str, Any]]:
    """``messages`` as they will be stored: unchanged (strict) or repaired (``lenient``).

    Raises :class:`TranscriptError` (``<origin>: message <index>: <problem>``) for a list
    that is not a valid transcript, or, when ``lenient``, one the repairs cannot make valid.
    """
    batch = list(messages)
    if not lenient:
        validate_transcript(batch, path=origin)
        return [dict(m) for m in batch]
    # Imported here: the compressor package is heavy, and a strict import does not need it.
    from ..compaction.assemble import sanitize_tool_pairs
    from ..compaction.markers import COMPACTION_STUB_RESULT
    from ..compaction.repair import check_messages, normalize_messages

    try:
        check_messages(batch)
    except TranscriptError as exc:
        raise TranscriptError(exc.problem, path=origin, index=exc.index) from None
    repaired, _ = normalize_messages(batch)
    paired, _ = sanitize_tool_pairs(repaired)
    known = {id(m) for m in repaired}
    out = [dict(m) for m in paired]
    for new, message in zip(out, paired, strict=True):
        # A stub result the pairing added: its compaction wording would be wrong here.
        if id(message) not in known and new.get("content") == COMPACTION_STUB_RESULT:
            new["content"] = MISSING_RESULT
    validate_transcript(out, path=origin)
    return out
