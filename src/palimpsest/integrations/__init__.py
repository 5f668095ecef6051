"""Bridges to the places agents are built: framework adapters and the MCP server.

Each module here is behind its own optional extra and imports its framework itself; this
package imports nothing, so ``import palimpsest.integrations`` works without any extra.
"""
