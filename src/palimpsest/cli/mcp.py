"""``palimpsest mcp``: serve session search, memory and saved outputs to an MCP client.

The server speaks the Model Context Protocol over stdin/stdout, so stdout belongs to the
protocol: this command prints nothing there itself. Without the ``mcp`` extra it fails
with one line naming ``pip install 'palimpsest[mcp]'`` (exit 2). See docs/integrations.md
for the lines to add to Claude Code's and Codex's configuration.
"""

from __future__ import annotations

from .common import handle_errors

__all__ = ["mcp_command"]


def mcp_command() -> None:
    """Run the MCP server over stdio (for Claude Code, Codex, Cursor and other clients).

    Tools: session_search, memory, read_output. Resources: MEMORY.md, USER.md and each
    stored session (palimpsest://sessions/ID). The data directory is $PALIMPSEST_HOME.
    """
    with handle_errors():
        from ..integrations.mcp_server import run_stdio

        run_stdio()
