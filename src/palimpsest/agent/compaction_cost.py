"""What each compaction cost and saved, in tokens and dollars, from real usage.

A compaction is paid for twice: by its own request (the summary model's call, when the
summarizer calls one) and by the next call, whose prompt is no longer the cached prefix the
provider had (a rewritten prefix is billed as input or cache writes again). It pays back on
the next call too, whose prompt is shorter. :class:`CompactionLedger` puts figures on all
three for every compaction of a session:

- ``request``: the summary call's reported usage and its price (no call, as with the
  extractive summarizer, is zero tokens and $0: nothing was sent);
- ``next_call_usd``: the first main-model call after the compaction, as the provider
  reported it;
- ``without_usd``: what that call would have cost without the compaction: its prompt plus
  the tokens the compaction removed, of which the previous request's prompt would have been
  read from the cache if it was still warm (the route's lifetime and the previous call's
  reported cache use decide), the rest written or sent as input the way the real call was;
  its output as reported;
- ``saving_usd`` = ``without_usd - next_call_usd - request_usd``, and the session's
  running saving.

Every price goes through :func:`~palimpsest.pricing.estimate_usage_cost`. A price that is
unknown (unreported usage, an unpriced model, a bucket the catalogue has no rate for)
makes that figure ``None`` with a ``reason``, and the running saving ``None`` from then on:
never zero, never borrowed from another bucket.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..pricing import ModelPrice, estimate_usage_cost, format_cost
from ..usage import CanonicalUsage

__all__ = ["CompactionCost", "CompactionLedger", "compaction_lines", "describe_cost"]


@dataclass(frozen=True)
class CompactionCost:
    """The figures of one compaction; ``None`` is unknown (``reason`` says why)."""

    number: int
    request_usage: CanonicalUsage | None
    request_usd: float | None
    removed_tokens: int
    next_call_usd: float | None = None
    without_usd: float | None = None
    saving_usd: float | None = None
    running_saving_usd: float | None = None
    settled: bool = False
    """``True`` once the next call came back and the comparison was made."""
    reason: str | None = None
    later_calls: int = 0
    """Calls after the next one, before the following compaction, that also read the
    shorter prompt."""
    later_saving_usd: float | None = 0.0
    """What those calls saved: each one's prompt plus the removed tokens (read from the
    cache when the call read from it, else written or sent like its uncached part),
    against what it cost. ``None`` once one of them is unknown."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "request_tokens": None
            if self.request_usage is None
            else self.request_usage.prompt_tokens + self.request_usage.output_tokens,
            "request_usd": self.request_usd,
            "removed_tokens": self.removed_tokens,
            "next_call_usd": self.next_call_usd,
            "without_usd": self.without_usd,
            "saving_usd": self.saving_usd,
            "running_saving_usd": self.running_saving_usd,
            "settled": self.settled,
            "reason": self.reason,
            "later_calls": self.later_calls,
            "later_saving_usd": self.later_saving_usd,
        }


def _usd(amount: float | None) -> str:
    return "unknown" if amount is None else format_cost(amount)


def _signed(amount: float | None) -> str:
    """``~$0.12``, ``~-$0.40`` or ``unknown``."""
    if amount is None:
        return "unknown"
    label = format_cost(abs(amount))
    return label.replace("$", "-$", 1) if amount < 0 else label


def describe_cost(cost: CompactionCost) -> str:
    """One line for ``/usage`` and ``replay``."""
    if cost.request_usage is None:
        tokens = "unreported tokens"
    else:
        tokens = f"{cost.request_usage.prompt_tokens + cost.request_usage.output_tokens:,} tokens"
    text = f"compaction {cost.number}: request {tokens}, {_usd(cost.request_usd)}"
    if not cost.settled:
        return text + "; next call not made yet"
    text += (
        f"; next call {_usd(cost.next_call_usd)} against {_usd(cost.without_usd)} without it; "
        f"net saving {_signed(cost.saving_usd)}"
    )
    if cost.later_calls:
        text += f", {_signed(cost.later_saving_usd)} more over {cost.later_calls} later call(s)"
    if cost.reason:
        text += f" ({cost.reason})"
    return text


@dataclass
class _Pending:
    cost: CompactionCost
    previous: CanonicalUsage | None
    previous_at: float | None


class CompactionLedger:
    """Per-session compaction costs, settled against the call after each compaction."""

    def __init__(
        self,
        model: str,
        *,
        provider: str | None = None,
        base_url: str | None = None,
        prices: Mapping[str, ModelPrice] | None = None,
        ttl_seconds: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.model = model
        self.provider = provider
        self.base_url = base_url
        self.prices = dict(prices or {})
        self.ttl_seconds = ttl_seconds
        self.clock = clock
        self.reset()

    def reset(self) -> None:
        """A new conversation: no compactions, no previous call."""
        self.entries: list[CompactionCost] = []
        self._last: CanonicalUsage | None = None
        self._last_at: float | None = None
        self._pending: _Pending | None = None
        self._running: float | None = 0.0

    def _price(self, usage: CanonicalUsage | None) -> tuple[float | None, str | None]:
        cost = estimate_usage_cost(
            self.model, usage, provider=self.provider, base_url=self.base_url, prices=self.prices
        )
        if cost.amount_usd is None:
            why = cost.reason or (
                "usage not reported" if usage is None else f"no price for {self.model}"
            )
            return None, why
        return cost.amount_usd, None

    @property
    def running_saving_usd(self) -> float | None:
        """The saving of every settled compaction so far; ``None`` once one is unknown."""
        return self._running

    def compacted(
        self,
        *,
        request_usage: CanonicalUsage | None,
        request_made: bool,
        removed_tokens: int,
        request_model: str | None = None,
    ) -> CompactionCost:
        """Record a compaction; its comparison is made when the next call comes back.

        ``request_made`` is ``False`` when the summarizer called no model (zero tokens,
        $0); otherwise ``request_usage`` is what the summary call reported (``None``:
        unreported, so unknown). ``request_model`` prices a summary written by another
        model than the session's.
        """
        reason = None
        if not request_made:
            usage: CanonicalUsage | None = CanonicalUsage(request_count=0)
            amount: float | None = 0.0
        else:
            usage = request_usage
            model = request_model or self.model
            found = estimate_usage_cost(
                model, usage, provider=self.provider, base_url=self.base_url, prices=self.prices
            )
            amount = found.amount_usd
            if amount is None:
                reason = found.reason or (
                    "summary usage not reported" if usage is None else f"no price for {model}"
                )
        cost = CompactionCost(
            number=len(self.entries) + 1,
            request_usage=usage,
            request_usd=amount,
            removed_tokens=max(removed_tokens, 0),
            running_saving_usd=self._running,
            reason=reason,
        )
        self.entries.append(cost)
        self._pending = _Pending(cost, self._last, self._last_at)
        return cost

    def observe_call(self, usage: CanonicalUsage | None) -> CompactionCost | None:
        """Count one main-model call (``None``: unreported); returns a compaction it settles."""
        now = self.clock()
        settled = None
        if self._pending is not None:
            settled = self._settle(self._pending, usage, now)
            self.entries[settled.number - 1] = settled
            self._pending = None
        elif self.entries and self.entries[-1].settled:
            self._count_later(usage)
        self._last, self._last_at = usage, now
        return settled

    def _count_later(self, usage: CanonicalUsage | None) -> None:
        """Add a later call's saving to the newest compaction (and the running total)."""
        entry = self.entries[-1]
        saving: float | None = None
        if usage is not None and entry.later_saving_usd is not None:
            removed = entry.removed_tokens
            if usage.cache_read_tokens > 0:
                without = replace(usage, cache_read_tokens=usage.cache_read_tokens + removed)
            elif usage.cache_write_tokens > 0:
                without = replace(usage, cache_write_tokens=usage.cache_write_tokens + removed)
            else:
                without = replace(usage, input_tokens=usage.input_tokens + removed)
            actual, _ = self._price(usage)
            counterfactual, _ = self._price(without)
            if actual is not None and counterfactual is not None:
                saving = counterfactual - actual
        later = None if saving is None else float(entry.later_saving_usd or 0.0) + saving
        if saving is None or self._running is None:
            self._running = None
        else:
            self._running += saving
        self.entries[-1] = replace(
            entry,
            later_calls=entry.later_calls + 1,
            later_saving_usd=later,
            running_saving_usd=self._running,
        )

    def _without(
        self, pending: _Pending, usage: CanonicalUsage, now: float
    ) -> tuple[CanonicalUsage | None, str | None]:
        """The next call's usage had the compaction not happened."""
        previous = pending.previous
        if previous is None:
            return None, "no reported call before the compaction to compare with"
        prompt = usage.prompt_tokens + pending.cost.removed_tokens
        warm = (
            self.ttl_seconds is not None
            and pending.previous_at is not None
            and now - pending.previous_at < self.ttl_seconds
            and previous.cache_read_tokens + previous.cache_write_tokens > 0
        )
        cached = min(previous.prompt_tokens, prompt) if warm else 0
        rest = prompt - cached
        fresh = min(usage.input_tokens, rest)
        written = rest - fresh if usage.cache_write_tokens > 0 else 0
        return (
            CanonicalUsage(
                input_tokens=rest - written,
                output_tokens=usage.output_tokens,
                cache_read_tokens=cached,
                cache_write_tokens=written,
            ),
            None,
        )

    def _settle(
        self, pending: _Pending, usage: CanonicalUsage | None, now: float
    ) -> CompactionCost:
        cost = pending.cost
        next_usd, reason = self._price(usage)
        without_usd: float | None = None
        if usage is not None:
            without, why = self._without(pending, usage, now)
            reason = reason or why
            if without is not None:
                without_usd, why = self._price(without)
                reason = reason or why
        parts = (without_usd, next_usd, cost.request_usd)
        saving = None
        if all(p is not None for p in parts):
            saving = float(without_usd or 0) - float(next_usd or 0) - float(cost.request_usd or 0)
        if saving is None or self._running is None:
            self._running = None
        else:
            self._running += saving
        return replace(
            cost,
            next_call_usd=next_usd,
            without_usd=without_usd,
            saving_usd=saving,
            running_saving_usd=self._running,
            settled=True,
            reason=cost.reason or reason,
        )


def compaction_lines(ledger: CompactionLedger) -> list[str]:
    """``/usage``'s compaction section: one line a compaction, then the running saving."""
    if not ledger.entries:
        return []
    lines = [describe_cost(entry) for entry in ledger.entries]
    running = ledger.running_saving_usd
    settled = sum(1 for e in ledger.entries if e.settled)
    total = _signed(running) if running is not None else "unknown (a figure is unknown)"
    lines.append(f"Compaction saving so far: {total} over {settled} settled compaction(s)")
    return lines
