"""One user turn as a flow (agent-loop.md AL-01): the order of the steps lives here.

1. the user message joins the history (stored at once) and the ledger;
2. the cached system prompt is reused; the memory prefetch for this turn is computed once
   and fenced onto the user message **in each request only** (MEM-05);
3. **idle compaction** when the session was idle past ``compression.idle_minutes`` and is
   large (:mod:`.idle`); then **preflight**: the whole request (system prompt + messages +
   tool schemas) is estimated and compacted in up to ``max_attempts`` passes when it
   reaches the threshold (AL-03..05);
4. the model is called with the request rebuilt from the current history (AL-11), or with
   what the engine's ``select_context`` chose for this one call (:mod:`.selection_step`);
5. usage is normalized, fed to the engine, added to the totals and stored (AL-07); a
   provider that sent none gets the calibrated estimate, marked as such, never a zero;
6. tool calls are announced, run in parallel, and their results appended in call order;
7. the **after-round check** compacts when the engine says so (AL-08);
8. back to 4 until the model answers without tool calls.

Failures of the call go to reactive recovery (AL-09..13). Interrupts are honoured at the
safe points (before a call, between the call and its tools); a ``KeyboardInterrupt`` at any
point leaves a valid history: every tool call gets a result (a cancelled one says so).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from ..compaction.window import adopt_window
from ..errors import ContextOverflowError, OutputLimitError, ProviderError
from ..messages import call_id, tool_calls_of
from ..messages.reading import read_from
from ..outputs.rerun import NOT_REPEATABLE
from ..providers.base import Completion
from ..safety.redact import redact
from .ahead import observe
from .cache_hooks import prune_before_call
from .compaction_step import CompactionOutcome, compress_context
from .driver import Flow, ModelCall, Offload
from .events import TextDelta, TurnEnd, WarningEvent
from .idle import idle_compaction, idle_seconds
from .recovery import (
    MAX_COMPRESSION_ATTEMPTS,
    MAX_OUTPUT_RETRIES,
    RecoveryState,
    cannot_compress_error,
    made_progress,
    overflow_exhausted_error,
    smaller_max_tokens,
)
from .selection_step import request_estimate, selected_request
from .tool_round import tool_round

if TYPE_CHECKING:
    from .state import AgentState

__all__ = ["after_round", "preflight", "turn_flow"]

log = logging.getLogger("palimpsest.agent")


def turn_flow(agent: AgentState, user_message: str) -> Flow:
    """The whole turn; always ends with exactly one :class:`TurnEnd`."""
    try:
        end = yield from _turn(agent, user_message)
    except KeyboardInterrupt:
        agent.close_open_calls()
        agent.save()
        end = TurnEnd(completed=False, interrupted=True, error="interrupted")
    finally:
        agent.close_open_calls()
        agent.save()
        agent.save_state()
    yield end


def _turn(agent: AgentState, user_message: str) -> Flow:
    agent.turn += 1
    turn = agent.turn
    agent.close_open_calls()  # a session stored mid-round (a crash) is made valid first
    idle = idle_seconds(agent)  # measured before this turn stores its message
    agent.append({"role": "user", "content": _budgeted_observation(agent, user_message)})
    agent.ledger.record_user(user_message, turn)
    if agent.memory is not None:
        agent.memory.on_turn_start(turn, user_message)
    fence: str = yield Offload(lambda: agent.prefetch(user_message))  # may wait on a provider
    recovery = RecoveryState()

    yield from idle_compaction(agent, idle)
    yield from preflight(agent)
    max_tokens = agent.max_tokens
    iterations = 0
    while True:
        if agent.is_interrupted():
            return TurnEnd(completed=False, interrupted=True, error="interrupted")
        if iterations >= agent.max_iterations:
            return TurnEnd(
                completed=False,
                error=f"Stopped after {agent.max_iterations} model calls in one turn "
                "(max_iterations); the conversation is intact, send a message to continue.",
            )
        iterations += 1
        prune_before_call(agent)  # CC-45, cache-aware (cache_hooks)
        built = agent.build_request(fence)
        request = yield from selected_request(agent, built, user_message)
        estimate = request_estimate(agent, request, built)
        agent.last_request = (request, agent.tools.schemas())
        try:
            call = ModelCall(
                request,
                agent.last_request[1],
                max_tokens,
                stream=agent.stream,
                stop=agent.is_interrupted,
            )
            completion: Completion = yield call
            if call.stream and _silent(completion):
                # HTTP 200, then a stream that ended with nothing, not even a finish reason
                # (llama.cpp reports an oversized prompt as an error event the SDK skips).
                # No finished reply looks like that, even an empty one, and the window the
                # server really has may be smaller than the one we were told (a 2,048-token
                # server told 4,096 failed this way at ~2,100 tokens, under our threshold):
                # an overflow, recovered like any other.
                raise ContextOverflowError(
                    "the server answered but the stream ended with no reply and no finish "
                    f"reason, on a request of ~{estimate:,} tokens: read as a context "
                    "overflow reported inside the stream"
                )
        except OutputLimitError as exc:
            smaller = smaller_max_tokens(exc, max_tokens)
            recovery.output_retries += 1
            if smaller is None or recovery.output_retries > MAX_OUTPUT_RETRIES:
                return _failed(exc)
            yield WarningEvent(
                "output_cap_lowered",
                f"The reply did not fit the output cap; retrying with max_tokens={smaller:,}.",
            )
            max_tokens = smaller
            iterations -= 1
            continue
        except ContextOverflowError as exc:
            recovery.compression_attempts += 1
            if recovery.compression_attempts > MAX_COMPRESSION_ATTEMPTS:
                return TurnEnd(
                    completed=False,
                    error=overflow_exhausted_error(MAX_COMPRESSION_ATTEMPTS),
                    details={"compression_attempts": MAX_COMPRESSION_ATTEMPTS},
                )
            stop = yield from _reactive(agent, exc, estimate)
            if stop is not None:
                return stop
            attempts = recovery.compression_attempts
            recovery.reset()
            recovery.compression_attempts = attempts  # the cap spans the whole turn
            iterations -= 1
            continue
        except ProviderError as exc:
            return _failed(exc)
        yield from agent.record_usage(completion, estimate)
        recovery.output_retries = 0

        message = _with_call_ids(completion.to_message(), turn, iterations)
        text = completion.content or ""
        calls = tool_calls_of(message)
        if not text.strip() and not calls:
            yield WarningEvent(
                "empty_answer", "The model returned an empty answer (no text, no tool calls)."
            )
            agent.ledger.record_answer(turn)
            return TurnEnd(completed=True, text="", details={"empty_answer": True})
        agent.append(message)
        if text and not call.streamed:
            yield TextDelta(text)
        if not calls:
            agent.ledger.record_answer(turn)
            if agent.memory is not None:
                agent.memory.sync_all(user_message, text)
            if agent.compression_enabled:
                # the next turn's preflight takes a candidate prepared from here on
                observe(agent, agent.current_prompt_tokens())
            return TurnEnd(completed=True, text=text)
        if agent.is_interrupted():
            return TurnEnd(completed=False, interrupted=True, error="interrupted")
        yield from tool_round(agent, calls, turn)
        yield from after_round(agent)


def _with_call_ids(message: dict[str, Any], turn: int, iteration: int) -> dict[str, Any]:
    """Give every tool call an id (some models omit them; a result must name its call)."""
    for index, item in enumerate(tool_calls_of(message)):
        if isinstance(item, dict) and not call_id(item):
            item["id"] = f"call_{turn}_{iteration}_{index}"
    return message


def _failed(exc: ProviderError) -> TurnEnd:
    status = f" (HTTP {exc.status_code})" if exc.status_code else ""
    return TurnEnd(
        completed=False,
        error=redact(f"The model call failed{status}: {exc}"),
        details={"error_type": type(exc).__name__},
    )


OBSERVATION_TOOL = "observation"
"""The name a text-action observation is budgeted under (``tool_budget.tool_overrides``)."""


def _budgeted_observation(agent: AgentState, text: str) -> str:
    """``text``, or its saved preview when it is an oversized observation.

    In text-action runs (SWE-agent, mini-swe-agent) a command's output comes back as the
    next user message, so the tool-output budget never saw it: one 18K-token observation
    stalled a 16K window for turns. A user message that reads as an observation (it answers
    the assistant's text action) is admitted like a tool result: over the per-result size it
    is saved and replaced by a preview the model can read on from. A person's own message is
    never touched.
    """
    if not agent.messages or not isinstance(text, str):
        return text
    start = max(0, len(agent.messages) - 3)
    history = [*agent.messages, {"role": "user", "content": text}]
    readings = read_from(history, start, native=agent.native_traffic(agent.messages))
    if not readings or readings[-1].kind != "observation":
        return text
    guard = agent.output_guard
    guard.config = agent.output_budget()
    return guard.admit(text, tool_name=OBSERVATION_TOOL, call_id=None, rerun=NOT_REPEATABLE)


def _silent(completion: Completion) -> bool:
    """A reply with no text, no calls, no finish reason and no usage: the stream carried
    nothing a model wrote."""
    return not (
        (completion.content or "").strip()
        or completion.tool_calls
        or completion.finish_reason
        or completion.usage is not None
    )


def preflight(agent: AgentState) -> Flow:
    """Compact before the first call when the request estimate reaches the threshold."""
    engine = agent.compressor
    if not agent.compression_enabled:
        return
    estimate = agent.estimate_request()
    if estimate < engine.threshold_tokens:
        return
    # AL-03 (too short to have a middle worth compacting) is decided by tokens, as the
    # compressor's own tail walk does: on a small window a few long turns fill it long
    # before protect_first_n + protect_last_n + 1 messages exist, and a message count
    # would let the request overflow instead.
    if not engine.has_content_to_compress(agent.messages):
        return
    if agent.profile == "refined" and engine.should_defer_preflight_to_real_usage(estimate):
        return
    if not (yield from agent.compaction_allowed(estimate)):
        return
    for _ in range(agent.max_attempts):
        before = len(agent.messages)
        outcome: CompactionOutcome = yield from compress_context(
            agent, "preflight", approx_tokens=estimate
        )
        if not outcome.compacted or len(agent.messages) >= before:
            return  # cannot compress further
        estimate = agent.estimate_request()
        if estimate < engine.threshold_tokens:
            return


def after_round(agent: AgentState) -> Flow:
    """AL-08: after a tool round, on the real prompt tokens (plus what the round added)."""
    if not agent.compression_enabled:
        return
    tokens = agent.current_prompt_tokens()
    if not (yield from agent.compaction_allowed(tokens)):
        observe(agent, tokens)  # below the threshold: perhaps past the speculative mark
        return
    yield from compress_context(agent, "after_round", approx_tokens=tokens)


def _reactive(agent: AgentState, exc: ContextOverflowError, estimate: int) -> Flow:
    """One overflow recovery: adopt a smaller proven limit, compact with force, judge it.

    Returns ``None`` to retry, or the :class:`TurnEnd` that stops the turn (AL-12).
    """
    engine = agent.compressor
    if exc.limit and 0 < exc.limit < engine.context_length:
        old = engine.context_length
        adopt_window(
            engine,
            exc.limit,
            "overflow",
            f"the provider's overflow error said {exc.limit:,}; was {old:,}",
            model=getattr(engine, "model", "") or agent.model_name,
        )
        yield WarningEvent(
            "context_reduced",
            f"Context reduced to {exc.limit:,} tokens (was {old:,}); compacting and retrying.",
        )
    before_count = len(agent.messages)
    before_tokens = agent.estimate_request()
    outcome: CompactionOutcome = yield from compress_context(
        agent, "reactive", approx_tokens=max(estimate, before_tokens), force=True
    )
    after_tokens = agent.estimate_request()
    if not outcome.compacted or not made_progress(
        before_count, len(agent.messages), before_tokens, after_tokens
    ):
        # a compaction the required memory checkpoint blocked says so (checkpoint_gate)
        error = outcome.blocked or cannot_compress_error(before_tokens)
        return TurnEnd(
            completed=False,
            partial=True,
            error=error,
            details={"completed": False, "partial": True, "error": error},
        )
    if agent.recovery_delay > 0:
        yield Offload(lambda: _sleep_polling(agent, agent.recovery_delay))
    return None


def _sleep_polling(agent: AgentState, seconds: float) -> None:
    """AL-14: wait before the retry, checking for an interrupt every 0.2 s."""
    deadline = time.monotonic() + seconds
    while not agent.is_interrupted() and time.monotonic() < deadline:
        time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))
