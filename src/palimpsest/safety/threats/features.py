"""The features the learned detector reads: hashed words, word pairs and character n-grams.

Rules see the phrasings someone wrote a rule for; a linear model over n-grams sees
fragments (``ignor``, ``vorherig``, ``from now on``, ``you are``) that recur across
paraphrases and languages, so it generalises to wording nobody wrote down. The features
are hashed into a fixed number of buckets (the "hashing trick"), which keeps the shipped
weights a small fixed-size file and needs no vocabulary.

The hash is CRC-32, not Python's ``hash()``: ``hash()`` of a string changes with every
process (PYTHONHASHSEED), and the weights must mean the same thing in the training script
and at run time. The same functions serve both, so they cannot drift apart.

Long text is scored window by window (:func:`windows`): an instruction planted in the
middle of a long tool output must not be diluted by the paragraphs around it.
"""

from __future__ import annotations

import itertools
import re
from functools import lru_cache
from zlib import crc32

from .normalize import fold

__all__ = ["BUCKETS", "WINDOW_CHARS", "features", "prepare", "windows"]

BUCKETS = 1 << 18
"""Number of hash buckets; the weights file holds one signed byte per bucket."""

WINDOW_CHARS = 360
"""Windows are at most this long (cut at sentence ends where possible)."""

_MASK = BUCKETS - 1
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w+", re.UNICODE)
_SENTENCE_END = re.compile(r"(?<=[.!?。！？:;])\s+|\n+")
_CHAR_SIZES = (3, 4, 5)
_LONG_WORD = 24  # only the start of a longer token (a hash, base64) is featurised


def prepare(text: str) -> str:
    """The form that is featurised: folded (homoglyphs, invisible characters), lower case,
    whitespace collapsed."""
    return _SPACE.sub(" ", fold(text).lower()).strip()


def windows(text: str, size: int = WINDOW_CHARS) -> list[str]:
    """``text`` (already prepared or raw) cut into windows of at most ``size`` characters.

    Sentences are packed greedily; a sentence longer than ``size`` is cut into pieces that
    overlap by half, so no phrase is lost at a cut.
    """
    if len(text) <= size:
        return [text]
    out: list[str] = []
    current = ""
    for sentence in _SENTENCE_END.split(text):
        if not sentence:
            continue
        if len(sentence) > size:
            if current:
                out.append(current)
                current = ""
            step = size // 2
            out.extend(sentence[i : i + size] for i in range(0, len(sentence) - step, step))
            continue
        if current and len(current) + 1 + len(sentence) > size:
            out.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}" if current else sentence
    if current:
        out.append(current)
    return out


def _bucket(feature: str) -> int:
    return crc32(feature.encode("utf-8", "surrogatepass")) & _MASK


@lru_cache(maxsize=65_536)
def _word_buckets(word: str) -> frozenset[int]:
    """The buckets of one word and its character n-grams (cached: words recur)."""
    padded = f" {word[:_LONG_WORD]} "
    length = len(padded)
    keys = {f"w {word}"}
    for n in _CHAR_SIZES:
        keys.update(padded[i : i + n] for i in range(length - n + 1))
    return frozenset(_bucket(key) for key in keys)


def features(window: str) -> set[int]:
    """The set of hashed feature buckets of one prepared window (presence, not counts).

    Words and adjacent word pairs carry phrasing; character 3-5-grams inside words carry
    stems across inflection and languages and survive typos.
    """
    words = _WORD.findall(window)
    out: set[int] = {_bucket(f"b {a} {b}") for a, b in itertools.pairwise(words)}
    for word in set(words):
        out |= _word_buckets(word)
    return out
