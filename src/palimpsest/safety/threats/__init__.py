"""Threat scanning for text that will be placed in the system prompt (MEM-35..38)."""

from .categories import CATEGORIES, CATEGORY_ORDER
from .normalize import INVISIBLE_CHARS, STRICT_INVISIBLE_CHARS
from .scan import (
    MAX_SCAN_CHARS,
    ScanMode,
    ThreatHit,
    check_content,
    find_threats,
    pattern_ids,
    scan_threats,
)

__all__ = [
    "CATEGORIES",
    "CATEGORY_ORDER",
    "INVISIBLE_CHARS",
    "MAX_SCAN_CHARS",
    "STRICT_INVISIBLE_CHARS",
    "ScanMode",
    "ThreatHit",
    "check_content",
    "find_threats",
    "pattern_ids",
    "scan_threats",
]
