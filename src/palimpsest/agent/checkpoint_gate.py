"""Fail-closed memory checkpoints: whether a compaction may go on after its checkpoint.

Before a compaction the agent flushes memory (:mod:`.flush`) and asks the memory
providers for their checkpoint (:mod:`palimpsest.memory.checkpoint`). By default that is
best effort: a failure is a warning and the compaction goes on, because a compaction that
does not happen leaves the context over its threshold, and the summary keeps most of what
the flush was meant to save. With ``memory.checkpoint_required: true`` the user chose the
other side: a compaction whose checkpoint failed is **not performed**, the conversation
stays exactly as it was, and the user is told why (a ``memory_checkpoint_failed`` warning
and a :class:`~.events.CompactionEvent` with ``compacted=False`` and the reason).

The checkpoint failed when any of these happened:

* the flush's model call raised (the provider refused, the request overflowed, ...);
* the flush had something to save but could not be sent (it does not fit the window);
* a memory write of the flush was refused (the tool answered ``success: false``);
* a memory provider's ``on_pre_compress`` raised, or the provider declares no checkpoint
  API version (its failures could go unseen).

A flush skipped for want of anything to save (no memory, the tool disabled, too few turns,
``memory.flush_before_compression: false``) is not a failure.

Every path of the loop already copes with a compaction that did not compact, so a blocked
one cannot loop: preflight sends the request as it is; after a tool round the turn goes on;
reactive recovery (the provider refused the request as too long) ends the turn with this
reason as its error instead of retrying; a manual ``/compress`` reports it. A later turn
(or ``/compress``) tries the checkpoint again, one flush per try, so the first one that
succeeds compacts; the tool rounds of the turn in which it failed do not retry it
(:data:`RETRY_NEXT_TURN`), so a long tool loop does not pay a failing flush per round.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..memory.checkpoint import Checkpoint, refused_write
from ..memory.manager import MemoryManager
from .flush import FlushResult

__all__ = [
    "BLOCKED_CODE",
    "RETRY_NEXT_TURN",
    "blocked_message",
    "checkpoint_failure",
    "required_checkpoint",
]

BLOCKED_CODE = "memory_checkpoint_failed"
"""The :class:`~.events.WarningEvent` code of a compaction blocked by its checkpoint."""


RETRY_NEXT_TURN = (
    "the memory checkpoint failed earlier in this turn and memory.checkpoint_required is on; "
    "it is tried again in the next turn"
)
"""The reason of an after-round compaction skipped because the checkpoint failed this turn."""


def checkpoint_failure(flush: FlushResult, checkpoint: Checkpoint | None) -> str | None:
    """Why the memory checkpoint failed (every reason, ``; ``-joined), or ``None``."""
    problems: list[str] = []
    if flush.error:
        problems.append(f"the memory flush failed ({flush.error})")
    if flush.unfit:
        problems.append(
            "the memory flush could not be sent: the conversation does not fit the window"
        )
    refused = [error for error in map(refused_write, flush.results) if error]
    if refused:
        problems.append("a memory write of the flush was refused: " + "; ".join(refused))
    if checkpoint is not None:
        problems.extend(checkpoint.failures)
    return "; ".join(problems) or None


def required_checkpoint(
    memory: MemoryManager | None,
    messages: Sequence[Mapping[str, Any]],
    flush: FlushResult,
    note: str,
) -> tuple[str, str | None]:
    """``(memory_context, failure)`` when the checkpoint is required.

    ``memory_context`` is what the summarizer gets, as on the best-effort path: the
    providers' texts and ``note`` (the ledger's). ``failure`` is
    :func:`checkpoint_failure`'s reason, ``None`` when the compaction may go on.
    """
    checkpoint = memory.checkpoint(messages) if memory is not None else None
    text = checkpoint.text if checkpoint is not None else ""
    context = "\n\n".join(t for t in (text, note) if t and t.strip())
    return context, checkpoint_failure(flush, checkpoint)


def blocked_message(reason: str) -> str:
    """What the user reads about a compaction the checkpoint blocked."""
    return (
        f"Compaction not performed: the memory checkpoint failed ({reason}), and "
        "memory.checkpoint_required is on, so the conversation was left as it was. Fix the "
        "cause and compact again (/compress), or set memory.checkpoint_required: false to "
        "compact with a best-effort checkpoint."
    )
