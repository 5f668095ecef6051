"""Speculative compaction in the agent: prepare the next compaction while the talk goes on.

:class:`~.speculative.SpeculativeCompactor` is the mechanism; this module binds it to an
:class:`~.loop.Agent` (through the :class:`~.state.AgentState` it extends):

* after every round below the threshold the loop calls :func:`observe`; at the
  compactor's mark (70% of the threshold by default) a background thread prepares the
  compaction of the history as it is;
* the preparation first runs what must come before any compaction (MEM-61): the memory
  flush, with the model, against the history it is about to summarize, then the memory
  providers' checkpoint and the ledger's note for the summarizer. So the flush has run
  before the transcript changes, as on every other path; it just does not stall the turn;
* at the threshold (after-round and preflight paths) :func:`take` swaps the candidate in
  when its span is unchanged: no model call stands between the crossing and the next
  request. Otherwise, and on the manual and reactive paths, the compaction runs
  synchronously, flush included, and any candidate is dropped.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ..compaction.compressor import ContextCompressor
from ..safety.redact import redact
from .checkpoint_gate import blocked_message, required_checkpoint
from .driver import drain
from .flush import FlushResult
from .speculative import SpeculativeCompactor

if TYPE_CHECKING:
    from .state import AgentState

__all__ = ["make_speculative", "observe", "take"]

log = logging.getLogger("palimpsest.agent")


def make_speculative(agent: AgentState, option: Any) -> SpeculativeCompactor | None:
    """The agent's compactor for ``Agent(speculative=...)``: ``True`` builds one on the
    agent's compressor (which must be a :class:`ContextCompressor`), an instance is used as
    given, ``None``/``False`` turns speculation off."""
    if option is None or option is False:
        return None
    if isinstance(option, SpeculativeCompactor):
        return option
    if option is True:
        if not isinstance(agent.compressor, ContextCompressor):
            raise TypeError("speculative=True needs the built-in ContextCompressor engine")
        return SpeculativeCompactor(agent.compressor, prepare=lambda m: _prepare(agent, m))
    raise TypeError(f"speculative must be a bool or a SpeculativeCompactor, not {option!r}")


def _prepare(agent: AgentState, messages: list[dict[str, Any]]) -> str:
    """In the background thread: flush, checkpoint, and the summarizer's memory context.
    The flush's events (warnings) are logged, since no one reads them off this thread."""
    flush = FlushResult(skipped="memory.flush_before_compression is off")
    if agent.flush_enabled:
        events, result = drain(agent.model, agent.flush_flow(messages))
        for event in events:
            log.info("speculative preparation: %s", getattr(event, "message", event))
        if result is not None and result.error:
            log.warning("memory flush (speculative) failed: %s", redact(result.error))
        flush = result if isinstance(result, FlushResult) else flush
    if agent.settings.memory.checkpoint_required:
        note = agent.ledger.summarizer_note()
        context, failed = required_checkpoint(agent.memory, messages, flush, note)
        if failed is not None:
            # no candidate: the compaction at the threshold runs synchronously, tries the
            # checkpoint again and tells the user if it is blocked
            raise RuntimeError(blocked_message(failed))
        return context
    return agent.compaction_context(messages)


def observe(agent: AgentState, tokens: int) -> None:
    """After a round that did not compact: start a preparation when the mark is reached."""
    if agent.speculative is not None:
        agent.aim_compaction()  # the candidate is prepared on a copy of the engine as it is
        agent.speculative.observe(agent.messages, tokens)


def take(agent: AgentState, path: str, before: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The prepared result for this compaction, or ``None`` to compact synchronously (the
    candidate is then dropped: a synchronous compaction supersedes it)."""
    spec = agent.speculative
    if spec is None:
        return None
    taken = None
    if path in ("after_round", "preflight"):
        taken = spec.take(before, overhead=agent.request_overhead())
    if taken is None:
        spec.cancel()
    return taken
