"""The LLM summarizer: a ``ChatModel`` writes the handoff summary, with fallback and cooldowns.

The compressor renders the whole prompt (``SummaryRequest.prompt``); this module only sends
it, cleans the answer and decides what a failure means (spec compaction.md §7.3):

- the answer's content is coerced to text, reasoning blocks, any chatty preamble before the
  first ``## `` heading and an echoed summary prefix are removed, and secrets are redacted;
  an empty body is a failure (CC-76, CC-77);
- when a distinct summary model fails, the failure is recorded, that model is dropped for
  good and the main model is tried once (CC-81);
- every final failure starts a cooldown during which ``summarize`` raises at once without
  calling any model, so the compressor uses its deterministic fallback (CC-80, CC-82,
  CC-83); access/quota failures and network failures set flags the host can act on (CC-84).

The request is fitted to the summary model's own window first (:mod:`.window`): given its
context length (``context_length=``, else the model's ``context_length`` or ``n_ctx``, else
the limit a context-overflow error reported, learned once and retried), the prompt and
``max_tokens`` are sized to fit, and a middle too big for the window is replaced by its
extractive digest.

Sync and async share one generator (``_flow``): it yields the model call to make and
receives the completion or the exception, so both drivers run the same decisions.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, Final

from ..compaction.markers import strip_summary_prefix
from ..compaction.summary import REASONING_TAGS
from ..errors import (
    ContextOverflowError,
    SummaryError,
)
from ..messages import content_text
from ..providers.base import ChatModel, Completion
from ..safety.redact import redact
from ..usage import CanonicalUsage
from .base import SummaryRequest
from .continuation import Continuation, ContinuationCall
from .deadline import current_deadline
from .llm_failures import SummaryFailure, classify_failure
from .window import fit_call

__all__ = [
    "AUTO",
    "COOLDOWN_NETWORK",
    "COOLDOWN_NO_PROVIDER",
    "COOLDOWN_TRANSIENT",
    "NO_PROVIDER_ERROR",
    "TIMEOUT_LADDER",
    "LLMSummarizer",
    "clean_summary",
    "summary_max_tokens",
]

COOLDOWN_NO_PROVIDER: Final = 600.0
COOLDOWN_TRANSIENT: Final = 60.0
COOLDOWN_NETWORK: Final = 30.0
TIMEOUT_LADDER: Final = (60.0, 300.0, 900.0)
MIN_CALL_TIMEOUT: Final = 1.0
"""The shortest ``timeout`` option sent under a caller's deadline (a zero would be refused)."""
"""Consecutive timeouts wait longer each time, capped at the last step (CC-83)."""
NO_PROVIDER_ERROR: Final = "no auxiliary LLM provider configured"
AUX_ERROR_LIMIT: Final = 220


class _Auto:
    """Sentinel type: derive ``max_tokens`` from the request budget."""

    def __repr__(self) -> str:
        return "AUTO"


AUTO: Final = _Auto()


def summary_max_tokens(budget_tokens: int) -> int:
    """``2 * budget + 512``: room for a summary that overshoots its target.

    The budget is a target the prompt states (CC-63/64), not a hard cap. Models overshoot
    it, and a cap at the budget itself would cut a structured summary mid-section; twice the
    budget plus a fixed margin keeps runaway generations bounded without truncating.
    """
    return max(1, 2 * max(0, int(budget_tokens)) + 512)


# -- cleaning the answer (CC-76) ----------------------------------------------------------

_THINK_BLOCK = re.compile(rf"<({REASONING_TAGS})>.*?</\1>", re.DOTALL | re.IGNORECASE)
_DANGLING_CLOSE = re.compile(rf"^.*?</({REASONING_TAGS})>", re.DOTALL | re.I)
_UNCLOSED_OPEN = re.compile(rf"<({REASONING_TAGS})>.*\Z", re.DOTALL | re.I)
_FENCE = re.compile(r"\A```[\w-]*[ \t]*\n(.*)\n```\s*\Z", re.DOTALL)
_FIRST_HEADING = re.compile(r"^## ", re.MULTILINE)


def _coerce(content: Any) -> str:
    """Text of a reply's content: str, text parts, or ``str(x)`` for other truthy values."""
    if not content:
        return ""
    if isinstance(content, str | list | dict):
        return content_text(content)
    return str(content)


def clean_summary(content: Any) -> str:
    """The summary body in a model reply, before redaction.

    Drops reasoning blocks (also an unclosed opening tag or a stray closing tag that some
    chat templates leave), a code fence around the whole answer, an echoed summary prefix
    line, and any preamble before the first ``## `` heading.
    """
    text = _coerce(content)
    text = _THINK_BLOCK.sub("", text)
    text = _DANGLING_CLOSE.sub("", text, count=1)
    text = _UNCLOSED_OPEN.sub("", text)  # all that follows an unclosed tag is reasoning
    text = text.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    text = strip_summary_prefix(text)  # a summary prefix the model echoed back
    heading = _FIRST_HEADING.search(text)
    if heading and heading.start() > 0:
        text = text[heading.start() :]
    return text.strip()


def _reported_limit(reply: _Reply) -> int | None:
    """The window a context-overflow error reported, if any."""
    if isinstance(reply, ContextOverflowError):
        limit = reply.limit
        return limit if isinstance(limit, int) and limit > 0 else None
    return None


def _cap(text: str, limit: int = AUX_ERROR_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _model_name(model: Any) -> str:
    return str(getattr(model, "model", None) or type(model).__name__)


def _provider_name(model: Any) -> str:
    return str(getattr(model, "provider", None) or type(model).__name__)


@dataclass(frozen=True)
class _Call:
    """One model call the flow wants made."""

    model: ChatModel
    messages: list[dict[str, Any]]
    max_tokens: int | None
    options: dict[str, Any]


_Reply = Completion | BaseException
_Flow = Generator[_Call, _Reply, str]


class LLMSummarizer:
    """Writes summaries with a ``ChatModel``; implements ``Summarizer`` and ``SupportsCooldown``.

    ``model`` is the main model (``None`` when none is configured: every call then fails
    with a 600 s cooldown). ``summary_model`` is an optional cheaper model tried first.
    ``timeout`` is passed to the model as the ``timeout`` option. ``max_tokens`` defaults
    to :func:`summary_max_tokens` of the request budget; ``None`` sends no cap at all
    (spec CC-64), an int sends that cap. ``context_length`` is the summary model's window
    in tokens (``auxiliary.compression.context_length``); the request is fitted to it.
    ``clock`` is a monotonic clock in seconds.

    After each call the host may read ``last_error``, ``last_failure_kind`` (``timeout``,
    ``network``, ``auth``, ``not_found``, ``empty``, ``other``, ``no_provider``),
    ``auth_failure`` and ``network_failure`` (both persist until a summary succeeds),
    ``aux_failure_error`` / ``aux_failure_model`` (set when the summary model failed and the
    main model was tried; reset at the start of each call), ``last_model``, ``last_usage``
    and ``last_finish_reason``; ``last_fit`` (``as_is`` or ``digest``: how the last request
    was fitted to the window) and ``last_window`` (the window it was fitted to, if known).
    """

    def __init__(
        self,
        model: ChatModel | None,
        *,
        summary_model: ChatModel | None = None,
        timeout: float | None = None,
        max_tokens: int | _Auto | None = AUTO,
        context_length: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if timeout is not None and timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        if context_length is not None and context_length <= 0:
            raise ValueError(f"context_length must be positive, got {context_length}")
        self.model = model
        self.summary_model = summary_model if summary_model is not model else None
        self.timeout = timeout
        self.max_tokens = max_tokens
        self.context_length = context_length
        self._learned_windows: dict[int, int] = {}
        self._clock = clock
        self.cooldown_until = 0.0
        self._timeout_streak = 0
        self.last_error: str | None = None
        self.last_failure_kind: str | None = None
        self.auth_failure = False
        self.network_failure = False
        self.aux_failure_error: str | None = None
        self.aux_failure_model: str | None = None
        self.last_model: str | None = None
        self.last_usage: CanonicalUsage | None = None
        self.last_finish_reason: str | None = None
        self.last_fit: str | None = None
        self.last_window: int | None = None
        self.continuation: Continuation | None = None
        """Set by a host whose provider caches the conversation (:mod:`.continuation`)."""

    # -- SupportsCooldown ---------------------------------------------------------------

    def cooldown_remaining(self) -> float:
        return max(0.0, self.cooldown_until - self._clock())

    def reset_cooldown(self) -> None:
        """Clear the cooldown (a manual compression does this first, CC-82)."""
        self.cooldown_until = 0.0

    def record_abandoned(self, error: str) -> None:
        """The caller abandoned a call at its deadline (:mod:`.deadline`): a timeout, with
        the timeout ladder's cooldown, as if the model had reported it."""
        self._record(SummaryFailure("timeout", error))

    # -- Summarizer ---------------------------------------------------------------------

    def summarize(self, request: SummaryRequest) -> str:
        flow = self._flow(request)
        call = next(flow)
        deadline = current_deadline()
        while True:
            reply: _Reply
            try:
                reply = call.model.complete(
                    call.messages, max_tokens=call.max_tokens, **call.options
                )
            except Exception as exc:  # every model failure is data for the flow
                reply = exc
            if deadline is not None and deadline.abandoned.is_set():
                # The caller gave up on this call (:mod:`.deadline`): a late reply is
                # dropped unread, no further call is made, nothing is recorded.
                flow.close()
                raise SummaryError("abandoned at the summary timeout", cause_kind="timeout")
            try:
                call = flow.send(reply)
            except StopIteration as done:
                return str(done.value)

    async def asummarize(self, request: SummaryRequest) -> str:
        flow = self._flow(request)
        call = next(flow)
        while True:
            reply: _Reply
            try:
                reply = await call.model.acomplete(
                    call.messages, max_tokens=call.max_tokens, **call.options
                )
            except Exception as exc:
                reply = exc
            try:
                call = flow.send(reply)
            except StopIteration as done:
                return str(done.value)

    # -- the shared decisions -----------------------------------------------------------

    def _flow(self, request: SummaryRequest) -> _Flow:
        self.aux_failure_error = None
        self.aux_failure_model = None
        remaining = self.cooldown_remaining()
        if remaining > 0:
            raise SummaryError(
                f"summary cooldown active ({remaining:.0f}s remaining); "
                f"last error: {self.last_error or 'unknown'}",
                model=self.last_model,
                cause_kind="cooldown",
            )
        first = self.summary_model or self.model
        if first is None:
            self._fail("no_provider", NO_PROVIDER_ERROR, COOLDOWN_NO_PROVIDER)
            raise SummaryError(NO_PROVIDER_ERROR, cause_kind="no_provider")

        reply = yield from self._attempt(first, request)
        outcome = self._outcome(first, reply)
        if isinstance(outcome, str):
            return self._succeed(first, reply, outcome)

        if first is self.summary_model and self.model is not None:
            # CC-81: record, drop the summary model for good, clear the cooldown, retry once.
            self.aux_failure_error = _cap(outcome.error)
            self.aux_failure_model = _model_name(first)
            self.summary_model = None
            self.reset_cooldown()
            first = self.model
            reply = yield from self._attempt(first, request)
            outcome = self._outcome(first, reply)
            if isinstance(outcome, str):
                return self._succeed(first, reply, outcome)

        self._record(outcome)
        raise SummaryError(
            f"summary failed on {_provider_name(first)}:{_model_name(first)}: {outcome.error}",
            model=_model_name(first),
            cause_kind=outcome.kind,
        )

    def _attempt(
        self, model: ChatModel, request: SummaryRequest
    ) -> Generator[_Call, _Reply, _Reply]:
        """One call, fitted to ``model``'s window; once more if it overflowed a window it
        reported and that was not known before."""
        reply = yield self._call(model, request)
        limit = _reported_limit(reply)
        if limit is not None and limit != self._window(model):
            self._learned_windows[id(model)] = limit
            reply = yield self._call(model, request)
        return reply

    def _window(self, model: ChatModel) -> int | None:
        learned = self._learned_windows.get(id(model))
        if learned is not None:
            return learned
        if self.context_length is not None and (
            model is self.summary_model or self.summary_model is None
        ):
            return self.context_length
        for attr in ("context_length", "n_ctx"):
            value = getattr(model, attr, None)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
        return None

    def _call(self, model: ChatModel, request: SummaryRequest) -> _Call:
        if isinstance(self.max_tokens, _Auto):
            cap: int | None = summary_max_tokens(request.budget_tokens)
        else:
            cap = self.max_tokens
        window = self._window(model)
        options: dict[str, Any] = {}
        timeout = self.timeout
        deadline = current_deadline()
        if deadline is not None:
            # the SDK drops the connection itself at the caller's deadline (or soon after)
            left = max(deadline.remaining(), MIN_CALL_TIMEOUT)
            timeout = left if timeout is None else min(timeout, left)
        if timeout is not None:
            options["timeout"] = timeout
        continued = self._continued(model, request, window, cap)
        if continued is not None:
            self.last_fit, self.last_window = "continuation", window
            return _Call(model, continued.messages, cap, {**options, **continued.options})
        fitted = fit_call(request, window, cap)
        self.last_fit, self.last_window = fitted.mode, window
        # No system prompt: the rendered prompt carries every instruction, and some chat
        # templates (or older reasoning models) reject a system role.
        return _Call(
            model, [{"role": "user", "content": fitted.prompt}], fitted.max_tokens, options
        )

    def _continued(
        self, model: ChatModel, request: SummaryRequest, window: int | None, cap: int | None
    ) -> ContinuationCall | None:
        """The request as a continuation of the cached conversation, when the host offers
        one for ``model`` and it is cheaper (:mod:`.continuation`) and fits the window."""
        if self.continuation is None:
            return None
        call = self.continuation.call_for(model, request, request.prompt)
        if call is None:
            return None
        room = cap if cap is not None else request.budget_tokens
        if window is not None and call.prefix_tokens + room > window:
            return None
        self.continuation.used += 1
        return call

    def _outcome(self, model: ChatModel, reply: _Reply) -> str | SummaryFailure:
        """The redacted body, or the failure that the reply amounts to."""
        if isinstance(reply, BaseException):
            return classify_failure(reply)
        body = redact(clean_summary(reply.content)).strip()
        if not body:
            return SummaryFailure(
                "empty",
                f"{_provider_name(model)}:{_model_name(model)} returned an empty summary",
            )
        return body

    def _succeed(self, model: ChatModel, reply: _Reply, body: str) -> str:
        self._timeout_streak = 0
        self.cooldown_until = 0.0
        self.last_error = None
        self.last_failure_kind = None
        self.auth_failure = False
        self.network_failure = False
        self.last_model = _model_name(model)
        if isinstance(reply, Completion):
            self.last_usage = reply.usage
            self.last_finish_reason = reply.finish_reason
        return body

    def _record(self, failure: SummaryFailure) -> None:
        if failure.kind == "timeout":
            step = TIMEOUT_LADDER[min(self._timeout_streak, len(TIMEOUT_LADDER) - 1)]
            self._timeout_streak += 1
            seconds = max(step, float(failure.retry_after or 0.0))
        elif failure.kind == "network":
            seconds = COOLDOWN_NETWORK
            self.network_failure = True
        else:
            seconds = COOLDOWN_TRANSIENT
            if failure.kind == "auth":
                self.auth_failure = True
        self._fail(failure.kind, failure.error, seconds)

    def _fail(self, kind: str, error: str, seconds: float) -> None:
        self.last_failure_kind = kind
        self.last_error = error
        self.cooldown_until = self._clock() + seconds
