"""``python -m palimpsest``: the ``palimpsest`` command, for places that start a module
rather than a script (an MCP client's ``command = "python"``, a virtualenv not on PATH)."""

from .cli.app import main

main()
