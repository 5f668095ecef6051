"""Deterministic secret redaction: API keys, tokens, passwords and credentials -> ``[REDACTED]``.

Summaries, memory entries, logs and search results outlive the turn that produced them, so
a key pasted once must not be carried forward. This module is the single place that
recognises secrets, in code (precompiled regular expressions, no model). It guarantees:

* **Deterministic and idempotent.** ``redact(redact(x)) == redact(x)``: the marker never
  looks like a secret, and :func:`redact` repeats its passes until nothing changes.
* **Linear.** Every pattern starts with a literal or a short bounded class, values are
  matched with possessive quantifiers, and each pass is skipped outright when a cheap
  substring test shows it cannot match (most texts contain no secret at all).
* **Names stay, values go.** ``password=hunter2`` becomes ``password=[REDACTED]``;
  ``https://bob:pw@host`` becomes ``https://bob:[REDACTED]@host``; a bare token such as
  ``sk-...`` or ``ghp_...`` is replaced whole. Readers still learn that a credential was
  there, and where.
* **Code is not a secret.** ``password = form.get("password")``, ``api_key=api_key``,
  ``token = os.environ["TOKEN"]``, ``$TOKEN`` and booleans are left alone.

What is recognised lives in two companions: :mod:`.redact_patterns` (vendor tokens known by
their shape) and :mod:`.redact_values` (values known by the name beside them, including
prose). This module runs them: anchors, passes, rounds, and the public functions.
Measured against detect-secrets in docs/benchmarks.md ("Secret redaction").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from .redact_bare import (
    BARE_ANCHORS,
    BARE_TOKEN,
    BASE64_KEY,
    RANDOM_RUN,
    RUN_ANCHORS,
    bare_replacement,
    base64_key_replacement,
    random_run_replacement,
)
from .redact_blocks import on_escaped_lines, redact_blocks
from .redact_cli import (
    COMBINED_ANCHORS,
    COMBINED_ARGUMENT,
    LONG_FLAG,
    PROGRAM_ANCHORS,
    PROGRAM_FLAG,
    PROGRAM_LEAD,
    PROGRAM_NEAR,
    PROGRAM_REACH,
    WINDOWS_ANCHORS,
    WINDOWS_SWITCH,
    cli_value_replacement,
    combined_replacement,
)
from .redact_decode import redact_encoded
from .redact_formats import (
    BASIC_CREDENTIAL,
    COOKIE_HEADER,
    CRYPT_HASH,
    NETRC_PASSWORD,
    PGPASS_LINE,
    PGPASS_SEEK,
    PUTTY_PRIVATE_LINES,
    SECRET_ARMOUR,
    SERVICE_ACCOUNT_KEY_ID,
    SSH2_PRIVATE_KEY,
    armour_replacement,
    basic_replacement,
    cookie_replacement,
    crypt_hash_replacement,
    kept_head_replacement,
    pgpass_replacement,
    service_account_key_id_replacement,
)
from .redact_generic import GENERIC_ANCHORS, GENERIC_TOKEN, generic_replacement
from .redact_labels import LABEL_ANCHORS, LABELLED, LABELLED_PAT, labelled_replacement
from .redact_markup import (
    ELEMENT,
    NAME_VALUE,
    PAIR_TAG,
    PLIST_KEY,
    element_replacement,
    name_value_replacement,
    pair_tag_replacement,
    plist_replacement,
)
from .redact_pass import Anchors as _Anchors
from .redact_pass import Pass as _Pass
from .redact_pass import Replacement
from .redact_patterns import TOKEN_PATTERNS, TokenPattern
from .redact_reuse import carried_values, mask_values, redact_continuations
from .redact_values import (
    ASSIGNMENT,
    CLI_FLAG,
    KEY_ANCHORS,
    MYSQL_PASSWORD,
    PROSE,
    PROSE_ANCHORS,
    PROSE_INTL,
    PROSE_INTL_ANCHORS,
    QUALIFIED_ANCHORS,
    QUALIFIED_NAME,
    REDACTED,
    SECRET_KEY_NAME,
    SSHPASS,
    WEAK_ANCHORS,
    WEAK_ASSIGNMENT,
    assignment_replacement,
    prose_intl_replacement,
    prose_replacement,
    quoted_replacement,
    weak_replacement,
)

__all__ = [
    "REDACTED",
    "contains_secret",
    "is_secret_key",
    "recognise",
    "redact",
    "redact_together",
    "redact_value",
    "value_secrets",
]


_MAX_ROUNDS = 4  # redaction converges in 1-2 rounds; the cap bounds pathological inputs

# A private key block: keep the armour lines so readers see what it was, drop the body.
# An unterminated block (a truncated tool output) loses its base64 body to the end.
_PRIVATE_KEY = re.compile(
    r"(-----BEGIN [A-Z0-9 ]{0,30}?PRIVATE KEY(?: BLOCK)?-----)"
    r"(?:.*?(-----END [A-Z0-9 ]{0,30}?PRIVATE KEY(?: BLOCK)?-----)|(?!\[REDACTED\])[A-Za-z0-9+/=\s\\:,-]++)",
    re.DOTALL,
)

_SLACK_HOOK = re.compile(
    r"(hooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9_/-]+", re.IGNORECASE
)

# scheme://user:password@host -- anchored on "://" so the engine never rescans long words.
_URL_CREDENTIALS = re.compile(
    r"(://[^\s:/@\"'<>\\]{0,256}+:)(?!\[REDACTED\]@|[$%{<])[^\s/\"'<>\\]+?(?=@)"
)
# curl -u user:password / --user user:password
_USER_FLAG = re.compile(
    r"((?<![\w-])(?:-u|--user)[ \t=]+\\?[\"']?[^\s:\"'\\]{1,256}+:)(?!\[REDACTED\]|[$%{<])[^\s\"'\\]+"
)

_QUERY_PARAM = re.compile(
    r"([?&](?:access_token|refresh_token|id_token|token|api_key|apikey|api-key|key|sig|"
    r"signature|secret|client_secret|password|passwd|auth|x-amz-signature|"
    r"x-amz-security-token)=)(?!\[REDACTED\])[^&\s#\"'<>\\]+",
    re.IGNORECASE,
)

# An Azure SAS signature outside a URL's query (a --sas-token value, a connection
# string's SharedAccessSignature=...): ``sig=`` + a URL-encoded base64 HMAC.
_SAS_SIG = re.compile(
    r"((?<![A-Za-z0-9_.-])sig=)(?!\[REDACTED\])[A-Za-z0-9%+/=]{20,}+", re.IGNORECASE
)

_AUTH_HEADER = re.compile(
    r"(authorization\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?[ \t]*"
    r"(?:(?:bearer|basic|token|bot|digest)[ \t]+)?)[A-Za-z0-9._~+/-]{8,}+=*",
    re.IGNORECASE,
)
_BEARER = re.compile(
    r"(\bbearer[ \t]+)(?=[A-Za-z0-9._~+/-]{0,200}?\d)[A-Za-z0-9._~+/-]{16,}+=*", re.IGNORECASE
)


def _private_key_replacement(match: re.Match[str]) -> str:
    return f"{match.group(1)}{REDACTED}{match.group(2) or ''}"


def _token_replacement(token: TokenPattern) -> Replacement:
    check = token.check
    if check is None:
        return REDACTED
    return lambda match: REDACTED if check(match) else match.group(0)


def _paired_replacement(match: re.Match[str]) -> str:
    """Group 1 (a name, a scheme's user) kept, the rest of the match redacted: what the
    template ``\\1[REDACTED]`` says, without ``Match.expand`` parsing it at every match."""
    return f"{match.group(1)}{REDACTED}"


_CAPITALS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
"""What an environment variable's name is made of, before the secret's word in it."""

_SHAPE_PASSES: tuple[tuple[str, _Pass], ...] = (
    *(
        (
            t.name,
            _Pass(
                t.anchors,
                t.pattern,
                _token_replacement(t),
                lead=t.lead,
                lead_max=t.lead_max,
                lead_min=t.lead_min,
                regex_scan=t.regex_scan,
            ),
        )
        for t in TOKEN_PATTERNS
    ),
    # A vendor the catalogue does not know, by the shape most tokens share (prefix, then
    # random characters), after the catalogue so a known vendor's rule decides first.
    ("generic", _Pass(GENERIC_ANCHORS, GENERIC_TOKEN, generic_replacement, regex_scan=True)),
)
# A value its sentence labels before a colon ("the new Firecrawl API key: fc-…"), after
# the rules that read a name right beside the value.
_LABELLED_PASS = _Pass(LABEL_ANCHORS, LABELLED, labelled_replacement, ignore_case=True)
_LABELLED_PAT_PASS = _Pass(("PAT",), LABELLED_PAT, labelled_replacement)
# A key with no prefix at all, by its randomness and a word of its sentence naming it;
# last, so that every rule reading a name decides first.
_BARE_PASS = _Pass(BARE_ANCHORS, BARE_TOKEN, bare_replacement, ignore_case=True, regex_scan=True)
# Long random runs of both cases, and base64 keys of documented lengths, need no name.
_RANDOM_PASS = _Pass(RUN_ANCHORS, RANDOM_RUN, random_run_replacement, regex_scan=True)
_BASE64_KEY_PASS = _Pass(("+", "/"), BASE64_KEY, base64_key_replacement, regex_scan=True)
# Formats recognised by their own armour: PEM-style blocks of any secret label, and
# password hashes in the modular crypt format.
_ARMOUR_PASS = _Pass(("-----BEGIN",), SECRET_ARMOUR, armour_replacement)
_CRYPT_PASS = _Pass(("$",), CRYPT_HASH, crypt_hash_replacement, regex_scan=True)
SHAPE_PASSES = (
    ("armour", _ARMOUR_PASS),
    ("crypt-hash", _CRYPT_PASS),
    *_SHAPE_PASSES,
    ("labelled", _LABELLED_PASS),
    ("labelled-pat", _LABELLED_PAT_PASS),
    ("bare", _BARE_PASS),
    ("random-run", _RANDOM_PASS),
    ("base64-key", _BASE64_KEY_PASS),
)
"""The passes that recognise a value by its shape alone, with no name beside it (or with
only a word of its sentence naming it): what ``benchmarks/redaction_false_positives.py``
scans others' text with."""

# Order matters only for readability of the result: whole tokens first (so a vendor key
# under any name goes whole), then structures (URLs, headers, flags), then names.
_PASSES: tuple[_Pass, ...] = (
    _Pass(("-----BEGIN",), _PRIVATE_KEY, _private_key_replacement),
    _Pass(("---- BEGIN SSH2",), SSH2_PRIVATE_KEY, kept_head_replacement),
    _Pass(("Private-Lines:",), PUTTY_PRIVATE_LINES, kept_head_replacement),
    _ARMOUR_PASS,
    _CRYPT_PASS,
    *(step for _, step in _SHAPE_PASSES),
    _Pass(("://",), _URL_CREDENTIALS, _paired_replacement),
    _Pass(("-u", "--user"), _USER_FLAG, _paired_replacement, regex_scan=True),
    _Pass(("hooks.slack.com",), _SLACK_HOOK, _paired_replacement, ignore_case=True),
    _Pass(("?", "&"), _QUERY_PARAM, _paired_replacement, ignore_case=True, regex_scan=True),
    _Pass(("sig=",), _SAS_SIG, _paired_replacement, ignore_case=True),
    _Pass(("authorization",), _AUTH_HEADER, _paired_replacement, ignore_case=True),
    _Pass(("bearer",), _BEARER, _paired_replacement, ignore_case=True),
    _Pass(("Basic",), BASIC_CREDENTIAL, basic_replacement),
    _Pass(("password",), NETRC_PASSWORD, kept_head_replacement, regex_scan=True),
    _Pass((":",), PGPASS_LINE, pgpass_replacement, seek=PGPASS_SEEK),
    _Pass(("cookie",), COOKIE_HEADER, cookie_replacement, ignore_case=True),
    _Pass(("private_key_id",), SERVICE_ACCOUNT_KEY_ID, service_account_key_id_replacement),
    _Pass(("--",), CLI_FLAG, quoted_replacement, regex_scan=True),
    _Pass(("mysql", "mariadb"), MYSQL_PASSWORD, _paired_replacement),
    _Pass(("sshpass",), SSHPASS, quoted_replacement),
    # command lines, markup and name/value pairs (safety/redact_cli.py, redact_markup.py)
    _Pass(
        PROGRAM_ANCHORS,
        PROGRAM_FLAG,
        cli_value_replacement,
        lead=PROGRAM_LEAD,
        lead_max=12,
        near=PROGRAM_NEAR,
        near_reach=PROGRAM_REACH,
    ),
    _Pass(("-",), LONG_FLAG, cli_value_replacement, ignore_case=True, regex_scan=True),
    _Pass(WINDOWS_ANCHORS, WINDOWS_SWITCH, cli_value_replacement, ignore_case=True),
    _Pass(
        COMBINED_ANCHORS, COMBINED_ARGUMENT, combined_replacement, lead=PROGRAM_LEAD, lead_max=12
    ),
    _Pass(("</",), ELEMENT, element_replacement, regex_scan=True),
    _Pass(("value",), PAIR_TAG, pair_tag_replacement, ignore_case=True, regex_scan=True),
    _Pass(("<key>",), PLIST_KEY, plist_replacement, regex_scan=True),
    _Pass(("name",), NAME_VALUE, name_value_replacement, lead="\"'", lead_max=1),
    _Pass(QUALIFIED_ANCHORS, QUALIFIED_NAME, weak_replacement, lead=_CAPITALS, lead_max=60),
    _Pass(KEY_ANCHORS, ASSIGNMENT, assignment_replacement, ignore_case=True),
    _Pass(WEAK_ANCHORS, WEAK_ASSIGNMENT, weak_replacement, ignore_case=True),
    _Pass(PROSE_ANCHORS, PROSE, prose_replacement, ignore_case=True),
    _Pass(PROSE_INTL_ANCHORS, PROSE_INTL, prose_intl_replacement, ignore_case=True),
    _LABELLED_PASS,
    _LABELLED_PAT_PASS,
    _BARE_PASS,
    _RANDOM_PASS,
    _BASE64_KEY_PASS,
)


def _lowered(text: str) -> str:
    """``text.lower()`` at the same offsets, which the passes' anchors need.

    U+0130 (``İ``) is the one character whose lower case is two (``i`` and a combining
    dot); one in a text shifted every offset after it, and each case-blind pass fell back
    to a scan of the whole text by the regex engine (docs/benchmarks.md has one). As an
    ``i`` it keeps them, and the patterns, case-blind, still decide at each anchor."""
    if "\u0130" in text:
        text = text.replace("\u0130", "i")
    return text.lower()


def _every_pass(text: str, found: list[str]) -> str:
    """``text`` after each pass in turn; the passes share where their anchors are until one
    changes the text."""
    lowered, anchors = _lowered(text), _Anchors()
    for step in _PASSES:
        changed = step.apply(text, lowered, found, anchors)
        if changed is not text:
            text = changed
            lowered, anchors = _lowered(text), _Anchors()
    return text


def _round(text: str, found: list[str], first: bool) -> str:
    """One pass of every rule; the first round also reads blocks and base64 runs (what
    later rounds change, a redaction, makes no new block and no new run)."""
    text = _every_pass(text, found)
    if not first:
        return text
    blocked = redact_blocks(text, found)
    return redact_encoded(blocked, _rules_only, found)


def _rules_only(text: str) -> str:
    """One round of the rules without decoding (what a decoded base64 run is checked with)."""
    scratch: list[str] = []
    return redact_blocks(_every_pass(text, scratch), scratch)


def _redact(text: str, known: frozenset[str], found: list[str]) -> tuple[str, frozenset[str]]:
    """Rounds of the rules, wrapped-key tails, then every occurrence of a removed value.

    ``known`` must already be carried values; returns the text and the values this text
    revealed (also appended, raw, to ``found``).
    """
    start = len(found)
    for index in range(_MAX_ROUNDS):
        redacted = _round(text, found, index == 0)
        if redacted == text:
            break
        text = redacted
    revealed: frozenset[str] = frozenset()
    for _ in range(_MAX_ROUNDS):
        # A value masked below can head a wrapped key's tail on the next line, and a tail
        # found there is a value to mask: repeat until neither changes the text.
        text = on_escaped_lines(text, lambda lines: redact_continuations(lines, found))
        revealed = frozenset(carried_values(found[start:])) if len(found) > start else revealed
        carried = revealed | known if known else revealed
        masked = mask_values(text, carried)[0] if carried else text
        if masked == text:
            break
        text = masked
    return text, revealed


def redact(text: str, known: Iterable[str] = ()) -> str:
    """Return ``text`` with every recognised secret value replaced by ``[REDACTED]``.

    Once a rule removes a value, every other occurrence of it in ``text`` goes too (see
    :mod:`.redact_reuse`); ``known`` adds values recognised elsewhere (earlier messages of
    the same session) to those. Non-string input is returned unchanged, so callers can pass
    message content blindly.
    """
    if not isinstance(text, str) or not text:
        return text
    return _redact(text, _carried(known), [])[0]


def recognise(text: str, known: Iterable[str] = ()) -> tuple[str, frozenset[str]]:
    """:func:`redact`'s result and the values worth carrying into texts shown with it."""
    if not isinstance(text, str) or not text:
        return text, frozenset()
    return _redact(text, _carried(known), [])


def _carried(known: Iterable[str]) -> frozenset[str]:
    if not known:
        return frozenset()
    return frozenset(carried_values(known))


def contains_secret(text: str) -> bool:
    """True when :func:`redact` would change ``text``."""
    return isinstance(text, str) and bool(text) and redact(text) != text


def is_secret_key(name: str) -> bool:
    """True when a mapping key names a secret (``password``, ``OPENAI_API_KEY``, ``token``)."""
    return any(m.end() == len(name) for m in SECRET_KEY_NAME.finditer(name))


def redact_together(texts: Iterable[str], known: Iterable[str] = ()) -> list[str]:
    """Redact texts shown together (one session's messages) as if they were one text.

    A value any rule recognises in one of them is removed from all of them, earlier ones
    included, as are the ``known`` values. Each text is scanned once; carrying the values
    back to the texts before it costs one substring search per text.
    """
    carried = _carried(known)
    out: list[str] = []
    for text in texts:
        redacted, found = recognise(text, carried)
        carried |= found
        out.append(redacted)
    return [mask_values(text, carried)[0] if carried else text for text in out]


def redact_value(value: Any, known: Iterable[str] = ()) -> Any:
    """Redact every string inside ``value`` (dicts, lists, tuples); return a new object.

    A string or number stored under a secret-named key (``{"password": "hunter2"}``) is
    replaced whole, because the value alone would not look like a secret; every other
    occurrence, anywhere in ``value``, of a value removed by a rule or by its key (and of
    ``known``) goes too. The input is never mutated; objects of other types are returned
    as they are.
    """
    found: list[str] = []
    known = _carried(known)
    first = _redact_value(value, found, known)
    carried = frozenset(carried_values(found)) | known
    return _mask_value(first, carried) if carried else first


def value_secrets(value: Any) -> frozenset[str]:
    """The values worth carrying that the rules (or secret-named keys) find inside ``value``."""
    found: list[str] = []
    _redact_value(value, found, frozenset())
    return frozenset(carried_values(found))


def _under_secret_key(key: Any, item: Any) -> bool:
    return (
        isinstance(key, str)
        and isinstance(item, (str, int, float))
        and not isinstance(item, bool)
        and item != ""
        and is_secret_key(key)
    )


def _redact_value(value: Any, found: list[str], known: frozenset[str]) -> Any:
    if isinstance(value, str):
        return _redact(value, known, found)[0] if value else value
    if isinstance(value, Mapping):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            if _under_secret_key(key, item):
                found.append(str(item))
                out[key] = REDACTED
            else:
                out[key] = _redact_value(item, found, known)
        return out
    if isinstance(value, list):
        return [_redact_value(item, found, known) for item in value]
    if isinstance(value, tuple):
        return tuple(_redact_value(item, found, known) for item in value)
    return value


def _mask_value(value: Any, carried: frozenset[str]) -> Any:
    if isinstance(value, str):
        return mask_values(value, carried)[0]
    if isinstance(value, Mapping):
        return {key: _mask_value(item, carried) for key, item in value.items()}
    if isinstance(value, list):
        return [_mask_value(item, carried) for item in value]
    if isinstance(value, tuple):
        return tuple(_mask_value(item, carried) for item in value)
    return value
