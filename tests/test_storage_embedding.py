"""Embedding models for search by meaning (:mod:`palimpsest.storage.embedding`)."""

from __future__ import annotations

import importlib.util
import math

import pytest

from palimpsest.errors import MissingDependencyError
from palimpsest.storage import embedding
from palimpsest.storage.embedding import EmbeddingModel, as_model, bundled_model

needs_extra = pytest.mark.skipif(
    importlib.util.find_spec("wordllama") is None, reason="the [vectors] extra is not installed"
)


def test_a_callable_becomes_a_named_model_and_its_output_is_checked() -> None:
    def two(texts: list[str]) -> list[list[float]]:
        return [[1.0, float(len(t))] for t in texts]

    model = as_model(two)
    assert model.name.startswith("custom:") and "two" in model.name
    assert model(["ab", "c"]) == [[1.0, 2.0], [1.0, 1.0]]
    assert model([]) == []
    assert as_model(two, name="mine").name == "custom:mine"
    short = EmbeddingModel("short", lambda texts: [[1.0]])
    with pytest.raises(ValueError, match="1 vectors for 2 texts"):
        short(["a", "b"])
    ragged = EmbeddingModel("ragged", lambda texts: [[1.0] * (i + 1) for i in range(len(texts))])
    with pytest.raises(ValueError, match="widths"):
        ragged(["a", "b"])


def test_an_unknown_model_name_is_refused() -> None:
    with pytest.raises(ValueError, match=r"'bundled', or 'package\.module:function'"):
        as_model("minilm")
    with pytest.raises(ValueError, match="cannot load the embedding function"):
        as_model("no_such_module_for_embedding:embed")


def test_without_the_extra_the_error_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real = builtins.__import__

    def refuse(name: str, *args: object, **kwargs: object) -> object:
        if name.startswith("wordllama"):
            raise ImportError(name)
        return real(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(embedding, "_BUNDLED", None)
    monkeypatch.setattr(builtins, "__import__", refuse)
    with pytest.raises(MissingDependencyError, match=r"\[vectors\]"):
        bundled_model()


@needs_extra
def test_the_bundled_model_loads_offline_and_places_paraphrases_closer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import socket

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("the bundled model tried to reach the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(embedding, "_BUNDLED", None)
    model = bundled_model()
    assert model.name == embedding.BUNDLED_MODEL_NAME and bundled_model() is model
    query, near, far = model(
        [
            "Which database release got picked?",
            "After the meeting the team agreed to go with Postgres 16.",
            "I twisted my knee skiing down a steep slope.",
        ]
    )
    assert len(query) == 256
    assert math.isclose(sum(x * x for x in query), 1.0, rel_tol=1e-4)

    def cos(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    assert cos(query, near) > cos(query, far)
