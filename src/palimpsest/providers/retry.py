"""Turning SDK exceptions into palimpsest exceptions, once, at the provider edge.

Each backend declares a table from its SDK's exception class names to a *kind*
(``status``, ``timeout``, ``connection``, ``auth``, ``response``, ``generic``) and wraps
every SDK call in :func:`translating`. The context manager finds the most specific
table entry along the exception's MRO, reads status, body and ``retry-after`` from it,
lets :func:`palimpsest.providers.overflow.classify_error` decide the class, and raises
the result chained to the original (``raise ... from exc``). A test walks each SDK's
exported exceptions and fails on any class the table does not name.

Retries themselves stay with the SDKs (``max_retries``), which already honour
``retry-after`` for 408/409/429/5xx; this module only decides what a final failure is.
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..errors import AuthError, PalimpsestError, ProviderError
from .overflow import ClassifiedError, classify_error, exception_for

__all__ = [
    "ErrorTable",
    "RequestInfo",
    "classify_for",
    "error_kind",
    "error_message",
    "parse_retry_after",
    "translate_error",
    "translating",
]

ErrorTable = Mapping[str, str]
"""SDK exception class name -> kind (``status``, ``timeout``, ``connection``, ``auth``,
``response``, ``generic``)."""

_TRY_AGAIN = re.compile(r"try again in\s+(\d+(?:\.\d+)?)\s*(ms|s|sec|seconds?)\b", re.I)
_RETRY_DELAY = re.compile(
    r"\"?retry_?(?:delay|after)\"?\s*[:=]\s*\"?(\d+(?:\.\d+)?)\s*(ms|s)?", re.I
)


# An error event inside a streamed 200 response names its class only by type.
_ERROR_TYPE_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


def _status_from_body(body: Any) -> int | None:
    inner = body.get("error") if isinstance(body, Mapping) else None
    kind = inner.get("type") if isinstance(inner, Mapping) else None
    return _ERROR_TYPE_STATUS.get(kind) if isinstance(kind, str) else None


@dataclass(frozen=True)
class RequestInfo:
    """What the edge knows about the failed request, for classification."""

    provider: str
    model: str
    max_tokens: int | None = None
    approx_tokens: int | None = None
    threshold_tokens: int | None = None
    context_length: int | None = None


def error_kind(exc: BaseException, table: ErrorTable, package: str) -> str | None:
    """The table's kind for the most specific SDK class ``exc`` is an instance of."""
    for cls in type(exc).__mro__:
        if cls.__module__.split(".")[0] != package:
            continue
        kind = table.get(cls.__name__)
        if kind is not None:
            return kind
    return None


def _body_text(body: Any) -> str | None:
    if body is None:
        return None
    if isinstance(body, str | bytes):
        return body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    try:
        return json.dumps(body, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(body)


def error_message(exc: BaseException, body: Any) -> str:
    """The provider's own sentence when the body has one, else the exception text."""
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping):
            message = inner.get("message")
            if isinstance(message, str) and message:
                return message
        elif isinstance(inner, str) and inner:
            return inner
        message = body.get("message")
        if isinstance(message, str) and message:
            return message
    return str(exc) or type(exc).__name__


def parse_retry_after(headers: Mapping[str, str] | None, text: str = "") -> float | None:
    """Seconds to wait, from ``retry-after-ms``/``retry-after`` headers or the error text."""
    if headers:
        lowered = {k.lower(): v for k, v in headers.items()}
        value = lowered.get("retry-after-ms")
        if value:
            try:
                return max(0.0, float(value) / 1000.0)
            except ValueError:
                pass
        value = lowered.get("retry-after")
        if value:
            try:
                return max(0.0, float(value))
            except ValueError:
                parsed = email.utils.parsedate_to_datetime(value) if value.strip() else None
                if parsed is not None:
                    return max(0.0, parsed.timestamp() - time.time())
    for pattern in (_TRY_AGAIN, _RETRY_DELAY):
        match = pattern.search(text)
        if match:
            seconds = float(match.group(1))
            return seconds / 1000.0 if (match.group(2) or "").lower() == "ms" else seconds
    return None


def _headers_of(exc: BaseException) -> Mapping[str, str] | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        return {str(k): str(v) for k, v in headers.items()}
    except (AttributeError, TypeError):
        return None


def _chain_text(exc: BaseException) -> str:
    """The exception and its causes as one string: transport details hide in ``__cause__``."""
    parts: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(parts) < 6:
        seen.add(id(current))
        parts.append(f"{type(current).__name__}: {current}")
        current = current.__cause__ or current.__context__
    return " | ".join(parts)


def classify_for(info: RequestInfo, status: int | None, text: str) -> ClassifiedError:
    """Classify a failure the provider described in ``text``, with what we knew of the
    request (window, output cap, rough size, threshold)."""
    return classify_error(
        status,
        text,
        current_context_length=info.context_length,
        max_tokens=info.max_tokens,
        approx_tokens=info.approx_tokens,
        threshold_tokens=info.threshold_tokens,
    )


def translate_error(exc: BaseException, kind: str, info: RequestInfo) -> ProviderError:
    """The palimpsest exception for one SDK exception of a known ``kind``."""
    provider, model = info.provider, info.model
    if kind == "auth":
        return AuthError(
            f"{provider}: credentials could not be used: {exc}", provider=provider, model=model
        )
    body = getattr(exc, "body", None)
    status = getattr(exc, "status_code", None) if kind in ("status", "response") else None
    status = status if isinstance(status, int) else None
    if kind == "status" and status in (None, 200):
        status = _status_from_body(body) or status
    body_text = _body_text(body)
    message = error_message(exc, body)
    if kind in ("timeout", "connection"):
        detail = _chain_text(exc)
        classified = classify_error(
            None,
            detail,
            kind=kind,
            approx_tokens=info.approx_tokens,
            threshold_tokens=info.threshold_tokens,
        )
        message = f"{provider}: {detail}"
    elif kind == "status":
        # The body may hold numbers the sentence lacks (llama.cpp's n_ctx, for one).
        text = f"{message}\n{body_text}" if body_text and body_text != message else message
        classified = classify_for(info, status, text)
        message = f"{provider} returned HTTP {status}: {message}"
    else:
        classified = classify_error(status, message)
        message = f"{provider}: {message}"
    retry_after = parse_retry_after(_headers_of(exc), f"{message}\n{body_text or ''}")
    return exception_for(
        classified,
        message,
        provider=provider,
        model=model,
        body=body_text,
        retry_after=retry_after,
    )


@contextmanager
def translating(table: ErrorTable, package: str, info: RequestInfo) -> Iterator[None]:
    """Run an SDK call; re-raise any SDK exception as its palimpsest counterpart."""
    try:
        yield
    except PalimpsestError:
        raise
    except Exception as exc:
        kind = error_kind(exc, table, package)
        if kind is None:
            raise
        raise translate_error(exc, kind, info) from exc
