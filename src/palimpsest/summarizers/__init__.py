"""Summarizers: who writes a handoff summary."""

from .base import Summarizer, SummaryRequest

__all__ = ["Summarizer", "SummaryRequest"]
