"""Tool outputs too large for the context (spec tool-results.md; docs/tool-output.md).

Three defences, applied before a result joins the history: a tool caps its own output
(layer 1), a result over its threshold is saved and replaced by a preview block (layer 2),
and the results of one assistant turn together stay within a budget (layer 3).

* :mod:`.budget`, :mod:`.preview`, :mod:`.sandbox`, :mod:`.turn_budget`: the spec's
  functions, with the sandbox written through standard input;
* :mod:`.rerun`: which outputs can be had again (a pointer) and which must be kept;
* :mod:`.store` (with :mod:`.objects`, :mod:`.ingest`, :mod:`.index`, :mod:`.reading`):
  the content-addressed store under ``$PALIMPSEST_HOME/outputs``; :mod:`.retention`: its gc;
* :mod:`.guard`: :class:`OutputGuard`, all of it for a loop (the agent's, or yours);
* :mod:`.body`: :class:`LargeOutput`, a result that travels as a file.
"""

from .body import LargeOutput
from .budget import DEFAULT_BUDGET, BudgetConfig, budget_for_context_window, threshold_for
from .guard import POINTER_CLOSE, POINTER_OPEN, OutputGuard, OutputStats
from .preview import (
    PERSISTED_CLOSE,
    PERSISTED_OPEN,
    extract_persisted_path,
    generate_preview,
    head_tail_preview,
    safe_result_filename,
)
from .rerun import Rerun, classify_command
from .retention import GcReport, RetentionPolicy, live_digests
from .sandbox import LocalSandbox, SandboxEnvironment, maybe_persist_tool_result
from .store import OutputStore, StoredOutput
from .turn_budget import enforce_turn_budget

__all__ = [
    "DEFAULT_BUDGET",
    "PERSISTED_CLOSE",
    "PERSISTED_OPEN",
    "POINTER_CLOSE",
    "POINTER_OPEN",
    "BudgetConfig",
    "GcReport",
    "LargeOutput",
    "LocalSandbox",
    "OutputGuard",
    "OutputStats",
    "OutputStore",
    "Rerun",
    "RetentionPolicy",
    "SandboxEnvironment",
    "StoredOutput",
    "budget_for_context_window",
    "classify_command",
    "enforce_turn_budget",
    "extract_persisted_path",
    "generate_preview",
    "head_tail_preview",
    "live_digests",
    "maybe_persist_tool_result",
    "safe_result_filename",
    "threshold_for",
]
