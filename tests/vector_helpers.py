"""An embedding function for the vector tests (the model boundary): one dimension per concept.

A text's vector counts the words of each concept set it holds (plus a small floor, so no
vector is zero), which places texts by topic as a real model would, deterministically.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

TOPICS: list[set[str]] = [
    {"database", "postgres", "sqlite", "mysql", "schema"},
    {"pet", "kitten", "cat", "dog", "puppy"},
    {"holiday", "vacation", "flights", "lisbon", "trip"},
    {"car", "tesla", "electric", "vehicle"},
    {"music", "violin", "instrument", "lessons"},
]
"""The concepts the store and PostgreSQL vector tests share."""


def concept_embedder(concepts: Sequence[set[str]]) -> Callable[[list[str]], list[list[float]]]:
    """An embedding function with one dimension per set of ``concepts``."""

    def embed(texts: list[str]) -> list[list[float]]:
        out = []
        for text in texts:
            words = set(re.findall(r"\w+", text.lower()))
            out.append([float(len(words & c)) + 0.01 for c in concepts])
        return out

    return embed
