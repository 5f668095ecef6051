"""Context engines and the default compressor."""

from .compressor import ContextCompressor
from .engine import ContextEngine, available_engines, load_engine
from .feedback import summarize_manual_compression
from .markers import (
    LEGACY_SUMMARY_PREFIX,
    SUMMARY_PREFIX,
    is_compaction_summary_message,
    with_summary_prefix,
)
from .prune import PruneResult, prune_tool_results
from .stats import CompressionStats

__all__ = [
    "LEGACY_SUMMARY_PREFIX",
    "SUMMARY_PREFIX",
    "CompressionStats",
    "ContextCompressor",
    "ContextEngine",
    "PruneResult",
    "available_engines",
    "is_compaction_summary_message",
    "load_engine",
    "prune_tool_results",
    "summarize_manual_compression",
    "with_summary_prefix",
]
