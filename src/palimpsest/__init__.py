"""palimpsest: keep long-running LLM agent conversations inside their token budgets."""

from .errors import (
    ConfigError,
    PalimpsestError,
    RunError,
    SummaryError,
    TranscriptError,
    UserError,
)

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "PalimpsestError",
    "RunError",
    "SummaryError",
    "TranscriptError",
    "UserError",
    "__version__",
]
