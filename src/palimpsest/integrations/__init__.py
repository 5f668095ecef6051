"""palimpsest where agents are built: framework adapters and the MCP server.

Each framework gets one small module behind its own optional extra, which converts the
framework's message objects to and from our OpenAI-format dicts and hands the conversation
to the one shared :class:`~palimpsest.integrations.keeper.ConversationKeeper` (compaction
through :class:`~palimpsest.compaction.ContextCompressor`, persistence through
:class:`~palimpsest.storage.SessionStore`):

* :mod:`palimpsest.integrations.langchain` (``palimpsest[langchain]``): an
  ``AgentMiddleware`` for ``create_agent`` and a ``pre_model_hook`` for LangGraph's
  ``create_react_agent``;
* :mod:`palimpsest.integrations.pydantic_ai` (``palimpsest[pydantic-ai]``): a history
  processor for ``ProcessHistory``;
* :mod:`palimpsest.integrations.openai_agents` (``palimpsest[openai-agents]``): a
  ``Session`` for the OpenAI Agents SDK, kept in the session store;
* :mod:`palimpsest.integrations.mcp_server` (``palimpsest[mcp]``): ``palimpsest mcp``, an
  MCP server over stdio for Claude Code, Codex and any other MCP client.

This package imports nothing itself. Importing a module without its extra raises
:class:`~palimpsest.errors.MissingDependencyError` naming the extra. See
``docs/integrations.md``.
"""
