"""Which kind of failure a provider error is, and what to do about it (spec TK-25..TK-32).

Providers report "the prompt does not fit" in a dozen dialects, and two of them look alike
while needing opposite remedies: *prompt too long* (compress the history, maybe lower the
known window) and *max_tokens too large* (lower the output cap for this call only; never
compress). This module reads a status code and an error text and returns a
:class:`ClassifiedError` saying which it is, the numbers the provider reported, and the
recovery flags. It is pure: the backends feed it what the SDK exception carried and turn
the result into a :mod:`palimpsest.errors` exception (:func:`exception_for`).

Status codes decide first (401/403 auth, 402 quota, 413 payload, 429 rate limit); the
text patterns only settle what a status cannot, such as a generic 400 or a llama.cpp 500.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import (
    AuthError,
    ContextOverflowError,
    OutputLimitError,
    ProviderError,
    QuotaError,
    RateLimitError,
)

__all__ = [
    "MAX_TOKENS_MARGIN",
    "MIN_REPORTED_LIMIT",
    "OVERFLOW_PHRASES",
    "PAYLOAD_PHRASES",
    "ClassifiedError",
    "classify_error",
    "exception_for",
    "parse_context_limit",
]

MAX_TOKENS_MARGIN = 256
"""Tokens kept free below the window when a max_tokens retry is sized (TK-26)."""

MIN_REPORTED_LIMIT = 1024
"""Parsed "limits" below this are noise (a tier name, a slot size), never a window (TK-27)."""

# Reasons (TK-32). Transport, auth and rate-limit classes complete the overflow family.
CONTEXT_OVERFLOW = "context_overflow"
PAYLOAD_TOO_LARGE = "payload_too_large"
MAX_TOKENS_TOO_LARGE = "max_tokens_too_large"
IMAGE_TOO_LARGE = "image_too_large"
TOOL_MESSAGE_MALFORMED = "tool_message_malformed"
RATE_LIMIT = "rate_limit"
QUOTA = "quota"
AUTH = "auth"
TIMEOUT = "timeout"
CONNECTION = "connection"
SERVER_ERROR = "server_error"
BAD_REQUEST = "bad_request"
NOT_FOUND = "not_found"
UNKNOWN = "unknown"

PAYLOAD_PHRASES = ("request entity too large", "payload too large", "error code: 413")
"""TK-28: text that means HTTP 413 even when the status got lost on the way."""

OVERFLOW_PHRASES = (
    # TK-29, in the spec's order.
    "context length",
    "context size",
    "maximum context",
    "token limit",
    "too many tokens",
    "reduce the length",
    "exceeds the limit",
    "context window",
    "prompt is too long",
    "prompt exceeds max length",
    "maximum number of tokens",
    "exceeds the max_model_len",
    "max_model_len",
    "prompt length",
    "input is too long",
    "maximum model length",
    "context length exceeded",
    "truncating input",
    "slot context",
    "n_ctx_slot",
    "超过最大长度",
    "上下文长度",
    "max input token",
    "input token",
    "exceeds the maximum number of input tokens",
    # Error codes some servers put in the body instead of a sentence.
    "context_length_exceeded",
    "exceed_context_size_error",
)
"""TK-29: lower-cased substrings that mark a prompt-too-long error. A bare ``max_tokens``
is deliberately absent: it names the output cap (TK-26)."""

_OUTPUT_CAP_PHRASES = (
    "max_tokens",
    "max_completion_tokens",
    "max_output_tokens",
    "max_new_tokens",
    "in the completion",
    "for the completion",
    "in the output",
    "output tokens",
)
_VIOLATION_PHRASES = (
    "too large",
    "exceed",
    "maximum",
    "at most",
    "valid range",
    "range of",
    "above",
    "greater than",
    "<=",
    ">",
)
_DISCONNECT_PHRASES = ("server disconnected", "peer closed connection", "connection reset by peer")
_TLS_PHRASES = ("ssl", "tls", "certificate")
_TOOL_PAIRING_PHRASES = (
    "tool_use` ids were found without `tool_result`",
    "tool_use ids were found without tool_result",
    "unexpected `tool_use_id` found in `tool_result`",
    "messages with role 'tool' must be a response",
    'messages with role "tool" must be a response',
    "must be followed by tool messages responding to each",
    "tool_call_id",
    "tool call result does not follow tool call",
    "each `tool_use` block must have a corresponding",
)
_QUOTA_PHRASES = (
    "insufficient_quota",
    "exceeded your current quota",
    "credit balance is too low",
    "requires more credits",
    "billing",
)
_IMAGE_PHRASES = (
    "image exceeds",
    "image too large",
    "image is too large",
    "image dimensions exceed",
    "image size",
)

_NUM = r"(\d[\d,]*)"


def _int(text: str) -> int:
    return int(text.replace(",", ""))


# "prompt is too long: 210000 tokens > 200000 maximum" (Anthropic, Bedrock).
_GT_MAXIMUM = re.compile(rf"{_NUM}\s*tokens?\s*>\s*{_NUM}\s*maximum")
# "input length and `max_tokens` exceed context limit: 199759 + 8192 > 200000".
_SUM_GT = re.compile(rf"{_NUM}\s*\+\s*{_NUM}\s*>\s*{_NUM}")
_LIMIT_AFTER_PHRASE = re.compile(
    r"(?:maximum context length is|context length is|context length of|context window of"
    r"|context window is|max_model_len|maximum model length is|maximum number of tokens"
    r"(?: allowed)?|available context size|context size of|limit of|n_ctx)"
    rf"[^\d\n]{{0,14}}?{_NUM}"
)
_REQUESTED = re.compile(
    r"(?:you requested(?: about)?|resulted in|prompt is too long:|input token count"
    r"|requested tokens|n_prompt_tokens|request)"
    rf"[^\d\n]{{0,6}}{_NUM}\s*(?:tokens|\))"
)
_REQUESTED_FIELD = re.compile(rf"n_prompt_tokens\W{{0,4}}{_NUM}")
_INPUT_PART = re.compile(
    rf"{_NUM}\s*(?:in|of)\s*(?:the\s+|your\s+)?"
    r"(messages|prompt|functions|tools|text input|tool input|input)\b"
)
_INPUT_TOKENS = re.compile(rf"(?:has|contains(?: at least)?)\s+{_NUM}\s+input tokens")
_CAP_ALONE = [
    # "max_tokens: 128001 > 64000, which is the maximum allowed number of output tokens"
    re.compile(rf"max_tokens\W{{0,3}}{_NUM}\s*>\s*{_NUM}"),
    # "This model supports at most 16384 completion tokens"
    re.compile(rf"at most {_NUM} (?:completion|output) tokens"),
    # "the valid range of max_tokens is [1, 8192]", "Range of max_tokens should be [1, 8192]"
    re.compile(rf"range of max_tokens[^\[\n]{{0,20}}\[\s*\d+\s*,\s*{_NUM}\s*\]"),
    # "expected a value <= 32768, but got 64000"
    re.compile(rf"value <=\s*{_NUM}"),
]


@dataclass(frozen=True)
class ClassifiedError:
    """What a provider error means for the caller (TK-32).

    ``limit`` is a context window the provider reported (only set when it said one, and
    never below :data:`MIN_REPORTED_LIMIT`); ``requested`` the prompt size it reported;
    ``input_tokens`` and ``suggested_max_tokens`` are set for ``max_tokens_too_large``;
    ``output_limit`` is a stated maximum output when the cap alone was rejected.
    """

    reason: str
    status_code: int | None = None
    retryable: bool = False
    should_compress: bool = False
    should_rotate_credential: bool = False
    should_fallback: bool = False
    should_sanitize_tools: bool = False
    limit: int | None = None
    requested: int | None = None
    input_tokens: int | None = None
    suggested_max_tokens: int | None = None
    output_limit: int | None = None

    @property
    def is_overflow(self) -> bool:
        """True for the reasons that the compression path handles."""
        return self.reason in (CONTEXT_OVERFLOW, PAYLOAD_TOO_LARGE)


def parse_context_limit(message: str) -> int | None:
    """The context window an error message states, or ``None`` (TK-27).

    Understands ``maximum context length is 131,072 tokens``-style phrases, the Anthropic
    ``N tokens > M maximum`` and ``A + B > M`` forms, llama.cpp's ``n_ctx`` and vLLM's
    ``max_model_len``. Values below 1,024 are ignored.
    """
    text = message.lower()
    candidates: list[int] = []
    match = _GT_MAXIMUM.search(text)
    if match:
        candidates.append(_int(match.group(2)))
    match = _SUM_GT.search(text)
    if match:
        candidates.append(_int(match.group(3)))
    candidates.extend(_int(m.group(1)) for m in _LIMIT_AFTER_PHRASE.finditer(text))
    for value in candidates:
        if value >= MIN_REPORTED_LIMIT:
            return value
    return None


def _parse_requested(text: str) -> int | None:
    match = _GT_MAXIMUM.search(text)
    if match:
        return _int(match.group(1))
    for pattern in (_REQUESTED, _REQUESTED_FIELD):
        match = pattern.search(text)
        if match:
            return _int(match.group(1))
    return None


def _parse_input_tokens(text: str) -> int | None:
    """The input part of a request the provider itemised, or ``None`` when it did not."""
    match = _SUM_GT.search(text)
    if match:
        return _int(match.group(1))
    parts: list[tuple[int, str]] = []
    for m in _INPUT_PART.finditer(text):
        part = (_int(m.group(1)), m.group(2))
        if part in parts:
            break  # the body repeats the sentence: count each part once
        parts.append(part)
    if parts:
        return sum(value for value, _ in parts)
    match = _INPUT_TOKENS.search(text)
    if match:
        return _int(match.group(1))
    return None


def _cap_alone_limit(text: str) -> int | None:
    """The output maximum stated when the cap by itself was rejected (TK-26, second case)."""
    for pattern in _CAP_ALONE:
        match = pattern.search(text)
        if match:
            return _int(match.group(match.lastindex or 1))
    return None


def _has(text: str, phrases: tuple[str, ...]) -> bool:
    return any(p in text for p in phrases)


def _max_tokens_verdict(
    text: str, status: int | None, max_tokens: int | None
) -> ClassifiedError | None:
    """TK-26: an output-cap rejection, recognised before any overflow check."""
    if not (_has(text, _OUTPUT_CAP_PHRASES) and _has(text, _VIOLATION_PHRASES)):
        return None
    limit = parse_context_limit(text)
    input_tokens = _parse_input_tokens(text)
    if input_tokens is None and limit is not None and max_tokens:
        # Only the total was reported; the caller knows its own cap.
        requested = _parse_requested(text)
        if requested is not None and requested > max_tokens:
            input_tokens = requested - max_tokens
    output_limit = _cap_alone_limit(text)
    fits = limit is not None and input_tokens is not None and input_tokens < limit
    if not fits and output_limit is None:
        return None
    suggestions = []
    if fits and limit is not None and input_tokens is not None:
        suggestions.append(max(1, limit - input_tokens - MAX_TOKENS_MARGIN))
    if output_limit is not None:
        suggestions.append(output_limit)
    return ClassifiedError(
        reason=MAX_TOKENS_TOO_LARGE,
        status_code=status,
        retryable=True,
        limit=limit,
        input_tokens=input_tokens,
        suggested_max_tokens=min(suggestions),
        output_limit=output_limit,
    )


def _overflow(text: str, status: int | None, *, payload: bool = False) -> ClassifiedError:
    return ClassifiedError(
        reason=PAYLOAD_TOO_LARGE if payload else CONTEXT_OVERFLOW,
        status_code=status,
        retryable=True,
        should_compress=True,
        limit=None if payload else parse_context_limit(text),
        requested=None if payload else _parse_requested(text),
    )


def classify_error(
    status_code: int | None,
    message: str,
    *,
    current_context_length: int | None = None,
    max_tokens: int | None = None,
    approx_tokens: int | None = None,
    threshold_tokens: int | None = None,
    kind: str | None = None,
) -> ClassifiedError:
    """Classify one provider failure.

    ``message`` is everything the provider said (the error text, and the body if it adds
    anything). ``kind`` is the backend's reading of a typed SDK error without a status:
    ``"timeout"`` or ``"connection"``. ``max_tokens`` is the cap the failed request sent;
    ``approx_tokens`` its rough size, compared with ``threshold_tokens`` for the
    server-disconnect rule (TK-30) and with ``current_context_length`` for a generic 400
    that names nothing.
    """
    text = (message or "").lower()
    status = status_code

    # Statuses that settle the class on their own.
    if status in (401, 403):
        return ClassifiedError(AUTH, status, should_rotate_credential=True, should_fallback=True)
    if status == 402:
        return ClassifiedError(QUOTA, status, should_fallback=True)
    if status == 429:
        if _has(text, _QUOTA_PHRASES):
            return ClassifiedError(QUOTA, status, should_fallback=True)
        return ClassifiedError(RATE_LIMIT, status, retryable=True, should_fallback=True)
    if status == 413:
        return _overflow(text, status, payload=True)
    if status == 404:
        return ClassifiedError(NOT_FOUND, status, should_fallback=True)

    if status is None and kind in ("timeout", "connection"):
        if _has(text, _TLS_PHRASES):
            return ClassifiedError(CONNECTION, None, retryable=True, should_fallback=True)
        big = (
            approx_tokens is not None
            and threshold_tokens is not None
            and approx_tokens >= threshold_tokens
        )
        if big and _has(text, _DISCONNECT_PHRASES):
            return _overflow(text, None)
        reason = TIMEOUT if kind == "timeout" else CONNECTION
        return ClassifiedError(reason, None, retryable=True, should_fallback=True)

    # Generic 400s, 422s and the odd 500 from local servers: read the text.
    if _has(text, PAYLOAD_PHRASES):
        return _overflow(text, status, payload=True)
    verdict = _max_tokens_verdict(text, status, max_tokens)
    if verdict is not None:
        return verdict
    if _has(text, OVERFLOW_PHRASES):
        return _overflow(text, status)
    if _has(text, _QUOTA_PHRASES):
        return ClassifiedError(QUOTA, status, should_fallback=True)
    if _has(text, _TOOL_PAIRING_PHRASES):
        return ClassifiedError(
            TOOL_MESSAGE_MALFORMED, status, retryable=True, should_sanitize_tools=True
        )
    if _has(text, _IMAGE_PHRASES):
        return ClassifiedError(IMAGE_TOO_LARGE, status, should_compress=False)
    if status is not None and status >= 500:
        return ClassifiedError(SERVER_ERROR, status, retryable=True, should_fallback=True)
    if status is not None and 400 <= status < 500:
        if (
            approx_tokens is not None
            and current_context_length is not None
            and approx_tokens >= current_context_length
        ):
            # A bare 400 on a request we already estimate at the window's size.
            return _overflow(text, status)
        return ClassifiedError(BAD_REQUEST, status)
    return ClassifiedError(UNKNOWN, status, retryable=status is None)


def exception_for(
    classified: ClassifiedError,
    message: str,
    *,
    provider: str | None = None,
    model: str | None = None,
    body: str | None = None,
    retry_after: float | None = None,
) -> ProviderError:
    """The :mod:`palimpsest.errors` exception for a classified failure (TK-32).

    Overflow and 413 become :class:`ContextOverflowError`, an output-cap rejection
    :class:`OutputLimitError`; the exception's ``reason`` keeps the classification.
    """
    status = classified.status_code
    reason = classified.reason
    err: ProviderError
    if reason in (CONTEXT_OVERFLOW, PAYLOAD_TOO_LARGE):
        err = ContextOverflowError(
            message,
            limit=classified.limit,
            requested=classified.requested,
            payload_too_large=reason == PAYLOAD_TOO_LARGE,
            provider=provider,
            model=model,
            status_code=status,
            body=body,
        )
    elif reason == MAX_TOKENS_TOO_LARGE:
        err = OutputLimitError(
            message,
            limit=classified.limit,
            input_tokens=classified.input_tokens,
            suggested_max_tokens=classified.suggested_max_tokens,
            provider=provider,
            model=model,
            status_code=status,
            body=body,
        )
    elif reason == RATE_LIMIT:
        err = RateLimitError(
            message,
            retry_after=retry_after,
            provider=provider,
            model=model,
            status_code=status,
            body=body,
        )
    else:
        cls = {AUTH: AuthError, QUOTA: QuotaError}.get(reason, ProviderError)
        err = cls(message, provider=provider, model=model, status_code=status, body=body)
    err.reason = reason
    return err
