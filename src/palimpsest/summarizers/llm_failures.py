"""What a failed summary call means: the cooldown kinds of spec compaction.md §7.3.

The LLM summarizer's cooldowns and host-visible flags (CC-81 to CC-84) hang on one
decision: was this failure a timeout or rate limit (wait a little), a network fault (wait
less), an access or quota problem (no point retrying until someone acts), a model that does
not exist, or something else. That decision reads a provider's typed exceptions, the
provider edge's ``reason``, HTTP statuses and, as a last resort, known phrases in the
message. It lives apart from the summarizer's call flow because it is a table of facts about
providers, not a step of the flow, and it grows as providers word their errors differently.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

from ..errors import AuthError, QuotaError, RateLimitError, SummaryError
from ..safety.redact import redact

__all__ = ["SummaryFailure", "classify_failure"]

_AUTH_TEXT = (
    "no api key was found",
    "no api key found",
    "insufficient_quota",
    "quota exceeded",
    "quota_exceeded",
    "out of funds",
    "out of credits",
    "out of credit",
    "out of extra usage",
)
_NETWORK_TEXT = (
    "expecting value",
    "json decode",
    "jsondecodeerror",
    "connection closed",
    "connection reset",
    "connection aborted",
    "connection error",
    "peer closed",
    "server disconnected",
    "remote end closed",
    "remoteprotocolerror",
    "incomplete chunked read",
    "stream closed",
    "stream ended",
)
_NOT_FOUND_TEXT = ("model_not_found", "does not exist", "no available channel")


@dataclass(frozen=True)
class SummaryFailure:
    """One classified failure: its cooldown kind, redacted text and any retry hint."""

    kind: str  # timeout | network | auth | not_found | empty | other
    error: str
    retry_after: float | None = None


def _status(exc: BaseException) -> int | None:
    for attr in ("status_code", "status", "http_status"):
        value = getattr(exc, attr, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def classify_failure(exc: BaseException) -> SummaryFailure:
    """Sort a summary-call exception into the cooldown kinds of §7.3."""
    error = redact(_describe(exc))
    if isinstance(exc, SummaryError) and exc.cause_kind == "empty":
        return SummaryFailure("empty", error)
    status = _status(exc)
    # The provider edge's classification (ProviderError.reason), when there is one.
    reason = getattr(exc, "reason", None)
    text = f"{type(exc).__name__} {exc}".lower()
    rate_limited = isinstance(exc, RateLimitError) or reason == "rate_limit"
    retry_after = getattr(exc, "retry_after", None) if isinstance(exc, RateLimitError) else None
    # CC-84: a rate-limit classification never counts as an access failure.
    if not rate_limited and (
        isinstance(exc, AuthError | QuotaError)
        or reason in ("auth", "quota")
        or status in (401, 402, 403)
        or any(p in text for p in _AUTH_TEXT)
    ):
        return SummaryFailure("auth", error)
    if (
        rate_limited
        or isinstance(exc, TimeoutError | asyncio.TimeoutError)
        or reason == "timeout"
        or status in (408, 429, 502, 504)
        or "timeout" in text
        or "timed out" in text
    ):
        return SummaryFailure("timeout", error, retry_after)
    if (
        isinstance(exc, json.JSONDecodeError | ConnectionError | EOFError)
        or reason == "connection"
        or any(p in text for p in _NETWORK_TEXT)
    ):
        return SummaryFailure("network", error)
    if status in (404, 503) or reason == "not_found" or any(p in text for p in _NOT_FOUND_TEXT):
        return SummaryFailure("not_found", error)
    return SummaryFailure("other", error)
