"""Any OpenAI-compatible Chat Completions endpoint through the official ``openai`` SDK.

One class serves OpenAI, OpenRouter, vLLM, llama.cpp's ``llama-server`` and Ollama: they
differ only in ``base_url``, key and model name. Messages leave the process without the
library's ``_``-prefixed keys; Claude models behind OpenRouter get Anthropic
``cache_control`` breakpoints (spec TK-41). With ``stream=True`` the reply is streamed
and accumulated (text, tool-call deltas and the final usage chunk) into the same
:class:`~palimpsest.providers.base.Completion` a plain call returns. SDK exceptions are
translated at this edge into :mod:`palimpsest.errors` (see
:mod:`palimpsest.providers.retry`); clients, request info and the call itself come from
:class:`~palimpsest.providers.sdk_base.SdkChatModel`.

The module is named ``openai_chat`` so that ``import openai`` inside it means the SDK.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..usage import reported_usage
from .base import Completion
from .model_window import PROBE_TIMEOUT, window_from_entries
from .sdk_base import SdkChatModel

__all__ = ["OPENAI_ERRORS", "OpenAIChatModel"]

OPENAI_ERRORS: dict[str, str] = {
    "OpenAIError": "generic",
    "APIError": "generic",
    "APIStatusError": "status",
    "APIResponseValidationError": "response",
    "APIConnectionError": "connection",
    "APITimeoutError": "timeout",
    "BadRequestError": "status",
    "AuthenticationError": "status",
    "OAuthError": "status",
    "PermissionDeniedError": "status",
    "NotFoundError": "status",
    "ConflictError": "status",
    "UnprocessableEntityError": "status",
    "RateLimitError": "status",
    "InternalServerError": "status",
    "LengthFinishReasonError": "generic",
    "ContentFilterFinishReasonError": "generic",
    "InvalidWebhookSignatureError": "generic",
    "SubjectTokenProviderError": "auth",
    "WebSocketConnectionClosedError": "connection",
    "WebSocketQueueFullError": "generic",
}
"""Every exception class the ``openai`` SDK exports -> how the edge reads it."""

# The final chunk then carries the usage (choices empty), as OpenAI and most servers do.
_STREAM = {"stream": True, "stream_options": {"include_usage": True}}


def _get(obj: Any, key: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


class OpenAIChatModel(SdkChatModel):
    """A :class:`~palimpsest.providers.base.ChatModel` over the Chat Completions API.

    ``provider`` names the route (``openai``, ``openrouter``, ``vllm``, ...) in errors and
    decides prompt caching together with the model name (``prompt_caching=None`` means
    automatic). ``max_tokens`` is sent as ``max_completion_tokens`` to OpenAI itself and
    as ``max_tokens`` elsewhere unless ``max_tokens_param`` says otherwise.
    ``threshold_tokens`` and ``context_length`` let error classification apply the
    server-disconnect rule and recognise a bare 400 on an oversized request.
    """

    sdk_package = "openai"
    client_class = "OpenAI"
    async_client_class = "AsyncOpenAI"
    create_path = "chat.completions.create"
    error_table = OPENAI_ERRORS
    stream_flags = _STREAM
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
        provider: str = "openai",
        prompt_caching: bool | None = None,
        cache_ttl: str | None = "5m",
        max_tokens_param: str | None = None,
        default_options: Mapping[str, Any] | None = None,
        threshold_tokens: int | None = None,
        context_length: int | None = None,
        default_headers: Mapping[str, str] | None = None,
    ) -> None:
        if max_tokens_param is None:
            official = provider == "openai" and base_url is None
            max_tokens_param = "max_completion_tokens" if official else "max_tokens"
        self.max_tokens_param = max_tokens_param
        super().__init__(
            model,
            base_url=base_url,
            api_key=api_key,
            timeout=timeout,
            max_retries=max_retries,
            provider=provider,
            prompt_caching=prompt_caching,
            cache_ttl=cache_ttl,
            default_options=default_options,
            threshold_tokens=threshold_tokens,
            context_length=context_length,
            default_headers=default_headers,
        )

    def __repr__(self) -> str:
        return f"OpenAIChatModel(model={self.model!r}, provider={self.provider!r})"

    def probe_context_length(self) -> int | None:
        """The window the server's model list reports for this model (``None`` when it
        reports none; errors propagate). One request, no retries
        (:mod:`~palimpsest.providers.model_window`)."""
        client = self.client.with_options(max_retries=0, timeout=PROBE_TIMEOUT)
        entries = [item.model_dump() for item in client.models.list()]
        return window_from_entries(entries, self.model)

    def _missing_key(self) -> str:
        if self.base_url is None:
            return super()._missing_key()
        return "not-needed"  # local servers (llama.cpp, vLLM, Ollama) ignore the key

    def build_request(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None,
        max_tokens: int | None,
        options: Mapping[str, Any],
    ) -> dict[str, Any]:
        """The keyword arguments for ``chat.completions.create`` (no I/O)."""
        msgs = self._outgoing(messages)
        request: dict[str, Any] = {"model": self.model, "messages": msgs}
        request.update(self.default_options)
        request.update(options)
        if tools:
            request["tools"] = [dict(t) for t in tools]
        if max_tokens is not None:
            request[self.max_tokens_param] = max_tokens
        return request

    def parse_response(self, response: Any) -> Completion:
        return completion_from_response(response)

    def parse_stream(self, items: list[Any]) -> Completion:
        return completion_from_chunks(items)

    def stream_text(self, item: Any) -> str:
        for choice in _get(item, "choices") or []:
            content = _get(_get(choice, "delta"), "content")
            if isinstance(content, str):
                return content
        return ""


def _tool_call_dict(call: Any) -> dict[str, Any]:
    fn = _get(call, "function")
    return {
        "id": str(_get(call, "id") or ""),
        "type": "function",
        "function": {
            "name": str(_get(fn, "name") or ""),
            "arguments": str(_get(fn, "arguments") or ""),
        },
    }


def completion_from_response(response: Any) -> Completion:
    """A :class:`Completion` from a ``ChatCompletion`` (SDK object or dict)."""
    choices = _get(response, "choices") or []
    choice = choices[0] if choices else None
    message = _get(choice, "message") if choice is not None else None
    calls = _get(message, "tool_calls") or []
    return Completion(
        content=_get(message, "content") if message is not None else None,
        tool_calls=[_tool_call_dict(c) for c in calls],
        usage=reported_usage(_get(response, "usage"), "chat"),
        finish_reason=_get(choice, "finish_reason") if choice is not None else None,
        model=_get(response, "model"),
        raw=response,
    )


def completion_from_chunks(chunks: Iterable[Any]) -> Completion:
    """Accumulate streamed ``chat.completion.chunk`` objects into one :class:`Completion`.

    Text deltas are concatenated; tool-call deltas are merged by ``index`` (the first
    delta carries id and name, later ones append to ``arguments``); the usage comes from
    the final chunk that ``stream_options.include_usage`` adds. ``raw`` is the chunk list.
    """
    collected = list(chunks)
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish_reason = None
    usage = None
    model = None
    for chunk in collected:
        model = _get(chunk, "model") or model
        if _get(chunk, "usage"):
            usage = _get(chunk, "usage")
        for choice in _get(chunk, "choices") or []:
            if _get(choice, "finish_reason"):
                finish_reason = _get(choice, "finish_reason")
            delta = _get(choice, "delta")
            if delta is None:
                continue
            piece = _get(delta, "content")
            if piece:
                text.append(piece)
            for part in _get(delta, "tool_calls") or []:
                index = _get(part, "index")
                slot = calls.setdefault(
                    index if isinstance(index, int) else len(calls),
                    {"id": "", "type": "function", "function": {"name": "", "arguments": ""}},
                )
                if _get(part, "id"):
                    slot["id"] = _get(part, "id")
                fn = _get(part, "function")
                if fn is not None:
                    if _get(fn, "name"):
                        slot["function"]["name"] += _get(fn, "name")
                    if _get(fn, "arguments"):
                        slot["function"]["arguments"] += _get(fn, "arguments")
    return Completion(
        content="".join(text) or None,
        tool_calls=[calls[i] for i in sorted(calls)],
        usage=reported_usage(usage, "chat"),
        finish_reason=finish_reason,
        model=model,
        raw=collected,
    )
