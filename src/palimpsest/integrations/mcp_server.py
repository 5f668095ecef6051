"""``palimpsest mcp``: session search, memory and saved tool outputs for any MCP client.

Claude Code, Codex, Cursor and every other Model Context Protocol client can start this
server over stdio and reach what palimpsest keeps: the ``session_search`` tool over the
session store (the same redacted JSON our own agent gets), the ``memory`` tool on
MEMORY.md / USER.md (the same threat scan and secret refusal, through
:class:`~palimpsest.memory.tool.MemoryTool`), and ``read_output`` on tool outputs that
were too large for a context (:func:`~palimpsest.outputs.read_answer.read_output_text`).
Resources: both memory files and any stored session by id.

Nothing is re-implemented here: each tool opens the store it needs, calls the library,
and turns a refusal into an MCP error result (``isError``) carrying the library's own
explanation. Malformed calls (unknown tool, missing or mistyped arguments) are answered
with an error result by the SDK; the server keeps serving. Stores are opened per call, so
a long-running server sees what other processes wrote and holds no lock between calls.

The MCP SDK is an optional extra: ``pip install 'palimpsest[mcp]'``. Importing this
module without it raises :class:`~palimpsest.errors.MissingDependencyError` naming it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from ..config import Settings, load_settings
from ..errors import MissingDependencyError, PalimpsestError
from ..memory.entries import join_entries
from ..memory.store import MemoryStore
from ..memory.tool import MEMORY_TOOL_SCHEMA, MemoryTool
from ..outputs.read_answer import DEFAULT_READ_LIMIT, read_output_text
from ..outputs.store import OutputStore
from ..safety.redact import redact
from ..storage.contract import Store
from ..storage.factory import is_postgres_url, open_store, store_url
from ..storage.search import DEFAULT_LIMIT, SESSION_SEARCH_SCHEMA, SessionSearch
from ..storage.search_text import format_conversation
from ..storage.session_admin import resolve_prefix
from ..storage.sessions import default_db_path

try:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceNotFoundError
    from mcp.types import CallToolResult, TextContent
except ImportError as exc:  # pragma: no cover - exercised in a subprocess without the extra
    raise MissingDependencyError("the MCP SDK (mcp)", "mcp") from exc

__all__ = [
    "MEMORY_URI",
    "SERVER_NAME",
    "SESSION_URI_TEMPLATE",
    "USER_URI",
    "build_server",
    "run_stdio",
]

SERVER_NAME = "palimpsest"
MEMORY_URI = "palimpsest://memory/MEMORY.md"
USER_URI = "palimpsest://memory/USER.md"
SESSION_URI_TEMPLATE = "palimpsest://sessions/{session_id}"

_INSTRUCTIONS = (
    "palimpsest keeps every past agent session searchable and a small persistent memory. "
    "Use session_search to recall earlier work, memory to save durable facts about the user "
    "and the environment, and read_output to page through a saved tool output."
)

# Module-level: the tools' annotations are strings (postponed evaluation) that the SDK
# evaluates against this module's globals.
_SEARCH_PROPS: dict[str, Any] = SESSION_SEARCH_SCHEMA["parameters"]["properties"]
_MEMORY_PROPS: dict[str, Any] = MEMORY_TOOL_SCHEMA["parameters"]["properties"]


def _store_path(settings: Settings) -> Path:
    configured = settings.store.path
    return Path(configured).expanduser() if configured else default_db_path()


@contextmanager
def _session_store(settings: Settings) -> Iterator[Store]:
    # No background thread: the store lives for one call.
    url = store_url(settings=settings)
    options: dict[str, Any] = {}
    if url is None or not is_postgres_url(url):
        options = {"fts_layout": settings.store.fts_layout, "background_upkeep": False}
    with open_store(url or _store_path(settings), settings=settings, **options) as store:
        yield store


def _memory_store(settings: Settings) -> MemoryStore:
    store = MemoryStore.from_settings(settings)
    store.load_from_disk()
    return store


def _answer(text: str, *, error: bool = False) -> CallToolResult:
    # Returned rather than raised: a raised ToolError reaches the client behind an
    # "Error executing tool" prefix, and the payload should be the library's JSON as is.
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=error)


def _refused(payload_text: str) -> bool:
    try:
        payload = json.loads(payload_text)
    except ValueError:
        return False
    return isinstance(payload, dict) and payload.get("success") is False


def build_server(settings: Settings | None = None) -> MCPServer:
    """The palimpsest MCP server (tools and resources registered), not yet running.

    ``settings`` default to :func:`~palimpsest.config.load_settings` read now; the data
    directory is ``$PALIMPSEST_HOME`` as for every other command.
    """
    conf = settings if settings is not None else load_settings()
    server: MCPServer = MCPServer(SERVER_NAME, instructions=_INSTRUCTIONS, log_level="WARNING")

    @server.tool(name="session_search", description=str(SESSION_SEARCH_SCHEMA["description"]))
    def session_search(
        query: Annotated[str, Field(description=_SEARCH_PROPS["query"]["description"])] = "",
        # Out-of-range limits are clamped by the search (SS-59), as for our own agent.
        limit: Annotated[int, Field(description=_SEARCH_PROPS["limit"]["description"])] = (
            DEFAULT_LIMIT
        ),
    ) -> CallToolResult:
        with _session_store(conf) as store:
            payload = SessionSearch.from_settings(store, None, conf).search(query, limit=limit)
        return _answer(json.dumps(payload, ensure_ascii=False), error=not payload["success"])

    @server.tool(name="memory", description=str(MEMORY_TOOL_SCHEMA["description"]))
    def memory(
        target: Annotated[
            Literal["memory", "user"], Field(description=_MEMORY_PROPS["target"]["description"])
        ],
        action: Annotated[
            Literal["add", "replace", "remove"],
            Field(description=_MEMORY_PROPS["action"]["description"]),
        ],
        content: Annotated[
            str | None, Field(description=_MEMORY_PROPS["content"]["description"])
        ] = None,
        old_text: Annotated[
            str | None, Field(description=_MEMORY_PROPS["old_text"]["description"])
        ] = None,
    ) -> CallToolResult:
        arguments: dict[str, Any] = {"target": target, "action": action}
        if content is not None:
            arguments["content"] = content
        if old_text is not None:
            arguments["old_text"] = old_text
        text = MemoryTool(_memory_store(conf)).call(arguments).text
        return _answer(text, error=_refused(text))

    @server.tool(
        name="read_output",
        description=(
            "Read or search a tool output that was too large for the context and was saved "
            "by palimpsest. Give its name (digest, a unique prefix of 8+ hex characters, or "
            "the path shown in its <persisted-output> block); with pattern, list the lines "
            "that contain that text instead. Secrets are shown as [REDACTED]."
        ),
    )
    def read_output(
        name: Annotated[str, Field(description="The saved output's digest, prefix or path.")],
        pattern: Annotated[
            str, Field(description="When given, list the lines containing this text.")
        ] = "",
        offset: Annotated[int, Field(description="Byte position to start reading at.", ge=0)] = 0,
        limit: Annotated[
            int, Field(description="How many bytes to return.", ge=1)
        ] = DEFAULT_READ_LIMIT,
    ) -> CallToolResult:
        try:
            with OutputStore.from_settings(conf) as outputs:
                text = read_output_text(outputs, name, offset, limit, pattern)
        except (PalimpsestError, ValueError, OSError) as exc:
            return _answer(redact(str(exc)), error=True)
        return _answer(redact(text))

    @server.resource(MEMORY_URI, name="MEMORY.md", mime_type="text/markdown")
    def memory_file() -> str:
        """The agent's notes (MEMORY.md) as a model may see them: entries joined by '§'."""
        return _memory_text(conf, "memory")

    @server.resource(USER_URI, name="USER.md", mime_type="text/markdown")
    def user_file() -> str:
        """The user profile (USER.md) as a model may see them: entries joined by '§'."""
        return _memory_text(conf, "user")

    @server.resource(SESSION_URI_TEMPLATE, name="session", mime_type="text/plain")
    def session(session_id: str) -> str:
        """A stored session (id or unique prefix) as a redacted ``[ROLE]: text`` transcript."""
        with _session_store(conf) as store:
            try:
                with store.connection_for_reads() as con:
                    full = resolve_prefix(con, session_id)
            except PalimpsestError as exc:
                raise ResourceNotFoundError(str(exc)) from exc
            row = store.require_session(full)
            messages = store.get_messages(full)
        title = redact(row["title"]) if row.get("title") else "(untitled)"
        header = f"session {full} · {title} · source {row.get('source')} · {len(messages)} messages"
        return f"{header}\n\n{format_conversation(messages)}"

    return server


def _memory_text(settings: Settings, target: str) -> str:
    store = _memory_store(settings)
    return join_entries(store.sanitized(target))


def run_stdio(settings: Settings | None = None) -> None:
    """Serve over stdin/stdout until the client closes the stream."""
    build_server(settings).run("stdio")
