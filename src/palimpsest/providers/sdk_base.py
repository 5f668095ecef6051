"""What the two official-SDK backends share: clients, request info, and the call itself.

``OpenAIChatModel`` and ``AnthropicChatModel`` differ in the SDK they load, its error
table, how a request is built and how a reply (plain or streamed) is read. Everything
else lives here once: key lookup, lazily created sync and async clients, the
:class:`~palimpsest.providers.retry.RequestInfo` that error classification reads, and
the translate-and-call skeleton. ``complete`` and ``acomplete`` share one preparation
step and one finishing step, so the async twin differs from the sync one only by the
``await`` on the SDK call and on draining a stream; the two cannot drift.

A backend subclasses :class:`SdkChatModel`, sets the class-level declarations
(``sdk_package``, ``client_class``, ...) and implements ``build_request``,
``parse_response`` and ``parse_stream``; the ``_wants_stream``, ``_info_max_tokens`` and
``_approx_system_text`` hooks cover the remaining differences.
"""

from __future__ import annotations

import importlib
import inspect
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from operator import attrgetter
from typing import Any, ClassVar

from ..errors import ConfigError, MissingDependencyError
from ..messages import for_provider
from ..tokens import estimate_request_tokens_rough
from .base import Completion
from .caching import apply_anthropic_cache_control, caching_enabled, effective_cache_ttl
from .retry import ErrorTable, RequestInfo, translating

__all__ = ["PreparedCall", "SdkChatModel", "fit_signature", "load_sdk"]

_Messages = Sequence[Mapping[str, Any]]
_Tools = Sequence[Mapping[str, Any]] | None
_Options = Mapping[str, Any]


def load_sdk(package: str) -> Any:
    """The SDK module, or :class:`MissingDependencyError` naming the extra to install."""
    try:
        return importlib.import_module(package)
    except ImportError as exc:
        raise MissingDependencyError(package, package) from exc


def fit_signature(create: Any, request: dict[str, Any]) -> dict[str, Any]:
    """Move keywords this SDK version's ``create`` does not name into ``extra_body``.

    SDK signatures differ between versions (a newer ``anthropic`` drops ``temperature``,
    servers behind ``openai`` take ``top_k``); the API still reads them from the body.
    """
    try:
        params = inspect.signature(create).parameters
    except (TypeError, ValueError):
        return request
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return request
    known = {k: v for k, v in request.items() if k in params}
    extra = {k: v for k, v in request.items() if k not in params}
    if extra:
        known["extra_body"] = {**extra, **(known.get("extra_body") or {})}
    return known


@dataclass(frozen=True)
class PreparedCall:
    """One request, ready to send: the keywords, whether to stream, and the error info."""

    payload: dict[str, Any]
    stream: bool
    info: RequestInfo


class SdkChatModel:
    """Base of the ``openai``- and ``anthropic``-SDK backends (a ``ChatModel``).

    Subclasses declare their SDK and call ``super().__init__`` from their own
    constructor, which keeps its public signature.
    """

    sdk_package: ClassVar[str]
    """Import name of the SDK, also the name of the extra that installs it."""
    client_class: ClassVar[str]
    async_client_class: ClassVar[str]
    create_path: ClassVar[str]
    """Dotted path from a client to the create method (``"messages.create"``)."""
    error_table: ClassVar[ErrorTable]
    stream_flags: ClassVar[Mapping[str, Any]] = {"stream": True}
    """Keywords added to a request that is streamed."""
    supports_on_text: ClassVar[bool] = True
    """``complete(..., on_text=callback)`` streams the reply's text to ``callback``."""
    key_env: ClassVar[str]
    """The environment variable read when no ``api_key=`` is given."""
    service: ClassVar[str]
    """The vendor's name in the missing-key message."""
    native_cache_control: ClassVar[bool] = False
    """Whether cache breakpoints are placed for the native Messages API rather than a proxy
    (``native_anthropic`` of :func:`~palimpsest.providers.caching.apply_anthropic_cache_control`)."""

    def __init__(
        self,
        model: str,
        *,
        provider: str,
        api_key: str | None,
        base_url: str | None,
        timeout: float | None,
        max_retries: int,
        prompt_caching: bool | None,
        cache_ttl: str | None,
        default_options: Mapping[str, Any] | None,
        threshold_tokens: int | None,
        context_length: int | None,
        default_headers: Mapping[str, str] | None = None,
    ) -> None:
        self.model = model
        self.provider = provider
        self.base_url = base_url
        self.timeout = timeout
        self.max_retries = max_retries
        self.threshold_tokens = threshold_tokens
        self.context_length = context_length
        self.default_options = dict(default_options or {})
        if prompt_caching is None:
            prompt_caching = caching_enabled(model, provider, base_url)
        self.prompt_caching = prompt_caching
        self.cache_ttl = effective_cache_ttl(
            cache_ttl, model=model, provider=provider, base_url=base_url
        )
        self._api_key = api_key or os.environ.get(self.key_env) or self._missing_key()
        self._headers = dict(default_headers or {})
        self._client: Any = None
        self._async_client: Any = None
        self._sdk()  # fail at construction, not at the first call, when the extra is missing

    def _missing_key(self) -> str:
        """The key to use when none is given or set; by default there is none."""
        raise ConfigError(
            f"no {self.service} API key: set {self.key_env} or pass api_key=", key=self.key_env
        )

    def _sdk(self) -> Any:
        return load_sdk(self.sdk_package)

    def _client_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"api_key": self._api_key, "max_retries": self.max_retries}
        if self.base_url is not None:
            kwargs["base_url"] = self.base_url
        if self.timeout is not None:
            kwargs["timeout"] = self.timeout
        if self._headers:
            kwargs["default_headers"] = self._headers
        return kwargs

    @property
    def client(self) -> Any:
        """The SDK's sync client (``openai.OpenAI``, ``anthropic.Anthropic``), made on first use."""
        if self._client is None:
            self._client = getattr(self._sdk(), self.client_class)(**self._client_kwargs())
        return self._client

    @property
    def async_client(self) -> Any:
        """The SDK's async client (``AsyncOpenAI``, ``AsyncAnthropic``), made on first use."""
        if self._async_client is None:
            factory = getattr(self._sdk(), self.async_client_class)
            self._async_client = factory(**self._client_kwargs())
        return self._async_client

    # --- what each backend supplies ---------------------------------------------------

    def build_request(
        self, messages: _Messages, tools: _Tools, max_tokens: int | None, options: _Options
    ) -> dict[str, Any]:
        """The keyword arguments for the SDK's create method (no I/O)."""
        raise NotImplementedError

    def parse_response(self, response: Any) -> Completion:
        """A :class:`Completion` from a plain (non-streamed) reply."""
        raise NotImplementedError

    def parse_stream(self, items: list[Any]) -> Completion:
        """A :class:`Completion` from the drained list of stream chunks or events."""
        raise NotImplementedError

    def stream_text(self, item: Any) -> str:
        """The text one streamed chunk or event adds (``""`` when it adds none): what an
        ``on_text`` callback receives as the reply arrives."""
        return ""

    def _wants_stream(self, request: Mapping[str, Any], asked: bool) -> bool:
        return asked

    def _info_max_tokens(self, request: Mapping[str, Any], max_tokens: int | None) -> int | None:
        """The output cap error classification reasons with."""
        return max_tokens

    def _approx_system_text(self, request: Mapping[str, Any]) -> str:
        """System text that sits outside ``request["messages"]``, for the rough count."""
        return ""

    # --- shared plumbing -------------------------------------------------------------

    def _outgoing(self, messages: _Messages) -> list[dict[str, Any]]:
        """The messages as sent: internal keys dropped, cache breakpoints placed if on."""
        msgs: list[dict[str, Any]] = for_provider(messages)
        if self.prompt_caching:
            native = self.native_cache_control
            msgs = apply_anthropic_cache_control(msgs, self.cache_ttl, native_anthropic=native)
        return msgs

    def _info(self, request: Mapping[str, Any], max_tokens: int | None) -> RequestInfo:
        approx = None
        if self.threshold_tokens is not None or self.context_length is not None:
            approx = estimate_request_tokens_rough(
                request["messages"],
                system_prompt=self._approx_system_text(request),
                tools=request.get("tools"),
            )
        return RequestInfo(
            provider=self.provider,
            model=self.model,
            max_tokens=max_tokens,
            approx_tokens=approx,
            threshold_tokens=self.threshold_tokens,
            context_length=self.context_length,
        )

    def _prepare(
        self, messages: _Messages, tools: _Tools, max_tokens: int | None, options: dict[str, Any]
    ) -> PreparedCall:
        asked = bool(options.pop("stream", False))
        request = self.build_request(messages, tools, max_tokens, options)
        stream = self._wants_stream(request, asked)
        info = self._info(request, self._info_max_tokens(request, max_tokens))
        payload = {**request, **self.stream_flags} if stream else request
        return PreparedCall(payload, stream, info)

    @contextmanager
    def _sending(self, call: PreparedCall, *, use_async: bool) -> Iterator[Callable[[], Any]]:
        """Yield the bound SDK call; SDK exceptions inside become palimpsest errors.

        Client creation counts as part of the call. Draining a stream belongs inside the
        block: an error event mid-stream is raised while iterating and must be
        translated like any other.
        """
        with translating(self.error_table, self.sdk_package, call.info):
            client = self.async_client if use_async else self.client
            create = attrgetter(self.create_path)(client)
            yield partial(create, **fit_signature(create, call.payload))

    def _finish(self, call: PreparedCall, reply: Any) -> Completion:
        return self.parse_stream(reply) if call.stream else self.parse_response(reply)

    def complete(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
        **options: Any,
    ) -> Completion:
        on_text = _take_on_text(options)
        call = self._prepare(messages, tools, max_tokens, options)
        with self._sending(call, use_async=False) as send:
            reply = send()
            if call.stream:
                items = []
                try:
                    for item in reply:
                        items.append(item)
                        self._emit(on_text, item)
                finally:  # a callback that raises (the reader gave up) closes the connection
                    close = getattr(reply, "close", None)
                    if callable(close):
                        close()
                reply = items
        return self._finish(call, reply)

    async def acomplete(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
        **options: Any,
    ) -> Completion:
        on_text = _take_on_text(options)
        call = self._prepare(messages, tools, max_tokens, options)
        with self._sending(call, use_async=True) as send:
            reply = await send()
            if call.stream:
                items = []
                async for item in reply:
                    items.append(item)
                    self._emit(on_text, item)
                reply = items
        return self._finish(call, reply)

    def _emit(self, on_text: Callable[[str], None] | None, item: Any) -> None:
        if on_text is not None:
            piece = self.stream_text(item)
            if piece:
                on_text(piece)


def _take_on_text(options: dict[str, Any]) -> Callable[[str], None] | None:
    """``on_text=callable`` asks for the reply streamed, its text handed over as it comes
    (the usual :class:`Completion` is still returned at the end)."""
    on_text = options.pop("on_text", None)
    if on_text is None:
        return None
    if not callable(on_text):
        raise TypeError(f"on_text must be callable, got {type(on_text).__name__}")
    options["stream"] = True
    return on_text  # type: ignore[no-any-return]
