"""Token estimates before a call: a rough chars/4 rule and an exact o200k/cl100k count.

Compression decisions need a number before the provider has reported one. The rough rule
(``len // 4``) is what the reference design uses for every threshold and budget, so its
figures are reproducible and labelled "rough". The exact counter uses the real BPE
vocabularies through ``bpe-openai`` (offline; tiktoken would download them) and caches each
message's count by a digest of its serialized value, so estimating a growing transcript
again only tokenizes the new messages. An agent loop that asks every turn what its request
costs keeps a :class:`~palimpsest.conversation_tokens.ConversationTokens` per conversation,
which measures only the messages appended since the last question.
"""

from __future__ import annotations

import functools
import hashlib
import json
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any, Protocol, runtime_checkable

from .messages.content import IMAGE_PART_TYPES, call_arguments, part_type, tool_calls_of

__all__ = [
    "CHARS_PER_TOKEN",
    "IMAGE_TOKENS",
    "ExactCounter",
    "MessageSizer",
    "RoughCounter",
    "TokenCounter",
    "content_budget_chars",
    "estimate_messages_tokens_rough",
    "estimate_request_tokens_rough",
    "estimate_tokens_cjk",
    "estimate_tokens_rough",
    "estimate_tools_tokens",
    "exact_fields",
    "message_budget_tokens",
    "message_chars",
    "serialize_for_estimate",
]

CHARS_PER_TOKEN = 4
"""The rough rule: one token per four characters (TK-01)."""

IMAGE_TOKENS = 1600
"""Every image part counts as this many tokens, whatever its payload (TK-05)."""

IMAGE_BUDGET_CHARS = IMAGE_TOKENS * CHARS_PER_TOKEN
"""The same image cost in characters, for the compressor's per-message budget (CC-40)."""

BUDGET_MESSAGE_OVERHEAD = 10
"""Tokens added per message in tail-budget walks for role and metadata (CC-39)."""

EXACT_CACHE_SIZE = 65_536
"""Per-message memo entries kept by :class:`ExactCounter`."""

_IMAGE_STUB = "[stripped]"
_ENCODE_CHUNK = 200_000  # bpe-openai refuses a single input of 1M characters or more


def estimate_tokens_rough(text: str | None) -> int:
    """Rough tokens of a text: ``len(text) // 4``; 0 for empty or missing text."""
    if not text:
        return 0
    return len(text) // CHARS_PER_TOKEN


_DENSE_RANGES = (
    (0x1100, 0x11FF),
    (0x2E80, 0x9FFF),
    (0xA960, 0xA97F),
    (0xAC00, 0xD7AF),
    (0xF900, 0xFAFF),
    (0xFF00, 0xFFEF),
)


def _is_dense(ch: str) -> bool:
    code = ord(ch)
    return any(lo <= code <= hi for lo, hi in _DENSE_RANGES)


def estimate_tokens_cjk(text: str | None) -> int:
    """CJK-aware rough tokens (TK-06): dense CJK/Hangul characters count one token each.

    ASCII text rounds up (``(len + 3) // 4``); other characters add ``(utf8 bytes + 3) // 4``.
    """
    if not text:
        return 0
    if text.isascii():
        return (len(text) + 3) // 4
    dense = 0
    rest: list[str] = []
    for ch in text:
        if _is_dense(ch):
            dense += 1
        else:
            rest.append(ch)
    other = "".join(rest)
    return dense + ((len(other.encode("utf-8")) + 3) // 4 if other else 0)


def _stub_images(value: Any) -> Any:
    """A copy of ``value`` with image payloads replaced by a short stub (base64 is not text)."""
    if isinstance(value, list):
        return [_stub_images(v) for v in value]
    if isinstance(value, Mapping):
        if part_type(value) in IMAGE_PART_TYPES:
            return {"type": value.get("type"), "image": _IMAGE_STUB}
        return {k: _stub_images(v) for k, v in value.items()}
    return value


def _count_images(value: Any) -> int:
    if isinstance(value, list):
        return sum(_count_images(v) for v in value)
    if isinstance(value, Mapping):
        if part_type(value) in IMAGE_PART_TYPES:
            return 1
        return sum(_count_images(v) for v in value.values())
    return 0


def serialize_for_estimate(message: Mapping[str, Any]) -> tuple[str, int]:
    """The serialized form the rough estimate measures, and the message's image count.

    :func:`message_chars` computes this text's length without building it (a test holds the
    two equal); :class:`ExactCounter` keys its per-message memo on the text itself.
    Internal ``_`` keys are left out (they never reach a provider, TK-07); image parts are
    stubbed so a base64 payload is never counted as text (TK-05).
    """
    visible = {k: v for k, v in message.items() if not str(k).startswith("_")}
    images = _count_images(visible)
    if images:
        visible = _stub_images(visible)
    return json.dumps(visible, ensure_ascii=False, default=str), images


def _escaped_len(text: str) -> int:
    """``len(json.dumps(text, ensure_ascii=False))``.

    Not memoized: a process-wide cache keyed by text would keep every transcript's strings
    alive after the transcript is gone. Callers that measure a growing conversation again
    and again keep per-message sizes in a :class:`~palimpsest.ConversationTokens` instead.
    """
    # For ASCII text without DEL (which only the ASCII escaper writes as \u007f) both
    # escapers give the same output, and the ASCII one is ~30% faster in CPython.
    if text.isascii() and "\x7f" not in text:
        return len(encode_basestring_ascii(text))
    return len(encode_basestring(text))


def _json_len(value: Any) -> tuple[int, int]:
    """``(chars, images)`` of ``json.dumps(value, ensure_ascii=False, default=str)``.

    Image parts are measured as their stub and counted separately (TK-05). Equal to the
    length of the real serialization; a property test holds the two together. Dispatches
    on exact types first because this runs over every message of long transcripts.
    """
    kind = type(value)
    if kind is str:
        return _escaped_len(value), 0
    if kind is dict:
        return _mapping_len(value)
    if kind is list or kind is tuple:
        return _sequence_len(value)
    if value is None or value is True:
        return 4, 0
    if value is False:
        return 5, 0
    if isinstance(value, str):
        return _escaped_len(value), 0
    if isinstance(value, int):
        return len(int.__repr__(value)), 0
    if isinstance(value, float):
        return len(json.dumps(value)), 0
    if isinstance(value, list | tuple):
        return _sequence_len(value)
    if isinstance(value, Mapping):
        return _mapping_len(value)
    return _escaped_len(str(value)), 0


def _sequence_len(value: list[Any] | tuple[Any, ...]) -> tuple[int, int]:
    chars, images = 2 + 2 * max(0, len(value) - 1), 0
    for item in value:
        c, i = _json_len(item)
        chars += c
        images += i
    return chars, images


def _mapping_len(value: Mapping[Any, Any], *, skip_internal: bool = False) -> tuple[int, int]:
    if not skip_internal and part_type(value) in IMAGE_PART_TYPES:
        stub = {"type": value.get("type"), "image": _IMAGE_STUB}
        return len(json.dumps(stub, ensure_ascii=False, default=str)), 1
    chars, images, count = 2, 0, 0
    for key, item in value.items():
        name = key if type(key) is str else str(key)
        if skip_internal and name.startswith("_"):
            continue
        c, i = _json_len(item)
        chars += _escaped_len(name) + 2 + c
        images += i
        count += 1
    return chars + 2 * max(0, count - 1), images


def message_chars(message: Mapping[str, Any]) -> tuple[int, int]:
    """``(chars, images)`` the rough estimate measures for one message (TK-02, TK-05, TK-07).

    Internal ``_`` keys are left out because they never reach a provider.
    """
    if type(message) is not dict:
        return _mapping_len(message, skip_internal=True)
    # The same walk as _mapping_len, inlined for the common case (string values, keys
    # that are identifiers) because it runs once per message of every estimate.
    chars, images, count = 2, 0, 0
    for key, item in message.items():
        if type(key) is not str:
            return _mapping_len(message, skip_internal=True)
        if key.startswith("_"):
            continue
        # An identifier holds no character JSON escapes: its quoted form is len + 2.
        chars += (len(key) + 4) if key.isidentifier() else (_escaped_len(key) + 2)
        if type(item) is str:
            chars += _escaped_len(item)
        elif item is None:
            chars += 4
        else:
            c, i = _json_len(item)
            chars += c
            images += i
        count += 1
    return chars + 2 * max(0, count - 1), images


def estimate_messages_tokens_rough(messages: Iterable[Mapping[str, Any]]) -> int:
    """Rough tokens of a message list: total serialized characters // 4, taken once (TK-02).

    Images add :data:`IMAGE_TOKENS` each.
    """
    chars = 0
    images = 0
    for msg in messages:
        c, i = message_chars(msg)
        chars += c
        images += i
    return chars // CHARS_PER_TOKEN + images * IMAGE_TOKENS


class MessageSizer:
    """Rough token estimates with a per-message memo, for one pass of work over a list.

    Keyed by message identity and holding a reference to each message, so it is only
    correct while the messages are not modified: create one per operation (one
    ``compress`` call), never keep it across turns.
    """

    def __init__(self) -> None:
        self._sizes: dict[int, tuple[Mapping[str, Any], int, int]] = {}

    def tokens(self, messages: Iterable[Mapping[str, Any]], *, stop_at: int | None = None) -> int:
        """Rough tokens of ``messages``; with ``stop_at``, counting stops once the total
        reaches it (the result is then at least ``stop_at``, not the whole total)."""
        chars = 0
        images = 0
        for msg in messages:
            hit = self._sizes.get(id(msg))
            if hit is None or hit[0] is not msg:
                c, i = message_chars(msg)
                hit = (msg, c, i)
                self._sizes[id(msg)] = hit
            chars += hit[1]
            images += hit[2]
            if stop_at is not None and chars // CHARS_PER_TOKEN + images * IMAGE_TOKENS >= stop_at:
                break
        return chars // CHARS_PER_TOKEN + images * IMAGE_TOKENS


def estimate_tools_tokens(tools: Sequence[Mapping[str, Any]] | None) -> int:
    """Rough tokens of tool schemas (TK-04): name + description + compact parameters JSON."""
    if not tools:
        return 0
    total = 0
    for tool in tools:
        fn = tool.get("function") if tool.get("type") == "function" else None
        spec = fn if isinstance(fn, Mapping) else tool
        name = str(spec.get("name") or "")
        description = str(spec.get("description") or "")
        params = spec.get("parameters", spec.get("input_schema", {}))
        params_json = json.dumps(params, ensure_ascii=False, separators=(",", ":"), default=str)
        total += len(name) + len(description) + len(params_json)
    return (total + 3) // CHARS_PER_TOKEN


def estimate_request_tokens_rough(
    messages: Iterable[Mapping[str, Any]],
    system_prompt: str = "",
    tools: Sequence[Mapping[str, Any]] | None = None,
) -> int:
    """Rough tokens of a whole request: system prompt + messages + tool schemas (TK-03)."""
    return (
        estimate_tokens_rough(system_prompt)
        + estimate_messages_tokens_rough(messages)
        + estimate_tools_tokens(tools)
    )


def content_budget_chars(content: Any) -> int:
    """Characters of a content value for tail-budget walks (CC-39, CC-40).

    Strings count by length, ``None`` as 0, lists by their text parts plus 6,400 characters
    per image (base64 never counts as text), anything else by ``len(str(x))``.
    """
    if content is None:
        return 0
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):
        total = 0
        for part in content:
            if isinstance(part, str):
                total += len(part)
            elif isinstance(part, Mapping):
                if part_type(part) in IMAGE_PART_TYPES:
                    total += IMAGE_BUDGET_CHARS
                else:
                    text = part.get("text")
                    total += len(text) if isinstance(text, str) else 0
            else:
                total += len(str(part))
        return total
    return len(str(content))


def message_budget_tokens(message: Mapping[str, Any]) -> int:
    """Per-message estimate used by every tail walk (CC-39).

    ``content_chars // 4 + 10``, plus ``len(arguments) // 4`` for each tool call.
    """
    tokens = content_budget_chars(message.get("content")) // CHARS_PER_TOKEN
    tokens += BUDGET_MESSAGE_OVERHEAD
    for call in tool_calls_of(message):
        tokens += len(call_arguments(call)) // CHARS_PER_TOKEN
    return tokens


def exact_fields(message: Mapping[str, Any]) -> tuple[list[str], int]:
    """The texts :class:`ExactCounter` tokenizes for one message, and its image count.

    Shared with :mod:`palimpsest.deciding_count`, whose upper bound must measure exactly
    what the exact count tokenizes.
    """
    fields: list[str] = [str(message.get("role") or "")]
    content = message.get("content")
    images = 0
    if isinstance(content, str):
        fields.append(content)
    elif isinstance(content, list):
        images = _count_images(content)
        for part in content:
            if isinstance(part, str):
                fields.append(part)
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                fields.append(part["text"])
    elif content is not None:
        fields.append(json.dumps(content, ensure_ascii=False, default=str))
    for key in ("name", "tool_call_id"):
        if isinstance(message.get(key), str):
            fields.append(message[key])
    for call in tool_calls_of(message):
        fn = call.get("function") if isinstance(call, Mapping) else None
        if isinstance(fn, Mapping):
            fields.append(str(fn.get("name") or ""))
        fields.append(call_arguments(call))
    return fields, images


@runtime_checkable
class TokenCounter(Protocol):
    """Anything that can count a text and a message list; the compressor accepts one."""

    name: str

    def count_text(self, text: str) -> int: ...

    def count_messages(self, messages: Sequence[Mapping[str, Any]]) -> int: ...


class RoughCounter:
    """The chars/4 rule behind the :class:`TokenCounter` interface (the default)."""

    name = "rough"

    def count_text(self, text: str) -> int:
        return estimate_tokens_rough(text)

    def count_messages(self, messages: Sequence[Mapping[str, Any]]) -> int:
        return estimate_messages_tokens_rough(messages)

    def count_request(
        self,
        messages: Sequence[Mapping[str, Any]],
        system_prompt: str = "",
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> int:
        return estimate_request_tokens_rough(messages, system_prompt, tools)


@functools.cache
def _load_encoding(name: str) -> Any:
    """The BPE vocabulary ``name``, built once per process (it holds no conversation data:
    every counter shares it; building one costs ~40 ms, the first ~0.5-1 s with the import)."""
    with warnings.catch_warnings():
        # bpe-openai loads its vocabularies through a deprecated importlib.resources call.
        warnings.simplefilter("ignore", DeprecationWarning)
        from bpe_openai import get_encoding

        return get_encoding(name)


class ExactCounter:
    """Exact BPE counts with ``o200k_base`` (GPT-4o and later) or ``cl100k_base`` (GPT-4).

    Message counts follow the chat format: each message costs its text fields plus
    ``tokens_per_message`` framing tokens, and a reply is primed with ``reply_priming``
    tokens. Each message's count is memoized by a digest of its serialized value, so a
    changed message is always re-counted and an unchanged one never is.
    """

    tokens_per_message = 3
    reply_priming = 3

    def __init__(self, encoding: str = "o200k_base", cache_size: int = EXACT_CACHE_SIZE) -> None:
        self.name = encoding
        self._encoding = _load_encoding(encoding)
        self._cache: OrderedDict[bytes, int] = OrderedDict()
        self._cache_size = cache_size
        self.encoded_messages = 0
        """How many messages were actually tokenized (cache misses); for tests and stats."""

    def count_text(self, text: str) -> int:
        if not text:
            return 0
        total = 0
        start = 0
        while start < len(text):
            end = min(len(text), start + _ENCODE_CHUNK)
            if end < len(text):
                cut = text.rfind("\n", start, end)
                end = cut + 1 if cut > start else end
            total += len(self._encoding.encode_ordinary(text[start:end]))
            start = end
        return total

    def count_message(self, message: Mapping[str, Any]) -> int:
        serialized, _ = serialize_for_estimate(message)
        key = hashlib.blake2b(serialized.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            return cached
        fields, images = exact_fields(message)
        count = self.tokens_per_message + sum(self.count_text(f) for f in fields)
        count += images * IMAGE_TOKENS
        self.encoded_messages += 1
        self._cache[key] = count
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return count

    def count_messages(self, messages: Sequence[Mapping[str, Any]]) -> int:
        if not messages:
            return 0
        return sum(self.count_message(m) for m in messages) + self.reply_priming

    def count_request(
        self,
        messages: Sequence[Mapping[str, Any]],
        system_prompt: str = "",
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> int:
        total = self.count_messages(messages)
        if system_prompt:
            total += self.tokens_per_message + self.count_text(system_prompt)
        if tools:
            total += self.count_text(json.dumps(list(tools), ensure_ascii=False, default=str))
        return total
