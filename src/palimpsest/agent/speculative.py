"""Speculative compaction: the summary is written before the threshold, swapped in at it.

A synchronous compaction stalls the conversation for as long as the summary model takes,
seconds to minutes, right when the user is waiting for the next answer. A
:class:`SpeculativeCompactor` starts the same compaction earlier, at a mark below the
threshold (:data:`SPECULATIVE_MARK`, 70% of it), on a background thread while the
conversation goes on. When the after-round check says compress, :meth:`~SpeculativeCompactor.take`
returns the prepared list at once, with the messages added since appended to its tail, or
``None``, and the caller compacts synchronously as it would have without this class.

What keeps the swap honest:

- **The live compressor is left alone until the swap.** The preparation runs on a shallow
  copy of it (its own stats, counters and token memo; quiet, no status callback). On
  ``take`` the copy's outcome is recorded on the live compressor by the compressor's own
  after-compaction bookkeeping, as if the compaction had happened then: count, previous
  summary, stats, anti-thrashing, awaiting real usage. The summarizer is shared on purpose:
  its failures and cooldowns are facts about the summary model, not about one compaction.
- **The span must be unchanged.** At the mark the messages to compact are copied, their
  dicts and lists only (strings are immutable and stay shared), and the background works
  on that copy alone. At ``take`` the caller's messages are compared with it in one
  C-level list comparison: an untouched string compares by pointer, a message rebuilt
  with equal content compares equal, an edit in place shows as a difference. On 5,000
  real messages (5 MB of JSON) ``observe`` costs about 40 ms, once per preparation, and
  ``take`` a few ms (``benchmarks/speculative.py``); a digest of their JSON takes 150 ms.
- **Only settled history is prepared.** A trailing assistant message whose tool calls are
  not all answered is left out with what follows it: its results arrive later, and a
  candidate that had stubbed or summarized the call would be broken by them.
- **It must still fit.** The candidate plus the messages added since must fit the window
  minus the output reserve and stay under the threshold (a result over it would be
  compacted again at the next check: two summaries where one would do). The price of
  the swap: everything said between the mark and the threshold stays verbatim, so the
  result is larger than a synchronous compaction's and the next threshold comes sooner
  (75% against 55% of the threshold in the benchmark); a later ``mark`` narrows the gap
  and leaves the summary less time.
- **No stale reuse.** A candidate is dropped when the span changed or when the live
  compressor has moved on without it (another compaction, a reset, a new model window).
- **Failures are states.** Whatever goes wrong in the background (the ``prepare`` hook, the
  compressor, a summary that fell back to the deterministic one) becomes state
  ``"failed"`` with the error kept, never an exception in the caller's thread; ``take``
  returns ``None`` and the caller compacts synchronously. A failed candidate is not
  retried for the same history: a failing summary model is not hammered every round.
"""

from __future__ import annotations

import copy
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import islice
from typing import Any, Final, Literal

from ..compaction.compressor import ContextCompressor
from ..compaction.stats import CompressionStats
from ..errors import SummaryError
from ..messages import call_id, tool_calls_of
from ..safety.redact import redact
from ..tokens import ExactCounter

__all__ = ["SPECULATIVE_MARK", "SpeculativeCompactor"]

logger = logging.getLogger("palimpsest.agent")

SPECULATIVE_MARK: Final = 0.70
"""Where a preparation starts: this share of the compressor's ``threshold_tokens``."""

State = Literal["idle", "running", "ready", "failed"]
Message = dict[str, Any]
Prepare = Callable[[list[Message]], str]


@dataclass(eq=False)
class _Job:
    """One preparation: the span it was made from, and what became of it."""

    prefix: list[Message]
    """The copy of the settled messages the candidate compacts (never handed out)."""
    marks: tuple[object, ...]
    live_stats: CompressionStats
    """The live compressor's ``last_stats`` at the start: every compress replaces it."""
    worker: ContextCompressor
    done: threading.Event = field(default_factory=threading.Event)
    state: State = "running"
    result: list[Message] | None = None
    error: BaseException | None = None


class SpeculativeCompactor:
    """Prepares the next compaction of one conversation in the background.

    ``compressor`` is the conversation's live :class:`ContextCompressor`. ``mark`` is the
    share of its ``threshold_tokens`` at which :meth:`observe` starts a preparation.
    ``prepare(messages) -> memory_context`` runs in the background before the summary (a
    memory flush, a provider checkpoint); it must not modify ``messages``, and its text
    goes to the summarizer as source material. One background thread at most, a daemon.
    """

    def __init__(
        self,
        compressor: ContextCompressor,
        *,
        mark: float = SPECULATIVE_MARK,
        prepare: Prepare | None = None,
    ) -> None:
        if not isinstance(compressor, ContextCompressor):
            raise TypeError(
                f"SpeculativeCompactor needs a ContextCompressor, not {type(compressor).__name__}"
            )
        if isinstance(mark, bool) or not isinstance(mark, int | float) or not 0 < mark < 1:
            raise ValueError(f"mark must be a share of the threshold in (0, 1), got {mark!r}")
        self._compressor = compressor
        self.mark = float(mark)
        self._prepare = prepare
        self._lock = threading.Lock()
        self._job: _Job | None = None
        self._busy = False  # a background thread is at work, perhaps on a dropped job
        self._spent: _Job | None = None  # the last taken job, freed by the next observe
        self._taken: CompressionStats | None = None
        self._closed = False

    # -- what the caller sees ----------------------------------------------------------

    @property
    def state(self) -> State:
        """``"idle"`` (no candidate), ``"running"``, ``"ready"`` or ``"failed"``."""
        with self._lock:
            return self._job.state if self._job is not None else "idle"

    @property
    def error(self) -> BaseException | None:
        """Why the candidate failed (``None`` unless ``"failed"``); its text is whatever the
        summarizer or the hook raised: :func:`~palimpsest.safety.redact.redact` it."""
        with self._lock:
            job = self._job
            return job.error if job is not None and job.state == "failed" else None

    def last_stats(self) -> CompressionStats | None:
        """The stats of the last candidate :meth:`take` swapped in (``None`` before any)."""
        return self._taken

    # -- the two calls of the loop -----------------------------------------------------

    def observe(
        self,
        messages: Sequence[Message],
        prompt_tokens: int,
        *,
        focus: str | None = None,
    ) -> bool:
        """After a model round: start a preparation when the mark is reached.

        ``prompt_tokens`` is the round's real prompt size (or the estimate when the
        provider reported none; a negative value, such as the compressor's "awaiting real
        usage", is unknown and starts nothing). A preparation starts when ``prompt_tokens``
        is at or above ``mark * threshold_tokens`` and below the threshold (at the
        threshold the caller compacts now), no candidate exists for this history, no
        earlier thread is still finishing and the summary model is not cooling down.
        Returns True when it started one.
        """
        if isinstance(prompt_tokens, bool) or not isinstance(prompt_tokens, int):
            raise TypeError(f"prompt_tokens must be an int, got {type(prompt_tokens).__name__}")
        self._spent = None
        live = self._compressor
        threshold = live.threshold_tokens
        if self._closed or prompt_tokens < 0:
            return False
        if not self.mark * threshold <= prompt_tokens < threshold:
            return False
        with self._lock:
            job = self._job
            if job is not None:
                if self._current(job, messages):
                    return False  # running, ready, or failed for this very history
                self._job = None  # stale: the span or the compressor moved on
            if self._busy:
                return False  # a dropped preparation is still finishing
            if live.cooldown_remaining() > 0:
                return False  # the summary would be the deterministic fallback anyway
            settled = _settled_length(messages)
            prefix = [_copy_message(m) for m in islice(messages, settled)]
            job = _Job(prefix, _marks(live), live.last_stats, _detached(live))
            self._job = job
            thread = threading.Thread(
                target=self._run,
                args=(job, prompt_tokens, focus),
                name="palimpsest-speculative-compaction",
                daemon=True,
            )
            self._busy = True
            try:
                thread.start()
            except RuntimeError as exc:  # the interpreter is out of threads or shutting down
                self._busy = False
                job.state, job.error = "failed", exc
                job.done.set()
                return False
        return True

    def take(
        self, messages: Sequence[Message], *, wait: float = 0.0, overhead: int = 0
    ) -> list[Message] | None:
        """At the threshold: the compacted list, or ``None`` to compact synchronously.

        The list is the ready candidate followed by every message added since it was
        prepared (the newest: they belong to the tail), returned only when the prepared
        messages are still, unchanged, the first of ``messages``, the live compressor has
        not compacted or been reset since, and the result fits; the live compressor then
        records the compaction. A running preparation is waited for up to ``wait``
        seconds (0: not at all). ``overhead`` is what the next request carries besides the
        messages (system prompt, tool schemas): a result that would put the request at the
        threshold again is not taken. ``messages`` is never modified.
        """
        if wait < 0:
            raise ValueError(f"wait must be >= 0 seconds, got {wait}")
        with self._lock:
            job = self._job
        if job is None or self._closed:
            return None
        if wait > 0:
            job.done.wait(wait)
        with self._lock:
            if job is not self._job or job.state != "ready" or job.result is None:
                return None
            result = None
            if self._current(job, messages):
                result = self._swap(job, job.result, messages, overhead)
            self._job = None  # taken, or of no further use: more messages will not help
            # Freeing the job's copies takes milliseconds: after the request, not before.
            self._spent = job
        return result

    def cancel(self) -> None:
        """Drop the candidate (after a manual compaction, ``/undo``, ``/new``).

        A running preparation cannot be interrupted: it finishes in the background and
        its result is thrown away; no new one starts until it has.
        """
        with self._lock:
            self._job = self._spent = None

    def close(self) -> None:
        """Drop the candidate and start no more preparations; never waits for the thread."""
        self._closed = True
        self.cancel()

    # -- the background ----------------------------------------------------------------

    def _run(self, job: _Job, prompt_tokens: int, focus: str | None) -> None:
        result: list[Message] | None = None
        error: BaseException | None = None
        try:
            result = self._compact(job, prompt_tokens, focus)
        except BaseException as exc:  # a worker's failure is its candidate's state
            error = exc
            if job is self._job and not self._compressor.quiet_mode:
                logger.warning(
                    "Speculative compaction failed; the threshold will compact synchronously: %s",
                    redact(f"{type(error).__name__}: {error}"),
                )
        finally:
            with self._lock:
                if job is self._job:  # else cancelled or stale: the outcome is dropped
                    job.result, job.error = result, error
                    job.state = "ready" if error is None else "failed"
                self._busy = False
            job.done.set()

    def _compact(self, job: _Job, prompt_tokens: int, focus: str | None) -> list[Message]:
        context = self._prepare(job.prefix) if self._prepare is not None else ""
        if not isinstance(context, str):
            raise TypeError(f"prepare() must return a str, got {type(context).__name__}")
        result = job.worker.compress(job.prefix, prompt_tokens, focus, memory_context=context)
        stats = job.worker.last_stats
        if not stats.compressed:
            raise SummaryError(
                f"the compressor compacted nothing ({stats.reason})", cause_kind="no_op"
            )
        if stats.fallback_used:
            # The synchronous path may reach the summary model where this one did not.
            raise SummaryError(
                "the summary failed and only the fallback summary was written "
                f"({job.worker.last_summary_error or 'unknown error'})",
                cause_kind="fallback",
            )
        return result

    # -- checks and the swap (called with the lock held) -------------------------------

    def _current(self, job: _Job, messages: Sequence[Message]) -> bool:
        """Whether ``job`` was prepared from this history, unchanged, and this compressor state."""
        live = self._compressor
        if live.last_stats is not job.live_stats or _marks(live) != job.marks:
            return False
        n = len(job.prefix)
        if len(messages) < n:
            return False
        head = messages[:n] if isinstance(messages, list) else list(islice(messages, n))
        return head == job.prefix

    def _swap(
        self, job: _Job, candidate: list[Message], messages: Sequence[Message], overhead: int
    ) -> list[Message] | None:
        live, worker = self._compressor, job.worker
        stats = worker.last_stats
        new = list(islice(messages, len(job.prefix), None))
        result = [*candidate, *new]
        try:
            # Only what is new is measured: the swap's cost must not grow with the history.
            # By the rough rule a sum of two counts is within a token of the whole count.
            added = live.token_counter.count_messages(new) if new else 0
        except (TypeError, ValueError, RecursionError):
            return None  # the synchronous path reports what is wrong with the new messages
        after, before = stats.after_tokens + added, stats.before_tokens + added
        if after > live.fit_target_tokens or after + overhead >= live.threshold_tokens:
            return None
        taken = replace(
            stats,
            before_messages=stats.before_messages + len(new),
            before_tokens=before,
            tail_messages=stats.tail_messages + len(new),
            after_tokens=after,
            summary_rejections=list(stats.summary_rejections),
            extra=dict(stats.extra),
        )
        live.previous_summary = worker.previous_summary
        live.compression_count = worker.compression_count
        live.fallback_streak = worker.fallback_streak
        live.last_summary_dropped_count = worker.last_summary_dropped_count
        live.last_summary_fallback_used = worker.last_summary_fallback_used
        live.last_summary_error = worker.last_summary_error
        live.last_summary_check = worker.last_summary_check
        live.last_summary_rejections = list(worker.last_summary_rejections)
        live.last_compress_refused_would_grow = False
        live.last_compress_aborted = False
        live.last_stats = taken
        # The compressor's own bookkeeping of a finished compaction (anti-thrashing, awaiting
        # real usage, pressure flag, log, status callback), so both paths record alike.
        live._after_compaction(result, taken)
        self._taken = taken
        return result


def _marks(c: ContextCompressor) -> tuple[object, ...]:
    """What a candidate depends on besides its messages; any change makes it stale."""
    return (
        c.compression_count,
        c.previous_summary,
        c.context_length,
        c.max_tokens,
        c.threshold_tokens,
        c.summarizer,
        c.token_counter,
    )


def _detached(live: ContextCompressor) -> ContextCompressor:
    """A copy of ``live`` that can compress on another thread without touching it."""
    worker = copy.copy(live)
    worker.quiet_mode = True  # its log lines would describe a compaction that may never be used
    worker.status_callback = None
    worker.last_stats = CompressionStats()
    worker.last_summary_rejections = []
    # Token memos are OrderedDicts the caller's thread keeps updating: not thread-safe.
    if isinstance(live.token_counter, ExactCounter):
        worker.token_counter = ExactCounter(live.token_counter.name)
    worker._exact = None
    worker._conversation_tokens = None
    return worker


def _settled_length(messages: Sequence[Any]) -> int:
    """How many leading messages end on answered tool calls (all of them, usually)."""
    answered: set[str] = set()
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if not isinstance(message, Mapping):
            break
        if message.get("role") == "tool":
            answered.add(str(message.get("tool_call_id") or ""))
            continue
        calls = {call_id(c) for c in tool_calls_of(message)}
        if calls and not calls <= answered:
            return index
        break
    return len(messages)


def _copy_message(message: Any) -> Any:
    """``message`` with every dict and list copied; strings and numbers stay shared."""
    if not isinstance(message, dict):
        return _copy_value(message)
    return {k: v if isinstance(v, str) else _copy_value(v) for k, v in message.items()}


def _copy_value(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy_value(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_copy_value(v) for v in value)
    return value
