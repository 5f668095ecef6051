"""Credentials that a file format or a scheme carries, recognised by the format around them.

Probe C (``benchmarks/redaction_probe_c.py``) found secrets that no name or vendor prefix
marks, because the format itself says what they are:

- a ``.netrc`` entry (``machine host login user password VALUE``, on one line or several:
  the GNU inetutils and curl manuals): the word ``password`` is followed by a space, not the
  ``=`` or ``:`` the assignment rules read;
- an HTTP Basic credential (RFC 7617) outside an ``Authorization`` header ("called with
  Basic dXNl…"): base64 of ``user:password``, confirmed by decoding it;
- a PuTTY private key file (PuTTY manual, appendix C): the base64 lines after
  ``Private-Lines: N``;
- an SSH2 (RFC 4716 style, ``---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----``) armour, which
  uses four dashes and a space where PEM uses five.

Each pattern starts at a literal anchor (:class:`~.redact._Pass`) and keeps the words of
the format, replacing only the value.
"""

from __future__ import annotations

import base64
import binascii
import re

from .redact_values import REDACTED

__all__ = [
    "BASIC_CREDENTIAL",
    "NETRC_PASSWORD",
    "PUTTY_PRIVATE_LINES",
    "SSH2_PRIVATE_KEY",
    "basic_replacement",
    "kept_head_replacement",
]

NETRC_PASSWORD = re.compile(
    r"((?:^|(?<=[`'\"]))[ \t]*(?:machine[ \t\r\n]+\S+|default)(?:[ \t\r\n]+(?:login|account)[ \t\r\n]+\S+){0,2}"
    r"[ \t\r\n]+password[ \t\r\n]+)(?!\[REDACTED\])[^\s`'\"]+",
    re.MULTILINE,
)
"""A ``.netrc`` entry's password, after its ``machine`` (or ``default``) and ``login``; the
entry starts a line (or follows a quote or backtick, as in prose quoting the file)."""

BASIC_CREDENTIAL = re.compile(r"(\bBasic[ \t]+)([A-Za-z0-9+/]{8,}+={0,2})(?![A-Za-z0-9+/=])")
"""``Basic`` and a base64 run: :func:`basic_replacement` decodes it first."""

PUTTY_PRIVATE_LINES = re.compile(
    r"(Private-Lines:[ \t]*[0-9]{1,3}\r?\n)(?:[A-Za-z0-9+/=]++\r?\n)*[A-Za-z0-9+/=]++(?=\r?\n|\Z)"
)
"""The private half of a PuTTY ``.ppk`` file: the base64 lines after its count."""

SSH2_PRIVATE_KEY = re.compile(
    r"(---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----)(?!\[REDACTED\])"
    r"(?:.*?(---- END SSH2 ENCRYPTED PRIVATE KEY ----)|.*)",
    re.DOTALL,
)
"""An SSH2 private key armour; everything between the markers (or to the text's end)."""


def basic_replacement(match: re.Match[str]) -> str:
    """The ``Basic`` word kept and its value redacted, when the value decodes to
    ``user:password`` (printable, with a colon); anything else is left."""
    value = match.group(2)
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
        text = decoded.decode("utf-8")
    except (binascii.Error, ValueError):
        return match.group(0)
    if ":" not in text or not text.isprintable() or text.startswith(":"):
        return match.group(0)
    return f"{match.group(1)}{REDACTED}"


def kept_head_replacement(match: re.Match[str]) -> str:
    """The format's own words (group 1, and group 2 when the pattern has one) kept, the
    value between them redacted."""
    tail = match.group(2) if (match.re.groups or 0) >= 2 else None
    return f"{match.group(1)}{REDACTED}{tail or ''}"
