"""A local GGUF model through ``llama-cpp-python``: a real ``ChatModel`` with no account.

``LlamaCppModel("path/to/model.gguf")`` loads the file on first use (so ``connect`` stays
cheap) and answers through ``Llama.create_chat_completion``, which applies the chat
template stored in the GGUF. Its reply is already OpenAI-shaped, so usage goes through
``reported_usage(..., "chat")`` like any Chat Completions endpoint.

llama.cpp reports a prompt that does not fit its window as
``ValueError("Requested tokens (N) exceed context window of M")``; that becomes
``ContextOverflowError(limit=M, requested=N)``. Other failures go through the shared
classifier (:func:`palimpsest.providers.overflow.classify_error`). Generation that would
run past the window is cut by llama.cpp itself (``finish_reason == "length"``), never
rejected, so this backend raises no ``OutputLimitError``.

One ``Llama`` object is not safe to call from two threads at once: calls are serialized
with a lock, and ``acomplete`` runs the blocking call in a worker thread.
"""

from __future__ import annotations

import asyncio
import importlib
import re
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError, ContextOverflowError, MissingDependencyError, ProviderError
from ..messages import for_provider, render_content
from ..usage import reported_usage
from .base import Completion
from .overflow import CONTEXT_OVERFLOW, classify_error, exception_for

__all__ = [
    "ARCH_CHAT_FORMATS",
    "PROVIDER",
    "LlamaCppModel",
    "chat_format_for",
    "parse_llamacpp_overflow",
]

PROVIDER = "llamacpp"

_OVERFLOW = re.compile(r"requested tokens \((\d+)\) exceed context window of (\d+)", re.IGNORECASE)
_IGNORED_OPTIONS = frozenset({"timeout", "extra_headers", "extra_body", "stream"})
"""Request options other backends take that have no meaning for an in-process model."""

ARCH_CHAT_FORMATS: dict[str, str] = {
    "gemma": "gemma",
    "gemma2": "gemma",
    "gemma3": "gemma",
    "qwen2": "chatml",
    "qwen3": "chatml",
}
"""llama-cpp-python's chat format for a GGUF that ships no chat template, by architecture.

Without a ``tokenizer.chat_template`` in the file, llama-cpp-python falls back to the
``llama-2`` format, which garbles every other model family's turns."""


def chat_format_for(metadata: Mapping[str, Any]) -> str | None:
    """The chat format to force for a GGUF, or ``None`` when its own template should be used."""
    if metadata.get("tokenizer.chat_template"):
        return None
    return ARCH_CHAT_FORMATS.get(str(metadata.get("general.architecture") or "").lower())


def parse_llamacpp_overflow(message: str) -> tuple[int, int] | None:
    """``(requested, limit)`` from llama-cpp-python's context-window error, else ``None``.

    Parsed here rather than by the generic classifier because the window is our own
    ``n_ctx`` and may be below the 1,024-token floor the classifier applies to limits
    reported by remote providers.
    """
    match = _OVERFLOW.search(message or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def _llama_module() -> Any:
    try:
        return importlib.import_module("llama_cpp")
    except ImportError as exc:
        raise MissingDependencyError("llama-cpp-python", "llamacpp") from exc


def _flatten(message: Mapping[str, Any]) -> dict[str, Any]:
    """Chat templates inside GGUF files expect string content; render parts as text."""
    out = dict(message)
    content = out.get("content")
    if isinstance(content, list):
        out["content"] = render_content(content)
    return out


class LlamaCppModel:
    """``ChatModel`` over a local GGUF file.

    ``n_ctx`` is the context window llama.cpp allocates (the file may support more);
    ``n_threads`` defaults to llama.cpp's choice; ``chat_format`` overrides the template
    detected from the GGUF metadata. Other keyword arguments go to ``llama_cpp.Llama``
    (for example ``n_gpu_layers`` or ``seed``). ``verbose`` is off by default so llama.cpp
    does not print its load log.
    """

    provider = PROVIDER

    def __init__(
        self,
        model_path: str | Path,
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        chat_format: str | None = None,
        verbose: bool = False,
        **llama_kwargs: Any,
    ) -> None:
        path = Path(model_path).expanduser()
        if not path.is_file():
            raise ConfigError(
                f"GGUF model file not found: {path}; see docs/providers-local.md for how to "
                "get one",
                key="model.name",
            )
        if n_ctx < 1:
            raise ValueError(f"n_ctx must be positive, got {n_ctx}")
        self._llama_cpp = _llama_module()  # fail at construction if the extra is missing
        self.model_path = path
        self.model = path.stem
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.chat_format = chat_format
        self._llama_kwargs = {"verbose": verbose, **llama_kwargs}
        self._llm: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LlamaCppModel({str(self.model_path)!r}, n_ctx={self.n_ctx})"

    @property
    def llm(self) -> Any:
        """The loaded ``llama_cpp.Llama`` (loaded on first access)."""
        with self._lock:
            return self._load()

    def _load(self) -> Any:
        if self._llm is None:
            kwargs: dict[str, Any] = dict(self._llama_kwargs)
            if self.n_threads is not None:
                kwargs["n_threads"] = self.n_threads
            if self.chat_format is not None:
                kwargs["chat_format"] = self.chat_format
            try:
                llm = self._llama_cpp.Llama(
                    model_path=str(self.model_path), n_ctx=self.n_ctx, **kwargs
                )
            except (ValueError, RuntimeError, OSError) as exc:
                raise ProviderError(
                    f"llama.cpp could not load {self.model_path}: {exc}",
                    provider=PROVIDER,
                    model=self.model,
                ) from exc
            if self.chat_format is None:
                forced = chat_format_for(getattr(llm, "metadata", None) or {})
                if forced is not None:
                    llm.chat_format = forced
                    llm.chat_handler = None
            self._llm = llm
        return self._llm

    def build_request(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None,
        max_tokens: int | None,
        options: Mapping[str, Any],
    ) -> dict[str, Any]:
        """The keyword arguments for ``create_chat_completion`` (no I/O)."""
        request: dict[str, Any] = {
            "messages": [_flatten(m) for m in for_provider(messages)],
        }
        if tools:
            request["tools"] = [dict(t) for t in tools]
        if max_tokens is not None:
            request["max_tokens"] = max_tokens
        for key, value in options.items():
            if key not in _IGNORED_OPTIONS:
                request[key] = value
        return request

    def complete(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
        **options: Any,
    ) -> Completion:
        request = self.build_request(messages, tools, max_tokens, options)
        with self._lock:
            llm = self._load()
            try:
                response = llm.create_chat_completion(**request)
            except (ValueError, RuntimeError) as exc:
                raise self._translate(exc) from exc
        return completion_from_dict(response, self.model)

    async def acomplete(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
        **options: Any,
    ) -> Completion:
        return await asyncio.to_thread(self.complete, messages, tools, max_tokens, **options)

    def _translate(self, exc: BaseException) -> ProviderError:
        text = str(exc)
        parsed = parse_llamacpp_overflow(text)
        if parsed is not None:
            requested, limit = parsed
            err: ProviderError = ContextOverflowError(
                f"llamacpp: {text}",
                limit=limit,
                requested=requested,
                provider=PROVIDER,
                model=self.model,
            )
            err.reason = CONTEXT_OVERFLOW
            return err
        classified = classify_error(None, text, current_context_length=self.n_ctx)
        return exception_for(classified, f"llamacpp: {text}", provider=PROVIDER, model=self.model)


def _tool_calls(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    calls = message.get("tool_calls") or []
    out: list[dict[str, Any]] = []
    for call in calls:
        if not isinstance(call, Mapping):
            continue
        fn = call.get("function") or {}
        out.append(
            {
                "id": str(call.get("id") or ""),
                "type": "function",
                "function": {
                    "name": str(fn.get("name") or ""),
                    "arguments": str(fn.get("arguments") or "{}"),
                },
            }
        )
    return out


def completion_from_dict(response: Mapping[str, Any], model: str) -> Completion:
    """A :class:`Completion` from llama-cpp-python's OpenAI-shaped response dict."""
    choices = response.get("choices") or [{}]
    choice = choices[0] if isinstance(choices[0], Mapping) else {}
    message = choice.get("message") or {}
    content = message.get("content")
    return Completion(
        content=content if isinstance(content, str) or content is None else str(content),
        tool_calls=_tool_calls(message),
        usage=reported_usage(response.get("usage"), "chat"),
        finish_reason=choice.get("finish_reason"),
        model=str(response.get("model") or model),
        raw=response,
    )
