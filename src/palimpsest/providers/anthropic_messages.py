"""Claude through the official ``anthropic`` SDK and the Messages API.

Callers hand in OpenAI-format messages and tools, as everywhere in the library; this
backend places prompt-cache breakpoints (native route, TK-33..TK-37), converts to
Messages-API blocks (:mod:`palimpsest.providers.convert`), sends the request with a
``max_tokens`` (required by the API; 4,096 when the caller gives none) and converts the
reply back: text, ``tool_use`` blocks as OpenAI tool calls with JSON-string arguments,
and usage normalized from the Anthropic shape. ``stream=True`` streams the reply and
accumulates the events into the same :class:`Completion`. Clients, request info and the
call itself come from :class:`~palimpsest.providers.sdk_base.SdkChatModel`.

The module is named ``anthropic_messages`` so that ``import anthropic`` means the SDK.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..messages import role_of
from ..messages.native import ANTHROPIC_BLOCKS_KEY, latest_native_compaction
from ..usage import reported_usage
from .base import Completion
from .caching import caching_enabled
from .convert import (
    anthropic_content_to_openai,
    anthropic_finish_reason,
    openai_to_anthropic,
    openai_tool_choice_to_anthropic,
    openai_tools_to_anthropic,
)
from .sdk_base import SdkChatModel

__all__ = [
    "ANTHROPIC_ERRORS",
    "CLEAR_TOOL_USES",
    "COMPACTION_BETA",
    "CONTEXT_MANAGEMENT_BETA",
    "DEFAULT_MAX_TOKENS",
    "AnthropicChatModel",
    "applied_edits",
    "blocks_in_place",
    "tool_clearing_edit",
]

COMPACTION_BETA = "compact-2026-09-04"
"""The beta of the ``compaction`` request parameter and of sending its block back."""

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


CLEAR_TOOL_USES = "clear_tool_uses_20250919"
"""Anthropic's context-editing strategy that clears old tool results on the server."""

CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27"
"""The beta header context editing needs (docs.claude.com, build-with-claude/context-editing)."""


def tool_clearing_edit(
    *,
    trigger_tokens: int | None = None,
    keep_tool_uses: int | None = None,
    clear_at_least_tokens: int | None = None,
) -> dict[str, Any]:
    """A ``clear_tool_uses_20250919`` edit; unset fields keep the server's defaults.

    ``clear_at_least_tokens`` is what makes a clearing worth the cache it breaks: the server
    clears nothing unless it can clear that many input tokens.
    """
    edit: dict[str, Any] = {"type": CLEAR_TOOL_USES}
    if trigger_tokens:
        edit["trigger"] = {"type": "input_tokens", "value": int(trigger_tokens)}
    if keep_tool_uses is not None:
        edit["keep"] = {"type": "tool_uses", "value": int(keep_tool_uses)}
    if clear_at_least_tokens:
        edit["clear_at_least"] = {"type": "input_tokens", "value": int(clear_at_least_tokens)}
    return edit


def applied_edits(raw: Any) -> list[dict[str, Any]]:
    """The context edits a response says the server applied (``[]`` when none)."""
    data = _dump(raw)
    if not isinstance(data, Mapping):
        return []
    management = _dump(data.get("context_management")) or {}
    edits = management.get("applied_edits") if isinstance(management, Mapping) else None
    return [dict(_dump(e)) for e in edits or [] if isinstance(_dump(e), Mapping)]


def _dump(obj: Any) -> Any:
    """SDK pydantic objects as plain dicts (so that old and new SDK versions read alike)."""
    dump = getattr(obj, "model_dump", None)
    return dump() if callable(dump) else obj


class AnthropicChatModel(SdkChatModel):
    """A :class:`~palimpsest.providers.base.ChatModel` over the Anthropic Messages API.

    Prompt caching is on for Claude models unless ``prompt_caching=False``; ``cache_ttl``
    is ``"5m"`` or ``"1h"``. Options other than ``stream`` go to ``messages.create``
    (``temperature``, ``tool_choice`` in either format, ``stop`` as ``stop_sequences``).

    ``tool_clearing`` turns on Anthropic's server-side context editing: every request
    carries ``context_management`` with one ``clear_tool_uses_20250919`` edit (the mapping
    given, ``True`` for the server's defaults) and the ``context-management-2025-06-27``
    beta header, so the server clears old tool results before the model reads them, while
    the conversation here stays whole (:func:`tool_clearing_edit` builds the edit).
    """

    sdk_package = "anthropic"
    client_class = "Anthropic"
    async_client_class = "AsyncAnthropic"
    create_path = "messages.create"
    error_table = ANTHROPIC_ERRORS
    key_env = "ANTHROPIC_API_KEY"
    service = "Anthropic"
    native_cache_control = True

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
        tool_clearing: Mapping[str, Any] | bool | None = None,
    ) -> None:
        self.default_max_tokens = default_max_tokens
        self.last_tools: list[dict[str, Any]] | None = None
        """The tools (OpenAI format) of the last request that had any: a compaction
        request sends them too, as the conversation it summarizes was held with them."""
        self.tool_clearing: dict[str, Any] | None = None
        if tool_clearing:
            edit = dict(tool_clearing) if isinstance(tool_clearing, Mapping) else {}
            self.tool_clearing = {**edit, "type": CLEAR_TOOL_USES}
        if prompt_caching is None:
            # The native Messages API caches whatever name the route goes by.
            prompt_caching = caching_enabled(model, "anthropic", base_url)
        super().__init__(
            model,
            api_key=api_key,
            base_url=base_url,
            timeout=timeout,
            max_retries=max_retries,
            prompt_caching=prompt_caching,
            cache_ttl=cache_ttl,
            default_options=default_options,
            threshold_tokens=threshold_tokens,
            context_length=context_length,
            provider=provider,
        )

    def __repr__(self) -> str:
        return f"AnthropicChatModel(model={self.model!r})"

    def build_request(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None,
        max_tokens: int | None,
        options: Mapping[str, Any],
    ) -> dict[str, Any]:
        """The keyword arguments for ``messages.create`` (no I/O)."""
        carried = blocks_in_place(messages)
        msgs = self._outgoing(carried)
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
            self.last_tools = [dict(t) for t in tools]
        extra = {**self.default_options, **options}
        if "stop" in extra:
            stop = extra.pop("stop")
            extra["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop or [])
        if "tool_choice" in extra:
            extra["tool_choice"] = openai_tool_choice_to_anthropic(extra["tool_choice"])
            if extra["tool_choice"] is None:
                del extra["tool_choice"]
        request.update(extra)
        betas_needed: list[str] = []
        if any(ANTHROPIC_BLOCKS_KEY in m for m in messages):
            betas_needed.append(COMPACTION_BETA)  # a compaction block goes back under its beta
        if self.tool_clearing is not None:
            body = dict(request.get("extra_body") or {})
            body["context_management"] = {"edits": [dict(self.tool_clearing)]}
            request["extra_body"] = body
            betas_needed.append(CONTEXT_MANAGEMENT_BETA)
        if betas_needed:
            headers = dict(request.get("extra_headers") or {})
            betas = [b for b in str(headers.get("anthropic-beta", "")).split(",") if b]
            betas += [b for b in betas_needed if b not in betas]
            headers["anthropic-beta"] = ",".join(betas)
            request["extra_headers"] = headers
        return request

    def parse_response(self, response: Any) -> Completion:
        return completion_from_message(response)

    def parse_stream(self, items: list[Any]) -> Completion:
        return completion_from_events(items)

    def stream_text(self, item: Any) -> str:
        data = _dump(item)
        if not isinstance(data, Mapping) or data.get("type") != "content_block_delta":
            return ""
        delta = data.get("delta") or {}
        text = delta.get("text") if delta.get("type") == "text_delta" else None
        return text if isinstance(text, str) else ""

    def _wants_stream(self, request: Mapping[str, Any], asked: bool) -> bool:
        return asked or request["max_tokens"] > STREAM_ABOVE_MAX_TOKENS

    def _info_max_tokens(self, request: Mapping[str, Any], max_tokens: int | None) -> int | None:
        cap: int | None = request["max_tokens"]  # the default filled in, not the caller's
        return cap

    def _approx_system_text(self, request: Mapping[str, Any]) -> str:
        # ``system`` may be a list of blocks; the rough count reads its JSON text.
        return json.dumps(request.get("system") or "", ensure_ascii=False)


def blocks_in_place(messages: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The messages with each carried Anthropic block (a ``compaction``) sent in place.

    A message under :data:`~palimpsest.messages.native.ANTHROPIC_BLOCKS_KEY` is sent as
    its blocks (its ``content`` is the readable copy kept for search and summaries), and
    what came before the newest compaction block is not sent at all: the block stands in
    for it (system messages stay, they go to ``system``).
    """
    start = latest_native_compaction(messages) or 0
    out: list[Mapping[str, Any]] = []
    for index, message in enumerate(messages):
        if index < start and role_of(message) not in ("system", "developer"):
            continue
        blocks = message.get(ANTHROPIC_BLOCKS_KEY)
        if isinstance(blocks, list) and blocks:
            sent = {k: v for k, v in message.items() if k != ANTHROPIC_BLOCKS_KEY}
            sent["content"] = [dict(b) for b in blocks if isinstance(b, Mapping)]
            out.append(sent)
        else:
            out.append(message)
    return out


def completion_from_message(message: Any) -> Completion:
    """A :class:`Completion` from a Messages-API ``Message`` (SDK object or dict)."""
    data = _dump(message)
    blocks = [b for b in (data.get("content") or []) if isinstance(b, Mapping)]
    content, calls = anthropic_content_to_openai(blocks)
    return Completion(
        content=content,
        tool_calls=calls,
        usage=reported_usage(data.get("usage"), "anthropic"),
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
        usage=reported_usage(usage, "anthropic"),
        finish_reason=anthropic_finish_reason(stop_reason),
        model=model,
        raw=collected,
    )
