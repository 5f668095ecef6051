"""Claude through the official ``anthropic`` SDK and the Messages API.

Callers hand in OpenAI-format messages and tools, as everywhere in the library; this
backend places prompt-cache breakpoints (native route, TK-33..TK-37), converts to
Messages-API blocks (:mod:`palimpsest.providers.convert`), sends the request with a
``max_tokens`` (required by the API; 4,096 when the caller gives none) and converts the
reply back: text, ``tool_use`` blocks as OpenAI tool calls with JSON-string arguments,
and usage normalized from the Anthropic shape. ``stream=True`` streams the reply and
accumulates the events into the same :class:`Completion`.

The module is named ``anthropic_messages`` so that ``import anthropic`` means the SDK.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import ConfigError, MissingDependencyError
from ..messages import for_provider
from ..tokens import estimate_request_tokens_rough
from ..usage import normalize_usage
from .base import Completion
from .caching import apply_anthropic_cache_control, caching_enabled, effective_cache_ttl
from .convert import (
    anthropic_content_to_openai,
    anthropic_finish_reason,
    openai_to_anthropic,
    openai_tool_choice_to_anthropic,
    openai_tools_to_anthropic,
)
from .retry import RequestInfo, translating

__all__ = ["ANTHROPIC_ERRORS", "DEFAULT_MAX_TOKENS", "AnthropicChatModel"]

DEFAULT_MAX_TOKENS = 4096
"""Sent when the caller gives no ``max_tokens``; the Messages API requires one."""

STREAM_ABOVE_MAX_TOKENS = 21_333
"""Above this cap the SDK refuses a non-streaming call (it could outlast 10 minutes), so
the backend streams and accumulates instead; the caller sees no difference."""

_STATUS_ERRORS = (
    "APIStatusError",
    "BadRequestError",
    "AuthenticationError",
    "PaymentRequiredError",
    "PermissionDeniedError",
    "NotFoundError",
    "RequestTimeoutError",
    "ConflictError",
    "PreconditionFailedError",
    "ContentTooLargeError",
    "RequestTooLargeError",
    "UnprocessableEntityError",
    "RateLimitError",
    "RequestHeaderFieldsTooLargeError",
    "ClientClosedRequestError",
    "InternalServerError",
    "HTTPNotImplementedError",
    "ServiceUnavailableError",
    "GatewayTimeoutError",
    "DeadlineExceededError",
    "OverloadedError",
    # Subclasses that name a cause in the body's error_code; the status still decides.
    "CMEKContextUnavailableError",
    "CMEKKeyDisabledError",
    "CMEKKeyNetworkBlockedError",
    "CMEKKeyUnreachableError",
    "ClaudeCodeKeyCreatorNotMemberError",
    "ClaudeCodeVersionTooOldError",
    "ContractSpendLimitReachedError",
    "EnforcedSpendLimitReachedError",
    "LinkedOrganizationBillingUnavailableError",
    "LinkedOrganizationSpendLimitReachedError",
    "OrganizationOnHoldError",
    "OrganizationTypeNotSupportedError",
    "ParentOrganizationRequiredError",
    "RampLimitExceededError",
    "RequestBodyEncodingInvalidError",
    "RequestBodyEncodingUnsupportedError",
    "RequestBodyTooLargeAfterDecodingError",
    "SandboxEgressRestrictedError",
)

ANTHROPIC_ERRORS: dict[str, str] = {
    "AnthropicError": "generic",
    "APIError": "generic",
    "APIResponseValidationError": "response",
    "APIWebhookValidationError": "generic",
    "APIConnectionError": "connection",
    "APITimeoutError": "timeout",
    "RetryableError": "generic",
    "CredentialsError": "auth",
    "IdentityTokenFileError": "auth",
    "WorkloadIdentityError": "auth",
    **dict.fromkeys(_STATUS_ERRORS, "status"),
}
"""Every exception class the ``anthropic`` SDK exports -> how the edge reads it."""


def _sdk() -> Any:
    try:
        return importlib.import_module("anthropic")
    except ImportError as exc:
        raise MissingDependencyError("anthropic", "anthropic") from exc


def _dump(obj: Any) -> Any:
    """SDK pydantic objects as plain dicts (so that old and new SDK versions read alike)."""
    dump = getattr(obj, "model_dump", None)
    return dump() if callable(dump) else obj


def _fit_signature(create: Any, request: dict[str, Any]) -> dict[str, Any]:
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


class AnthropicChatModel:
    """A :class:`~palimpsest.providers.base.ChatModel` over the Anthropic Messages API.

    Prompt caching is on for Claude models unless ``prompt_caching=False``; ``cache_ttl``
    is ``"5m"`` or ``"1h"``. Options other than ``stream`` go to ``messages.create``
    (``temperature``, ``tool_choice`` in either format, ``stop`` as ``stop_sequences``).
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float | None = None,
        max_retries: int = 2,
        prompt_caching: bool | None = None,
        cache_ttl: str | None = "5m",
        default_max_tokens: int = DEFAULT_MAX_TOKENS,
        default_options: Mapping[str, Any] | None = None,
        threshold_tokens: int | None = None,
        context_length: int | None = None,
        provider: str = "anthropic",
    ) -> None:
        self.model = model
        self.provider = provider
        self.base_url = base_url
        self.timeout = timeout
        self.max_retries = max_retries
        self.default_max_tokens = default_max_tokens
        self.default_options = dict(default_options or {})
        self.threshold_tokens = threshold_tokens
        self.context_length = context_length
        if prompt_caching is None:
            prompt_caching = caching_enabled(model, "anthropic", base_url)
        self.prompt_caching = prompt_caching
        self.cache_ttl = effective_cache_ttl(
            cache_ttl, model=model, provider=provider, base_url=base_url
        )
        key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        if not key:
            raise ConfigError(
                "no Anthropic API key: set ANTHROPIC_API_KEY or pass api_key=",
                key="ANTHROPIC_API_KEY",
            )
        self._api_key = key
        self._client: Any = None
        self._async_client: Any = None
        _sdk()

    def __repr__(self) -> str:
        return f"AnthropicChatModel(model={self.model!r})"

    def _client_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"api_key": self._api_key, "max_retries": self.max_retries}
        if self.base_url is not None:
            kwargs["base_url"] = self.base_url
        if self.timeout is not None:
            kwargs["timeout"] = self.timeout
        return kwargs

    @property
    def client(self) -> Any:
        """The ``anthropic.Anthropic`` client, created on first use."""
        if self._client is None:
            self._client = _sdk().Anthropic(**self._client_kwargs())
        return self._client

    @property
    def async_client(self) -> Any:
        """The ``anthropic.AsyncAnthropic`` client, created on first use."""
        if self._async_client is None:
            self._async_client = _sdk().AsyncAnthropic(**self._client_kwargs())
        return self._async_client

    def build_request(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None,
        max_tokens: int | None,
        options: Mapping[str, Any],
    ) -> dict[str, Any]:
        """The keyword arguments for ``messages.create`` (no I/O)."""
        msgs: list[dict[str, Any]] = for_provider(messages)
        if self.prompt_caching:
            msgs = apply_anthropic_cache_control(msgs, self.cache_ttl, native_anthropic=True)
        system, converted = openai_to_anthropic(msgs)
        request: dict[str, Any] = {
            "model": self.model,
            "messages": converted,
            "max_tokens": max_tokens if max_tokens is not None else self.default_max_tokens,
        }
        if system is not None:
            request["system"] = system
        if tools:
            request["tools"] = openai_tools_to_anthropic(tools)
        extra = {**self.default_options, **options}
        if "stop" in extra:
            stop = extra.pop("stop")
            extra["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop or [])
        if "tool_choice" in extra:
            extra["tool_choice"] = openai_tool_choice_to_anthropic(extra["tool_choice"])
            if extra["tool_choice"] is None:
                del extra["tool_choice"]
        request.update(extra)
        return request

    def _info(self, request: Mapping[str, Any], max_tokens: int) -> RequestInfo:
        approx = None
        if self.threshold_tokens is not None or self.context_length is not None:
            approx = estimate_request_tokens_rough(
                request["messages"],
                system_prompt=json.dumps(request.get("system") or "", ensure_ascii=False),
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

    def complete(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
        **options: Any,
    ) -> Completion:
        stream = bool(options.pop("stream", False))
        request = self.build_request(messages, tools, max_tokens, options)
        stream = stream or request["max_tokens"] > STREAM_ABOVE_MAX_TOKENS
        with translating(ANTHROPIC_ERRORS, "anthropic", self._info(request, request["max_tokens"])):
            create = self.client.messages.create
            if stream:
                events = create(**_fit_signature(create, {**request, "stream": True}))
                return completion_from_events(events)
            response = create(**_fit_signature(create, request))
        return completion_from_message(response)

    async def acomplete(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
        **options: Any,
    ) -> Completion:
        stream = bool(options.pop("stream", False))
        request = self.build_request(messages, tools, max_tokens, options)
        stream = stream or request["max_tokens"] > STREAM_ABOVE_MAX_TOKENS
        with translating(ANTHROPIC_ERRORS, "anthropic", self._info(request, request["max_tokens"])):
            create = self.async_client.messages.create
            if stream:
                events = await create(**_fit_signature(create, {**request, "stream": True}))
                return completion_from_events([event async for event in events])
            response = await create(**_fit_signature(create, request))
        return completion_from_message(response)


def completion_from_message(message: Any) -> Completion:
    """A :class:`Completion` from a Messages-API ``Message`` (SDK object or dict)."""
    data = _dump(message)
    blocks = [b for b in (data.get("content") or []) if isinstance(b, Mapping)]
    content, calls = anthropic_content_to_openai(blocks)
    return Completion(
        content=content,
        tool_calls=calls,
        usage=normalize_usage(data.get("usage"), "anthropic"),
        finish_reason=anthropic_finish_reason(data.get("stop_reason")),
        model=data.get("model"),
        raw=message,
    )


def completion_from_events(events: Iterable[Any]) -> Completion:
    """Accumulate Messages-API stream events into one :class:`Completion`.

    ``message_start`` brings the model and the input-side usage, ``content_block_*``
    events build text and ``tool_use`` blocks (tool input arrives as ``partial_json``),
    ``message_delta`` brings the stop reason and the final output count. ``raw`` is the
    list of events.
    """
    collected = list(events)
    blocks: dict[int, dict[str, Any]] = {}
    partial_json: dict[int, list[str]] = {}
    usage: dict[str, Any] = {}
    model = None
    stop_reason = None
    for event in collected:
        data = _dump(event)
        kind = data.get("type")
        if kind == "message_start":
            message = data.get("message") or {}
            model = message.get("model")
            usage.update({k: v for k, v in (message.get("usage") or {}).items() if v is not None})
        elif kind == "content_block_start":
            index = int(data.get("index", len(blocks)))
            blocks[index] = dict(data.get("content_block") or {})
        elif kind == "content_block_delta":
            index = int(data.get("index", 0))
            delta = data.get("delta") or {}
            block = blocks.setdefault(index, {"type": "text", "text": ""})
            if delta.get("type") == "text_delta":
                block["text"] = str(block.get("text", "")) + str(delta.get("text", ""))
            elif delta.get("type") == "input_json_delta":
                partial_json.setdefault(index, []).append(str(delta.get("partial_json", "")))
        elif kind == "message_delta":
            stop_reason = (data.get("delta") or {}).get("stop_reason") or stop_reason
            usage.update({k: v for k, v in (data.get("usage") or {}).items() if v is not None})
    for index, pieces in partial_json.items():
        raw = "".join(pieces)
        try:
            blocks[index]["input"] = json.loads(raw) if raw else {}
        except ValueError:
            blocks[index]["input"] = {}
    content, calls = anthropic_content_to_openai(blocks[i] for i in sorted(blocks))
    return Completion(
        content=content,
        tool_calls=calls,
        usage=normalize_usage(usage, "anthropic"),
        finish_reason=anthropic_finish_reason(stop_reason),
        model=model,
        raw=collected,
    )
