"""Chat model backends behind one contract.

``ChatModel``/``Completion`` (the contract), ``connect`` (a model from a spec string such
as ``"openai:gpt-4o-mini"``), error classification (``classify_error``) and Anthropic
prompt caching (``apply_anthropic_cache_control``). The SDK-backed classes
``OpenAIChatModel``, ``AnthropicChatModel`` and ``LlamaCppModel`` import their SDK
only when built.
"""

from .base import ChatModel, Completion, ScriptedChatModel
from .caching import (
    apply_anthropic_cache_control,
    apply_cache_control,
    caching_enabled,
    effective_cache_ttl,
    strip_cache_control,
)
from .connect import connect, parse_model_spec
from .overflow import ClassifiedError, classify_error, parse_context_limit

__all__ = [
    "AnthropicChatModel",
    "ChatModel",
    "ClassifiedError",
    "Completion",
    "LlamaCppModel",
    "OpenAIChatModel",
    "ScriptedChatModel",
    "apply_anthropic_cache_control",
    "apply_cache_control",
    "caching_enabled",
    "classify_error",
    "connect",
    "effective_cache_ttl",
    "parse_context_limit",
    "parse_model_spec",
    "strip_cache_control",
]


def __getattr__(name: str) -> object:
    # The backends are cheap to import (their SDKs load lazily), but keeping them out of
    # the package import keeps `import palimpsest.providers` minimal.
    if name == "OpenAIChatModel":
        from .openai_chat import OpenAIChatModel

        return OpenAIChatModel
    if name == "AnthropicChatModel":
        from .anthropic_messages import AnthropicChatModel

        return AnthropicChatModel
    if name == "LlamaCppModel":
        from .llamacpp import LlamaCppModel

        return LlamaCppModel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
