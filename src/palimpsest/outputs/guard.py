"""The output guard: the three defences of tool-results.md for a loop, with a store behind them.

:mod:`.sandbox` and :mod:`.turn_budget` are the spec's functions, which write a spilled
result into a sandbox directory under its call id. An agent running on the user's machine
wants more: an output that can be re-run (an unchanged file, ``grep``) is not worth a copy and
becomes a pointer saying how to get it again; one that cannot be re-run (a test run, a
network call) is saved once in the content-addressed :class:`~.store.OutputStore` under
``$PALIMPSEST_HOME``, where ``read_output`` reads and searches it and retention collects it.
A complete output that arrives as a file (:class:`~.body.LargeOutput`, e.g. a shell command
that printed a gigabyte) is stored by streaming and previewed from the file, never read whole.

:class:`OutputGuard` is that policy for any loop: :meth:`OutputGuard.admit` each result as it
is produced (layer 2), then :meth:`OutputGuard.enforce_turn` on the turn's tool messages
(layer 3). The agent does both; a caller with its own loop can too. It counts what it kept
out of the context and off the disk (:class:`OutputStats`).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from ..errors import StorageError
from ..safety.redact import redact
from .body import LargeOutput
from .budget import DEFAULT_BUDGET, BudgetConfig, threshold_for
from .ingest import TEXT_KIND
from .preview import (
    format_size,
    generate_preview,
    head_tail_preview,
    persisted_block,
    preview_from_file,
    truncation_fallback,
)
from .rerun import Rerun
from .sandbox import SandboxEnvironment, maybe_persist_tool_result
from .store import OutputStore, StoredOutput
from .turn_budget import enforce_turn_budget, message_size

__all__ = ["POINTER_CLOSE", "POINTER_OPEN", "OutputGuard", "OutputStats", "RerunSource"]

RerunSource = Rerun | Callable[[], Rerun]
"""A verdict, or how to reach one: asked only when the output must leave the context
(re-reading a file to prove it unchanged is not free)."""

POINTER_OPEN = "<rerunnable-output>"
POINTER_CLOSE = "</rerunnable-output>"


@dataclass
class OutputStats:
    """What the guard did since it was made; every size is of the complete output."""

    results: int = 0
    """Tool results admitted."""
    spilled: int = 0
    """Results that left the context (saved, pointed at or cut)."""
    saved: int = 0
    """Spilled results written to the store (new objects)."""
    deduplicated: int = 0
    """Spilled results already in the store: nothing written."""
    pointers: int = 0
    """Spilled results that can be re-run: a pointer, nothing written."""
    fallbacks: int = 0
    """Spilled results that could not be saved: a preview and a note of the loss."""
    chars_produced: int = 0
    """Characters (bytes, for binary output) the tools produced."""
    chars_to_context: int = 0
    """Characters that entered the context."""
    bytes_written: int = 0
    """Bytes written to the store."""
    bytes_not_written: int = 0
    """Bytes of spilled outputs kept off the disk (already stored, or re-runnable)."""

    @property
    def chars_kept_out_of_context(self) -> int:
        return max(0, self.chars_produced - self.chars_to_context)

    def as_dict(self) -> dict[str, int]:
        data = asdict(self)
        data["chars_kept_out_of_context"] = self.chars_kept_out_of_context
        return data


class OutputGuard:
    """Per-result persistence and the per-turn budget, with pointers for re-runnable output.

    ``store`` keeps spilled outputs (default: none, then ``env`` is used as the spec's
    sandbox, and with neither a spilled output keeps only its preview). ``session_id`` (a
    value or a callable, asked at each save) records which session points at a saved output,
    so retention never collects it while that session is open. ``read_tool`` is the tool the
    preview block tells the model to use.
    """

    def __init__(
        self,
        store: OutputStore | None = None,
        config: BudgetConfig = DEFAULT_BUDGET,
        *,
        env: SandboxEnvironment | None = None,
        session_id: str | Callable[[], str | None] | None = None,
        read_tool: str = "read_output",
    ) -> None:
        self.store = store
        self.config = config
        self.env = env
        self.read_tool = read_tool
        self._session_id = session_id
        self._lock = threading.Lock()
        self.stats = OutputStats()

    # --- layer 2 --------------------------------------------------------------------------

    def admit(
        self,
        result: str | LargeOutput,
        *,
        tool_name: str,
        call_id: str | None,
        registry_max: float | None = None,
        rerun: RerunSource | None = None,
    ) -> str:
        """The text to put into the history for one tool result (spilled when too large)."""
        threshold = threshold_for(tool_name, self.config, registry_max)
        if isinstance(result, str):
            self._count(produced=len(result))
            if math.isinf(threshold) or len(result) <= threshold:
                return self._entered(result)
            return self._entered(
                self.spill(result, tool_name=tool_name, call_id=call_id, rerun=rerun)
            )
        self._count(produced=result.size_bytes)
        whole = self._whole_text(result, threshold)
        if whole is not None:
            return self._entered(whole)
        return self._entered(self.spill(result, tool_name=tool_name, call_id=call_id, rerun=rerun))

    def spill(
        self,
        result: str | LargeOutput,
        *,
        tool_name: str,
        call_id: str | None,
        rerun: RerunSource | None = None,
    ) -> str:
        """Take ``result`` out of the context: a pointer, a saved copy, or a stated loss."""
        self._count(spilled=1)
        try:
            verdict = _verdict(rerun) if not _binary(result) else None
            if verdict is not None and verdict.repeatable and verdict.how:
                return self._pointer(result, tool_name, verdict)
            if self.store is not None:
                return self._saved(result, tool_name, call_id)
            if self.env is not None and isinstance(result, str):
                return maybe_persist_tool_result(
                    result, tool_name, call_id, self.env, self.config, threshold=0
                )
            return self._lost(result, "no output store is configured")
        finally:
            if isinstance(result, LargeOutput):
                result.discard()

    # --- layer 3 --------------------------------------------------------------------------

    def enforce_turn(
        self,
        tool_messages: list[dict[str, Any]],
        reruns: Mapping[str, RerunSource] | None = None,
    ) -> list[dict[str, Any]]:
        """Spill the largest results of one assistant turn until the turn fits its budget.

        Modifies the messages in place and returns the same list (spec TR-17).
        """
        known = dict(reruns or {})
        before = sum(message_size(m) for m in tool_messages)

        def persist(content: str, name: str, call_id: str) -> str:
            if POINTER_OPEN in content:
                return content  # already a pointer: unchanged, so the budget skips it
            return self.spill(content, tool_name=name, call_id=call_id, rerun=known.get(call_id))

        enforce_turn_budget(tool_messages, self.env, self.config, persist=persist)
        after = sum(message_size(m) for m in tool_messages)
        self._count(to_context=after - before)
        return tool_messages

    # --- the three ways out ----------------------------------------------------------------

    def _pointer(self, result: str | LargeOutput, tool_name: str, rerun: Rerun) -> str:
        preview, has_more, total = self._preview(result)
        self._count(pointers=1, not_written=_bytes(result))
        unit = "characters" if isinstance(result, str) else "bytes"
        lines = [
            POINTER_OPEN,
            f"Output of {tool_name} too large for the context ({total:,} {unit}, "
            f"{format_size(total)}); it was not saved because it can be produced again "
            f"({rerun.reason}).",
            f"To see it again: {redact(rerun.how or '')}",
            "Narrow the call to get less at once (a pattern, a line range, | head).",
            "",
            f"Preview ({_preview_label(self.config.preview_mode, has_more, len(preview))}):",
            preview,
        ]
        if has_more and self.config.preview_mode != "head_tail":
            lines.append("...")
        lines.append(POINTER_CLOSE)
        return "\n".join(lines)

    def _saved(self, result: str | LargeOutput, tool_name: str, call_id: str | None) -> str:
        assert self.store is not None
        session = self._session()
        try:
            if isinstance(result, str):
                stored = self.store.put_text(
                    result, tool_name=tool_name, session_id=session, call_id=call_id
                )
            elif result.data is not None:
                stored = self.store.put_bytes(
                    result.data, tool_name=tool_name, session_id=session, call_id=call_id
                )
            else:
                assert result.path is not None
                stored = self.store.put_file(
                    result.path,
                    move=result.owned,
                    tool_name=tool_name,
                    session_id=session,
                    call_id=call_id,
                )
        except (StorageError, OSError) as exc:
            return self._lost(result, str(exc))
        if stored.new:
            self._count(saved=1, written=stored.size_bytes)
        else:
            self._count(deduplicated=1, not_written=stored.size_bytes)
        return self._block(stored)

    def _block(self, stored: StoredOutput) -> str:
        hint = (
            f"Use the {self.read_tool} tool with this name and offset/limit to read parts of "
            "it, or with pattern= to search it; do not run the command again for it."
        )
        if not stored.is_text:
            return persisted_block(
                path=str(stored.path),
                total_chars=stored.size_bytes,
                preview=f"(binary output, {stored.size_bytes:,} bytes: not shown as text)",
                has_more=False,
                read_hint=f"It is {stored.kind}; {self.read_tool} reports what it is.",
                note=f"Binary output ({stored.kind}), stored as bytes.",
            )
        preview, has_more = preview_from_file(
            stored.path,
            self.config.preview_size,
            self.config.preview_mode,
            total_chars=stored.chars,
        )
        note = (
            "The output is not valid UTF-8; undecodable bytes are kept."
            if stored.kind != TEXT_KIND
            else None
        )
        return persisted_block(
            path=str(stored.path),
            total_chars=stored.chars if stored.chars is not None else stored.size_bytes,
            preview=redact(preview),
            has_more=has_more,
            read_hint=hint,
            recovery=self.config.recovery_line,
            note=note,
            preview_mode=self.config.preview_mode,
        )

    def _lost(self, result: str | LargeOutput, why: str) -> str:
        """TR-13: the preview stays, the loss is stated, the call does not fail."""
        preview, _, total = self._preview(result)
        self._count(fallbacks=1)
        text = truncation_fallback(preview, total)
        return f"{text}\n[Why: {redact(why)}]"

    # --- helpers -------------------------------------------------------------------------

    def _preview(self, result: str | LargeOutput) -> tuple[str, bool, int]:
        """(preview, has_more, total characters) without reading a file whole."""
        size = self.config.preview_size
        if isinstance(result, str):
            make = (
                head_tail_preview if self.config.preview_mode == "head_tail" else generate_preview
            )
            preview, more = make(result, size)
            return redact(preview), more, len(result)
        if result.data is not None:
            return f"(binary output, {len(result.data):,} bytes)", False, len(result.data)
        assert result.path is not None
        total = result.path.stat().st_size
        preview, more = preview_from_file(result.path, size, self.config.preview_mode)
        return redact(preview), more, total

    def _whole_text(self, result: LargeOutput, threshold: float) -> str | None:
        """The complete output as text when it is text and small enough to enter whole."""
        if result.data is not None or result.path is None:
            return None
        if math.isinf(threshold):
            result.discard()  # pinned tools keep their own cut (TR-02)
            return result.shown
        if result.size_bytes > threshold:
            return None
        raw = result.path.read_bytes()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
        if "\x00" in text:
            return None
        result.discard()
        return redact(text.rstrip("\n"))

    def _session(self) -> str | None:
        value = self._session_id
        return value() if callable(value) else value

    def _entered(self, text: str) -> str:
        self._count(to_context=len(text))
        return text

    def _count(self, **deltas: int) -> None:
        names = {
            "produced": "chars_produced",
            "to_context": "chars_to_context",
            "written": "bytes_written",
            "not_written": "bytes_not_written",
        }
        with self._lock:
            if "produced" in deltas:
                self.stats.results += 1
            for key, value in deltas.items():
                field = names.get(key, key)
                setattr(self.stats, field, getattr(self.stats, field) + value)


def _verdict(rerun: RerunSource | None) -> Rerun | None:
    if rerun is None or isinstance(rerun, Rerun):
        return rerun
    try:
        return rerun()
    except Exception as exc:  # a failing check keeps the output: the safe side
        return Rerun(False, f"repeatability check failed: {type(exc).__name__}")


def _preview_label(mode: str, has_more: bool, chars: int) -> str:
    if mode == "head_tail" and has_more:
        return f"first and last parts, {chars} chars"
    return f"first {chars} chars"


def _binary(result: str | LargeOutput) -> bool:
    return isinstance(result, LargeOutput) and result.data is not None


def _bytes(result: str | LargeOutput) -> int:
    return len(result.encode("utf-8")) if isinstance(result, str) else result.size_bytes
