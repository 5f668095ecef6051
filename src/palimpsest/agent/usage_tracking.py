"""Usage of one session's model calls: normalized, never an unknown reported as zero.

A provider that returns no usage at all (llama.cpp's server in streaming mode sends none)
leaves the call's figures *unknown* (``Completion.usage is None``). Two consumers need two
different answers, so the tracker gives both:

- the context engine needs *a* prompt size to decide when to compact: it gets the
  calibrated estimate of the request (:class:`~palimpsest.calibration.EstimateCalibrator`,
  which learns from every call that did report usage), never a false zero;
- the session's record (totals, ``/usage``, the session store, cost) keeps the call as
  *unreported*: it adds nothing to the token sums and is counted in ``unreported_calls``,
  so every total shown is exact or visibly a lower bound (``≥ N (k calls unreported)``).

Cost follows :func:`~palimpsest.pricing.estimate_usage_cost`; one call without a price or
without usage makes the session's cost unknown (``None``), not cheaper. A local route is
``included`` whatever its usage.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..calibration import EstimateCalibrator
from ..pricing import ModelPrice, estimate_usage_cost
from ..providers.base import Completion
from ..tokens import estimate_messages_tokens_rough, estimate_tokens_rough
from ..usage import CanonicalUsage, UsageTotal
from .compaction_cost import CompactionLedger

__all__ = ["UsageTracker"]


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
        self.compactions = CompactionLedger(
            model, provider=provider, base_url=base_url, prices=self.prices
        )
        """What each compaction cost and saved; it spans the sessions a compaction chains."""
        self.reset()

    def reset(self) -> None:
        """A new session: totals back to nothing (the calibration is kept: same model)."""
        self.totals = UsageTotal()
        self.compactions.reset()
        self.last_estimated = False
        self._cost = 0.0
        self._cost_unknown = False

    @property
    def total(self) -> CanonicalUsage:
        """The summed usage of the calls that reported it (see :attr:`totals`)."""
        return self.totals.known

    @property
    def unreported_calls(self) -> int:
        """Calls whose provider sent no usage."""
        return self.totals.unreported_calls

    @property
    def cost_usd(self) -> float | None:
        """The session's cost so far; ``None`` when any call's cost is unknown."""
        return None if self._cost_unknown else self._cost

    def normalize(self, completion: Completion, rough_estimate: int) -> tuple[CanonicalUsage, bool]:
        """The call's usage for the engine, or the calibrated estimate when none came.

        The flag is ``True`` for an estimate. Only reported usage teaches the calibrator.
        """
        usage = completion.usage
        if usage is not None:
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

    def add(self, usage: CanonicalUsage | None) -> float | None:
        """Count one call (``None``: it reported no usage); returns its cost or ``None``."""
        self.totals = self.totals.add(usage)
        self.last_estimated = usage is None
        self.compactions.observe_call(usage)
        cost = estimate_usage_cost(
            self.model, usage, provider=self.provider, base_url=self.base_url, prices=self.prices
        )
        if cost.amount_usd is None:
            self._cost_unknown = True
        else:
            self._cost += cost.amount_usd
        return cost.amount_usd

    def describe(self) -> dict[str, Any]:
        """The totals as plain values (for ``/usage`` and logs); unknown figures are ``None``."""
        return {**self.totals.to_dict(), "cost_usd": self.cost_usd}
