"""MEMORY.md / USER.md, threat scanning, memory providers and their manager."""

from ..safety.threats import ThreatHit, check_content, scan_threats
from .checkpoint import CHECKPOINT_API_VERSION, Checkpoint
from .entries import DELIMITER, MemoryWrite, Target
from .facts import FactStoreProvider, fts_query
from .fences import (
    StreamingContextScrubber,
    build_memory_context_block,
    inject_memory_context,
    is_trivial_prompt,
    sanitize_context,
)
from .manager import MemoryManager
from .providers import BuiltinMemoryProvider, MemoryProvider
from .registry import ENTRY_POINT_GROUP, available_providers, load_provider
from .store import DEFAULT_MEMORY_CHAR_LIMIT, DEFAULT_USER_CHAR_LIMIT, MemoryStore, WriteResult
from .tool import MEMORY_TOOL_NAME, MEMORY_TOOL_SCHEMA, MemoryTool

__all__ = [
    "CHECKPOINT_API_VERSION",
    "DEFAULT_MEMORY_CHAR_LIMIT",
    "DEFAULT_USER_CHAR_LIMIT",
    "DELIMITER",
    "ENTRY_POINT_GROUP",
    "MEMORY_TOOL_NAME",
    "MEMORY_TOOL_SCHEMA",
    "BuiltinMemoryProvider",
    "Checkpoint",
    "FactStoreProvider",
    "MemoryManager",
    "MemoryProvider",
    "MemoryStore",
    "MemoryTool",
    "MemoryWrite",
    "StreamingContextScrubber",
    "Target",
    "ThreatHit",
    "WriteResult",
    "available_providers",
    "build_memory_context_block",
    "check_content",
    "fts_query",
    "inject_memory_context",
    "is_trivial_prompt",
    "load_provider",
    "sanitize_context",
    "scan_threats",
]
