"""What one ``compress`` call did, in numbers, for reports and user feedback."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["CompressionStats"]


@dataclass
class CompressionStats:
    """What the last ``compress`` call did, for reports and user feedback."""

    before_messages: int = 0
    after_messages: int = 0
    before_tokens: int = 0
    after_tokens: int = 0
    pruned_count: int = 0
    shrunk_calls: int = 0
    head_messages: int = 0
    middle_messages: int = 0
    tail_messages: int = 0
    summary_tokens: int = 0
    summary_budget: int = 0
    summary_role: str | None = None
    summary_merged: bool = False
    fallback_used: bool = False
    summary_check: str | None = None
    """Verified compaction: ``accepted``, ``retried`` (accepted on the retry), ``rejected``
    (the deterministic fallback replaced it), or ``None`` (not checked)."""
    summary_rejections: list[str] = field(default_factory=list)
    """Why each rejected answer was rejected, in order."""
    removed_orphan_results: int = 0
    stubbed_calls: int = 0
    compressed: bool = False
    reason: str | None = None
    fits: bool = True
    """Whether the result fits ``fit_target_tokens`` (by the compressor's counter)."""
    fit_target_tokens: int = 0
    """The window minus the output reserve (``compaction.fit``)."""
    not_fit_reason: str | None = None
    """Why the result does not fit, when ``fits`` is false."""
    fit_dropped_messages: int = 0
    fit_clipped_messages: int = 0
    tail_capped_messages: int = 0
    """Assistant messages of the kept tail cut to ``max_tail_assistant_tokens``."""
    repaired_messages: int = 0
    """Input messages rewritten or removed because a provider would reject them."""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def savings_pct(self) -> float:
        if not self.before_tokens:
            return 0.0
        return (self.before_tokens - self.after_tokens) / self.before_tokens * 100
