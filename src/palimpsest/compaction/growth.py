"""Did a rewrite save tokens by the exact counter? Answered by counting only what changed.

The compressor decides with the rough chars/4 rule, which counts JSON punctuation the
model never sees and undercounts dense scripts four-fold; a rewrite it scores as smaller
can be larger in real o200k tokens (9 of 25,000 fuzzed transcripts were). Counting both
lists exactly would tokenize the whole transcript on every call. Messages that pass
through unchanged cost the same on both sides, so :func:`exact_saving` tokenizes only the
messages that differ: first the added ones (the summary, stubs, repaired messages, usually
small), then the removed ones until they outweigh the added. The cost is proportional to
the summary, not to the transcript.

"Unchanged" is decided by identity of the values: a shallow copy of a message (what
assembly makes) shares its content objects with the original. An equal but re-created
message counts as changed, which only costs time, never correctness.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

from ..messages.content import content_text
from ..messages.markers import SUMMARY_FLAG
from ..tokens import CHARS_PER_TOKEN, ExactCounter, exact_fields

__all__ = ["EXACT_CONFIRM_BELOW_SAVING", "exact_saving", "would_grow"]

EXACT_CONFIRM_BELOW_SAVING = 0.5
"""A rough saving below this share of the input is confirmed with the exact counter."""

# Scripts of about one token per character, which chars/4 undercounts four-fold (CJK, kana,
# Hangul, full-width forms): a summary quoting them is confirmed with the exact counter.
_DENSE_SCRIPT = re.compile(
    "[\u1100-\u11ff\u2e80-\u9fff\ua960-\ua97f\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]"
)


def would_grow(
    before_messages: Sequence[Mapping[str, Any]],
    result: Sequence[Mapping[str, Any]],
    after: int,
    before: int,
    exact_counter: Callable[[], ExactCounter],
    counted_exactly: bool,
) -> bool:
    """Is ``result`` not smaller than ``before_messages``?

    ``after`` and ``before`` are the configured counter's figures (exact when
    ``counted_exactly``). A rough margin under :data:`EXACT_CONFIRM_BELOW_SAVING`, or a
    summary in a dense script, is confirmed with ``exact_counter()`` (made only then: loading
    the tokenizer costs about a second once per process).
    """
    if after >= before:
        return True
    if counted_exactly:
        return False
    added = (m.get("content") for m in result if m.get(SUMMARY_FLAG))
    dense = any(_DENSE_SCRIPT.search(content_text(c)) for c in added)
    if (
        after < before * EXACT_CONFIRM_BELOW_SAVING
        and not dense
        and not _opaque(before_messages)
        and _seen_rough(result) < _seen_rough(before_messages) * EXACT_CONFIRM_BELOW_SAVING
    ):
        return False
    return exact_saving(before_messages, result, exact_counter()) <= 0


def _seen_rough(messages: Sequence[Mapping[str, Any]]) -> int:
    """chars/4 of only the texts the exact counter reads (:func:`~palimpsest.tokens.exact_fields`).

    The rough count also measures JSON keys, ids and punctuation. A transcript made mostly of
    those (empty tool calls, ``function_call`` objects on every message: the fuzzer found
    one at 78 exact tokens) loses them all to a summary that is larger in real tokens, while
    its rough count halves; judged on the texts alone too, such a saving is confirmed.
    """
    chars = 0
    for message in messages:
        fields, _ = exact_fields(message)
        chars += sum(len(field) for field in fields)
    return chars // CHARS_PER_TOKEN


def _opaque(messages: Sequence[Mapping[str, Any]]) -> bool:
    """Does any content hold parts that are not text? chars/4 counts their JSON, the exact
    counter does not count them at all, so a rough saving on such input proves nothing."""
    for message in messages:
        content = message.get("content")
        if content is None or isinstance(content, str):
            continue
        if not isinstance(content, list):
            return True
        for part in content:
            if isinstance(part, str):
                continue
            if not (isinstance(part, Mapping) and isinstance(part.get("text"), str)):
                return True
    return False


Key = frozenset[tuple[Hashable, int]]


def _key(message: Mapping[str, Any]) -> Key:
    # Host-internal "_" keys never reach a provider and are not counted.
    return frozenset(
        (k, id(v)) for k, v in message.items() if not (isinstance(k, str) and k.startswith("_"))
    )


def exact_saving(
    before: Sequence[Mapping[str, Any]],
    after: Sequence[Mapping[str, Any]],
    counter: ExactCounter,
) -> int:
    """Exact tokens of ``before`` minus those of ``after``, or a positive lower bound of it.

    Stops counting removed messages once they outweigh the added ones, so a positive
    result means "smaller by at least this much"; zero or a negative result is exact.
    """
    remaining: Counter[Key] = Counter(_key(m) for m in before)
    added: list[Mapping[str, Any]] = []
    for message in after:
        key = _key(message)
        if remaining[key] > 0:
            remaining[key] -= 1
        else:
            added.append(message)
    added_tokens = sum(counter.count_message(m) for m in added)
    framing = counter.reply_priming
    if not after:
        added_tokens -= framing if before else 0
    elif not before:
        added_tokens += framing
    removed_tokens = 0
    for message in before:
        key = _key(message)
        if remaining[key] <= 0:
            continue
        remaining[key] -= 1
        removed_tokens += counter.count_message(message)
        if removed_tokens > added_tokens:
            break
    return removed_tokens - added_tokens
