"""``connect("openai:gpt-4o-mini")``: a ChatModel from a model spec string.

The prefix picks the backend, the rest is the model (or, for ``llamacpp``, the path to a
GGUF file). Keys come from the ``api_key=`` setting or the usual environment variable;
a missing SDK, key or base URL is a user error whose message names the fix.

=====================  ==========================================  ====================
prefix                 backend                                     key
=====================  ==========================================  ====================
``openai``             OpenAI Chat Completions                     ``OPENAI_API_KEY``
``openai-responses``   OpenAI Responses API                        ``OPENAI_API_KEY``
``openrouter``         OpenAI-compatible at openrouter.ai          ``OPENROUTER_API_KEY``
``openai-compatible``  any compatible server, ``base_url=`` needed optional
``anthropic``          Anthropic Messages API                      ``ANTHROPIC_API_KEY``
``llamacpp``           local GGUF via llama-cpp-python             none
=====================  ==========================================  ====================
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from ..errors import ConfigError, MissingDependencyError, PluginNotFoundError
from .base import ChatModel

__all__ = ["KEY_ENV", "OPENROUTER_BASE_URL", "PREFIXES", "connect", "parse_model_spec"]

PREFIXES = (
    "anthropic",
    "llamacpp",
    "openai",
    "openai-compatible",
    "openai-responses",
    "openrouter",
)
OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"
KEY_ENV = {
    "openai": "OPENAI_API_KEY",
    "openai-responses": "OPENAI_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
}
_SDK = {
    "openai": "openai",
    "openrouter": "openai",
    "openai-compatible": "openai",
    "openai-responses": "openai",
    "anthropic": "anthropic",
}


def parse_model_spec(spec: str) -> tuple[str, str]:
    """``"openai:gpt-4o-mini"`` -> ``("openai", "gpt-4o-mini")``; the prefix is lower-cased."""
    prefix, sep, name = spec.partition(":")
    if not sep or not prefix.strip() or not name.strip():
        raise ConfigError(
            f"model spec {spec!r} must look like '<provider>:<model>', "
            f"with provider one of: {', '.join(PREFIXES)}",
            key="model.name",
        )
    return prefix.strip().lower(), name.strip()


def _require_sdk(package: str) -> None:
    try:
        importlib.import_module(package)
    except ImportError as exc:
        raise MissingDependencyError(package, package) from exc


def _key(prefix: str, api_key: str | None, *, required: bool) -> str | None:
    if api_key:
        return api_key
    env = KEY_ENV.get(prefix, "OPENAI_API_KEY")
    value = os.environ.get(env)
    if value:
        return value
    if required:
        raise ConfigError(f"no API key for {prefix}: set {env} or pass api_key=", key=env)
    return None


def connect(
    spec: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout: float | None = None,
    **settings: Any,
) -> ChatModel:
    """A ready :class:`ChatModel` for ``spec``; ``settings`` go to the backend's constructor.

    Raises :class:`PluginNotFoundError` for an unknown prefix,
    :class:`MissingDependencyError` when the backend's extra is not installed and
    :class:`ConfigError` (naming the environment variable) when a key is missing.
    """
    prefix, name = parse_model_spec(spec)
    if prefix not in PREFIXES:
        raise PluginNotFoundError("provider", prefix, list(PREFIXES))
    if prefix == "llamacpp":
        try:
            module = importlib.import_module("palimpsest.providers.llamacpp")
        except ImportError as exc:
            raise MissingDependencyError("llama-cpp-python", "llamacpp") from exc
        model: ChatModel = module.LlamaCppModel(name, **settings)
        return model
    _require_sdk(_SDK[prefix])
    if timeout is not None:
        settings["timeout"] = timeout
    if prefix == "anthropic":
        from .anthropic_messages import AnthropicChatModel

        key = _key(prefix, api_key, required=True)
        return AnthropicChatModel(name, api_key=key, base_url=base_url, **settings)

    if prefix == "openai-responses":
        from .openai_responses import OpenAIResponsesModel

        key = _key(prefix, api_key, required=base_url is None)
        return OpenAIResponsesModel(name, base_url=base_url, api_key=key, **settings)

    from .openai_chat import OpenAIChatModel

    if prefix == "openrouter":
        key = _key(prefix, api_key, required=True)
        url = base_url or OPENROUTER_BASE_URL
        return OpenAIChatModel(name, base_url=url, api_key=key, provider="openrouter", **settings)
    if prefix == "openai-compatible":
        if not base_url:
            raise ConfigError(
                "openai-compatible models need base_url= (for example http://localhost:8080/v1)",
                key="base_url",
            )
        key = _key(prefix, api_key, required=False)
        settings.setdefault("provider", "openai-compatible")
        return OpenAIChatModel(name, base_url=base_url, api_key=key, **settings)
    key = _key(prefix, api_key, required=base_url is None)
    return OpenAIChatModel(name, base_url=base_url, api_key=key, **settings)
