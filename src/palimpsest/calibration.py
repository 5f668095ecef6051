"""Per-model correction of rough token estimates, learned from real usage.

The rough estimator (chars / 4, spec TK-01..TK-03) is cheap and deterministic but its error
depends on the tokenizer and the content: code, JSON and CJK text all drift. After each
response the host knows both numbers for the same request: the rough estimate it made
before sending, and the provider's real ``prompt_tokens``. ``EstimateCalibrator`` keeps an
exponentially weighted ratio ``real / rough`` per model and scales later preflight
estimates by it, so they converge on what the provider will count.

Guarantees: deterministic (no clocks, no randomness), bounded (every factor stays inside
``[min_factor, max_factor]``, so one odd response cannot make estimates absurd), tiny
requests are ignored (their fixed overhead dominates the ratio), and the state round-trips
through :meth:`EstimateCalibrator.to_dict` / :meth:`EstimateCalibrator.from_dict` for
persistence.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .usage import CanonicalUsage

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_MAX_FACTOR",
    "DEFAULT_MIN_FACTOR",
    "DEFAULT_MIN_TOKENS",
    "EstimateCalibrator",
    "ModelCalibration",
]

DEFAULT_ALPHA = 0.3
"""Weight of the newest observation. 0.3 follows a drift within ~5 responses while one
outlier moves the factor by at most 30% of its (bounded) distance."""

DEFAULT_MIN_FACTOR = 0.5
DEFAULT_MAX_FACTOR = 3.0
"""Bounds for a factor. chars/4 is rarely off by more than 2x for real text; 3x leaves room
for dense scripts (CJK counts ~1 token per character, i.e. up to 4x chars/4)."""

DEFAULT_MIN_TOKENS = 256
"""Requests whose rough estimate or real count is below this are ignored: the provider's
fixed per-request overhead (role markers, chat template) dominates their ratio."""

_FORMAT_VERSION = 1


@dataclass(frozen=True)
class ModelCalibration:
    """The learned state for one model: the current factor and how many samples built it."""

    factor: float
    samples: int


class EstimateCalibrator:
    """Keeps one ``real / rough`` correction factor per model name."""

    def __init__(
        self,
        *,
        alpha: float = DEFAULT_ALPHA,
        min_factor: float = DEFAULT_MIN_FACTOR,
        max_factor: float = DEFAULT_MAX_FACTOR,
        min_tokens: int = DEFAULT_MIN_TOKENS,
    ) -> None:
        if not 0.0 < alpha <= 1.0:
            raise ValueError(f"alpha must be in (0, 1], got {alpha}")
        if not 0.0 < min_factor <= 1.0 <= max_factor:
            raise ValueError(
                f"factor bounds must satisfy 0 < min <= 1 <= max, got {min_factor}..{max_factor}"
            )
        if min_tokens < 0:
            raise ValueError(f"min_tokens must be >= 0, got {min_tokens}")
        self.alpha = float(alpha)
        self.min_factor = float(min_factor)
        self.max_factor = float(max_factor)
        self.min_tokens = int(min_tokens)
        self._models: dict[str, ModelCalibration] = {}

    # -- learning -------------------------------------------------------------------------

    def observe(self, model: str, rough_estimate: int, real_prompt_tokens: int) -> float | None:
        """Fold one (estimate, real) pair into ``model``'s factor; return the new factor.

        Returns ``None`` (and changes nothing) when either number is below ``min_tokens``
        or not a usable count.
        """
        if not _usable(rough_estimate) or not _usable(real_prompt_tokens):
            return None
        if rough_estimate < max(self.min_tokens, 1) or real_prompt_tokens < self.min_tokens:
            return None
        ratio = self._clamp(real_prompt_tokens / rough_estimate)
        key = _key(model)
        prev = self._models.get(key)
        if prev is None:
            factor = ratio  # no prior worth averaging with: start at the first real ratio
            samples = 1
        else:
            factor = self._clamp((1.0 - self.alpha) * prev.factor + self.alpha * ratio)
            samples = prev.samples + 1
        self._models[key] = ModelCalibration(factor=factor, samples=samples)
        return factor

    def observe_usage(
        self, model: str, rough_estimate: int, usage: CanonicalUsage | None
    ) -> float | None:
        """:meth:`observe` with the prompt tokens of a normalized usage (TK-17: prompt only).

        Unreported usage (``None``) teaches nothing and returns ``None``."""
        if usage is None:
            return None
        return self.observe(model, rough_estimate, usage.prompt_tokens)

    # -- applying -------------------------------------------------------------------------

    def factor(self, model: str) -> float:
        """The current factor for ``model``; 1.0 when nothing was observed for it."""
        state = self._models.get(_key(model))
        return 1.0 if state is None else state.factor

    def calibrated(self, model: str, rough_estimate: int) -> int:
        """``rough_estimate`` scaled by the model's factor, rounded half up.

        An unknown model gets ``rough_estimate`` back unchanged.
        """
        state = self._models.get(_key(model))
        if state is None or rough_estimate <= 0:
            return int(rough_estimate)
        return math.floor(rough_estimate * state.factor + 0.5)

    def state(self, model: str) -> ModelCalibration | None:
        return self._models.get(_key(model))

    def models(self) -> list[str]:
        return sorted(self._models)

    def reset(self, model: str | None = None) -> None:
        """Forget one model's factor, or all of them."""
        if model is None:
            self._models.clear()
        else:
            self._models.pop(_key(model), None)

    # -- persistence ----------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready state; :meth:`from_dict` restores an equal calibrator."""
        return {
            "version": _FORMAT_VERSION,
            "alpha": self.alpha,
            "min_factor": self.min_factor,
            "max_factor": self.max_factor,
            "min_tokens": self.min_tokens,
            "models": {
                name: {"factor": s.factor, "samples": s.samples}
                for name, s in sorted(self._models.items())
            },
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EstimateCalibrator:
        """Rebuild from :meth:`to_dict` output. Bad entries raise ``ValueError``."""
        version = data.get("version", _FORMAT_VERSION)
        if version != _FORMAT_VERSION:
            raise ValueError(f"unsupported calibration format version {version!r}")
        cal = cls(
            alpha=float(data.get("alpha", DEFAULT_ALPHA)),
            min_factor=float(data.get("min_factor", DEFAULT_MIN_FACTOR)),
            max_factor=float(data.get("max_factor", DEFAULT_MAX_FACTOR)),
            min_tokens=int(data.get("min_tokens", DEFAULT_MIN_TOKENS)),
        )
        models = data.get("models", {})
        if models is None:
            models = {}
        if not isinstance(models, Mapping):
            raise ValueError("calibration 'models' must be a mapping")
        for name, entry in models.items():
            try:
                factor = float(entry["factor"])
                samples = int(entry["samples"])
            except (KeyError, TypeError, ValueError) as exc:
                raise ValueError(f"bad calibration entry for {name!r}: {entry!r}") from exc
            if not math.isfinite(factor) or samples < 1:
                raise ValueError(f"bad calibration entry for {name!r}: {entry!r}")
            cal._models[_key(name)] = ModelCalibration(cal._clamp(factor), samples)
        return cal

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EstimateCalibrator):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        parts = ", ".join(
            f"{k}={s.factor:.3f}x{s.samples}" for k, s in sorted(self._models.items())
        )
        return f"EstimateCalibrator({parts})"

    def _clamp(self, value: float) -> float:
        return min(max(value, self.min_factor), self.max_factor)


def _key(model: str) -> str:
    return model.strip()


def _usable(value: Any) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )
