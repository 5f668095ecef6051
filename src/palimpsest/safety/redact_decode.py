"""Base64 runs that decode to text holding a secret are secrets too.

A ``.env`` file or a JSON credential pasted through ``base64`` (a Kubernetes secret, a CI
variable, ``echo … | base64 -d``) shows no name and no vendor prefix: only the decoded text
does. :func:`redact_encoded` finds runs of 32+ base64 characters, decodes those that are
valid base64 of printable UTF-8 text, runs the rules on the decoded text, and replaces the
*whole run* when they find anything. Binary payloads (images, hashes, random keys) fail the
printable test at once and cost one decode of their first bytes; ordinary base64 text
(``aGVsbG8…`` -> "hello from the build script") holds no secret and stays.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable

from .redact_values import REDACTED

__all__ = ["redact_encoded"]

_RUN = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{32,}+={0,2}(?![A-Za-z0-9+/=_-])")
_MAX_RUN = 65_536
_PROBE = 48  # base64 characters decoded first: 36 bytes tell text from binary


def _printable(raw: bytes) -> str | None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not text or any(not (c.isprintable() or c in "\n\r\t") for c in text):
        return None
    return text


def _decode(run: str) -> str | None:
    body = run.rstrip("=")
    if len(body) % 4 == 1:
        return None
    urlsafe = "-" in body or "_" in body
    if urlsafe and ("+" in body or "/" in body):
        return None

    def decode(chunk: str) -> bytes:
        padded = chunk + "=" * (-len(chunk) % 4)
        if urlsafe:
            return base64.urlsafe_b64decode(padded)
        return base64.b64decode(padded, validate=True)

    try:
        if _printable(decode(body[:_PROBE])) is None:
            return None
        return _printable(decode(body))
    except (binascii.Error, ValueError):
        return None


def redact_encoded(text: str, inner: Callable[[str], str], found: list[str]) -> str:
    """``text`` with every base64 run whose decoded text ``inner`` changes replaced whole."""
    if len(text) < 32:
        return text

    def replace(match: re.Match[str]) -> str:
        run = match.group(0)
        if len(run) > _MAX_RUN:
            return run
        decoded = _decode(run)
        if decoded is None or inner(decoded) == decoded:
            return run
        found.append(run)
        return REDACTED

    return _RUN.sub(replace, text)
