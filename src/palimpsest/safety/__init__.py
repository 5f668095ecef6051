"""What must never leave palimpsest unchecked: secrets and instructions planted in text.

This package sits below every other layer (it imports only `palimpsest.errors`), so that
compaction, summarizers, storage, outputs, memory, the agent and the CLI all take redaction
(`safety.redact`) and the injection scanner (`safety.threats`) from one place beneath them.
Import the submodules directly; this file re-exports nothing so that importing one does not
load the other.
"""
