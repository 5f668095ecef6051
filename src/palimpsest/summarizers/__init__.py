"""Summarizers: who writes a handoff summary."""

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
