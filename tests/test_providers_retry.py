"""The edge translation: every SDK exception class is mapped, retry-after is read right."""

from __future__ import annotations

from types import ModuleType

import anthropic
import openai
import pytest

from palimpsest.errors import AuthError, PalimpsestError, ProviderError
from palimpsest.providers.anthropic_messages import ANTHROPIC_ERRORS
from palimpsest.providers.openai_chat import OPENAI_ERRORS
from palimpsest.providers.retry import (
    RequestInfo,
    error_kind,
    error_message,
    parse_retry_after,
    translating,
)

KINDS = {"status", "timeout", "connection", "auth", "response", "generic"}


def exported_exceptions(sdk: ModuleType) -> dict[str, type[BaseException]]:
    """Every public exception class the SDK exposes at top level or in ``_exceptions``."""
    found: dict[str, type[BaseException]] = {}
    for module in (sdk, sdk._exceptions):
        # Snapshot, and test type(obj) rather than obj: the SDKs keep lazy proxies at
        # module level that would import every resource module if touched.
        for name, obj in list(vars(module).items()):
            if name.startswith("_") or not issubclass(type(obj), type):
                continue
            if issubclass(obj, BaseException) and obj.__module__.split(".")[0] == sdk.__name__:
                found[obj.__name__] = obj
    return found


@pytest.mark.parametrize(("sdk", "table"), [(openai, OPENAI_ERRORS), (anthropic, ANTHROPIC_ERRORS)])
def test_every_sdk_exception_is_mapped(sdk: ModuleType, table: dict[str, str]) -> None:
    """Every class the installed SDK exports resolves to a kind: by its own entry, or, for
    a subclass a newer SDK release added (anthropic 2.13 added
    ``WorkspaceHumanReviewDisabledError`` under ``BadRequestError``), through the nearest
    mapped class in its MRO, as :func:`error_kind` does at run time."""
    classes = exported_exceptions(sdk)
    assert len(classes) > 10  # the walk really found the SDK's exceptions
    unmapped = sorted(
        name
        for name, cls in classes.items()
        if error_kind(cls.__new__(cls), table, sdk.__name__) is None  # type: ignore[call-overload]
    )
    assert not unmapped, f"{sdk.__name__} exceptions without a translation: {unmapped}"
    # the base classes themselves are named in the table, not resolved by inheritance
    for base in ("APIError", "APIStatusError", "APIConnectionError", "APITimeoutError"):
        assert base in table, base
    assert set(table.values()) <= KINDS


@pytest.mark.parametrize(("sdk", "table"), [(openai, OPENAI_ERRORS), (anthropic, ANTHROPIC_ERRORS)])
def test_status_classes_resolve_to_status(sdk: ModuleType, table: dict[str, str]) -> None:
    for cls in exported_exceptions(sdk).values():
        kind = error_kind(cls.__new__(cls), table, sdk.__name__)  # type: ignore[call-overload]
        if issubclass(cls, sdk.APIStatusError):
            assert kind == "status", cls.__name__
        if issubclass(cls, sdk.APITimeoutError):
            assert kind == "timeout"


def test_most_specific_class_wins() -> None:
    class Local(openai.APITimeoutError):  # defined outside the SDK: skipped in the MRO walk
        pass

    err = Local.__new__(Local)
    assert error_kind(err, OPENAI_ERRORS, "openai") == "timeout"
    assert error_kind(ValueError("x"), OPENAI_ERRORS, "openai") is None


def test_translating_passes_foreign_and_own_errors_through() -> None:
    info = RequestInfo(provider="p", model="m")
    with pytest.raises(KeyError), translating(OPENAI_ERRORS, "openai", info):
        raise KeyError("not an SDK error")
    own = ProviderError("already ours")
    with pytest.raises(ProviderError) as caught, translating(OPENAI_ERRORS, "openai", info):
        raise own
    assert caught.value is own


def test_credentials_errors_become_auth_errors() -> None:
    info = RequestInfo(provider="anthropic", model="claude")
    with pytest.raises(AuthError) as caught, translating(ANTHROPIC_ERRORS, "anthropic", info):
        raise anthropic.CredentialsError("no credentials found")
    assert isinstance(caught.value, PalimpsestError)
    assert isinstance(caught.value.__cause__, anthropic.CredentialsError)


def test_parse_retry_after() -> None:
    assert parse_retry_after({"Retry-After": "12"}) == 12.0
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert parse_retry_after({}, "Please try again in 3.89s. Visit ...") == pytest.approx(3.89)
    assert parse_retry_after(None, "Please try again in 644ms.") == pytest.approx(0.644)
    assert parse_retry_after(None, '"retryDelay": "30s"') == 30.0
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # past date
    assert parse_retry_after(None, "no hint") is None


def test_error_message_prefers_the_providers_sentence() -> None:
    exc = RuntimeError("Error code: 400 - {...}")
    assert error_message(exc, {"error": {"message": "prompt is too long"}}) == "prompt is too long"
    assert error_message(exc, {"error": "the input length exceeds the context length"}).startswith(
        "the input"
    )
    assert error_message(exc, {"message": "top-level"}) == "top-level"
    assert error_message(exc, "<html>") == "Error code: 400 - {...}"
