"""``facts``: a local long-term fact store on SQLite FTS5, shipped as an external provider.

It proves the provider interface end to end without a network: the model saves facts with
the ``fact_store`` tool and searches them with ``fact_search``; every turn, the user's
message is turned into a keyword query and the best hits come back through ``prefetch``,
which the manager fences. Each fact keeps when it was saved and in which session.

Safety matches the L1 files: content holding a secret of any kind, or a threat, is refused
before it is stored, so a secret never lands in the database. The user's text never
reaches FTS5 syntax: every word is quoted, so no input raises a query error.

Storage: ``<home>/memories/facts.db``, a ``facts`` table and an external-content FTS5
index kept in sync by triggers.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import MemoryThreatError
from ..home import home_dir
from ..safety.threats import ScanMode, check_content
from .checkpoint import CHECKPOINT_API_VERSION
from .providers import MemoryProvider
from .store import refuse_secret

__all__ = ["FACT_SEARCH_TOOL", "FACT_STORE_TOOL", "Fact", "FactStoreProvider", "fts_query"]

FACT_STORE_TOOL = "fact_store"
FACT_SEARCH_TOOL = "fact_search"
MAX_FACT_CHARS = 2_000
PREFETCH_LIMIT = 5
MAX_QUERY_TERMS = 24
_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "how",
        "i",
        "if",
        "in",
        "is",
        "it",
        "me",
        "my",
        "of",
        "on",
        "or",
        "so",
        "that",
        "the",
        "this",
        "to",
        "was",
        "we",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
    ]
)
_WORD = re.compile(r"\w+", re.UNICODE)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS facts (
    id INTEGER PRIMARY KEY,
    content TEXT NOT NULL UNIQUE,
    created_at REAL NOT NULL,
    session_id TEXT NOT NULL DEFAULT '',
    source TEXT NOT NULL DEFAULT 'tool'
);
CREATE VIRTUAL TABLE IF NOT EXISTS facts_fts USING fts5(
    content, content='facts', content_rowid='id'
);
CREATE TRIGGER IF NOT EXISTS facts_ai AFTER INSERT ON facts BEGIN
    INSERT INTO facts_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER IF NOT EXISTS facts_ad AFTER DELETE ON facts BEGIN
    INSERT INTO facts_fts(facts_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER IF NOT EXISTS facts_au AFTER UPDATE ON facts BEGIN
    INSERT INTO facts_fts(facts_fts, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO facts_fts(rowid, content) VALUES (new.id, new.content);
END;
"""

_SEARCH_SQL = (
    "SELECT f.id, f.content, f.created_at, f.session_id FROM facts_fts "
    "JOIN facts AS f ON f.id = facts_fts.rowid "
    "WHERE facts_fts MATCH ? ORDER BY bm25(facts_fts), f.created_at DESC LIMIT ?"
)


def fts_query(text: str) -> str:
    """``text`` as a safe FTS5 query: its distinct words, each quoted, joined by ``OR``.

    Stop words are dropped (unless nothing else is left) and the number of terms is capped;
    ``""`` means there is nothing to search for.
    """
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(text)))
    kept = [w for w in words if w not in _STOPWORDS] or words
    # Every term is a quoted string, so FTS5 operators and syntax in the user's text are
    # plain words; ``\w+`` tokens contain no quote, the doubling is belt and braces.
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in kept[:MAX_QUERY_TERMS])


class Fact:
    """One stored fact with its provenance."""

    __slots__ = ("content", "created_at", "id", "session_id")

    def __init__(self, id: int, content: str, created_at: float, session_id: str) -> None:
        self.id = id
        self.content = content
        self.created_at = created_at
        self.session_id = session_id

    @property
    def saved(self) -> str:
        return time.strftime("%Y-%m-%d", time.gmtime(self.created_at))

    def render(self) -> str:
        origin = f", session {self.session_id}" if self.session_id else ""
        return f"- {self.content} (saved {self.saved}{origin})"

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "content": self.content,
            "saved": self.saved,
            "session_id": self.session_id,
        }


class FactStoreProvider(MemoryProvider):
    """Long-term facts in ``<home>/memories/facts.db``, recalled by keyword each turn."""

    name = "facts"
    checkpoint_api_version = CHECKPOINT_API_VERSION
    """Nothing to save before a compaction (facts are written as they come): version 1."""

    def __init__(self, path: str | Path | None = None, *, threat_scan: ScanMode = "standard"):
        self._path = Path(path).expanduser() if path is not None else None
        self.threat_scan: ScanMode = threat_scan
        self.session_id = ""
        self.writes_enabled = True
        self._con: Any = None
        self._lock = threading.Lock()
        self._last_recall = 0

    @property
    def path(self) -> Path:
        return self._path if self._path is not None else home_dir() / "memories" / "facts.db"

    # --- lifecycle ----------------------------------------------------------------------

    def is_available(self) -> bool:
        try:
            import apsw  # noqa: F401
        except ImportError:  # pragma: no cover - apsw is a core dependency
            return False
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        home = kwargs.get("home")
        if self._path is None and home is not None:
            self._path = Path(home) / "memories" / "facts.db"
        self.session_id = session_id
        if kwargs.get("threat_scan") in ("standard", "strict"):
            self.threat_scan = kwargs["threat_scan"]
        # Subagents, cron jobs and flushes read but never write (MEM-41).
        self.writes_enabled = kwargs.get("agent_context", "primary") == "primary"
        self._connect()

    def on_session_switch(
        self,
        new_session_id: str,
        *,
        parent_session_id: str = "",
        reset: bool = False,
        **kwargs: Any,
    ) -> None:
        self.session_id = new_session_id

    def shutdown(self) -> None:
        with self._lock:
            if self._con is not None:
                self._con.close()
                self._con = None

    def _connect(self) -> Any:
        if self._con is None:
            import apsw

            self.path.parent.mkdir(parents=True, exist_ok=True)
            con = apsw.Connection(str(self.path))
            con.set_busy_timeout(5_000)
            con.execute("PRAGMA journal_mode=WAL")
            with con:
                con.execute(_SCHEMA)
            self._con = con
        return self._con

    # --- facts --------------------------------------------------------------------------

    def add_fact(
        self, content: str, *, session_id: str | None = None, source: str = "tool"
    ) -> Fact:
        """Store ``content`` (scanned; a secret is refused); an identical fact is returned."""
        text = content.strip()
        if not text:
            raise ValueError("fact content cannot be empty")
        if len(text) > MAX_FACT_CHARS:
            raise ValueError(f"a fact holds at most {MAX_FACT_CHARS:,} characters")
        refuse_secret(text)
        check_content(text, self.threat_scan)
        sid = self.session_id if session_id is None else session_id
        with self._lock:
            con = self._connect()
            with con:
                con.execute(
                    "INSERT INTO facts(content, created_at, session_id, source) VALUES (?,?,?,?) "
                    "ON CONFLICT(content) DO NOTHING",
                    (text, time.time(), sid, source),
                )
                row = con.execute(
                    "SELECT id, content, created_at, session_id FROM facts WHERE content = ?",
                    (text,),
                ).fetchone()
        return Fact(*row)

    def search(self, query: str, limit: int = PREFETCH_LIMIT) -> list[Fact]:
        """Facts matching any word of ``query``, best first; never raises on odd input."""
        match = fts_query(query)
        if not match:
            return []
        with self._lock:
            rows = self._connect().execute(_SEARCH_SQL, (match, max(1, limit))).fetchall()
        return [Fact(*row) for row in rows]

    def count(self) -> int:
        with self._lock:
            return int(self._connect().execute("SELECT count(*) FROM facts").fetchone()[0])

    # --- provider surface ---------------------------------------------------------------

    def system_prompt_block(self) -> str:
        if self.count() == 0:
            return ""
        return (
            "Long-term facts are stored outside this prompt. Relevant ones are recalled "
            f"into <memory-context> blocks; save new durable facts with {FACT_STORE_TOOL} "
            f"and look older ones up with {FACT_SEARCH_TOOL}."
        )

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        facts = self.search(query)
        self._last_recall = len(facts)
        if not facts:
            return ""
        return "Long-term facts:\n" + "\n".join(f.render() for f in facts)

    def recall_status(self) -> tuple[str, int] | None:
        return ("facts", self._last_recall)

    def on_memory_write(
        self,
        action: str,
        target: str,
        content: str,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        # Built-in memory entries are mirrored as facts, so they stay recallable after
        # they are consolidated away from the small L1 files.
        if self.writes_enabled and action in ("add", "replace") and content.strip():
            with contextlib.suppress(MemoryThreatError, ValueError):
                self.add_fact(content, source=f"memory:{target}")

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [
            {
                "name": FACT_STORE_TOOL,
                "description": (
                    "Save one durable fact (a decision, a preference, an environment detail) "
                    "to the long-term fact store. Facts are recalled automatically in later "
                    "turns and sessions when the user's message shares keywords with them. "
                    "One self-contained sentence per fact; never secrets."
                ),
                "parameters": {
                    "type": "object",
                    "properties": {"content": {"type": "string", "description": "The fact."}},
                    "required": ["content"],
                },
            },
            {
                "name": FACT_SEARCH_TOOL,
                "description": (
                    "Search the long-term fact store by keywords. Returns matching facts with "
                    "the date they were saved and the session they came from."
                ),
                "parameters": {
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "Keywords to look for."},
                        "limit": {"type": "integer", "minimum": 1, "maximum": 20},
                    },
                    "required": ["query"],
                },
            },
        ]

    def handle_tool_call(self, name: str, args: Mapping[str, Any], **kwargs: Any) -> str:
        if name == FACT_STORE_TOOL:
            return self._tool_store(args)
        if name == FACT_SEARCH_TOOL:
            limit = args.get("limit", 5)
            limit = min(20, max(1, limit)) if isinstance(limit, int) else 5
            facts = self.search(str(args.get("query") or ""), limit)
            return json.dumps(
                {"success": True, "count": len(facts), "facts": [f.as_dict() for f in facts]},
                ensure_ascii=False,
            )
        return super().handle_tool_call(name, args, **kwargs)

    def _tool_store(self, args: Mapping[str, Any]) -> str:
        if not self.writes_enabled:
            return json.dumps(
                {"success": False, "error": "Facts are read-only in this agent context."}
            )
        content = args.get("content")
        if not isinstance(content, str) or not content.strip():
            return json.dumps({"success": False, "error": "content is required: one fact."})
        try:
            fact = self.add_fact(content)
        except (MemoryThreatError, ValueError) as exc:
            return json.dumps({"success": False, "error": str(exc)}, ensure_ascii=False)
        return json.dumps(
            {"success": True, "message": "Fact saved.", "fact": fact.as_dict()},
            ensure_ascii=False,
        )
