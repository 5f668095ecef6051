"""Secrets told by their name: ``password=...``, ``MAIL_KEY=...``, "my gmail password is ...".

:mod:`palimpsest.safety.redact` applies these patterns; this module decides *which
values next to a name* are secrets. Names come in two strengths:

* **Strong names** (``password``, ``token``, ``secret``, ``api_key``, ``AccountKey`` ...
  with any prefix: ``DB_PASSWORD``, ``client_secret``) hide every literal value, however
  plain: ``password=hunter2`` loses ``hunter2``.
* **Weak names** (anything ending in ``key``, ``_pass``, ``pw``, ``auth``, ``credentials``)
  are also used for ordinary settings (``sort_key: created_at``, ``hotkey: ctrl+k``), so
  their value is hidden only when it *looks* secret: :func:`looks_secret`.

Prose ("the password for staging is X") is read the same way, with its own, stricter,
test of the value (:func:`looks_secret_in_prose`), because prose says "the password is
wrong" far more often than it quotes one.

Code is never a secret: a value that is a call, an attribute, an index, a variable
(``$TOKEN``, ``"${TOKEN:-}"``, ``${{ secrets.X }}``, ``%(pw)s``), a type or a keyword is
left. A value that announces itself as a placeholder (``<your-key>``, ``YOUR_API_KEY``,
``xxxx``, ``...``) is left under every name, so a ``.env.example`` reads as written; under
weak names and in prose the softer placeholders (``example``, ``dummy``, ``sample``) count
too. ``changeme`` is *not* a placeholder: it is a default password that gets deployed.
"""

from __future__ import annotations

import math
import re
from collections import Counter

__all__ = [
    "ASSIGNMENT",
    "CLI_FLAG",
    "KEY_ANCHORS",
    "KEY_WORDS",
    "MYSQL_PASSWORD",
    "PROSE",
    "PROSE_ANCHORS",
    "PROSE_INTL",
    "PROSE_INTL_ANCHORS",
    "QUALIFIED_ANCHORS",
    "QUALIFIED_NAME",
    "REDACTED",
    "SECRET_KEY_NAME",
    "SSHPASS",
    "WEAK_ANCHORS",
    "WEAK_ASSIGNMENT",
    "announces_placeholder",
    "assignment_replacement",
    "entropy",
    "looks_secret",
    "looks_secret_in_prose",
    "prose_intl_replacement",
    "prose_replacement",
    "quoted_replacement",
    "weak_replacement",
]

REDACTED = "[REDACTED]"

# Secret-bearing names. The name may carry any prefix (OPENAI_API_KEY, DB_PASSWORD,
# client_secret) but must *end* here: password_field, tokens and tokenizer are not secrets.
_KEY_WORDS = (
    r"secret[_-]?access[_-]?key|secret[_-]?key|private[_-]?key|api[_-]?key|apikey|"
    r"access[_-]?key|auth[_-]?key|session[_-]?key|account[_-]?key|"
    r"shared[_-]?access[_-]?key|master[_-]?key|signing[_-]?key|encryption[_-]?key|"
    r"password|passwd|passphrase|"
    # PWD=/path is the shell's working directory, not a password.
    r"pwd(?![ \t]*[=:][ \t]*[\"']?[/~.$])|token|secret|"
    # a Wi-Fi or IPsec pre-shared key (wpa_supplicant's psk=, NetworkManager's psk=)
    r"(?<![A-Za-z0-9])psk"
)
KEY_WORDS = _KEY_WORDS
_KEY_END = r"(?![A-Za-z0-9_])"
SECRET_KEY_NAME = re.compile(rf"(?:{_KEY_WORDS}){_KEY_END}", re.IGNORECASE)
# Every alternative of _KEY_WORDS starts with one of these.
KEY_ANCHORS = (
    "secret",
    "private",
    "api",
    "access",
    "auth",
    "session",
    "account",
    "shared",
    "master",
    "signing",
    "encryption",
    "pass",
    "pwd",
    "token",
    "psk",
)

# Values that are code or references, never literal secrets.
_NOT_A_VALUE = (
    r"(?!\[REDACTED\])"
    r"(?![$%{<*])"
    # a YAML block indicator (key: |, key: >-): the value is on the lines below
    r"(?![|>][+-]?[1-9]?[+-]?[ \t]*(?:#|\r?\n|\\n|$))"
    r"(?!(?:none|null|nil|true|false|undefined|await|new|function|lambda|yield|async|not|"
    r"str|int|bool|string|bytes|optional|any|self|this)(?![A-Za-z0-9_]))"
    # a call, an index, or an attribute chain of short names
    # (settings.SECRET_KEY); a dotted run with a long or numeric part (dp.st.prd.<44
    # random>, v2.<random>.<hex>) is a value, not code
    r"(?![A-Za-z_][A-Za-z0-9_]*+(?:\(|\[))"
    r"(?![A-Za-z_][A-Za-z0-9_]*+"
    r"(?:\.[A-Za-z_][A-Za-z0-9_]{0,30}+)++(?=[\s,;()\[\]}'\"`\\:|]|$))"
)
_QUOTED = r"(?:\\?\"(?:[^\"\\\n]|\\[^\"\n])*+\\?\"|'(?:[^'\\\n]|\\[^'\n])*+')"
_BARE = r"[^\s'\"\\`,;(){}\[\]<>&=]++=*+"
_SEPARATOR = r"[ \t]*(?:=>|:=|=(?!=)|:)[ \t]*"
# A chain of names before the value (password=AccountKey=X, token: password: X,
# secret=api_key=X): the value is what follows the last name, and only it goes. A chained
# name is followed by "=" or by ":" and a space, so user:pass and https:// are not chains.
# The separator is attached to the chained name and a value follows it at once, so
# ``password=YWJjZA=`` (a value with base64 padding) is not a chain.
_CHAIN = r"(?:[A-Za-z_][A-Za-z0-9_.-]{0,40}+(?:=(?=[^\s=>])|:[ \t]+(?=\S))){0,3}+"

ASSIGNMENT = re.compile(
    rf"((?:{_KEY_WORDS}){_KEY_END}\\?[\"']?"
    # optional type annotation before "=" (token: str = "...")
    rf"(?:[ \t]*:[ \t]*[A-Za-z_][A-Za-z0-9_.\[\] |]{{0,40}}?(?=[ \t]*=))?"
    rf"{_SEPARATOR}{_CHAIN})"
    rf"(?:(?!\\?[\"']\[REDACTED\])({_QUOTED})|{_NOT_A_VALUE}({_BARE}))",
    re.IGNORECASE,
)
# --password x / --db-token=x ; a following flag (--password --user) is not a value.
CLI_FLAG = re.compile(
    # (?<!-) and the letter after "--" make a run of dashes fail at once, position by position
    rf"((?<!-)--(?=[A-Za-z])[A-Za-z0-9_-]{{0,40}}?(?:{_KEY_WORDS})(?![A-Za-z0-9_-])(?:=|[ \t]+)"
    rf"{_CHAIN})"
    rf"(?:(?!\\?[\"']\[REDACTED\])({_QUOTED})|(?!-){_NOT_A_VALUE}({_BARE}))",
    re.IGNORECASE,
)

# Weak names: the end of an identifier (``MAIL_KEY``, ``x-api-auth``, ``storageKey``,
# ``DB_PASS``, ``pw``, ``credentials``). The word must start the identifier or follow a
# separator or a camel-case hump: ``monkey`` and ``bypass`` are not names of secrets.
_WEAK_WORDS = r"key|pass|pw|auth|credentials?|creds?"
_WEAK_NAME = (
    rf"(?:(?:(?<=[_.-])|(?<![A-Za-z0-9]))(?i:{_WEAK_WORDS})"
    r"|(?<=[a-z0-9])(?:Key|KEY|Pass|PASS|Auth|AUTH|Credentials?|Creds?))"
)
WEAK_ANCHORS = ("key", "pass", "pw", "auth", "cred")
WEAK_ASSIGNMENT = re.compile(
    rf"({_WEAK_NAME}{_KEY_END}\\?[\"']?{_SEPARATOR}{_CHAIN})"
    rf"(?:(?!\\?[\"']\[REDACTED\])({_QUOTED})|{_NOT_A_VALUE}({_BARE}))"
)

# An environment variable in capitals whose name holds a secret's word and then says how
# the value is kept or which one it is (MJ_APIKEY_PRIVATE, DOCKER_AUTH_CONFIG_B64,
# STRIPE_KEY_LIVE, AZURE_DEVOPS_EXT_PAT, GH_TOKEN_2): the assignment rules need the word
# at the end. The value must look random, as under a weak name; _ID, _NAME, _URL, _FILE,
# _PATH ... are not among the qualifiers, so AWS_ACCESS_KEY_ID and TOKEN_URL stay.
QUALIFIED_ANCHORS = ("PASS", "PWD", "TOKEN", "SECRET", "KEY", "AUTH", "CREDENTIAL", "PAT")
QUALIFIED_NAME = re.compile(
    r"((?<![A-Za-z0-9_])(?:[A-Z][A-Z0-9]*+_)*?[A-Z0-9]*?"
    r"(?:PASSWORD|PASSWD|PASS|PWD|TOKEN|SECRET|APIKEY|KEY|AUTH|CREDENTIALS?|PAT)"
    r"(?:_(?:PRIVATE|SECRET|B64|BASE64|ENC|ENCODED|RAW|HEX|JSON|VALUE|VAL|STR|CONFIG|PROD|"
    r"PRODUCTION|STAGING|STAGE|DEV|TEST|LIVE|OLD|NEW|PRIMARY|SECONDARY|CURRENT|NEXT|PREV|"
    r"V[0-9]{1,3}|[0-9]{1,3}))*+"
    r"\\?[\"']?[ \t]*(?:=|:[ \t]))"
    rf"(?:(?!\\?[\"']\[REDACTED\])({_QUOTED})|{_NOT_A_VALUE}({_BARE}))"
)

# Prose: "my gmail password is X", "the password for the staging db is X", "API key is
# now X". Up to five words between the name and the verb, one value after. ("pw: X" and
# "password: X" are assignments, handled above.)
_PROSE_NAMES = r"passwords?|passwd|passphrase|passcode|pwd|pw|api[ _-]?key|token|secret"
PROSE_ANCHORS = ("pass", "pw", "api", "token", "secret")
PROSE = re.compile(
    rf"((?<![A-Za-z0-9_])(?:{_PROSE_NAMES})(?![A-Za-z0-9_])"
    r"(?:[ \t]+[^\s=:]{1,40}+){0,5}?"
    r"[ \t]+(?:is|was|are)(?:[ \t]+(?:now|still|just|actually|set[ \t]+to))?[ \t]*:?[ \t]+)"
    r"(?:(\"[^\"\n]{3,200}+\"|'[^'\n]{3,200}+')|(?![$%{<*])([^\s\"'`()\[\]{}<>]{6,200}+))",
    re.IGNORECASE,
)
# The same in other languages: a password's name, then a copula (German, French, Spanish,
# Portuguese, Italian) or a particle (Japanese, Chinese, Korean) and a value in ASCII:
# "das Passwort ist X", "le mot de passe est X", "password に X を入れた", "密码是 X".
_EUROPEAN_NAMES = r"passwort|kennwort|mot[ \t]+de[ \t]+passe|contrase(?:ñ|n)a|senha|пароль"
_PARTICLE_NAMES = (
    rf"{_EUROPEAN_NAMES}|passwords?|パスワード|暗証番号|密码|密碼|口令|비밀번호|tokens?|トークン|"
    r"令牌|secret"
)
PROSE_INTL_ANCHORS = (
    "pass", "kennwort", "mot de passe", "contrase", "senha", "пароль", "パスワード", "暗証",
    "密码", "密碼", "口令", "비밀번호", "token", "トークン", "令牌", "secret",
)  # fmt: skip
PROSE_INTL = re.compile(
    rf"((?<![A-Za-z0-9_])(?:(?:{_EUROPEAN_NAMES})(?![A-Za-z0-9_])"
    r"(?:[ \t]+[^\s=:]{1,40}+){0,4}?[ \t]+(?:ist|war|est|était|es|era|é|è|sind|son)[ \t]+"
    rf"|(?:{_PARTICLE_NAMES})(?![A-Za-z0-9_])"
    r"[ \t]*(?:は|が|に|を|も|是|为|為|：|은|는|을|를|이|가)[ \t]*))"
    r"(?![$%{<*])([!#-&*-~]{6,200}+)",
    re.IGNORECASE,
)

# mysql -uroot -pS3cret (attached: "-p secret" would prompt and read "secret" as the db).
MYSQL_PASSWORD = re.compile(
    r"((?<![\w-])(?:mysql|mysqldump|mysqladmin|mariadb)(?![\w-])[^\n|;&]{0,200}?"
    r"[ \t]-p)(?!\[REDACTED\])(?![$%{<])([^\s\"'|;&]+)"
)
# sshpass -p secret ssh host
SSHPASS = re.compile(
    rf"((?<![\w-])sshpass[ \t]+-p[ \t]*)"
    rf"(?:(?!\\?[\"']\[REDACTED\])({_QUOTED})|(?!\[REDACTED\])(?![$%{{<-])([^\s\"']+))"
)

_PLACEHOLDERS = (
    "xxx",
    "***",
    "...",
    "your",
    "example",
    "placeholder",
    "redacted",
    "dummy",
    "sample",
    "todo",
)
_TRAILING_PUNCTUATION = ".,;:?!)]"


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(value)
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


def _is_placeholder(value: str) -> bool:
    lowered = value.lower()
    return any(word in lowered for word in _PLACEHOLDERS)


def looks_secret(value: str) -> bool:
    """True when ``value``, found under a weak name, is a credential rather than a setting.

    A credential is random: at least 8 characters, letters *and* digits, close to the
    entropy of random text of its length (at least 3 bits per character for 14+ chars), not a path or URL, not a placeholder, and not a chain of short
    words and numbers (``gpt-4o-mini``, ``2024-05-01``, ``v1.2.3``, ``10.0.0.1``).
    """
    if not 8 <= len(value) <= 1_000 or _is_placeholder(value):
        return False
    if value[0] in "/~." or "://" in value:
        return False
    if not (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
        return False
    segments = re.split(r"[._:/\-]", value)
    if len(segments) > 1 and max(len(s) for s in segments) <= 6:
        return False
    # Random text of n distinct-ish characters nears log2(n) bits; words and repeats fall
    # well below. The cap of 3 bits keeps long hex keys (at most 4 bits) in.
    return entropy(value) >= min(3.0, 0.8 * math.log2(len(value)))


def looks_secret_in_prose(value: str) -> bool:
    """True when the word after "password is" is a password, not "wrong" or "required".

    At least 6 characters, not a placeholder or a path, and either mixing letters with
    digits or symbols (``hunter2hunter2``, ``Sunshine!Harbor42``) or all digits (a PIN-like
    password). Plain words, however long, are prose.
    """
    if len(value) < 6 or _is_placeholder(value) or value[0] in "/~." or "://" in value:
        return False
    if value.isdigit():
        return True
    has_alpha = any(c.isalpha() for c in value)
    has_other = any(not c.isalpha() for c in value)
    return has_alpha and has_other


def announces_placeholder(value: str) -> bool:
    """A value that says it is not the real one: ``<your-key>``, ``${TOKEN:-}``, ``xxxx``.

    Left alone under every name. ``changeme`` and ``password`` are *not* placeholders: they
    are real (weak) passwords that get deployed, so they are redacted like any other.
    """
    return bool(_ANNOUNCED_PLACEHOLDER.search(value))


_ANNOUNCED_PLACEHOLDER = re.compile(
    r"^(?:<[^<>]*>|\$\{[^}]*\}|\$[A-Za-z_]\w*|\{\{.*\}\}|%\(\w+\)s|\$\(.*\)|`.*`|(?i:x{3,}|redacted))$"
    r"|x{4,}|X{4,}|\.\.\.|…|(?i:your[_-]|placeholder|replace[_-]?me)",
)


def quoted_replacement(match: re.Match[str]) -> str:
    """Keep the name and the quotes, drop the value (group 2 quoted, group 3 bare)."""
    quoted, bare = match.group(2), match.group(3)
    if quoted is None:
        if announces_placeholder(bare) or _is_argument(match):
            return match.group(0)
        return f"{match.group(1)}{REDACTED}"
    opening = quoted[:2] if quoted.startswith("\\") else quoted[0]
    closing = quoted[-2:] if quoted.endswith(('\\"', "\\'")) else quoted[-1]
    if len(quoted) <= len(opening) + len(closing):
        return match.group(0)  # an empty literal hides nothing
    if announces_placeholder(quoted[len(opening) : -len(closing)]):
        return match.group(0)
    return f"{match.group(1)}{opening}{REDACTED}{closing}"


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LETTER_DIGIT = re.compile(r"(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])")


def _is_argument(match: re.Match[str]) -> bool:
    """``f(password=pw, token=tok)``: a name passed on, unless the "name" looks random.

    A bare identifier followed by ``,`` or ``)`` is a keyword argument in code; one that
    looks like a credential (``password=Kq7vN2pLx9Rw, then …``) is a value in prose.
    """
    bare = match.group(3)
    if not _IDENTIFIER.fullmatch(bare):
        return False
    following = match.string[match.end() : match.end() + 40].lstrip(" \t")
    if following[:1] not in (",", ")"):
        return False
    # random text switches between letters and digits; names rarely do (password1, v2)
    switches = len(_LETTER_DIGIT.findall(bare))
    return switches < 2 or not looks_secret(bare)


def assignment_replacement(match: re.Match[str]) -> str:
    if match.group(3) is not None and _is_colon_prose(match):
        return match.group(0)
    return quoted_replacement(match)


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


def _unquote(quoted: str) -> str:
    body = quoted[2:] if quoted.startswith("\\") else quoted[1:]
    return body[:-2] if body.endswith(('\\"', "\\'")) else body[:-1]


def weak_replacement(match: re.Match[str]) -> str:
    """Redact a weak name's value only when it looks like a credential."""
    quoted, bare = match.group(2), match.group(3)
    value = _unquote(quoted) if quoted is not None else bare
    if not looks_secret(value):
        return match.group(0)
    return quoted_replacement(match)


def prose_intl_replacement(match: re.Match[str]) -> str:
    """The value after "Passwort ist", "password に" ... redacted when it is a password
    (:func:`looks_secret_in_prose`); a closing full stop or comma kept."""
    value = match.group(2).rstrip(_TRAILING_PUNCTUATION)
    if not looks_secret_in_prose(value) or announces_placeholder(value):
        return match.group(0)
    return f"{match.group(1)}{REDACTED}{match.group(2)[len(value) :]}"


def prose_replacement(match: re.Match[str]) -> str:
    """Redact the word after "password is" when it is a password; keep closing punctuation."""
    quoted, bare = match.group(2), match.group(3)
    if quoted is not None:
        if not looks_secret_in_prose(quoted[1:-1]):
            return match.group(0)
        return f"{match.group(1)}{quoted[0]}{REDACTED}{quoted[-1]}"
    value = bare.rstrip(_TRAILING_PUNCTUATION)
    if not looks_secret_in_prose(value):
        return match.group(0)
    return f"{match.group(1)}{REDACTED}{bare[len(value) :]}"
