"""The offline trajectory compressor: ShareGPT training data that fits its token budget.

``compress_entry`` (one dataset entry) and ``compress_trajectory`` (one list of turns) run
one pass of the spec's algorithm (docs: spec/trajectories.md); ``CompressionConfig`` holds
every setting; ``AggregateMetrics`` sums a run. Batch reading and writing, resumption and
the process-pool and Ray engines build on these.
"""

from .algorithm import (
    ELISION_MARKER,
    FALLBACK_SUMMARY,
    SUMMARY_PREFIX,
    normalize_summary,
    protected_indices,
    region_bounds,
    render_region,
    snap_boundary,
)
from .compress import compress_trajectory, compress_trajectory_async, summarizer_from_config
from .config import CompressionConfig
from .counting import BpeCounter, HuggingFaceCounter, TextCounter, count_tokens, make_counter
from .entry import EntryResult, check_entry, compress_entry, compress_entry_async
from .metrics import AggregateMetrics, TrajectoryMetrics
from .summary import (
    ExtractiveTrajectorySummarizer,
    ModelSummarizer,
    TrajectorySummarizer,
    TrajectorySummaryRequest,
)

__all__ = [
    "ELISION_MARKER",
    "FALLBACK_SUMMARY",
    "SUMMARY_PREFIX",
    "AggregateMetrics",
    "BpeCounter",
    "CompressionConfig",
    "EntryResult",
    "ExtractiveTrajectorySummarizer",
    "HuggingFaceCounter",
    "ModelSummarizer",
    "TextCounter",
    "TrajectoryMetrics",
    "TrajectorySummarizer",
    "TrajectorySummaryRequest",
    "check_entry",
    "compress_entry",
    "compress_entry_async",
    "compress_trajectory",
    "compress_trajectory_async",
    "count_tokens",
    "make_counter",
    "normalize_summary",
    "protected_indices",
    "region_bounds",
    "render_region",
    "snap_boundary",
    "summarizer_from_config",
]
