"""The memory provider contract (L1.5) and the built-in provider over the L1 files.

A provider is one backend the :class:`~palimpsest.memory.manager.MemoryManager` fans out
to: it may contribute a system-prompt block, recall text for each turn (``prefetch``),
persist finished turns (``sync_turn``) and expose tools. The abstract members are the ones
every backend must answer (MEM-39); the hooks are optional no-ops (MEM-40, MEM-41).

Third-party providers register under the entry-point group ``palimpsest.memory_providers``;
the shipped ``facts`` provider uses the same door.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from .checkpoint import CHECKPOINT_API_VERSION
from .store import MemoryStore
from .tool import MEMORY_TOOL_NAME, MEMORY_TOOL_SCHEMA, MemoryTool, ToolOutcome

__all__ = ["AGENT_CONTEXTS", "BuiltinMemoryProvider", "MemoryProvider"]

AGENT_CONTEXTS = ("primary", "subagent", "cron", "flush")
"""Values of the ``agent_context`` initialize kwarg; providers write only for ``primary``."""


class MemoryProvider(ABC):
    """One memory backend. Subclasses implement the abstract members; hooks are optional."""

    name: str = ""
    checkpoint_api_version: int = 0
    """The :mod:`~palimpsest.memory.checkpoint` contract this provider keeps (``0``: none,
    its checkpoint failures may be silent; ``1``: ``on_pre_compress`` raises on failure)."""

    # --- required (MEM-39) ------------------------------------------------------------

    @abstractmethod
    def is_available(self) -> bool:
        """Whether the provider can run here (dependencies, config). Never touches the network."""

    @abstractmethod
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Prepare for a session. ``kwargs`` always hold ``home`` and ``platform``; they may
        hold ``agent_context`` (one of :data:`AGENT_CONTEXTS`), ``threat_scan`` (the
        configured scan mode), ``parent_session_id`` and user ids. Skip writes unless
        ``agent_context`` is ``"primary"``."""

    def system_prompt_block(self) -> str:
        """Text for the system prompt, built at session start; ``""`` for none."""
        return ""

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """Recalled text relevant to ``query`` for this turn; ``""`` for none."""
        return ""

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """Warm up the next turn's prefetch in the background (the manager's worker)."""
        return None

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "") -> None:
        """Persist a finished turn."""
        return None

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """Bare ``{"name", "description", "parameters"}`` schemas of the provider's tools."""
        return []

    def handle_tool_call(self, name: str, args: Mapping[str, Any], **kwargs: Any) -> str:
        """Answer a call to one of :meth:`get_tool_schemas`' tools with a string."""
        raise NotImplementedError(f"{self.name or type(self).__name__} has no tool {name!r}")

    def shutdown(self) -> None:
        """Release resources; called once, in reverse registration order."""
        return None

    # --- optional hooks (MEM-40, MEM-41) ------------------------------------------------

    def initialize_for_inspection(self, session_id: str, **kwargs: Any) -> None:
        """Open the provider for read-only inspection (CLI); defaults to :meth:`initialize`."""
        self.initialize(session_id, **kwargs)

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        """A user turn begins; kwargs may carry remaining_tokens, model, platform, tool_count."""
        return None

    def on_session_end(self, messages: Sequence[Mapping[str, Any]]) -> None:
        """The session ended; ``messages`` is a snapshot of its history."""
        return None

    def on_session_switch(
        self,
        new_session_id: str,
        *,
        parent_session_id: str = "",
        reset: bool = False,
        **kwargs: Any,
    ) -> None:
        """The host moved to another session (compaction, reset, new session)."""
        return None

    def on_pre_compress(self, messages: Sequence[Mapping[str, Any]]) -> str:
        """Text to add to the compaction summary prompt before ``messages`` are compacted."""
        return ""

    def on_delegation(
        self, task: str, result: str, *, child_session_id: str = "", **kwargs: Any
    ) -> None:
        """A subagent finished ``task`` with ``result``."""
        return None

    def on_memory_write(
        self,
        action: str,
        target: str,
        content: str,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """The built-in ``memory`` tool wrote to ``target`` (mirrored to external providers)."""
        return None

    def get_config_schema(self) -> list[dict[str, Any]]:
        """Settings the provider accepts, for setup UIs: ``[{key, description, default}]``."""
        return []

    def save_config(self, values: Mapping[str, Any], home: Path) -> None:
        """Persist provider settings collected by a setup UI under ``home``."""
        return None

    def recall_status(self) -> tuple[str, int] | None:
        """``(label, count)`` of the last prefetch for a UI line, or ``None``."""
        return None


class BuiltinMemoryProvider(MemoryProvider):
    """The L1 files as a provider: their frozen blocks in the prompt and the ``memory`` tool.

    It contributes nothing to prefetch, because its content already sits in the system
    prompt.
    """

    name = "builtin"
    checkpoint_api_version = CHECKPOINT_API_VERSION
    """Its ``on_pre_compress`` has nothing to save, and a refused write answers
    ``success: false``: version 1 of the checkpoint contract."""

    def __init__(
        self,
        store: MemoryStore | None = None,
        *,
        profile: Literal["seed", "refined"] = "seed",
    ) -> None:
        self.store = store if store is not None else MemoryStore()
        self.tool = MemoryTool(self.store, profile=profile)
        self.last_outcome: ToolOutcome | None = None

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self.store.load_from_disk()

    def system_prompt_block(self) -> str:
        return self.store.system_prompt_block()

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [dict(MEMORY_TOOL_SCHEMA)]

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        self.tool.start_turn()

    def handle_tool_call(self, name: str, args: Mapping[str, Any], **kwargs: Any) -> str:
        if name != MEMORY_TOOL_NAME:
            return json.dumps({"success": False, "error": f"Unknown tool '{name}'."})
        outcome = self.tool.call(args)
        self.last_outcome = outcome
        return outcome.text
