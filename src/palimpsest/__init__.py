"""palimpsest: keep long-running LLM agent conversations inside their token budgets.

The names below are the public API; everything else is reachable through its module
(``palimpsest.compaction``, ``palimpsest.messages``, ``palimpsest.providers``, ...).
"""

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
from .memory import MemoryManager, MemoryProvider, MemoryStore
from .messages import dump_transcript, load_transcript, transcript_problems, validate_transcript
from .pricing import estimate_usage_cost
from .providers import ChatModel, Completion, ScriptedChatModel, connect
from .safety.redact import redact
from .storage import SessionSearch, SessionStore
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
    "redact",
    "summarize_manual_compression",
    "transcript_problems",
    "validate_transcript",
    "with_summary_prefix",
]
