"""The memory checkpoint a compaction takes first, and whether it can be trusted to fail loud.

Before a compaction the host gives memory one chance to save what the summary will take
away: the flush (the model writes with the ``memory`` tool) and each provider's
``on_pre_compress``. By default that checkpoint is best effort: a failure is reported and
the compaction goes on. With ``memory.checkpoint_required`` the host refuses to compact
when the checkpoint failed, which only works if a failure is visible. A provider says it is
by declaring :data:`CHECKPOINT_API_VERSION` as its ``checkpoint_api_version``:

version 1
    ``on_pre_compress`` returns its text or **raises**: returning means whatever the
    provider must save before a compaction is saved. A write through the ``memory`` tool
    that is refused answers ``{"success": false, ...}`` (the built-in provider does).

A provider that declares no version (``0``, every provider written before this contract)
may swallow its own failures, so under ``checkpoint_required`` its checkpoint counts as
failed: the host cannot tell a saved checkpoint from a lost one.

:func:`take_checkpoint` runs the providers' hooks and collects their failures instead of
logging them away; :func:`refused_write` reads a memory tool answer.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..safety.redact import redact

__all__ = [
    "CHECKPOINT_API_VERSION",
    "Checkpoint",
    "CheckpointProvider",
    "checkpoint_version",
    "refused_write",
    "take_checkpoint",
]

log = logging.getLogger(__name__)

CHECKPOINT_API_VERSION = 1
"""The checkpoint contract this host understands (module docstring)."""


class CheckpointProvider(Protocol):
    """What :func:`take_checkpoint` needs of a memory provider."""

    name: str

    def on_pre_compress(self, messages: Sequence[Mapping[str, Any]]) -> str: ...


@dataclass(frozen=True)
class Checkpoint:
    """The providers' pre-compaction texts and, per provider, why its checkpoint failed."""

    text: str
    failures: tuple[str, ...] = ()
    unversioned: tuple[str, ...] = ()
    """Providers that declare no checkpoint API version: their failures may be silent."""

    @property
    def ok(self) -> bool:
        return not self.failures


def checkpoint_version(provider: object) -> int:
    """The checkpoint API version ``provider`` declares (``0`` when it declares none)."""
    value = getattr(provider, "checkpoint_api_version", 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def take_checkpoint(
    providers: Iterable[CheckpointProvider], messages: Sequence[Mapping[str, Any]]
) -> Checkpoint:
    """Every provider's ``on_pre_compress``; one provider's failure never stops the others.

    A provider that raises, or that declares no version (so a failure of its could go
    unseen), is named in :attr:`Checkpoint.failures`; the texts of the others are joined.
    """
    texts: list[str] = []
    failures: list[str] = []
    unversioned: list[str] = []
    for provider in providers:
        name = getattr(provider, "name", "") or type(provider).__name__
        if checkpoint_version(provider) < CHECKPOINT_API_VERSION:
            unversioned.append(name)
            failures.append(
                f"memory provider {name!r} declares no checkpoint API version "
                f"(checkpoint_api_version = {CHECKPOINT_API_VERSION} is needed), so a "
                "failed checkpoint of its could go unseen"
            )
        try:
            text = provider.on_pre_compress(messages)
        except Exception as exc:
            log.warning("memory provider %r failed its checkpoint", name, exc_info=True)
            failures.append(
                redact(
                    f"memory provider {name!r} failed its checkpoint: {type(exc).__name__}: {exc}"
                )
            )
            continue
        if isinstance(text, str) and text.strip():
            texts.append(text)
    return Checkpoint("\n\n".join(texts), tuple(failures), tuple(unversioned))


def refused_write(answer: str) -> str | None:
    """The error of a memory tool answer that refused the write, else ``None``.

    The tool answers JSON with ``success``; an answer that is not JSON is not a refusal
    the tool reported, and is read as done (it came from a provider outside the contract).
    """
    try:
        parsed = json.loads(answer)
    except ValueError:
        return None
    if not isinstance(parsed, dict) or parsed.get("success", True) is not False:
        return None
    return redact(str(parsed.get("error") or "the write was refused"))
