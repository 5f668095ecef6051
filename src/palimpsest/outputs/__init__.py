"""Tool outputs that are too large for the context: caps, spilling to files, the per-turn
budget, a content-addressed store with retention (spec tool-results.md, docs/tool-output.md).
"""
