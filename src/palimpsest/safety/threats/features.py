"""The features the learned detector reads: hashed words, word pairs and character n-grams.

Rules see the phrasings someone wrote a rule for; a linear model over n-grams sees
fragments (``ignor``, ``vorherig``, ``from now on``, ``you are``) that recur across
paraphrases and languages, so it generalises to wording nobody wrote down. The features
are hashed into a fixed number of buckets (the "hashing trick"), which keeps the shipped
weights a small fixed-size file and needs no vocabulary.

The hash is CRC-32, not Python's ``hash()``: ``hash()`` of a string changes with every
process (PYTHONHASHSEED), and the weights must mean the same thing in the training script
and at run time. The same functions serve both, so they cannot drift apart.

Chinese and Japanese are written without spaces, so a "word" there is a whole clause: its
start alone would be featurised, and a 3-5-gram of Han characters is already a phrase.
Words with CJK characters (and Korean, whose space-separated words carry attached
particles) are read as overlapping character 1-3-grams instead, over their whole length,
which is how short CJK words and stems ("忽略", "指令", "무시") become features.

Long text is scored window by window (:func:`windows`): an instruction planted in the
middle of a long tool output must not be diluted by the paragraphs around it.
"""

from __future__ import annotations

import itertools
import re
from functools import lru_cache
from zlib import crc32

from .normalize import fold

__all__ = ["BUCKETS", "WINDOW_CHARS", "features", "prepare", "sentences", "windows"]

BUCKETS = 1 << 18
"""Number of hash buckets; the weights file holds one signed byte per bucket."""

WINDOW_CHARS = 360
"""Windows are at most this long (cut at sentence ends where possible)."""

_MASK = BUCKETS - 1
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w+", re.UNICODE)
_OPENING = re.compile(r"(?:^|[.!?;:。！？]\s+|[。！？])[\W_]*(\w+)(?:\W+(\w+))?")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？:;])\s+|\n+")
_CHAR_SIZES = (3, 4, 5)
_CJK_SIZES = (1, 2, 3)
_LONG_WORD = 24  # only the start of a longer token (a hash, base64) is featurised
_LONG_CJK = 120  # a CJK run is a clause, not a token: read more of it
_CJK = re.compile(
    r"[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]"
)


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


def sentences(window: str, shortest: int = 24) -> list[str]:
    """The sentences of a window that are at least ``shortest`` characters long."""
    return [part for part in _SENTENCE_END.split(window) if len(part) >= shortest]


def _bucket(feature: str) -> int:
    return crc32(feature.encode("utf-8", "surrogatepass")) & _MASK


@lru_cache(maxsize=65_536)
def _word_buckets(word: str) -> frozenset[int]:
    """The buckets of one word and its character n-grams (cached: words recur)."""
    cjk = _CJK.search(word) is not None
    padded = f" {word[: _LONG_CJK if cjk else _LONG_WORD]} "
    length = len(padded)
    keys = {f"w {word}"}
    for n in _CJK_SIZES if cjk else _CHAR_SIZES:
        keys.update(
            f"c{padded[i : i + n]}" if cjk else padded[i : i + n] for i in range(length - n + 1)
        )
    return frozenset(_bucket(key) for key in keys)


def features(window: str) -> set[int]:
    """The set of hashed feature buckets of one prepared window (presence, not counts).

    Words and adjacent word pairs carry phrasing; character 3-5-grams inside words carry
    stems across inflection and languages and survive typos. The first word and the first
    two words of each sentence are features of their own: an order starts with its verb
    ("ignore the rules above"), while a note that talks about the same words rarely does
    ("the test makes the model ignore …").
    """
    words = _WORD.findall(window)
    out: set[int] = {_bucket(f"b {a} {b}") for a, b in itertools.pairwise(words)}
    for start in _OPENING.finditer(window):
        first, second = start.group(1), start.group(2)
        out.add(_bucket(f"s {first}"))
        if second:
            out.add(_bucket(f"s {first} {second}"))
    for word in set(words):
        out |= _word_buckets(word)
    return out
