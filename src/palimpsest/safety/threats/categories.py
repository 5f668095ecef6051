"""The threat categories, in scan order, and what each one means to a person and a model.

Every refusal names its category and says why that kind of text is refused, so a user
reading the error knows what to change and a model reading the tool result knows not to
retry the same text reworded.
"""

from __future__ import annotations

from types import MappingProxyType

__all__ = ["CATEGORIES", "CATEGORY_ORDER", "explain"]

_WHY = (
    (
        "invisible_unicode",
        "hidden characters",
        "invisible characters can carry instructions that a person reviewing the note cannot see",
    ),
    (
        "instruction_override",
        "instruction override",
        "it tries to cancel or replace the instructions the agent works under",
    ),
    (
        "role_injection",
        "role or chat-markup injection",
        "it imitates chat markup or a system/role header, so a model could read it as a "
        "message from the system or the developer",
    ),
    (
        "identity_hijack",
        "identity hijack",
        "it tries to give the agent a new identity or a persona without restrictions",
    ),
    (
        "exfiltration",
        "exfiltration",
        "it would send secrets, private files, environment variables or the conversation "
        "somewhere else, or reveal them",
    ),
    (
        "persistence",
        "persistence",
        "it tells the agent to plant something that outlives the session: shell startup files, "
        "crontab, SSH keys, git hooks or agent instruction files",
    ),
    (
        "remote_code_execution",
        "remote code execution",
        "it runs code fetched from the network or opens a remote shell",
    ),
    (
        "destructive",
        "destructive command",
        "it destroys data or the system (recursive deletes of / or ~, mkfs, raw disk writes, "
        "fork bombs)",
    ),
    ("deception", "deception", "it asks the agent to hide actions or information from the user"),
    (
        "obfuscation",
        "obfuscation",
        "it disguises words with look-alike letters from another script, which only makes "
        "sense to get past a filter",
    ),
    (
        "embedded_secret",
        "embedded secret",
        "it carries a credential; secrets never belong in text that is replayed into prompts",
    ),
    (
        "model_instruction",
        "instruction to the model",
        "it reads as an instruction addressed to the model (an override, a persona, a request "
        "for its prompt or secrets, or an order to slant its answers), which the learned "
        "detector recognises in paraphrases and other languages",
    ),
)

CATEGORY_ORDER: tuple[str, ...] = tuple(name for name, _, _ in _WHY)
CATEGORIES = MappingProxyType({name: (title, why) for name, title, why in _WHY})


def explain(category: str, why: str | None = None) -> str:
    """One sentence for the error message: the category and why it is refused.

    ``why`` replaces the category's general reason with a more specific one.
    """
    title, general = CATEGORIES.get(
        category, (category.replace("_", " "), "it matched a threat rule")
    )
    why = why or general
    return (
        f"Category: {title}. Refused because {why}; memory entries are placed in the system "
        "prompt of every later session. If this is an ordinary note, reword it as a "
        "description (what the command does) rather than an instruction to the agent."
    )
