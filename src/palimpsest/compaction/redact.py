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
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["REDACTED", "contains_secret", "is_secret_key", "redact", "redact_value"]

REDACTED = "[REDACTED]"
"""The marker that replaces every secret value."""

_MAX_ROUNDS = 4  # redaction converges in 1-2 rounds; the cap bounds pathological inputs

# --- whole tokens: the value itself is recognisable -----------------------------------------

_TOKEN_PATTERNS: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = (
    # OpenAI (sk-, sk-proj-, sk-svcacct-, sk-admin-), Anthropic (sk-ant-), OpenRouter
    # (sk-or-v1-). Real keys always contain a digit; kebab-case words do not.
    (
        ("sk-",),
        re.compile(r"(?<![A-Za-z0-9_-])sk-(?=[A-Za-z0-9_-]{0,200}?\d)[A-Za-z0-9_-]{20,}+"),
    ),
    # Stripe secret / restricted keys.
    (
        ("sk_live_", "sk_test_", "rk_live_", "rk_test_"),
        re.compile(r"(?<![A-Za-z0-9])[sr]k_(?:live|test)_[A-Za-z0-9]{16,}+"),
    ),
    (("AIza",), re.compile(r"AIza[0-9A-Za-z_-]{35}")),
    (
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        re.compile(
            r"(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9_]{16,}+|github_pat_[A-Za-z0-9_]{22,}+)"
        ),
    ),
    (("glpat-",), re.compile(r"glpat-[A-Za-z0-9_-]{20,}+")),
    (("hf_",), re.compile(r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30,}+")),
    (("npm_",), re.compile(r"(?<![A-Za-z0-9])npm_[A-Za-z0-9]{36,}+")),
    (("xox",), re.compile(r"(?<![A-Za-z0-9])xox[abeprs]-[A-Za-z0-9-]{10,}+")),
    (
        ("AKIA", "ASIA"),
        re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])"),
    ),
    # JSON Web Tokens: header and payload are base64url JSON, so both start with "eyJ".
    (
        ("eyJ",),
        re.compile(
            r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}+\.eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]*+"
        ),
    ),
)

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

_AUTH_HEADER = re.compile(
    r"(authorization\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?[ \t]*"
    r"(?:(?:bearer|basic|token|bot|digest)[ \t]+)?)[A-Za-z0-9._~+/-]{8,}+=*",
    re.IGNORECASE,
)
_BEARER = re.compile(
    r"(\bbearer[ \t]+)(?=[A-Za-z0-9._~+/-]{0,200}?\d)[A-Za-z0-9._~+/-]{16,}+=*", re.IGNORECASE
)

# --- key = value assignments: the name tells us the value is secret ---------------------------

# Secret-bearing names. The name may carry any prefix (OPENAI_API_KEY, DB_PASSWORD,
# client_secret) but must *end* here: password_field, tokens and tokenizer are not secrets.
_KEY_WORDS = (
    r"secret[_-]?access[_-]?key|secret[_-]?key|private[_-]?key|api[_-]?key|apikey|"
    r"access[_-]?key|auth[_-]?key|session[_-]?key|password|passwd|passphrase|"
    # PWD=/path is the shell's working directory, not a password.
    r"pwd(?![ \t]*[=:][ \t]*[\"']?[/~.$])|token|secret"
)
_KEY_END = r"(?![A-Za-z0-9_])"
_SECRET_KEY_NAME = re.compile(rf"(?:{_KEY_WORDS}){_KEY_END}", re.IGNORECASE)

# Values that are code or references, never literal secrets.
_NOT_A_VALUE = (
    r"(?!\[REDACTED\])"
    r"(?![$%{<*])"
    r"(?!(?:none|null|nil|true|false|undefined|await|new|function|lambda|yield|async|not|"
    r"str|int|bool|string|bytes|optional|any|self|this)(?![A-Za-z0-9_]))"
    r"(?![A-Za-z_][A-Za-z0-9_]*+(?:\.|\(|\[|[ \t]*[,)]))"
)
_QUOTED = r"(?:\\?\"(?:[^\"\\\n]|\\[^\"\n])*+\\?\"|'(?:[^'\\\n]|\\[^'\n])*+')"
_BARE = r"[^\s'\"\\`,;(){}\[\]<>&=]++=*+"

_ASSIGNMENT = re.compile(
    rf"((?:{_KEY_WORDS}){_KEY_END}\\?[\"']?"
    # optional type annotation before "=" (token: str = "...")
    rf"(?:[ \t]*:[ \t]*[A-Za-z_][A-Za-z0-9_.\[\] |]{{0,40}}?(?=[ \t]*=))?"
    rf"[ \t]*(?:=>|:=|=(?!=)|:)[ \t]*)"
    rf"(?:(?!\\?[\"']\[REDACTED\])({_QUOTED})|{_NOT_A_VALUE}({_BARE}))",
    re.IGNORECASE,
)
# --password x / --db-token=x ; a following flag (--password --user) is not a value.
_CLI_FLAG = re.compile(
    # (?<!-) and the letter after "--" make a run of dashes fail at once, position by position
    rf"((?<!-)--(?=[A-Za-z])[A-Za-z0-9_-]{{0,40}}?(?:{_KEY_WORDS})(?![A-Za-z0-9_-])(?:=|[ \t]+))"
    rf"(?:(?!\\?[\"']\[REDACTED\])({_QUOTED})|(?!-){_NOT_A_VALUE}({_BARE}))",
    re.IGNORECASE,
)
# Every alternative of _KEY_WORDS starts with one of these.
_KEY_ANCHORS = ("secret", "private", "api", "access", "auth", "session", "pass", "pwd", "token")


def _quoted_replacement(match: re.Match[str]) -> str:
    quoted = match.group(2)
    if quoted is None:
        return f"{match.group(1)}{REDACTED}"
    opening = quoted[:2] if quoted.startswith("\\") else quoted[0]
    closing = quoted[-2:] if quoted.endswith(('\\"', "\\'")) else quoted[-1]
    if len(quoted) <= len(opening) + len(closing):
        return match.group(0)  # an empty literal hides nothing
    return f"{match.group(1)}{opening}{REDACTED}{closing}"


def _assignment_replacement(match: re.Match[str]) -> str:
    if match.group(3) is not None and _is_colon_prose(match):
        return match.group(0)
    return _quoted_replacement(match)


def _is_colon_prose(match: re.Match[str]) -> bool:
    """``key: word more words`` is prose, not YAML: "the token: it expires soon".

    Only a purely alphabetic value followed on the same line by another word counts as
    prose; ``token: abc123``, ``secret: value # prod`` and other separators (``=``, ``=>``)
    stay configuration.
    """
    separator = match.group(1).rstrip(" \t")
    if not separator.endswith(":") or separator.endswith(":="):
        return False
    if not match.group(3).isalpha():
        return False
    following = match.string[match.end() : match.end() + 8].lstrip(" \t")
    return following[:1].isalpha()


Replacement = str | Callable[[re.Match[str]], str]


@dataclass(frozen=True)
class _Pass:
    """One pattern, the literals every match starts with, and how to rewrite a match.

    Matching only at anchor positions (found with ``str.find``, which is far faster than
    letting the regex engine try every offset) keeps each pass linear and cheap; a pass
    whose anchors are absent costs one substring scan.
    """

    anchors: tuple[str, ...]
    pattern: re.Pattern[str]
    replacement: Replacement
    ignore_case: bool = False
    regex_scan: bool = False  # short, common anchors: let the regex engine scan in C

    def apply(self, text: str, lowered: str) -> str:
        haystack = lowered if self.ignore_case else text
        if self.regex_scan:
            if not any(anchor in haystack for anchor in self.anchors):
                return text
            return self.pattern.sub(self.replacement, text)
        if self.ignore_case and len(lowered) != len(text):
            # Unicode case folding changed lengths, so offsets would not line up.
            return self.pattern.sub(self.replacement, text)
        starts: set[int] = set()
        for anchor in self.anchors:
            index = haystack.find(anchor)
            while index >= 0:
                starts.add(index)
                index = haystack.find(anchor, index + 1)
        if not starts:
            return text
        pieces: list[str] = []
        done = 0
        for start in sorted(starts):
            if start < done:
                continue
            match = self.pattern.match(text, start)
            if match is None:
                continue
            replacement = self.replacement
            pieces.append(text[done:start])
            pieces.append(
                replacement(match) if callable(replacement) else match.expand(replacement)
            )
            done = match.end()
        if not pieces:
            return text
        pieces.append(text[done:])
        return "".join(pieces)


def _private_key_replacement(match: re.Match[str]) -> str:
    return f"{match.group(1)}{REDACTED}{match.group(2) or ''}"


_PASSES: tuple[_Pass, ...] = (
    _Pass(("-----BEGIN",), _PRIVATE_KEY, _private_key_replacement),
    *(_Pass(anchors, pattern, REDACTED) for anchors, pattern in _TOKEN_PATTERNS),
    _Pass(("://",), _URL_CREDENTIALS, rf"\1{REDACTED}"),
    _Pass(("-u", "--user"), _USER_FLAG, rf"\1{REDACTED}", regex_scan=True),
    _Pass(("hooks.slack.com",), _SLACK_HOOK, rf"\1{REDACTED}", ignore_case=True),
    _Pass(("?", "&"), _QUERY_PARAM, rf"\1{REDACTED}", ignore_case=True, regex_scan=True),
    _Pass(("authorization",), _AUTH_HEADER, rf"\1{REDACTED}", ignore_case=True),
    _Pass(("bearer",), _BEARER, rf"\1{REDACTED}", ignore_case=True),
    _Pass(("--",), _CLI_FLAG, _quoted_replacement, regex_scan=True),
    _Pass(_KEY_ANCHORS, _ASSIGNMENT, _assignment_replacement, ignore_case=True),
)


def _round(text: str) -> str:
    lowered = text.lower()
    for step in _PASSES:
        changed = step.apply(text, lowered)
        if changed is not text:
            text = changed
            lowered = text.lower()
    return text


def redact(text: str) -> str:
    """Return ``text`` with every recognised secret value replaced by ``[REDACTED]``.

    Non-string input is returned unchanged, so callers can pass message content blindly.
    """
    if not isinstance(text, str) or not text:
        return text
    for _ in range(_MAX_ROUNDS):
        redacted = _round(text)
        if redacted == text:
            break
        text = redacted
    return text


def contains_secret(text: str) -> bool:
    """True when :func:`redact` would change ``text``."""
    return isinstance(text, str) and bool(text) and _round(text) != text


def is_secret_key(name: str) -> bool:
    """True when a mapping key names a secret (``password``, ``OPENAI_API_KEY``, ``token``)."""
    return any(m.end() == len(name) for m in _SECRET_KEY_NAME.finditer(name))


def redact_value(value: Any) -> Any:
    """Redact every string inside ``value`` (dicts, lists, tuples); return a new object.

    A string or number stored under a secret-named key (``{"password": "hunter2"}``) is
    replaced whole, because the value alone would not look like a secret. The input is
    never mutated; objects of other types are returned as they are.
    """
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            if (
                isinstance(key, str)
                and isinstance(item, (str, int, float))
                and not isinstance(item, bool)
                and item != ""
                and is_secret_key(key)
            ):
                out[key] = REDACTED
            else:
                out[key] = redact_value(item)
        return out
    if isinstance(value, list):
        return [redact_value(item) for item in value]
    if isinstance(value, tuple):
        return tuple(redact_value(item) for item in value)
    return value
