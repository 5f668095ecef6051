"""Summarizers: who writes a handoff summary."""

from .base import Summarizer, SummaryRequest, SupportsCooldown

__all__ = ["Summarizer", "SummaryRequest", "SupportsCooldown"]
