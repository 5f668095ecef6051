"""Summarizers: who writes a handoff summary."""

from .base import Summarizer, SummaryRequest, SupportsCooldown
from .llm import LLMSummarizer

__all__ = ["LLMSummarizer", "Summarizer", "SummaryRequest", "SupportsCooldown"]
