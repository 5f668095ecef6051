"""Credentials of vendors the catalogue does not know: a short prefix, then random characters.

The catalogue (:mod:`.redact_patterns`) knows vendors by their documented formats, and a
new vendor's token shown in prose (``I exported lin_api_… first``) passes it. Most tokens
issued today share one shape, though: a short lowercase or uppercase prefix naming the
vendor and the kind (``gsk_``, ``figd_``, ``pscale_tkn_``, ``dckr_pat_``, ``hvs.``), then
twenty or more random characters. This module recognises that shape and confirms the
randomness of the body before anything is replaced:

- a body of upper- and lowercase letters and digits must *look* random: high Shannon
  entropy, and either many of the adjacent pairs random text has and names do not (two
  capitals, a digit beside a lowercase letter) or lowercase runs too short to be words.
  ``CartPoleWithProtobufObservationSpace_47dd2`` and ``BetaCodeExecutionTool20250825Param``
  are names; ``gsk_8fQ2xLr0…`` is not;
- a body in one case (hexadecimal, or lowercase letters and digits) counts at 32
  characters or more; hexadecimal only after a prefix that does not name a digest
  (``sha256-``, ``commit_``, ``build-`` precede digests, not secrets), the others only when
  letters and digits alternate as often as chance makes them;
- the prefixes of identifiers that providers document as identifiers (tool call, message,
  response, run, file ids) are not secrets, even though they are random too.

Measured on 170 MB of text nobody wrote for this rule (the Python standard library, the
installed packages' sources and docs, the agent transcripts in the test data;
``benchmarks/redaction_false_positives.py``), the rule flagged three strings, a punycode
test string, a MIME boundary and an NNTP message id in the standard library's tests; since
a body followed by ``@`` is an address, a body whose longest part is in one case is judged
as one case, and hexadecimal needs a prefix of two letters, it flags none (in-sample).
"""

from __future__ import annotations

import math
import re
from itertools import pairwise

from .redact_values import REDACTED, entropy

__all__ = [
    "GENERIC_ANCHORS",
    "GENERIC_TOKEN",
    "generic_replacement",
    "looks_like_token",
    "random_pairs",
    "short_lower_runs",
]

GENERIC_ANCHORS = ("_", "-", ".")
"""A prefixed token holds one of these; a text without any has none."""

GENERIC_TOKEN = re.compile(
    r"(?<![A-Za-z0-9_.+=-])"
    r"(?P<prefix>[A-Za-z][A-Za-z0-9]{1,11}+(?:[_-][A-Za-z0-9]{1,8}+)?[_.-])"
    r"(?P<body>[A-Za-z0-9][A-Za-z0-9_-]{23,300}+)"
    r"(?![A-Za-z0-9_+/=@.-]|\.[A-Za-z0-9])"
)
"""A prefix of a word and at most one short part, a separator, then 24 or more characters;
the boundaries refuse a piece of a longer token, a path, a dotted name or the local part of
an address (``<doug.hellmann-Re5J…@public.gmane.org>``)."""

_IDENTIFIER_PREFIXES = frozenset(
    {
        "acct", "asst", "batch", "call", "ch", "chatcmpl", "compact", "conv", "cus", "evt",
        "fc", "file", "ft", "ftjob", "item", "msg", "org", "pi", "proj", "req", "resp", "rs",
        "run", "sess", "span", "srvtoolu", "step", "sub", "thread", "toolu", "trace", "user",
        "vs", "ws", "wrkspc", "rlg",
    }
)  # fmt: skip
"""Ids that OpenAI, Anthropic, Stripe and tracing tools print as ids (``call_…``,
``toolu_…``, ``msg_…``, ``resp_…``): random, but naming a thing rather than granting access."""

_DIGEST_PREFIXES = frozenset(
    {
        "blake2b", "blob", "build", "cache", "checksum", "commit", "crc", "digest", "etag",
        "git", "hash", "hex", "id", "key", "md5", "node", "object", "rev", "sha", "sha1",
        "sha256", "sha384", "sha512", "tree", "uuid", "v1", "v2", "xxh", "pub", "pubkey",
        "public", "fingerprint", "fpr", "nonce", "salt", "guid", "oid", "tx", "txid",
        "block", "addr", "address",
    }
)  # fmt: skip
"""Prefixes before hexadecimal that is not a credential: digests, public keys and their
fingerprints, ids."""

_MIN_MIXED = 24
_MIN_HEX = 32


def random_pairs(core: str) -> int:
    """Adjacent pairs that random letters and digits form often and names rarely do."""
    count = 0
    for a, b in pairwise(core):
        if (
            (a.isupper() and b.isupper())
            or (a.islower() and b.isdigit())
            or (a.isdigit() and b.islower())
        ):
            count += 1
    return count


_LOWER_RUN = re.compile(r"[a-z]+")


def short_lower_runs(core: str) -> bool:
    """Lowercase runs of three letters or fewer on average: random text, not words.

    In random letters and digits a lowercase letter is followed by another about 42% of
    the time, so runs average under two letters; the words of a CamelCase name make runs
    of four to ten (``Protobuf``, ``Observation``)."""
    runs = [len(run) for run in _LOWER_RUN.findall(core)]
    return bool(runs) and sum(runs) <= 3 * len(runs)


def _is_hex(core: str) -> bool:
    return all(c in "0123456789abcdef" for c in core) or all(c in "0123456789ABCDEF" for c in core)


def looks_like_token(prefix: str, body: str, *, in_path: bool = False) -> bool:
    """Whether ``prefix`` + ``body`` (a :data:`GENERIC_TOKEN` match) is a credential.

    ``in_path``: the match follows a ``/``. Only a mixed-case body counts there: a path's
    hexadecimal part is a cache key or a digest (``/tmp/ray-9a79…``), while a URL that
    carries a mixed-case random segment is carrying a token."""
    head = re.split(r"[_.-]", prefix, maxsplit=1)[0].lower()
    if head in _IDENTIFIER_PREFIXES:
        return False
    dotted = prefix.endswith(".")
    if dotted and not (len(prefix) <= 6 and prefix[:-1].isalpha()):
        return False  # `module.Name2…` is code; a vendor's dotted prefix is a short word
    parts = re.split(r"[_-]", body)
    core = "".join(parts)
    longest = max(len(part) for part in parts)
    has_digit = any(c.isdigit() for c in core)
    if not has_digit:
        return False
    longest_part = max(parts, key=len)
    if any(c.isupper() for c in longest_part) and any(c.islower() for c in longest_part):
        return (
            len(core) >= _MIN_MIXED
            and longest >= 20
            and entropy(core) >= min(4.0, 0.85 * math.log2(len(core)))
            and (random_pairs(core) >= len(core) / 8 or short_lower_runs(core))
        )
    if dotted or in_path or longest < _MIN_HEX:
        return False
    if _is_hex(core):
        # a vendor's prefix is a word; ``b1_`` + hex is a MIME boundary, not a key
        named = sum(c.isalpha() for c in head) >= 2
        return named and head not in _DIGEST_PREFIXES and entropy(core) >= 3.3
    # One case of letters with digits (``napi_k3x9…``): random when digits and letters
    # alternate as often as chance makes them, which words with a number never do.
    return entropy(core) >= 4.2 and random_pairs(core) >= len(core) / 5


def generic_replacement(match: re.Match[str]) -> str:
    """``[REDACTED]`` for a confirmed token, the match unchanged otherwise."""
    start = match.start()
    in_path = start > 0 and match.string[start - 1] == "/"
    if looks_like_token(match.group("prefix"), match.group("body"), in_path=in_path):
        return REDACTED
    return match.group(0)
