"""``python -m palimpsest.cli``."""

from .app import main

main()
