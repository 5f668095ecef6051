"""Credentials with no prefix at all, recognised by randomness *and* a word that names them.

Some vendors issue keys that are nothing but random characters: a 40-character Cohere key,
Etherscan's 34 capitals and digits, an Okta token, Azure OpenAI's 32 hexadecimal digits.
No shape tells them from a digest, an id or a base64 blob, which code is full of, so
randomness alone is not evidence (entropy rules are where scanners' false positives come
from). This module asks for two things at once:

- the run is random: mixed case and digits with the letter/digit pairs random text makes
  (the same test as :mod:`.redact_generic`'s prefixed tokens), or one case of letters with
  digits alternating as often as chance makes them, or hexadecimal of a key's length;
- the same sentence names a credential near it: ``token``, ``secret``, ``password``,
  ``credential``, ``api key``, ``access key``, ``bearer``, ``login``/``logs in``/``sign in``,
  or the verbs said of keys (``revoke``, ``rotate``, ``leaked``). Mixed-case runs also count ``key`` alone;
  hexadecimal does not, since "the cache key 5d41…" names a digest.

A run right after a word that names an identifier or digest (``sha256``, ``commit``,
``hash``, ``id``, ``fingerprint``, ``public``) is not a secret whatever else the sentence
says. A key pasted with no such word ("use this one: X") is caught only when it is long
and random in both cases (:func:`random_run_replacement`) or base64 of a documented key
length (:func:`base64_key_replacement`); shorter, one-case and hexadecimal ones are left.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from itertools import pairwise

from .redact_generic import looks_like_token
from .redact_values import REDACTED, entropy

__all__ = [
    "BARE_ANCHORS",
    "BARE_TOKEN",
    "BASE64_KEY",
    "RANDOM_RUN",
    "RUN_ANCHORS",
    "bare_replacement",
    "base64_key_replacement",
    "random_letters",
    "random_run_replacement",
]

BARE_TOKEN = re.compile(r"[A-Za-z0-9]{24,}+")
"""A run of 24 or more letters and digits. :func:`bare_replacement` keeps only one that
stands alone (:func:`_alone`): not part of a path, a URL, a dotted name, an identifier
with underscores or a base64 blob with ``+/=``. (Checking the boundaries in Python, on the
few runs found, is twice as fast as lookarounds the engine tries at every position.)"""
_MAX_RUN = 200
_BEFORE_NOT = frozenset("_+/=.:@$%&\\-")
_AFTER_NOT = frozenset("_+/=@-")


def _alone(text: str, start: int, end: int) -> bool:
    if end - start > _MAX_RUN or (start and text[start - 1] in _BEFORE_NOT):
        return False
    after = text[end : end + 2]
    return not after or (
        after[0] not in _AFTER_NOT and not (after[0] == "." and after[1:2].isalnum())
    )


_STRONG = (
    r"tokens?|secrets?|passwords?|passwd|passphrase|credentials?|creds|api[ _-]?keys?|apikey|"
    r"access[ _-]?keys?|auth|authenticat\w*|bearer|log(?:s|ged|ging)?[ -]?in|sign(?:s|ed)?[ -]?in|"
    r"revoked?|revoking|rotated?|rotating|leaked|leak"
)
_STRONG_WORD = re.compile(rf"(?<![a-z0-9])(?:{_STRONG})(?![a-z0-9])", re.IGNORECASE)
_KEY_WORD = re.compile(rf"(?<![a-z0-9])(?:{_STRONG}|keys?)(?![a-z0-9])", re.IGNORECASE)
BARE_ANCHORS = (
    "token", "secret", "passw", "passphrase", "credential", "creds", "api", "access", "auth",
    "bearer", "log", "sign", "revok", "rotat", "leak", "key",
)  # fmt: skip
"""Some evidence word holds one of these (the pass is skipped when none is in the text)."""

_NOT_SECRET_BEFORE = re.compile(
    r"(?<![a-z0-9])(?:sha\d*|md5|hash|digest|checksum|commit|revision|rev|etag|id|ids|uuid|"
    r"fingerprint|public|pubkey|nonce|salt|hex|base64|block|tx|address|addr)"
    r"(?:[ \t_-]+(?:key|hash|digest|id|sum))?"
    r"[\"']?[ \t]*(?:[:=#]|is|of)?[ \t]*[\"'`(\[]?[ \t]*$",
    re.IGNORECASE,
)
_CAMEL_WORD = re.compile(r"[A-Z][a-z]{3,}+")
_CONSONANT_RUN = re.compile(r"[^aeiouy]{4}")
_WORDS_AND_NUMBERS = re.compile(r"(?:[a-z]{2,}+)?(?:[A-Z][a-z]{2,}+|[0-9]++)++")
_NAME_AFTER = re.compile(r"[\"']?(?:[ \t]*=(?!=)|[:(]|\.\.\.|…)")
_SENTENCE_END = re.compile(r"[.!?;][ \t]|[\r\n]")
_WINDOW_BEFORE = 80
_WINDOW_AFTER = 60


def _sentence_around(text: str, start: int, end: int) -> tuple[str, str]:
    """The text before and after ``[start, end)`` within its sentence, bounded in length."""
    before = text[max(0, start - _WINDOW_BEFORE) : start]
    cuts = list(_SENTENCE_END.finditer(before))
    if cuts:
        before = before[cuts[-1].end() :]
    after = text[end : end + _WINDOW_AFTER]
    cut = _SENTENCE_END.search(after)
    if cut:
        after = after[: cut.start()]
    return before, after


def _camel_case_name(run: str) -> bool:
    """Capitalised, pronounceable words cover a third of the run: a name.

    ``PKCS12KeyAndCertificates`` is; in random letters and digits a capital followed by
    three or more lowercase letters, with a vowel and no four consonants in a row, is
    rare. A run made only of capitalised words and numbers (``Key0Token182Http100``) is a
    name too."""
    if _WORDS_AND_NUMBERS.fullmatch(run):
        return True
    covered = 0
    for word in _CAMEL_WORD.findall(run):
        lowered = word.lower()
        if any(c in "aeiouy" for c in lowered) and not _CONSONANT_RUN.search(lowered):
            covered += len(word)
    return covered * 3 >= len(run)


def random_letters(run: str) -> bool:
    """16+ letters of both cases that are not capitalised words: a piece of a key.

    A key wrapped over lines leaves pieces with no digit (``gJnGAXOzAfBrCmmRhNITQ``);
    ``XMLHttpRequestUpload`` and ``CartPoleWithProtobufObservation`` are names."""
    if len(run) < 16 or not run.isalpha() or run.islower() or run.isupper():
        return False
    switches = sum(a.isupper() != b.isupper() for a, b in pairwise(run))
    return switches >= len(run) / 3 and not _camel_case_name(run)


def _sequential(run: str) -> bool:
    """Half the adjacent pairs are consecutive characters: an alphabet, not a key."""
    steps = sum(ord(b) - ord(a) == 1 for a, b in pairwise(run))
    return steps * 2 >= len(run)


def _random_run(run: str) -> tuple[bool, bool]:
    """(random, mixed case): whether ``run`` is random enough to be a key, and its kind."""
    has_upper = any(c.isupper() for c in run)
    has_lower = any(c.islower() for c in run)
    if not any(c.isdigit() for c in run) or not (has_upper or has_lower) or _sequential(run):
        return False, False
    if has_upper and has_lower:
        return looks_like_token("x_", run) and not _camel_case_name(run), True
    if all(c in "0123456789abcdefABCDEF" for c in run):
        # a key of hexadecimal digits: 32 to 64, spread over the alphabet (longer runs are
        # digests, test vectors and key material in code)
        return 32 <= len(run) <= 64 and entropy(run) >= 3.3, False
    # one case of letters with digits: several digits, spread through the run
    digits = sum(c.isdigit() for c in run)
    switches = sum(a.isdigit() != b.isdigit() for a, b in pairwise(run))
    return (
        len(run) >= 24
        and entropy(run) >= min(4.0, 0.8 * math.log2(len(run)))
        and digits >= 3
        and switches >= len(run) / 8
    ), False


def bare_replacement(match: re.Match[str]) -> str:
    """``[REDACTED]`` for a random run that its sentence names as a credential."""
    run = match.group(0)
    if not _alone(match.string, match.start(), match.end()):
        return run
    if run.startswith("eyJ"):
        return run  # a piece of base64 JSON: a whole JWT is the catalogue's
    if _NAME_AFTER.match(match.string, match.end()):
        return run  # a name being assigned or called, or an elided example (``eyJ...``)
    random, mixed = _random_run(run)
    if not random:
        return run
    before, after = _sentence_around(match.string, match.start(), match.end())
    if _NOT_SECRET_BEFORE.search(before):
        return run
    evidence = _KEY_WORD if mixed else _STRONG_WORD
    if evidence.search(before) or evidence.search(after):
        return REDACTED
    return run


RANDOM_RUN = re.compile(r"[A-Za-z0-9]{32,}+")
"""A run of 32 or more letters and digits: :func:`random_run_replacement` redacts one that
is random in both cases even when nothing in its sentence names it."""
RUN_ANCHORS = tuple("0123456789")
"""A random run holds a digit (the pass is skipped on text without one)."""
_MIN_UNNAMED = 32
_PUBLIC_KEY = re.compile(
    r"(?:ssh-(?:rsa|dss|ed25519|ed448)|ecdsa-sha2-nistp\d+|sk-[a-z0-9-]+@openssh\.com)[ \t]+$"
)


def _public_key(run: str, before: str) -> bool:
    """An OpenSSH public key: its base64 starts ``AAAA`` (a length under 2**24) or follows
    the key type (``ssh-ed25519 AAAAC3Nz…``). Public keys are shared on purpose."""
    return run.startswith("AAAA") or bool(_PUBLIC_KEY.search(before))


_BASE64_LINE = re.compile(r"[ \t]*[A-Za-z0-9+/]{40,}+={0,2}[ \t]*")


def _printable_when_decoded(run: str) -> bool:
    """``run`` is base64 of text: three quarters of its decoded bytes are printable ASCII,
    or they are UTF-8. A generated key decodes to random bytes, which are neither."""
    body = run[: len(run) - len(run) % 4]
    try:
        decoded = base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError):
        return False
    if not decoded:
        return False
    printable = sum(32 <= b < 127 or b in (9, 10, 13) for b in decoded)
    if printable * 4 >= len(decoded) * 3:
        return True
    try:
        decoded.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return any(b >= 0x80 for b in decoded)


def _in_base64_block(text: str, start: int, end: int) -> bool:
    """The run is a whole line of a wrapped base64 body (MIME, a plist, a PEM-like block):
    the line before or after it is base64 of 40 characters or more too."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    if text[line_start:start].strip() or text[end:line_end].strip(" \t\r="):
        return False
    if line_start > 0:
        previous = text[text.rfind("\n", 0, line_start - 1) + 1 : line_start - 1]
        if _BASE64_LINE.fullmatch(previous.rstrip("\r")):
            return True
    if line_end < len(text):
        following = text.find("\n", line_end + 1)
        after = text[line_end + 1 : len(text) if following < 0 else following]
        if _BASE64_LINE.fullmatch(after.rstrip("\r")):
            return True
    return False


_FILE_MAGIC = ("H4sI", "iVBORw0KGgo", "/9j/", "R0lGOD", "UEsDB", "JVBERi", "iD8D", "iQE", "iQI")
"""How base64 of a gzip stream, PNG, JPEG, GIF, zip, PDF or OpenPGP signature begins."""


def _every_class(run: str, at_least: int = 2) -> bool:
    """Capitals, small letters and digits, each at least ``at_least`` times: a generated
    key of 32 or more characters has several of each."""
    upper = sum(c.isupper() for c in run)
    lower = sum(c.islower() for c in run)
    digits = sum(c.isdigit() for c in run)
    return min(upper, lower, digits) >= at_least


def _data_not_key(match: re.Match[str]) -> bool:
    """A random-looking match that is data, not a key: the start of a file in base64,
    base64 of text, a line of a wrapped base64 body, a run after a digest or id word, or an
    OpenSSH public key. The checks both unnamed rules below share."""
    value, text = match.group(0), match.string
    if value.startswith(_FILE_MAGIC) or _printable_when_decoded(value):
        return True
    if _in_base64_block(text, match.start(), match.end()):
        return True
    before, _ = _sentence_around(text, match.start(), match.end())
    return bool(_NOT_SECRET_BEFORE.search(before)) or _public_key(value, before)


def random_run_replacement(match: re.Match[str]) -> str:
    """``[REDACTED]`` for a long random run of both cases, named or not.

    Probe C (``benchmarks/redaction_probe_c.py``) leaked most of its keys in contexts that
    name nothing ("Pasted from the dashboard: X", a table cell, a log line). A run of 32 or
    more letters *of both cases* and digits that passes the prefixed-token randomness test
    and is no capitalised name is what a generated key looks like and what little else is:
    hexadecimal digests, UUIDs and one-case ids do not qualify, base64 blobs, paths, URLs and
    dotted or underscored names are refused by the boundaries (:func:`_alone`), and a run
    after ``sha256``, ``id``, ``hash`` ... stays. Two kinds of base64 pass those tests and
    are refused here: base64 of text (it decodes to printable bytes, a key to random ones)
    and a line of a wrapped base64 body (a neighbouring line is base64 too); both were most
    of the 120 strings a first version flagged in ``benchmarks/redaction_false_positives.py``
    (MIME and plist test data); a run that starts as base64 of a file format (gzip, PNG,
    JPEG, GIF, zip, PDF, an OpenPGP signature) is a piece of that file. Shorter or one-case
    runs still need a naming word (:func:`bare_replacement`)."""
    run = match.group(0)
    if len(run) < _MIN_UNNAMED or not _alone(match.string, match.start(), match.end()):
        return run
    if run.startswith("eyJ") or _NAME_AFTER.match(match.string, match.end()):
        return run
    random, mixed = _random_run(run)
    if not (random and mixed and _every_class(run)):
        return run
    return run if _data_not_key(match) else REDACTED


BASE64_KEY = re.compile(
    r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/]{40}(?:[A-Za-z0-9+/]{3}=?|[A-Za-z0-9+/]{46}==)?"
    r"(?![A-Za-z0-9+/=_-])"
)
"""Exactly 40 base64 characters (an AWS secret access key), 32 bytes in base64 (43
characters, or 44 ending ``=``: a DigitalOcean Spaces secret, a WireGuard key) or 64 bytes
(an Azure storage account key), standing alone."""


def base64_key_replacement(match: re.Match[str]) -> str:
    """``[REDACTED]`` for a standalone base64 key of a documented length.

    AWS secret access keys are 40 characters of base64's alphabet (docs.aws.amazon.com, IAM
    access keys); DigitalOcean Spaces secret keys 43 (docs.digitalocean.com, Spaces access
    keys), the 32 bytes of a WireGuard private key 44 ending ``=`` (wireguard.com, key
    generation); Azure storage account keys 64 bytes in base64, 88 characters ending
    ``==`` (learn.microsoft.com, storage account keys). The ``+`` and ``/`` they usually
    hold split them into runs the other rules refuse as pieces of a blob. A path has the
    same alphabet, so the letters and digits must look random, and a run after a digest
    word stays (an npm ``sha512-`` integrity value is refused by the boundary)."""
    value = match.group(0)
    core = "".join(c for c in value if c.isalnum())
    if "+" not in value and "/" not in value:
        return value  # plain letters and digits: the random-run rules decide
    if not (any(c.isupper() for c in core) and any(c.islower() for c in core)):
        return value
    if not looks_like_token("x_", core) or _camel_case_name(core) or not _every_class(core):
        return value
    return value if _data_not_key(match) else REDACTED
