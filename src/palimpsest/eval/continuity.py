"""The continuity eval: does a compacted context still carry the thread?

For each transcript and depth ``d`` the eval takes the prefix holding ``d`` of its tokens
(extended over the outputs of its last action, so it ends where an agent would compact),
and compacts it with the default :class:`ContextCompressor` under a window of
:data:`WINDOW_FRACTION` of the prefix's size by the compressor's own (rough) counter, with
``force=True``: the prefix overflows the window, the state in which an agent must compact.
The span is the messages the compressor summarized (``CompressionStats`` head and middle
counts). The probes of :mod:`.probes` then score three systems on the same prefix and
span: palimpsest, observation masking and truncation (:mod:`.baselines`; truncation gets
the compressor's result size as its budget). Token figures are exact ``o200k_base`` counts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..compaction.compressor import ContextCompressor
from ..compaction.markers import is_compaction_summary_message, split_summary_content
from ..tokens import ExactCounter, RoughCounter, TokenCounter
from .actions import actions_of
from .baselines import observation_masking, truncation
from .probes import ProbeScore, SpanFacts, messages_text, score, span_facts
from .spans import is_observation_text

__all__ = [
    "DEFAULT_DEPTHS",
    "SYSTEMS",
    "WINDOW_FRACTION",
    "CaseResult",
    "SystemResult",
    "aggregate",
    "depth_prefix",
    "evaluate_transcript",
]

DEFAULT_DEPTHS = (0.5, 0.7, 0.9)
WINDOW_FRACTION = 0.9
SYSTEMS = ("palimpsest", "masking", "truncation")

CompressorFactory = Callable[[int], ContextCompressor]


def default_compressor(window: int) -> ContextCompressor:
    """The default compressor at ``window`` tokens, without log chatter."""
    return ContextCompressor(window, quiet_mode=True)


@dataclass(frozen=True)
class SystemResult:
    """One system's result on one case; ``messages`` is the context it produced when the
    caller asked to keep it (``keep_messages``: for a second reading, e.g. the independent
    scorer of the tests; never in :meth:`CaseResult.to_dict`)."""

    system: str
    tokens_before: int
    tokens_after: int
    probes: ProbeScore
    messages: tuple[dict[str, Any], ...] = field(default=(), repr=False, compare=False)

    @property
    def removed_pct(self) -> float:
        if not self.tokens_before:
            return 0.0
        return (self.tokens_before - self.tokens_after) / self.tokens_before * 100


@dataclass(frozen=True)
class CaseResult:
    """One transcript at one depth; ``systems`` is empty when no compaction happened."""

    transcript: str
    depth: float
    prefix_messages: int
    prefix_tokens: int
    window: int
    compacted: bool
    reason: str | None
    span: tuple[int, int] | None
    facts: SpanFacts | None
    systems: tuple[SystemResult, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for system, row in zip(self.systems, out["systems"], strict=True):
            row["tokens_removed_pct"] = round(system.removed_pct, 2)
            row.pop("messages", None)
        return out


def depth_prefix(
    messages: Sequence[Mapping[str, Any]], depth: float, counter: TokenCounter
) -> list[dict[str, Any]]:
    """The shortest prefix holding ``depth`` of the tokens, plus the outputs of its last action."""
    total = counter.count_messages(messages)
    n = 0
    while n < len(messages) and counter.count_messages(messages[:n]) < depth * total:
        n += 1
    n = max(n, 1)
    while n < len(messages):
        nxt = messages[n]
        role = nxt.get("role")
        after_action = any(a.call_id is None for a in actions_of(messages[n - 1]))
        if role in ("tool", "function") or (
            role == "user" and (after_action or is_observation_text(str(nxt.get("content"))))
        ):
            n += 1
            continue
        break
    return [dict(m) for m in messages[:n]]


def _summary_text(result: Sequence[Mapping[str, Any]]) -> str:
    bodies = [split_summary_content(m)[0] for m in result if is_compaction_summary_message(m)]
    return "\n\n".join(b for b in bodies if b)


def evaluate_transcript(
    name: str,
    messages: Sequence[Mapping[str, Any]],
    depths: Sequence[float] = DEFAULT_DEPTHS,
    *,
    counter: TokenCounter | None = None,
    make_compressor: CompressorFactory = default_compressor,
    keep_messages: bool = False,
) -> list[CaseResult]:
    """Every depth of one transcript; ``messages`` is never modified. ``keep_messages``
    keeps each system's resulting context on its :class:`SystemResult`."""
    counter = counter or ExactCounter("o200k_base")
    return [_case(name, messages, d, counter, make_compressor, keep_messages) for d in depths]


def _case(
    name: str,
    messages: Sequence[Mapping[str, Any]],
    depth: float,
    counter: TokenCounter,
    make_compressor: CompressorFactory,
    keep_messages: bool = False,
) -> CaseResult:
    prefix = depth_prefix(messages, depth, counter)
    before = counter.count_messages(prefix)
    window = max(1, int(RoughCounter().count_messages(prefix) * WINDOW_FRACTION))
    compressor = make_compressor(window)
    result = compressor.compress(prefix, force=True)
    stats = compressor.last_stats

    def case(**rest: Any) -> CaseResult:
        return CaseResult(name, depth, len(prefix), before, window, **rest)

    if not stats.compressed:
        return case(compacted=False, reason=stats.reason, span=None, facts=None)
    head, start, end = (
        stats.head_messages,
        stats.head_messages,
        stats.head_messages + stats.middle_messages,
    )
    facts = span_facts(prefix, start, end, head, run=messages)
    after = counter.count_messages(result)
    systems = [
        SystemResult(
            "palimpsest",
            before,
            after,
            score(facts, messages_text(result[head:]), _summary_text(result)),
            tuple(result) if keep_messages else (),
        )
    ]
    masked = observation_masking(prefix)
    systems.append(
        SystemResult(
            "masking",
            before,
            counter.count_messages(masked),
            score(facts, messages_text(masked[head:]), None),
            tuple(masked) if keep_messages else (),
        )
    )
    cut = truncation(prefix, head, after, counter)
    systems.append(
        SystemResult(
            "truncation",
            before,
            counter.count_messages(cut),
            score(facts, messages_text(cut[head:]), None),
            tuple(cut) if keep_messages else (),
        )
    )
    return case(
        compacted=True,
        reason=None,
        span=(start, end),
        facts=facts,
        systems=tuple(systems),
    )


def _ratio(parts: Sequence[tuple[int, int] | None]) -> tuple[int, int] | None:
    real = [p for p in parts if p is not None]
    return (sum(k for k, _ in real), sum(n for _, n in real)) if real else None


def _count(flags: Sequence[bool | None]) -> tuple[int, int] | None:
    real = [f for f in flags if f is not None]
    return (sum(real), len(real)) if real else None


def aggregate(cases: Sequence[CaseResult]) -> dict[str, dict[str, Any]]:
    """Per system: ``(kept, applicable)`` pairs over all compacted cases, and the mean
    tokens removed. Files and identifiers count items; the other probes count cases."""
    out: dict[str, dict[str, Any]] = {}
    for system in SYSTEMS:
        rows = [s for c in cases for s in c.systems if s.system == system]
        p = [r.probes for r in rows]
        out[system] = {
            "cases": len(rows),
            "nothing_to_probe": sum(
                1 for c in cases if c.compacted and c.facts is not None and c.facts.nothing_to_probe
            ),
            "files_named": _ratio([x.files_named for x in p]),
            "request_kept": _count([x.request_kept for x in p]),
            "last_failure_kept": _count([x.last_failure_kept for x in p]),
            "unresolved_failure_kept": _count([x.unresolved_failure_kept for x in p]),
            "identifiers_kept": _ratio([x.identifiers_kept for x in p]),
            "identifier_names_kept": _ratio([x.identifier_names_kept for x in p]),
            "successes_as_failures": sum(len(x.successes_as_failures) for x in p),
            "tokens_removed_pct": (
                round(sum(r.removed_pct for r in rows) / len(rows), 2) if rows else None
            ),
        }
    return out
