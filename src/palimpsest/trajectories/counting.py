"""Token counting for trajectories: the tokenizer the user names, with the spec's fallback.

A training budget is measured in the training model's tokens, so the counter is chosen by
name: a ``bpe-openai`` encoding (``o200k_base``, ``cl100k_base``, ...; offline) or the path
of a Hugging Face ``tokenizer.json`` (read with the ``tokenizers`` library). A name that is
neither, or a path that does not exist, is a :class:`~palimpsest.errors.ConfigError` when
the counter is built, before any entry is read, never a per-entry failure.

:func:`count_tokens` applies TJ-06: empty text counts 0 and, if the tokenizer raises on a
text, that text counts ``len(text) // 4``.

Counters cross process boundaries (a process pool, Ray workers) by name: pickling one
rebuilds it from its name on the other side, and :func:`make_counter` keeps one counter per
tokenizer per process, so a worker loads a vocabulary once however many entries it handles.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, Protocol, runtime_checkable

from ..errors import ConfigError, MissingDependencyError
from .config import CompressionConfig

__all__ = [
    "FALLBACK_CHARS_PER_TOKEN",
    "BpeCounter",
    "HuggingFaceCounter",
    "TextCounter",
    "count_tokens",
    "make_counter",
]

FALLBACK_CHARS_PER_TOKEN: Final = 4
"""TJ-06: a text the tokenizer cannot encode counts one token per four characters."""


@runtime_checkable
class TextCounter(Protocol):
    """Anything with ``count_text(text) -> int`` (``palimpsest.ExactCounter`` qualifies)."""

    def count_text(self, text: str) -> int: ...


def count_tokens(counter: TextCounter, text: str) -> int:
    """Tokens of ``text`` (TJ-06): 0 when empty, ``len // 4`` when the tokenizer raises."""
    if not text:
        return 0
    try:
        return int(counter.count_text(text))
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # TJ-06; a Rust panic (pyo3 PanicException) is a BaseException
        return len(text) // FALLBACK_CHARS_PER_TOKEN


class BpeCounter:
    """A ``bpe-openai`` encoding (no special tokens, no network)."""

    def __init__(self, name: str) -> None:
        with warnings.catch_warnings():
            # bpe-openai loads its vocabularies through a deprecated importlib.resources call.
            warnings.simplefilter("ignore", DeprecationWarning)
            import bpe_openai

            known = bpe_openai.list_encoding_names()
            if name not in known:
                raise ConfigError(
                    f"unknown tokenizer {name!r}: name a bpe-openai encoding "
                    f"({', '.join(known)}) or the path of a Hugging Face tokenizer.json",
                    key="tokenizer.name",
                )
            self._encoding = bpe_openai.get_encoding(name)
        self.name = name

    def count_text(self, text: str) -> int:
        return len(self._encoding.encode_ordinary(text))

    def __reduce__(self) -> tuple[Callable[..., BpeCounter], tuple[str]]:
        return (BpeCounter, (self.name,))


class HuggingFaceCounter:
    """A Hugging Face ``tokenizer.json``, counted without special tokens."""

    def __init__(self, path: str | Path) -> None:
        target = Path(path).expanduser()
        if not target.is_file():
            raise ConfigError(
                f"tokenizer file not found: {target} (give the path of a tokenizer.json, "
                "or a bpe-openai encoding name such as o200k_base)",
                key="tokenizer.name",
            )
        try:
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise MissingDependencyError("tokenizers", "trajectories") from exc
        try:
            self._tokenizer: Any = Tokenizer.from_file(str(target))
        except Exception as exc:  # the Rust side raises a bare Exception on a bad file
            raise ConfigError(
                f"{target}: not a valid Hugging Face tokenizer.json: {exc}",
                key="tokenizer.name",
                path=target,
            ) from None
        self.name = str(target)

    def count_text(self, text: str) -> int:
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def __reduce__(self) -> tuple[Callable[..., HuggingFaceCounter], tuple[str]]:
        return (HuggingFaceCounter, (self.name,))


def _looks_like_path(name: str) -> bool:
    return name.endswith(".json") or "/" in name or "\\" in name or name.startswith("~")


_cache: dict[str, TextCounter] = {}
_lock = threading.Lock()


def make_counter(config: CompressionConfig | str) -> TextCounter:
    """The counter ``config.tokenizer_name`` names, built once per process.

    Raises :class:`~palimpsest.errors.ConfigError` for an unknown encoding name or a
    missing/invalid ``tokenizer.json``.
    """
    name = config if isinstance(config, str) else config.tokenizer_name
    with _lock:
        counter = _cache.get(name)
        if counter is None:
            counter = HuggingFaceCounter(name) if _looks_like_path(name) else BpeCounter(name)
            _cache[name] = counter
        return counter
