"""Text actions in a session that also uses native tool calls.

The reading (:mod:`palimpsest.messages.reading`) decides once per transcript whether
fenced code in an assistant's prose can be an action: once any native call appears, a
plain fenced block is taken for an example, never a command. That is right for a
native-calls agent, but a session whose agent changed on the way (a SWE-agent run resumed
by a tool-calling agent, a long session that switched models) holds both kinds, and
every command of the text-acting part is then lost to the summary: the files it created,
the failures it hit. The observation that answered such a message is still read as one
(its envelope, ``(Open file: …)``/``bash-$``, says so) and names the message it answers.

:func:`recover_text_actions` uses exactly that evidence: an assistant message with no
action whose fenced block is answered by an observation naming it, with no native call id,
is re-read with untagged fences admitted. Nothing else changes, so a native run whose
prose quotes code (answered by a ``tool`` message, or by nothing) keeps its reading.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..messages.reading import Action, MessageReading
from ..messages.reading_text import parse_text_actions

__all__ = ["recover_text_actions"]


def _answered_indices(readings: Sequence[MessageReading]) -> set[int]:
    """Indices of assistant messages that a text observation (no call id) names."""
    out: set[int] = set()
    for reading in readings:
        observation = reading.observation
        if (
            reading.kind == "observation"
            and observation is not None
            and observation.call_id is None
            and observation.action_index is not None
        ):
            out.add(observation.action_index)
    return out


def recover_text_actions(readings: Sequence[MessageReading]) -> list[MessageReading]:
    """``readings`` with the text actions of action-less assistant messages restored
    where an observation answers them (see the module doc); the rest unchanged."""
    answered: set[int] | None = None
    out = list(readings)
    for position, reading in enumerate(readings):
        if reading.kind != "assistant" or reading.actions or "```" not in reading.text:
            continue
        if answered is None:  # most spans have no such message: read the answers lazily
            answered = _answered_indices(readings)
        if reading.index not in answered:
            continue
        found, thought = parse_text_actions(reading.text, plain_fences=True)
        if not found:
            continue
        actions = tuple(
            Action(a.tool, a.arguments, a.command, None, a.style)  # type: ignore[arg-type]
            for a in found
        )
        out[position] = replace(reading, text=thought, actions=actions)
    return out
