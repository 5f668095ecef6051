"""Usage of one session's model calls: normalized, never an unknown reported as zero.

A provider that returns no usage at all (llama.cpp's server in streaming mode sends none)
leaves the figures *unknown*. :class:`UsageTracker` then falls back to the calibrated
estimate of the request (:class:`~palimpsest.calibration.EstimateCalibrator`, which learns
from every call that did report usage) and marks the call as estimated, so the engine
never sees a false zero and the user is told which figures are estimates. Cost follows
:func:`~palimpsest.pricing.estimate_usage_cost`; one call without a price makes the
session's cost unknown (``None``), not cheaper.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..calibration import EstimateCalibrator
from ..pricing import ModelPrice, estimate_usage_cost
from ..providers.base import Completion
from ..tokens import estimate_messages_tokens_rough, estimate_tokens_rough
from ..usage import CanonicalUsage

__all__ = ["UsageTracker", "usage_unknown"]


def usage_unknown(usage: CanonicalUsage) -> bool:
    """No usage came back at all: unknown, which is not the same as zero."""
    return usage.raw_usage is None and usage.prompt_tokens == 0 and usage.output_tokens == 0


class UsageTracker:
    """Totals, cost and estimate calibration for one session."""

    def __init__(
        self,
        model: str,
        *,
        provider: str | None = None,
        base_url: str | None = None,
        prices: Mapping[str, ModelPrice] | None = None,
    ) -> None:
        self.model = model
        self.provider = provider
        self.base_url = base_url
        self.prices = dict(prices or {})
        self.calibrator = EstimateCalibrator()
        self.reset()

    def reset(self) -> None:
        """A new session: totals back to nothing (the calibration is kept: same model)."""
        self.total = CanonicalUsage(request_count=0)
        self.estimated_calls = 0
        self.last_estimated = False
        self._cost = 0.0
        self._cost_unknown = False

    @property
    def cost_usd(self) -> float | None:
        """The session's cost so far; ``None`` when any call's price is unknown."""
        return None if self._cost_unknown else self._cost

    def normalize(self, completion: Completion, rough_estimate: int) -> tuple[CanonicalUsage, bool]:
        """The call's usage, or the calibrated estimate when the provider sent none."""
        usage = completion.usage
        if not usage_unknown(usage):
            self.calibrator.observe_usage(self.model, rough_estimate, usage)
            return usage, False
        output = estimate_tokens_rough(completion.content or "")
        if not output:
            output = estimate_messages_tokens_rough([completion.to_message()])
        estimate = CanonicalUsage(
            input_tokens=self.calibrator.calibrated(self.model, rough_estimate),
            output_tokens=output,
        )
        return estimate, True

    def add(self, usage: CanonicalUsage, estimated: bool) -> float | None:
        """Count one call; returns its cost (``None`` when unknown)."""
        self.total = self.total + usage
        self.last_estimated = estimated
        self.estimated_calls += int(estimated)
        cost = estimate_usage_cost(
            self.model, usage, provider=self.provider, base_url=self.base_url, prices=self.prices
        )
        if cost.amount_usd is None:
            self._cost_unknown = True
        else:
            self._cost += cost.amount_usd
        return cost.amount_usd

    def describe(self) -> dict[str, Any]:
        """The totals as plain values (for ``/usage`` and logs)."""
        return {
            **self.total.to_dict(),
            "cost_usd": self.cost_usd,
            "estimated_calls": self.estimated_calls,
        }
