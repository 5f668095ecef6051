"""The learned half of the detector: does this text read as an instruction to the model?

Rules recognise the phrasings someone wrote a rule for; this linear model over hashed
n-grams (:mod:`.features`) recognises paraphrases, other languages and jailbreak personas
from what they share. Its weights ship in the package (``instruction_model.bin``, one
signed byte per hash bucket, about 0.5 MB) and are produced by the committed script
``benchmarks/threat_model_train.py`` from the sources listed in
``tests/data/threats/training/README.md``. Nothing is downloaded; scoring is pure Python
and deterministic.

Text is scored window by window and the highest-scoring window decides, so an instruction
planted inside a long, harmless tool output is not averaged away. A window of several
sentences that scores near the threshold (within :data:`SECOND_LOOK`) is also scored
sentence by sentence: one instruction packed with four lines of build log would otherwise
be diluted by them, and the model was trained on rows about a sentence or two long. Far
below the threshold (most text), or once a window is over it, nothing more is computed. A second, smaller model
says which kind of attack a flagged window most resembles (override, persona,
exfiltration, manipulation); it only words the explanation and never decides.
"""

from __future__ import annotations

import json
import math
from array import array
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .features import features, prepare, sentences, windows

__all__ = [
    "KINDS",
    "KIND_BUCKETS",
    "MIN_WORDS",
    "SECOND_LOOK",
    "WEIGHTS_FILE",
    "InstructionScore",
    "instruction_score",
]

WEIGHTS_FILE = Path(__file__).with_name("instruction_model.bin")
KINDS: tuple[str, ...] = ("override", "persona", "exfiltration", "manipulation")
KIND_BUCKETS = 1 << 16
SECOND_LOOK = 1.5
"""A multi-sentence window scoring within this of the threshold is scored per sentence too."""
MIN_WORDS = 3
"""Texts of fewer words (in a script that spaces its words) are left to the rules.

An instruction to a model needs a verb and what it acts on; one or two words do not make
one. The model, trained on rows a sentence or two long, scored some single words over its
threshold (``safe``, ``this``, ``everything``: 33 of the 3,000 most common words of the
standard library's sources), which blocked one-word memory notes and summary lines."""

KIND_WORDING = {
    "override": "it reads as an instruction to the model that cancels or replaces its task",
    "persona": "it reads as an instruction to the model to take on a persona without its rules",
    "exfiltration": "it reads as an instruction to the model to reveal its prompt, secrets or data",
    "manipulation": "it reads as an instruction to the model to slant or rig what it tells the user",
}


@dataclass(frozen=True)
class InstructionScore:
    """The model's verdict on one text.

    ``logit`` is the highest window score; ``flagged`` compares it with the threshold
    chosen at training time (``margin`` shifts that threshold: negative is stricter).
    ``kind`` and ``window`` describe the highest-scoring window.
    """

    logit: float
    threshold: float
    kind: str
    window: str

    @property
    def flagged(self) -> bool:
        return self.logit > self.threshold


@dataclass(frozen=True)
class _Model:
    weights: array[int]
    bias: float
    scale: float
    threshold: float
    kind_weights: array[int]
    kind_bias: tuple[float, ...]
    kind_scale: float
    buckets: int
    kind_buckets: int


@lru_cache(maxsize=1)
def _model() -> _Model:
    raw = WEIGHTS_FILE.read_bytes()
    header, _, body = raw.partition(b"\n")
    meta = json.loads(header)
    buckets, kind_buckets = int(meta["buckets"]), int(meta["kind_buckets"])
    kinds = len(meta["kinds"])
    weights = array("b")
    weights.frombytes(body[:buckets])
    kind_weights = array("b")
    kind_weights.frombytes(body[buckets : buckets + kind_buckets * kinds])
    if len(weights) != buckets or len(kind_weights) != kind_buckets * kinds:
        raise ValueError(f"{WEIGHTS_FILE.name} is truncated")
    return _Model(
        weights=weights,
        bias=float(meta["bias"]),
        scale=float(meta["scale"]),
        threshold=float(meta["threshold"]),
        kind_weights=kind_weights,
        kind_bias=tuple(float(x) for x in meta["kind_bias"]),
        kind_scale=float(meta["kind_scale"]),
        buckets=buckets,
        kind_buckets=kind_buckets,
    )


def _kind(model: _Model, buckets: set[int]) -> str:
    k = len(KINDS)
    sums = [0] * k
    w = model.kind_weights
    for bucket in buckets:
        base = (bucket % model.kind_buckets) * k
        for j in range(k):
            sums[j] += w[base + j]
    norm = model.kind_scale / math.sqrt(max(len(buckets), 1))
    scores = [model.kind_bias[j] + sums[j] * norm for j in range(k)]
    return KINDS[max(range(k), key=scores.__getitem__)]


def _logit(model: _Model, buckets: set[int]) -> float:
    if not buckets:
        return -math.inf
    total = sum(map(model.weights.__getitem__, buckets))
    return model.bias + model.scale * total / math.sqrt(len(buckets))


def instruction_score(text: str) -> InstructionScore:
    """Score ``text``: how strongly its most instruction-like window addresses the model."""
    model = _model()
    best = -math.inf
    best_window = ""
    best_buckets: set[int] = set()
    prepared = prepare(text)
    if prepared.isascii() and len(prepared.split()) < MIN_WORDS:
        return InstructionScore(logit=best, threshold=model.threshold, kind="", window="")
    for window in windows(prepared):
        buckets = features(window)
        if not buckets:
            continue
        logit = _logit(model, buckets)
        if logit > best:
            best, best_window, best_buckets = logit, window, buckets
        if model.threshold - SECOND_LOOK < logit and best <= model.threshold:
            parts = sentences(window)
            for part in parts if len(parts) > 1 else ():
                part_buckets = features(part)
                part_logit = _logit(model, part_buckets)
                if part_logit > best:
                    best, best_window, best_buckets = part_logit, part, part_buckets
    kind = _kind(model, best_buckets) if best > model.threshold else ""
    return InstructionScore(logit=best, threshold=model.threshold, kind=kind, window=best_window)
