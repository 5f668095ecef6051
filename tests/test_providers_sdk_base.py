"""SdkChatModel: the shared client, request-info and call skeleton of the SDK backends.

The real backends are tested against their SDKs in test_providers_openai_chat.py and
test_providers_anthropic_messages.py; here a small SDK module stands in at the model
boundary so the skeleton's own promises can be checked directly: sync and async give
the same result, streams are drained inside error translation, clients are made once.
"""

from __future__ import annotations

import asyncio
import sys
import types
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.errors import ConfigError, MissingDependencyError, RateLimitError
from palimpsest.providers.base import ChatModel, Completion
from palimpsest.providers.sdk_base import SdkChatModel, fit_signature, load_sdk

PACKAGE = "palimpsest_fake_sdk"


class FakeStatusError(Exception):
    def __init__(self, status_code: int, message: str) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.body = {"error": {"message": message}}


FakeStatusError.__module__ = PACKAGE  # the table is matched by the SDK's package name


class _Create:
    """Stands in for ``client.chat.create``: records keywords, replies from a script."""

    def __init__(self, script: list[Any], sent: list[dict[str, Any]]) -> None:
        self.script = script
        self.sent = sent

    def reply(self, kwargs: dict[str, Any]) -> Any:
        self.sent.append(kwargs)
        reply = self.script.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        return reply


def _items(reply: Any) -> Iterator[Any]:
    for item in reply:
        if isinstance(item, BaseException):
            raise item
        yield item


# Like an SDK's create: named keywords only, anything else has to travel in extra_body.
class _SyncCreate(_Create):
    def __call__(
        self, model: str, messages: Any, stream: bool = False, extra_body: Any = None
    ) -> Any:
        reply = self.reply(
            {"model": model, "messages": messages, "stream": stream, "extra_body": extra_body}
        )
        return _items(reply) if stream else reply


class _AsyncCreate(_Create):
    async def __call__(
        self, model: str, messages: Any, stream: bool = False, extra_body: Any = None
    ) -> Any:
        reply = self.reply(
            {"model": model, "messages": messages, "stream": stream, "extra_body": extra_body}
        )
        if not stream:
            return reply

        async def agen() -> AsyncIterator[Any]:
            for item in _items(reply):
                yield item

        return agen()


class FakeSdk:
    """A module-like SDK whose clients share one script and one log of sent requests."""

    def __init__(self) -> None:
        self.script: list[Any] = []
        self.sent: list[dict[str, Any]] = []
        self.clients: list[dict[str, Any]] = []

    def module(self) -> types.ModuleType:
        mod = types.ModuleType(PACKAGE)

        def client(create_type: type[_Create]) -> Any:
            def make(**kwargs: Any) -> Any:
                self.clients.append(kwargs)
                chat = types.SimpleNamespace(create=create_type(self.script, self.sent))
                return types.SimpleNamespace(chat=chat)

            return make

        mod.Client = client(_SyncCreate)  # type: ignore[attr-defined]
        mod.AsyncClient = client(_AsyncCreate)  # type: ignore[attr-defined]
        return mod


FAKE_ERRORS = {"FakeStatusError": "status"}
FAKE_STREAM = {"stream": True, "stream_options": {"usage": True}}


class FakeModel(SdkChatModel):
    sdk_package = PACKAGE
    client_class = "Client"
    async_client_class = "AsyncClient"
    create_path = "chat.create"
    error_table = FAKE_ERRORS
    stream_flags = FAKE_STREAM
    key_env = "FAKE_API_KEY"
    service = "Fake"

    def __init__(self, model: str = "fake-1", **settings: Any) -> None:
        defaults: dict[str, Any] = {
            "provider": "fake",
            "api_key": None,
            "base_url": None,
            "timeout": None,
            "max_retries": 0,
            "prompt_caching": None,
            "cache_ttl": "5m",
            "default_options": None,
            "threshold_tokens": None,
            "context_length": None,
        }
        super().__init__(model, **{**defaults, **settings})

    def build_request(
        self,
        messages: Sequence[Any],
        tools: Any,
        max_tokens: int | None,
        options: Mapping[str, Any],
    ) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.model, "messages": self._outgoing(messages)}
        request.update(self.default_options)
        request.update(options)
        if max_tokens is not None:
            request["max_tokens"] = max_tokens
        return request

    def parse_response(self, response: Any) -> Completion:
        return Completion(content=response["text"], model=self.model, raw=response)

    def parse_stream(self, items: list[Any]) -> Completion:
        return Completion(content="".join(items), model=self.model, raw=items)


@pytest.fixture
def sdk(monkeypatch: pytest.MonkeyPatch) -> FakeSdk:
    fake = FakeSdk()
    monkeypatch.setitem(sys.modules, PACKAGE, fake.module())
    return fake


def _both(model: FakeModel, **options: Any) -> tuple[Completion, Completion]:
    messages = [{"role": "user", "content": "hi", "_id": 3}]
    sync = model.complete(messages, **options)
    return sync, asyncio.run(model.acomplete(messages, **options))


def test_is_a_chat_model(sdk: FakeSdk) -> None:
    assert isinstance(FakeModel(api_key="k"), ChatModel)


def test_sync_and_async_send_and_read_alike(sdk: FakeSdk) -> None:
    sdk.script.extend([{"text": "plain"}, {"text": "plain"}])
    sync, async_ = _both(FakeModel(api_key="k"), max_tokens=9, temperature=0)
    assert sync == async_ and sync.content == "plain"
    first, second = sdk.sent
    assert first == second
    # Internal keys never leave; keywords the SDK does not name ride in extra_body.
    assert first["messages"] == [{"role": "user", "content": "hi"}]
    assert first["extra_body"] == {"max_tokens": 9, "temperature": 0}
    assert first["stream"] is False


def test_stream_flags_are_sent_and_the_stream_drained(sdk: FakeSdk) -> None:
    sdk.script.extend([["a", "b", "c"], ["a", "b", "c"]])
    sync, async_ = _both(FakeModel(api_key="k"), stream=True)
    assert sync.content == async_.content == "abc"
    assert sync.raw == async_.raw == ["a", "b", "c"]
    for sent in sdk.sent:
        assert sent["stream"] is True
        assert sent["extra_body"] == {"stream_options": {"usage": True}}


def test_sdk_errors_are_translated_in_both_modes(sdk: FakeSdk) -> None:
    sdk.script.extend([FakeStatusError(429, "slow down; try again in 7s") for _ in range(2)])
    model = FakeModel(api_key="k")
    with pytest.raises(RateLimitError) as sync_info:
        model.complete([{"role": "user", "content": "x"}])
    with pytest.raises(RateLimitError) as async_info:
        asyncio.run(model.acomplete([{"role": "user", "content": "x"}]))
    for info in (sync_info, async_info):
        assert info.value.retry_after == 7.0
        assert (info.value.provider, info.value.model) == ("fake", "fake-1")
        assert isinstance(info.value.__cause__, FakeStatusError)


def test_an_error_mid_stream_is_translated_in_both_modes(sdk: FakeSdk) -> None:
    sdk.script.extend([["a", FakeStatusError(429, "rate limited")] for _ in range(2)])
    model = FakeModel(api_key="k")
    with pytest.raises(RateLimitError):
        model.complete([{"role": "user", "content": "x"}], stream=True)
    with pytest.raises(RateLimitError):
        asyncio.run(model.acomplete([{"role": "user", "content": "x"}], stream=True))


def test_other_exceptions_pass_through_untouched(sdk: FakeSdk) -> None:
    sdk.script.append(KeyError("ours"))
    with pytest.raises(KeyError, match="ours"):
        FakeModel(api_key="k").complete([{"role": "user", "content": "x"}])


def test_clients_are_made_once_with_the_settings(sdk: FakeSdk) -> None:
    model = FakeModel(
        api_key="k", base_url="http://127.0.0.1:9/v1", timeout=3.0, default_headers={"X-A": "1"}
    )
    assert sdk.clients == []  # nothing is built until a call needs it
    assert model.client is model.client
    assert model.async_client is model.async_client
    expected = {
        "api_key": "k",
        "max_retries": 0,
        "base_url": "http://127.0.0.1:9/v1",
        "timeout": 3.0,
        "default_headers": {"X-A": "1"},
    }
    assert sdk.clients == [expected, expected]


def test_minimal_client_settings(sdk: FakeSdk) -> None:
    assert FakeModel(api_key="k").client is not None
    assert sdk.clients == [{"api_key": "k", "max_retries": 0}]


def test_key_comes_from_the_environment(sdk: FakeSdk, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_API_KEY", "from-env")
    assert FakeModel().client is not None
    assert sdk.clients[0]["api_key"] == "from-env"


def test_missing_key_names_the_variable(sdk: FakeSdk) -> None:
    with pytest.raises(ConfigError, match="no Fake API key: set FAKE_API_KEY") as info:
        FakeModel()
    assert info.value.key == "FAKE_API_KEY"


def test_missing_sdk_names_the_extra() -> None:
    with pytest.raises(MissingDependencyError) as info:
        load_sdk(PACKAGE)  # not installed outside the fixture
    assert info.value.extra == PACKAGE


def test_request_info_estimates_only_when_limits_are_known(sdk: FakeSdk) -> None:
    messages = [{"role": "user", "content": "y" * 4000}]
    plain = FakeModel(api_key="k")
    request = plain.build_request(messages, None, 50, {})
    assert plain._info(request, 50).approx_tokens is None
    bounded = FakeModel(api_key="k", threshold_tokens=100, context_length=8000)
    info = bounded._info(request, 50)
    assert info.approx_tokens is not None and info.approx_tokens >= 1000
    assert (info.threshold_tokens, info.context_length, info.max_tokens) == (100, 8000, 50)


def _named(a: int, b: int = 0) -> None: ...


def _open(a: int, **rest: Any) -> None: ...


def _with_body(a: int, extra_body: Any = None) -> None: ...


@given(st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), st.integers()))
def test_fit_signature_keeps_every_keyword(kwargs: dict[str, Any]) -> None:
    fitted = fit_signature(_named, kwargs)
    named = {k: v for k, v in kwargs.items() if k in ("a", "b")}
    other = {k: v for k, v in kwargs.items() if k not in ("a", "b")}
    assert fitted == ({**named, "extra_body": other} if other else named)
    assert fit_signature(_open, kwargs) is kwargs  # **kwargs takes everything as is


def test_fit_signature_merges_into_an_existing_extra_body() -> None:
    fitted = fit_signature(_with_body, {"a": 1, "top_k": 5, "extra_body": {"top_k": 9, "x": 1}})
    # The caller's explicit extra_body wins over a keyword of the same name.
    assert fitted == {"a": 1, "extra_body": {"top_k": 9, "x": 1}}
