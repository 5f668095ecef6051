"""SQLite session store, session search and persisted tool outputs."""
