"""Chat model backends behind one contract."""

from .base import ChatModel, Completion, ScriptedChatModel

__all__ = ["ChatModel", "Completion", "ScriptedChatModel"]
