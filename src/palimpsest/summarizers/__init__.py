"""Summarizers: who writes a handoff summary."""

# The compressor (palimpsest.compaction) imports the extractive summarizer, and the
# summarizers import compaction helpers (redact, markers). Loading compaction first keeps
# that cycle resolvable whichever package a caller imports first.
from .. import compaction as _compaction  # noqa: F401  (import order, see above)
from .base import Summarizer, SummaryRequest, SupportsCooldown
from .extractive import ExtractiveSummarizer
from .llm import LLMSummarizer

__all__ = [
    "ExtractiveSummarizer",
    "LLMSummarizer",
    "Summarizer",
    "SummaryRequest",
    "SupportsCooldown",
]
