"""A value that its sentence labels before a colon: "here is the new Firecrawl API key: fc-…".

Probes C and D (``benchmarks/redaction_probe_c.py``, ``redaction_probe_d.py``) name each
credential in two ways: an env line (``FIRECRAWL_API_KEY=…``), which the assignment rules
read, and a sentence, ``here is the new Firecrawl API key you asked for: fc-…``. The
sentence leaked for 11 of D's 45 kinds and 9 of C's 51, every value that no catalogue
entry and no prefixed-token rule knows by its shape: no rule read it. The assignment
rules need the secret's name right before the ``:`` (``api_key: …``), the prose rule
needs a verb (``the token is …``), and the bare-key rule (:mod:`.redact_bare`), the only
one that reads a naming word further away, takes only runs of letters and digits. A
value with a separator (``fc-``, ``xapp-1-…``, ``dt0c01.….…``, base64 with ``+`` and
``/``, a UUID) is several such runs, each refused as a piece of something longer, and
hexadecimal or one-case runs under 32 characters are refused as digests, however plainly
the sentence names them.

This rule reads that shape: a credential's name (``token``, ``secret``, ``password``,
``credentials``, ``PAT``, or a kind of key: ``API key``, ``access key``, ``secret key``,
``private key`` ...), at most eight words of the same sentence, a colon, and one value. The
value goes when it looks like a credential and not like what else follows such a colon:

- random: the tests of :func:`~.redact_values.looks_secret` (letters and digits, not a
  chain of short words or a version, entropy near random text's) and, over its letters and
  digits, as many of the pairs random text forms (two capitals, a letter beside a digit)
  as :mod:`.redact_generic` asks of a prefixed token's body, or both cases in lowercase
  runs too short for words and no CamelCase;
- not a file name, a host, a path or an identifier: ``settings2.py``, ``api2.example.com``,
  ``src/app2/x.py``, ``AWS_KEY_2`` and ``api_key_v2`` are left;
- the words before the colon do not say it is something else: ``token id:``, ``API key
  name:``, ``secret's sha256:``, ``token endpoint:`` stay.
"""

from __future__ import annotations

import re

from .redact_generic import random_pairs, short_lower_runs
from .redact_values import REDACTED, announces_placeholder, looks_secret

__all__ = [
    "LABELLED",
    "LABELLED_PAT",
    "LABEL_ANCHORS",
    "labelled_replacement",
    "labelled_secret",
]

_KEY_KINDS = (
    "api", "access", "secret", "private", "auth", "app", "application", "account", "client",
    "master", "signing", "encryption", "service", "admin", "deploy", "storage",
    # words that make any key a credential: whose it is, what it is for, where it is live
    "sdk", "server", "license", "licence", "product", "project", "org", "team", "user", "bot",
    "webhook", "live", "prod", "production", "root", "integration", "ingest", "write",
    "management", "partner", "merchant", "developer", "personal", "consumer", "subscription",
)  # fmt: skip
"""The kinds of key a sentence names (``API key``, ``app key``, ``secret_key``): ``key``
alone names a cache key or a sort key as often as a credential."""


def _kind_before() -> str:
    """Lookbehinds for a kind of key right before ``key`` (``API key``, ``api_key``,
    ``APIKEY``): one per length, since a lookbehind has a fixed width."""
    by_length: dict[int, list[str]] = {}
    for kind in _KEY_KINDS:
        by_length.setdefault(len(kind), []).append(kind)
    behind = []
    for kinds in by_length.values():
        either = "|".join(kinds)
        behind += [f"(?<=(?:{either})[ _-])", f"(?<={either})"]
    return "|".join(behind)


# one to eight words of the name's sentence (none ending it), a colon, and one value (in
# quotes or backticks, or bare)
_TAIL = (
    r"(?![A-Za-z0-9_])(?:'s)?"
    r"(?P<words>(?:[ \t]+[^\s:=]{1,40}+(?<![.;!?])){1,8}?)"
    r"[ \t]*:[ \t]+[`'\"]?"
    r"(?P<value>[A-Za-z0-9][A-Za-z0-9+/=_.~%:$|-]{7,400}+)(?![^\s`'\"),;!?\]}>])"
)
LABEL_ANCHORS = ("token", "secret", "pass", "pwd", "cred", "key")
"""Every name of :data:`LABELLED` holds one of these at its start (found in the lowered text;
a kind of key is checked behind ``key``). The assignment, weak-name and prose rules seek
them too, so finding them costs this rule nothing more."""

# a colon on the line, looked for first: most names it is tried at have none
_COLON_AHEAD = r"(?=[^\n:]{1,320}+:)"
# a name is a word of letters that a space follows (``api_key":`` and ``TOKEN=`` fail here)
_WORD_AHEAD = r"(?=[a-z]{3,11}+(?:'s)?[ \t])"
# a word that may end a compound (authtoken, clientsecret, dbpassword), or a kind of key
_NAMES = (
    r"(?:tokens?|secrets?|passwords?|passwd|passphrase|passcode|pwd|credentials?|creds"
    rf"|(?:{_kind_before()})keys?)"
)
LABELLED = re.compile(_WORD_AHEAD + _COLON_AHEAD + _NAMES + _TAIL, re.IGNORECASE)
"""A credential's name, up to eight words, ``:`` and a value; :func:`labelled_replacement`
decides."""

LABELLED_PAT = re.compile(_COLON_AHEAD + r"(?<![A-Za-z0-9])PATs?" + _TAIL)
"""The same after ``PAT`` (a personal access token), in capitals: ``pat`` is a pattern or a
path as often."""

_NOT_A_SECRET = re.compile(
    r"(?<![a-z0-9])(?:ids?|uuid|sha\d*|md5|hash(?:es)?|digest|checksum|fingerprints?|commit|"
    r"revision|public|pubkey|nonce|salt|names?|types?|prefix|paths?|files?|url|uri|endpoint|"
    r"length|count|usage|scopes?|format|header|field|variable|env|column|label)(?![a-z0-9])",
    re.IGNORECASE,
)
"""Words that, between the name and the colon, say the value is something else: the
token's id, the key's name, the secret's digest, the password's length."""

_IDENTIFIER = re.compile(r"[A-Za-z]++[0-9]*+(?:_(?:[A-Za-z]++[0-9]*+|[0-9]++))++")
"""A snake-case name (``AWS_KEY_2``, ``api_key_v2``): words, each maybe numbered."""


_CAMEL_WORDS = re.compile(r"(?:[A-Z][a-z]{3,}+){2}")
"""Two capitalised words in a row: a CamelCase name (``CartPoleWithProtobuf2``)."""


def labelled_secret(value: str) -> bool:
    """Whether ``value``, labelled by a credential's name before a colon, is one."""
    if announces_placeholder(value) or not looks_secret(value):
        return False
    if "/" in value and any(c in value for c in "._-~%") and not value.endswith("="):
        return False  # a path, or a URL without its scheme (base64 ends in padding)
    if ":" in value and max(len(part) for part in value.split(":")) < 16:
        return False  # a time, a host and port, a ``namespace:name`` (a key in a cache)
    last = value.rsplit(".", 1)[-1]
    if "." in value and last.isalpha() and (len(last) <= 10 or last.islower()):
        return False  # a file name or a host
    if _IDENTIFIER.fullmatch(value):
        return False
    core = "".join(c for c in value if c.isalnum())
    if random_pairs(core) * 8 >= len(core):
        return True
    # both cases and few digits (``qk7-DhU4XgaOzyx…``): lowercase runs too short for words
    mixed = any(c.isupper() for c in core) and any(c.islower() for c in core)
    return mixed and short_lower_runs(core) and not _CAMEL_WORDS.search(value)


def labelled_replacement(match: re.Match[str]) -> str:
    """The name and its sentence kept, the value redacted (a full stop after it kept)."""
    value = match.group("value")
    trimmed = value.rstrip(".")
    if _NOT_A_SECRET.search(match.group("words")) or not labelled_secret(trimmed):
        return match.group(0)
    head = match.group(0)[: match.start("value") - match.start()]
    return f"{head}{REDACTED}{value[len(trimmed) :]}"
