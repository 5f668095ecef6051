"""palimpsest: keep long-running LLM agent conversations inside their token budgets.

The names below are the public API; everything else is reachable through its module
(``palimpsest.compaction``, ``palimpsest.messages``, ``palimpsest.providers``, ...).

Importing the package loads only the exception tree: every other public name is imported
from its module on first use (:pep:`562`), so a script or the CLI pays for what it touches,
not for pydantic settings, tokenizers and the compaction core up front. Type checkers see
the ordinary imports below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import (
    AmbiguousSessionIdError,
    AuthError,
    ConfigError,
    ContextOverflowError,
    DatabaseCorruptError,
    DatabaseLockedError,
    DatabaseReadOnlyError,
    DuplicateTranscriptError,
    MemoryCapacityError,
    MemoryMatchError,
    MemoryThreatError,
    MemoryToolError,
    MissingDependencyError,
    NativeCompactionError,
    OutputLimitError,
    OutputTargetError,
    PalimpsestError,
    PluginNotFoundError,
    ProviderError,
    QueryError,
    QuotaError,
    RateLimitError,
    RunError,
    SessionNotFoundError,
    StorageError,
    SummaryError,
    TranscriptError,
    UserError,
)
from .lazy_exports import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from .calibration import EstimateCalibrator
    from .compaction import (
        SUMMARY_PREFIX,
        CompressionStats,
        ContextCompressor,
        ContextEngine,
        available_engines,
        is_compaction_summary_message,
        load_engine,
        summarize_manual_compression,
        with_summary_prefix,
    )
    from .config import Settings, load_settings
    from .conversation_tokens import ConversationTokens
    from .memory import MemoryManager, MemoryProvider, MemoryStore
    from .messages import dump_transcript, load_transcript, transcript_problems, validate_transcript
    from .pricing import estimate_usage_cost
    from .providers import ChatModel, Completion, ScriptedChatModel, connect
    from .safety.redact import redact
    from .storage import SessionSearch, SessionStore, Store, open_store
    from .summarizers import ExtractiveSummarizer, LLMSummarizer, Summarizer, SummaryRequest
    from .tokens import (
        ExactCounter,
        RoughCounter,
        estimate_messages_tokens_rough,
        estimate_request_tokens_rough,
        estimate_tokens_rough,
    )
    from .usage import CanonicalUsage, normalize_usage

__version__ = "0.1.0"

_LAZY: dict[str, str] = {
    "CanonicalUsage": ".usage",
    "ChatModel": ".providers",
    "Completion": ".providers",
    "CompressionStats": ".compaction",
    "ContextCompressor": ".compaction",
    "ContextEngine": ".compaction",
    "ConversationTokens": ".conversation_tokens",
    "EstimateCalibrator": ".calibration",
    "ExactCounter": ".tokens",
    "ExtractiveSummarizer": ".summarizers",
    "LLMSummarizer": ".summarizers",
    "MemoryManager": ".memory",
    "MemoryProvider": ".memory",
    "MemoryStore": ".memory",
    "RoughCounter": ".tokens",
    "SUMMARY_PREFIX": ".compaction",
    "ScriptedChatModel": ".providers",
    "SessionSearch": ".storage",
    "SessionStore": ".storage",
    "Store": ".storage",
    "Settings": ".config",
    "Summarizer": ".summarizers",
    "SummaryRequest": ".summarizers",
    "available_engines": ".compaction",
    "connect": ".providers",
    "dump_transcript": ".messages",
    "estimate_messages_tokens_rough": ".tokens",
    "estimate_request_tokens_rough": ".tokens",
    "estimate_tokens_rough": ".tokens",
    "estimate_usage_cost": ".pricing",
    "is_compaction_summary_message": ".compaction",
    "load_engine": ".compaction",
    "load_settings": ".config",
    "load_transcript": ".messages",
    "normalize_usage": ".usage",
    "open_store": ".storage",
    "redact": ".safety.redact",
    "summarize_manual_compression": ".compaction",
    "transcript_problems": ".messages",
    "validate_transcript": ".messages",
    "with_summary_prefix": ".compaction",
}
"""Public name -> the module (relative to this package) that defines it."""

__all__ = [
    "SUMMARY_PREFIX",
    "AmbiguousSessionIdError",
    "AuthError",
    "CanonicalUsage",
    "ChatModel",
    "Completion",
    "CompressionStats",
    "ConfigError",
    "ContextCompressor",
    "ContextEngine",
    "ContextOverflowError",
    "ConversationTokens",
    "DatabaseCorruptError",
    "DatabaseLockedError",
    "DatabaseReadOnlyError",
    "DuplicateTranscriptError",
    "EstimateCalibrator",
    "ExactCounter",
    "ExtractiveSummarizer",
    "LLMSummarizer",
    "MemoryCapacityError",
    "MemoryManager",
    "MemoryMatchError",
    "MemoryProvider",
    "MemoryStore",
    "MemoryThreatError",
    "MemoryToolError",
    "MissingDependencyError",
    "NativeCompactionError",
    "OutputLimitError",
    "OutputTargetError",
    "PalimpsestError",
    "PluginNotFoundError",
    "ProviderError",
    "QueryError",
    "QuotaError",
    "RateLimitError",
    "RoughCounter",
    "RunError",
    "ScriptedChatModel",
    "SessionNotFoundError",
    "SessionSearch",
    "SessionStore",
    "Settings",
    "StorageError",
    "Store",
    "Summarizer",
    "SummaryError",
    "SummaryRequest",
    "TranscriptError",
    "UserError",
    "__version__",
    "available_engines",
    "connect",
    "dump_transcript",
    "estimate_messages_tokens_rough",
    "estimate_request_tokens_rough",
    "estimate_tokens_rough",
    "estimate_usage_cost",
    "is_compaction_summary_message",
    "load_engine",
    "load_settings",
    "load_transcript",
    "normalize_usage",
    "open_store",
    "redact",
    "summarize_manual_compression",
    "transcript_problems",
    "validate_transcript",
    "with_summary_prefix",
]


__getattr__, __dir__ = _lazy_exports(__name__, _LAZY, __all__, globals())
