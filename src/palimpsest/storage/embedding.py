"""Embedding functions for search by meaning: the bundled offline model, or the caller's own.

Vector search (:mod:`.vectors`, :mod:`.fusion`) needs one thing from a model: a function
from a batch of texts to one vector per text (``list[str] -> list[list[float]]``). A
caller may pass any such callable (a sentence-transformers model, an HTTP embedding
service of their own); :class:`EmbeddingModel` pairs it with a name, which is stored
beside every vector so that vectors of two different models are never compared.

The default, :func:`bundled_model`, is WordLlama's ``l2_supercat`` 256-dimension static
token embeddings (MIT licence), whose weights (16 MB) and tokenizer ship inside the
``wordllama`` wheel: no download, no PyTorch, about 30,000 short texts a second on one
core, so embedding can run at write time. It is loaded from the package's own files
only; the hub variables are set to offline first, so nothing reaches the network even
if a dependency tries. Why this model and not a MiniLM-class one is in docs/search.md.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from ..errors import MissingDependencyError

__all__ = [
    "BUNDLED_MODEL_NAME",
    "EmbedFunction",
    "EmbeddingModel",
    "as_model",
    "bundled_model",
    "vectors_available",
]

EmbedFunction = Callable[[list[str]], Sequence[Sequence[float]]]
"""A batch of texts in, one vector per text out (same order, same length each)."""

BUNDLED_MODEL_NAME = "wordllama-l2_supercat-256"
"""The name stored beside vectors made by :func:`bundled_model`."""

OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
"""Set before the bundled model loads: its files are local, nothing may be fetched."""

_LOCK = threading.Lock()
_BUNDLED: EmbeddingModel | None = None


@dataclass(frozen=True)
class EmbeddingModel:
    """An embedding function and the name its vectors are stored under."""

    name: str
    embed: EmbedFunction

    def __call__(self, texts: list[str]) -> list[list[float]]:
        """Embed ``texts``; the vectors as plain float lists, checked for count and width."""
        if not texts:
            return []
        got = [[float(x) for x in vector] for vector in self.embed(list(texts))]
        if len(got) != len(texts):
            raise ValueError(
                f"embedding model {self.name!r} returned {len(got)} vectors for {len(texts)} texts"
            )
        widths = {len(v) for v in got}
        if len(widths) != 1 or 0 in widths:
            raise ValueError(f"embedding model {self.name!r} returned vectors of widths {widths}")
        return got


def as_model(
    embedder: EmbeddingModel | EmbedFunction | str, name: str | None = None
) -> EmbeddingModel:
    """``embedder`` as an :class:`EmbeddingModel`: ``"bundled"`` is :func:`bundled_model`; a
    bare callable is named ``name`` or by its qualified name."""
    if isinstance(embedder, EmbeddingModel):
        return embedder
    if isinstance(embedder, str):
        if embedder == "bundled":
            return bundled_model()
        if ":" in embedder:
            return EmbeddingModel(name=f"custom:{embedder}", embed=_imported(embedder))
        raise ValueError(
            f"unknown embedding model {embedder!r}: 'bundled', or 'package.module:function'"
        )
    label = name or getattr(embedder, "__qualname__", None) or type(embedder).__qualname__
    return EmbeddingModel(name=f"custom:{label}", embed=embedder)


def _imported(spec: str) -> EmbedFunction:
    """The function ``package.module:function`` names (the config key ``store.embedder``)."""
    import importlib

    module_name, _, attribute = spec.partition(":")
    try:
        found = getattr(importlib.import_module(module_name.strip()), attribute.strip())
    except (ImportError, AttributeError, ValueError) as exc:
        raise ValueError(f"cannot load the embedding function {spec!r}: {exc}") from exc
    if not callable(found):
        raise ValueError(f"the embedding function {spec!r} is not callable")
    return cast(EmbedFunction, found)


def vectors_available() -> bool:
    """True when the ``vectors`` extra (the bundled model and ``sqlite-vec``) is installed."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("wordllama", "sqlite_vec"))


def bundled_model() -> EmbeddingModel:
    """The bundled offline model (loaded once per process; see the module docstring).

    Raises :class:`~palimpsest.errors.MissingDependencyError` naming the ``vectors`` extra
    when ``wordllama`` is not installed.
    """
    global _BUNDLED
    with _LOCK:
        if _BUNDLED is None:
            _BUNDLED = EmbeddingModel(name=BUNDLED_MODEL_NAME, embed=_load_wordllama())
        return _BUNDLED


def _load_wordllama() -> EmbedFunction:
    for key, value in OFFLINE_ENV.items():
        os.environ.setdefault(key, value)
    try:
        import wordllama
        from safetensors import safe_open
        from wordllama.inference import WordLlamaInference
        from wordllama.wordllama import WordLlama
    except ImportError as exc:
        raise MissingDependencyError("wordllama", "vectors") from exc
    root = Path(wordllama.__file__).parent
    # Read the wheel's own files directly: WordLlama.load() looks for the tokenizer in a
    # folder the wheel does not have and then downloads it.
    tokenizer = WordLlama.load_tokenizer(
        root / "tokenizers" / "l2_supercat_tokenizer_config.json", hf_model_id=None
    )
    with safe_open(str(root / "weights" / "l2_supercat_256.safetensors"), framework="np") as f:
        table = f.get_tensor("embedding.weight")
    model = WordLlamaInference(table, tokenizer)

    def embed(texts: list[str]) -> Sequence[Sequence[float]]:
        return model.embed(texts, norm=True).tolist()  # type: ignore[no-any-return]

    return embed
