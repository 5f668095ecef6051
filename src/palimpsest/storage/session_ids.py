"""Session ids (SS-26): what a new session is called, apart from the store that keeps it.

Both stores and the transcript import name new sessions the same way. The function lives
in a module of its own so that the import path (:mod:`.transfer`) can name a session
without importing the SQLite store, which reaches the import path through its shared
methods (:mod:`.store_common`): an import cycle otherwise.
"""

from __future__ import annotations

import secrets
from datetime import datetime

__all__ = ["new_session_id"]


def new_session_id() -> str:
    """SS-26: ``YYYYMMDD_HHMMSS_<6 lowercase hex>`` from local time."""
    return f"{datetime.now():%Y%m%d_%H%M%S}_{secrets.token_hex(3)}"
