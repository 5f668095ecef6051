"""MEMORY.md / USER.md, threat scanning, memory providers and their manager."""
