"""The agent's system prompt (L0): assembled in a fixed order, then frozen for the session.

The prompt lives outside the history and is prepended only when a request is built
(MEM-02). It is assembled at session start in the order of MEM-01, with empty parts
skipped:

1. the identity: ``PERSONA.md`` in the palimpsest home when it exists, else
   :data:`DEFAULT_IDENTITY`;
2. the host's or user's system message;
3. the frozen ``MEMORY.md`` / ``USER.md`` snapshot, then 4. the external memory provider's
   block (both from :meth:`MemoryManager.build_system_prompt`);
5. project context: ``AGENTS.md`` in the working directory, when the agent has one;
6. the date;
7. a platform hint.

The same string is reused byte-for-byte on every turn so the provider's prefix cache
holds (MEM-03). It is rebuilt only at session start or reset and after a compaction; the
rebuild re-reads the memory files from disk (the only mid-session refresh, AL-19) and,
once ``compression_count >= 1``, carries the compaction note exactly once (CC-88).
Context pressure is never written here (CC-119): the model asks ``context_status``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from ..compaction.markers import COMPACTION_NOTE
from ..home import home_dir
from ..memory.manager import MemoryManager

__all__ = [
    "DEFAULT_IDENTITY",
    "PERSONA_FILE",
    "PLATFORM_HINTS",
    "PROJECT_CONTEXT_FILE",
    "PROJECT_CONTEXT_MAX_CHARS",
    "SystemPromptBuilder",
    "assemble_system_prompt",
]

log = logging.getLogger("palimpsest.agent")

DEFAULT_IDENTITY = (
    "You are a capable assistant working with the user over a long conversation. Use the "
    "tools you are given when they help, say plainly what you did and what you found, and "
    "ask when a request is ambiguous. Earlier parts of a long conversation may be replaced "
    "by a handoff summary; treat it as your own notes."
)
"""Part 1 when no persona file exists."""

PERSONA_FILE = "PERSONA.md"
"""A persona file in the palimpsest home replaces :data:`DEFAULT_IDENTITY`."""

PROJECT_CONTEXT_FILE = "AGENTS.md"
PROJECT_CONTEXT_MAX_CHARS = 20_000
"""A project context file longer than this is cut (a huge file would eat the window)."""

PLATFORM_HINTS = {
    "cli": "You are talking to the user in a terminal; plain text and Markdown render well.",
    "replay": "This conversation is a replay of a recorded transcript.",
    "api": "Your replies are returned to a program through an API.",
}
"""Part 7, by the session's ``source``; unknown sources get no hint."""


def assemble_system_prompt(
    *,
    identity: str,
    system_message: str | None = None,
    memory_block: str = "",
    project_context: str = "",
    date_line: str = "",
    platform_hint: str = "",
    compaction_note: bool = False,
) -> str:
    """The parts in MEM-01 order, blank ones skipped, joined by a blank line.

    ``compaction_note`` appends :data:`~palimpsest.compaction.markers.COMPACTION_NOTE`
    once (a prompt that already carries it is not given a second copy).
    """
    parts = [identity, system_message or "", memory_block, project_context]
    parts += [date_line, platform_hint]
    prompt = "\n\n".join(p.strip() for p in parts if p and p.strip())
    if compaction_note and COMPACTION_NOTE not in prompt:
        prompt = f"{prompt}\n\n{COMPACTION_NOTE}" if prompt else COMPACTION_NOTE
    return prompt


def _read_optional(path: Path, limit: int | None = None) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as exc:
        log.warning("cannot read %s for the system prompt: %s", path, exc)
        return ""
    if limit is not None and len(text) > limit:
        text = text[:limit] + f"\n[... {path.name} cut at {limit:,} characters]"
    return text


@dataclass
class SystemPromptBuilder:
    """Builds (and rebuilds) one agent's system prompt from its sources.

    ``now`` is injectable so tests and replays get a fixed date line. The date has day
    resolution: a finer clock would change the prompt on every rebuild for nothing.
    """

    system_message: str | None = None
    memory: MemoryManager | None = None
    source: str = "cli"
    workdir: Path | None = None
    home: Path | None = None
    now: Callable[[], datetime] = field(default=datetime.now)

    def identity(self) -> str:
        persona = _read_optional((self.home or home_dir()) / PERSONA_FILE)
        return persona.strip() or DEFAULT_IDENTITY

    def memory_block(self, *, reload: bool) -> str:
        """The frozen memory snapshot and provider blocks; ``reload`` re-reads the files."""
        if self.memory is None:
            return ""
        if reload:
            try:
                self.memory.store.load_from_disk()
            except Exception as exc:  # a broken file must not stop the conversation
                log.warning("memory files could not be re-read: %s", exc)
        return self.memory.build_system_prompt()

    def project_context(self) -> str:
        if self.workdir is None:
            return ""
        text = _read_optional(self.workdir / PROJECT_CONTEXT_FILE, PROJECT_CONTEXT_MAX_CHARS)
        return f"Project context ({PROJECT_CONTEXT_FILE}):\n{text.strip()}" if text.strip() else ""

    def build(self, *, compression_count: int = 0, reload_memory: bool = False) -> str:
        """A fresh prompt. ``reload_memory`` after a compaction (AL-19); at session start the
        manager's ``initialize_all`` has just loaded the files."""
        return assemble_system_prompt(
            identity=self.identity(),
            system_message=self.system_message,
            memory_block=self.memory_block(reload=reload_memory),
            project_context=self.project_context(),
            date_line=f"Today's date is {self.now():%A, %Y-%m-%d}.",
            platform_hint=PLATFORM_HINTS.get(self.source, ""),
            compaction_note=compression_count >= 1,
        )
