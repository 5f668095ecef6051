"""The provider side of the ``native`` engine: which routes compact, and how they are asked.

:func:`native_route_for` gives the route of a model, or ``None`` where palimpsest knows of
no provider-side compaction (Chat Completions, llama.cpp, a scripted model): the engine is
then the compressor alone.

* :class:`ResponsesRoute` (``openai-responses:``) is *inline*: arming it adds
  ``context_management: [{"type": "compaction", "compact_threshold": N}]`` to every request;
  the server compacts when the rendered input crosses ``N`` and the reply's ``output``
  carries an opaque ``compaction`` item (kept on the assistant message by the backend). A
  server that refuses the parameter makes the backend drop it and send the request again;
  the route then reads as refused.
* :class:`AnthropicRoute` (``anthropic:``) compacts *on request*: ``beta.messages.create``
  with ``compaction: {"type": "summarize"}`` under the ``compact-2026-09-04`` beta answers
  with one ``compaction`` block and ``stop_reason: "compaction"``; later requests send the
  block first, in place of the messages it summarizes. The older ``compact_20260112``
  strategy (beta ``compact-2026-01-12``, in ``context_management.edits``) compacts inline at
  an input-token trigger instead; this module does not use it (docs/compaction.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from ..errors import ContextOverflowError, NativeCompactionError, ProviderError
from ..messages.native import ANTHROPIC_BLOCKS_KEY
from ..safety.redact import redact
from .anthropic_messages import COMPACTION_BETA, AnthropicChatModel
from .openai_responses import OpenAIResponsesModel
from .retry import RequestInfo, translating
from .sdk_base import fit_signature

__all__ = ["AnthropicRoute", "ResponsesRoute", "native_route_for"]

_REFUSAL_STATUS = (400, 403, 404, 422)
_REFUSAL_WORDS = ("compaction", "compact", "beta", "not supported", "unsupported")


class ResponsesRoute:
    """OpenAI Responses: the server compacts inside ordinary requests (inline)."""

    name = "openai-responses"
    mode: Literal["inline", "request"] = "inline"

    def __init__(self, model: OpenAIResponsesModel) -> None:
        self.model = model
        self.threshold_tokens: int | None = None
        self._refused: str | None = None

    @property
    def refused(self) -> str | None:
        return self._refused or self.model.native_refusal

    @refused.setter
    def refused(self, reason: str | None) -> None:
        self._refused = reason
        if reason is not None:
            self.model.default_options.pop("context_management", None)

    def arm(self, threshold_tokens: int) -> None:
        self.threshold_tokens = threshold_tokens
        if self.refused is None:
            self.model.default_options["context_management"] = [
                {"type": "compaction", "compact_threshold": threshold_tokens}
            ]

    def compact(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        raise NativeCompactionError("this route compacts inside ordinary requests only")


class AnthropicRoute:
    """Anthropic Messages: an explicit compaction request (the ``compaction`` parameter)."""

    name = "anthropic"
    mode: Literal["inline", "request"] = "request"

    def __init__(self, model: AnthropicChatModel, *, instructions: str | None = None) -> None:
        self.model = model
        self.instructions = instructions
        self.refused: str | None = None
        self.last_usage: Any = None
        """The compaction request's own usage as the server reported it."""

    def arm(self, threshold_tokens: int) -> None:
        """Nothing to arm: this route compacts only when asked."""

    def request(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        """The keyword arguments of the compaction request (no I/O)."""
        request = self.model.build_request(messages, self.model.last_tools, None, {})
        request.pop("extra_headers", None)  # ``betas`` names the beta on this endpoint
        request.pop("context_management", None)  # the API refuses it beside ``compaction``
        config: dict[str, Any] = {"type": "summarize"}
        if self.instructions and self.instructions.strip():
            config["instructions"] = self.instructions
        request["compaction"] = config
        request["betas"] = [COMPACTION_BETA]
        return request

    def compact(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        request = self.request(messages)
        info = RequestInfo(provider=self.model.provider, model=self.model.model)
        try:
            with translating(self.model.error_table, self.model.sdk_package, info):
                create = self.model.client.beta.messages.create
                reply = create(**fit_signature(create, request))
        except ContextOverflowError as exc:
            raise NativeCompactionError(f"the compaction request overflowed: {exc}") from exc
        except ProviderError as exc:
            text = f"{exc} {exc.body or ''}".lower()
            refused = exc.status_code in _REFUSAL_STATUS and any(w in text for w in _REFUSAL_WORDS)
            raise NativeCompactionError(redact(str(exc)), refused=refused) from exc
        return self._carrier(reply)

    def _carrier(self, reply: Any) -> dict[str, Any]:
        """The assistant message carrying the reply's block, or an error when unusable."""
        dump = getattr(reply, "model_dump", None)
        data = dump(exclude_none=True) if callable(dump) else reply
        if not isinstance(data, Mapping):
            raise NativeCompactionError("the compaction reply was not a message")
        self.last_usage = data.get("usage")
        stop = data.get("stop_reason")
        blocks = [
            dict(b)
            for b in data.get("content") or []
            if isinstance(b, Mapping) and b.get("type") == "compaction"
        ]
        if stop != "compaction" or len(blocks) != 1:
            raise NativeCompactionError(
                f"no compaction came back (stop_reason {stop!r}, {len(blocks)} compaction blocks)"
            )
        summary = blocks[0].get("content")
        if not isinstance(summary, str) or not summary.strip():
            raise NativeCompactionError("the compaction block has no summary")
        return {"role": "assistant", "content": summary, ANTHROPIC_BLOCKS_KEY: blocks}


def native_route_for(model: object) -> ResponsesRoute | AnthropicRoute | None:
    """The native-compaction route of ``model``, or ``None`` when it has none."""
    if isinstance(model, OpenAIResponsesModel):
        return ResponsesRoute(model)
    if isinstance(model, AnthropicChatModel):
        return AnthropicRoute(model)
    return None
