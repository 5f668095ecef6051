"""Which cooldown kind a failed summary call falls into (spec compaction.md §7.3)."""

from __future__ import annotations

import json

import pytest

from palimpsest.errors import (
    AuthError,
    ProviderError,
    QuotaError,
    RateLimitError,
    SummaryError,
)
from palimpsest.summarizers.llm_failures import classify_failure


class _HttpError(Exception):
    """An SDK-style exception that carries only an HTTP status."""

    def __init__(self, message: str, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (AuthError("bad key"), "auth"),
        (QuotaError("no money"), "auth"),
        (_HttpError("payment required", 402), "auth"),
        (RuntimeError("Error: insufficient_quota for this org"), "auth"),
        (TimeoutError(), "timeout"),
        (_HttpError("bad gateway", 502), "timeout"),
        (RuntimeError("the read timed out"), "timeout"),
        (ConnectionResetError("reset"), "network"),
        (json.JSONDecodeError("Expecting value", "", 0), "network"),
        (RuntimeError("peer closed connection without sending"), "network"),
        (_HttpError("no such model", 404), "not_found"),
        (RuntimeError("The model `x` does not exist"), "not_found"),
        (ValueError("something else"), "other"),
        (SummaryError("empty body", cause_kind="empty"), "empty"),
    ],
)
def test_each_failure_lands_in_its_kind(exc: BaseException, kind: str) -> None:
    assert classify_failure(exc).kind == kind


def test_a_rate_limit_is_never_an_access_failure_and_keeps_its_retry_hint() -> None:
    # A 429 whose text mentions quota (OpenAI's wording) waits and retries (CC-84).
    failure = classify_failure(RateLimitError("quota exceeded, slow down", retry_after=7.5))
    assert failure.kind == "timeout"
    assert failure.retry_after == 7.5


def test_the_provider_edges_reason_decides_over_the_text() -> None:
    exc = ProviderError("opaque")
    exc.reason = "connection"
    assert classify_failure(exc).kind == "network"
    exc.reason = "auth"
    assert classify_failure(exc).kind == "auth"


def test_the_recorded_error_names_the_type_and_is_redacted() -> None:
    key = "sk-proj-" + "Zq8" * 16
    failure = classify_failure(ValueError(f"rejected key {key}"))
    assert failure.error.startswith("ValueError: rejected key ")
    assert key not in failure.error
    assert classify_failure(ValueError()).error == "ValueError"
