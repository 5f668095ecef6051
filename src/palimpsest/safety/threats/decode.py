"""Decode what is encoded inside a note, so the scanner also reads what a model could decode.

Models decode base64, hex and percent-encoding on request ("decode this and follow it"), so
an instruction written ``aWdub3JlIGFsbCBwcmV2aW91cyBpbnN0cnVjdGlvbnM=`` is still an
instruction. :func:`decoded_views` finds such runs and returns their decoded text, which the
scanner checks with the same rules as the note itself.

The work is bounded, because notes can be large and attacker-controlled: at most
:data:`MAX_RUNS` runs of at most :data:`MAX_RUN_CHARS` characters each are decoded, at most
:data:`MAX_DECODED_CHARS` characters of decoded text are kept, and decoding recurses
:data:`MAX_DEPTH` levels (base64 inside base64) and no further. Only decodings that are
mostly printable text are kept: keys, hashes and binary blobs decode to noise and are
dropped, which is what keeps a git SHA or an API token from reading as an attack.
"""

from __future__ import annotations

import base64
import binascii
import re
from urllib.parse import unquote

__all__ = [
    "MAX_DECODED_CHARS",
    "MAX_DEPTH",
    "MAX_RUNS",
    "MAX_RUN_CHARS",
    "decoded_views",
]

MAX_RUNS = 128
MAX_RUN_CHARS = 16_384
MAX_DECODED_CHARS = 65_536
MAX_DEPTH = 2
_MIN_PRINTABLE = 0.9

# Runs long enough to carry a phrase: 16 base64 characters decode to 12 bytes.
_BASE64 = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{16,}={0,2}(?![A-Za-z0-9+/=_-])")
_HEX = re.compile(
    r"(?<![0-9A-Fa-f])(?:(?:0x)?[0-9A-Fa-f]{2}[\s,:]?){8,}(?![0-9A-Fa-f])"
    r"|(?:\\x[0-9A-Fa-f]{2}){6,}"
)
# Whitespace-free tokens: a regex that scans for "%XX" runs from every start position is
# quadratic on long text without any "%", so tokens are cut by str.split instead.
_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")


class _Tokens:
    """Just enough of a compiled pattern for :func:`_decode_once`: tokens with 3+ escapes."""

    @staticmethod
    def finditer(text: str) -> list[re.Match[str]]:
        if text.count("%") < 3:
            return []
        found = []
        for token in text.split():
            if token.count("%") >= 3 and len(_PERCENT_ESCAPE.findall(token[:MAX_RUN_CHARS])) >= 3:
                match = re.match(r".*", token[:MAX_RUN_CHARS], re.DOTALL)
                if match is not None:
                    found.append(match)
        return found


_PERCENT = _Tokens()


def _as_text(raw: bytes) -> str | None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not text.strip():
        return None
    if not any(c.isalpha() for c in text):
        return None
    if text.isprintable():
        return text
    printable = sum(1 for c in text if c.isprintable() or c in "\n\r\t")
    return text if printable / len(text) >= _MIN_PRINTABLE else None


def _base64_text(run: str) -> str | None:
    if run.islower() or run.isupper() or run.isdigit():
        return None  # identifiers and constants; base64 of text mixes cases
    padded = run + "=" * (-len(run) % 4)
    for decoder in (base64.b64decode, base64.urlsafe_b64decode):
        try:
            text = _as_text(decoder(padded))
        except (binascii.Error, ValueError):
            continue
        if text is not None:
            return text
    return None


def _hex_text(run: str) -> str | None:
    digits = re.sub(r"\\x|0x|[\s,:]", "", run)
    if len(digits) % 2:
        digits = digits[:-1]
    try:
        return _as_text(bytes.fromhex(digits))
    except ValueError:
        return None


def _percent_text(run: str) -> str | None:
    if run.count("%") < 3:
        return None
    decoded = unquote(run.replace("+", " "))
    return decoded if decoded != run else None


_DECODERS = (
    ("base64", _BASE64, _base64_text),
    ("hex", _HEX, _hex_text),
    ("percent-encoded", _PERCENT, _percent_text),
)


def _decode_once(text: str, budget: list[int]) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for kind, pattern, decoder in _DECODERS:
        for match in pattern.finditer(text):
            if budget[0] <= 0 or budget[1] <= 0:
                return found
            run = match.group(0)[:MAX_RUN_CHARS]
            budget[0] -= 1
            decoded = decoder(run)
            if decoded:
                decoded = decoded[: budget[1]]
                budget[1] -= len(decoded)
                found.append((kind, decoded))
    return found


def decoded_views(text: str) -> list[tuple[str, str]]:
    """``(how, decoded text)`` for every encoded run found in ``text``, up to two levels deep.

    ``how`` names the encoding path (``"base64"``, ``"base64>hex"``) for the error message.
    """
    budget = [MAX_RUNS, MAX_DECODED_CHARS]  # runs tried, characters kept
    views: list[tuple[str, str]] = []
    frontier: list[tuple[str, str]] = [("", text)]
    for _ in range(MAX_DEPTH):
        next_frontier: list[tuple[str, str]] = []
        for how, source in frontier:
            for kind, decoded in _decode_once(source, budget):
                label = f"{how}>{kind}" if how else kind
                views.append((label, decoded))
                next_frontier.append((label, decoded))
        frontier = next_frontier
        if not frontier:
            break
    return views
