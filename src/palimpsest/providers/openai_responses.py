"""OpenAI's Responses API through the official ``openai`` SDK (``openai-responses:MODEL``).

The same :class:`~palimpsest.providers.base.ChatModel` contract as the Chat backend, over
``client.responses.create``: messages become input items
(:mod:`palimpsest.providers.convert_responses`), ``max_tokens`` is sent as
``max_output_tokens``, usage is read in the Responses shape (``input_tokens`` includes the
cached ones), and a streamed reply is drained from its typed events
(``response.output_text.delta`` for text, ``response.completed`` / ``incomplete`` /
``failed`` for the final state). A reply the server marked ``failed`` (inside a stream or
not) is classified like an HTTP error, so an overflow reported mid-stream is a
:class:`~palimpsest.errors.ContextOverflowError` and never an empty answer.

Requests are stateless by default (``store: false``): the whole input goes each time, as
palimpsest keeps the conversation itself. Reasoning and compaction items the server
returns are kept on the assistant message (``_responses_items``) and sent back in place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import (
    AuthError,
    ContextOverflowError,
    OutputLimitError,
    ProviderError,
    QuotaError,
    RateLimitError,
)
from ..safety.redact import redact
from ..usage import reported_usage
from .base import Completion
from .convert_responses import (
    RESPONSES_ITEMS_KEY,
    messages_to_input,
    output_to_message_parts,
    responses_finish_reason,
    tools_to_responses,
)
from .openai_chat import OPENAI_ERRORS
from .overflow import exception_for
from .retry import RequestInfo, classify_for
from .sdk_base import PreparedCall, SdkChatModel

__all__ = ["OpenAIResponsesModel", "ResponsesCompletion", "completion_from_response_object"]

# Error codes a failed response carries -> the HTTP status the same failure has elsewhere.
_FAILED_CODE_STATUS = {
    "context_length_exceeded": 400,
    "rate_limit_exceeded": 429,
    "insufficient_quota": 429,
    "server_error": 500,
    "invalid_prompt": 400,
}


def _get(obj: Any, key: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


@dataclass
class ResponsesCompletion(Completion):
    """A :class:`Completion` whose assistant message keeps the reply's opaque items."""

    items: list[dict[str, Any]] = field(default_factory=list)

    def to_message(self) -> dict[str, Any]:
        message = super().to_message()
        if self.items:
            message[RESPONSES_ITEMS_KEY] = [dict(i) for i in self.items]
        return message


def _failure(response: Any, info: RequestInfo) -> ProviderError:
    error = _get(response, "error")
    code = str(_get(error, "code") or "")
    message = str(_get(error, "message") or "the response failed")
    status = _FAILED_CODE_STATUS.get(code)
    text = f"{code}: {message}" if code else message
    return exception_for(
        classify_for(info, status, text),
        f"{info.provider}: response failed: {text}",
        provider=info.provider,
        model=info.model,
        body=text,
    )


def completion_from_response_object(response: Any, raw: Any = None) -> ResponsesCompletion:
    """A completion from a finished ``Response`` (SDK object or dict)."""
    text, calls, kept = output_to_message_parts(_get(response, "output") or [])
    return ResponsesCompletion(
        content=text,
        tool_calls=calls,
        usage=reported_usage(_get(response, "usage"), "responses"),
        finish_reason=responses_finish_reason(response, bool(calls)),
        model=_get(response, "model"),
        raw=response if raw is None else raw,
        items=kept,
    )


class OpenAIResponsesModel(SdkChatModel):
    """A :class:`~palimpsest.providers.base.ChatModel` over the OpenAI Responses API.

    ``store`` is sent with every request (``False`` by default: palimpsest sends the whole
    conversation and the provider keeps nothing). ``default_options`` are merged into each
    request (``reasoning``, ``context_management``, ...).
    """

    sdk_package = "openai"
    client_class = "OpenAI"
    async_client_class = "AsyncOpenAI"
    create_path = "responses.create"
    error_table = OPENAI_ERRORS
    key_env = "OPENAI_API_KEY"
    service = "OpenAI"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float | None = None,
        max_retries: int = 2,
        provider: str = "openai-responses",
        store: bool = False,
        default_options: Mapping[str, Any] | None = None,
        threshold_tokens: int | None = None,
        context_length: int | None = None,
        default_headers: Mapping[str, str] | None = None,
    ) -> None:
        self.store = store
        self.native_refusal: str | None = None
        """Why the server refused ``context_management`` (it was then dropped and the
        request sent again without it); ``None`` while it has not."""
        super().__init__(
            model,
            base_url=base_url,
            api_key=api_key,
            timeout=timeout,
            max_retries=max_retries,
            provider=provider,
            prompt_caching=False,  # OpenAI caches prefixes by itself; no markers to place
            cache_ttl=None,
            default_options=default_options,
            threshold_tokens=threshold_tokens,
            context_length=context_length,
            default_headers=default_headers,
        )

    def __repr__(self) -> str:
        return f"OpenAIResponsesModel(model={self.model!r}, provider={self.provider!r})"

    def build_request(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None,
        max_tokens: int | None,
        options: Mapping[str, Any],
    ) -> dict[str, Any]:
        """The keyword arguments for ``responses.create`` (no I/O)."""
        request: dict[str, Any] = {
            "model": self.model,
            "input": messages_to_input(self._outgoing_keep_items(messages)),
            "store": self.store,
        }
        request.update(self.default_options)
        request.update(options)
        if tools:
            request["tools"] = tools_to_responses(tools)
        if max_tokens is not None:
            request["max_output_tokens"] = max_tokens
        return request

    def complete(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
        **options: Any,
    ) -> Completion:
        try:
            return super().complete(messages, tools, max_tokens, **options)
        except ProviderError as exc:
            if not self._drop_refused_compaction(exc):
                raise
        return super().complete(messages, tools, max_tokens, **options)

    async def acomplete(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
        **options: Any,
    ) -> Completion:
        try:
            return await super().acomplete(messages, tools, max_tokens, **options)
        except ProviderError as exc:
            if not self._drop_refused_compaction(exc):
                raise
        return await super().acomplete(messages, tools, max_tokens, **options)

    def _drop_refused_compaction(self, exc: ProviderError) -> bool:
        """Whether ``exc`` is the server refusing server-side compaction (an unsupported
        model, route or parameter); if so the parameter is dropped for good and the
        caller sends the request again without it."""
        if "context_management" not in self.default_options:
            return False
        if isinstance(
            exc, ContextOverflowError | OutputLimitError | RateLimitError | AuthError | QuotaError
        ):
            return False
        if exc.status_code not in (400, 404, 422):
            return False
        text = f"{exc} {exc.body or ''}".lower()
        if "context_management" not in text and "compact" not in text:
            return False
        del self.default_options["context_management"]
        self.native_refusal = redact(str(exc))
        return True

    def _outgoing_keep_items(self, messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """The messages as sent, but with the opaque items that ``for_provider`` would drop."""
        sent = self._outgoing(messages)
        for out, original in zip(sent, messages, strict=True):
            if RESPONSES_ITEMS_KEY in original:
                out[RESPONSES_ITEMS_KEY] = original[RESPONSES_ITEMS_KEY]
        return sent

    def _info(self, request: Mapping[str, Any], max_tokens: int | None) -> RequestInfo:
        return super()._info(
            {"messages": request["input"], "tools": request.get("tools")}, max_tokens
        )

    def _info_max_tokens(self, request: Mapping[str, Any], max_tokens: int | None) -> int | None:
        value = request.get("max_output_tokens", max_tokens)
        return value if isinstance(value, int) else max_tokens

    def _finish(self, call: PreparedCall, reply: Any) -> Completion:
        if call.stream:
            return self._from_stream(reply, call.info)
        return self._from_response(reply, call.info)

    def _generic_info(self) -> RequestInfo:
        return RequestInfo(provider=self.provider, model=self.model)

    def parse_response(self, response: Any) -> Completion:
        return self._from_response(response, self._generic_info())

    def parse_stream(self, items: list[Any]) -> Completion:
        return self._from_stream(items, self._generic_info())

    def _from_response(self, response: Any, info: RequestInfo) -> Completion:
        if _get(response, "status") == "failed":
            raise _failure(response, info)
        return completion_from_response_object(response)

    def _from_stream(self, items: list[Any], info: RequestInfo) -> Completion:
        final = None
        for event in items:
            kind = _get(event, "type")
            if kind in ("response.completed", "response.incomplete", "response.failed"):
                final = _get(event, "response")
            elif kind == "error":
                raise _failure({"error": event}, info)
        if final is None:
            # A stream that ended with no final state: an overflow some servers report by
            # closing the stream, or a dropped connection. Never an empty answer.
            message = "the stream ended before the response was complete"
            raise _failure({"error": {"message": message}}, info)
        if _get(final, "status") == "failed":
            raise _failure(final, info)
        return completion_from_response_object(final, raw=items)

    def stream_text(self, item: Any) -> str:
        if _get(item, "type") == "response.output_text.delta":
            delta = _get(item, "delta")
            return delta if isinstance(delta, str) else ""
        return ""
