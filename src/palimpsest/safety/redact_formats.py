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

Probe D (``benchmarks/redaction_probe_d.py``) found three more:

- a ``.pgpass`` line (``hostname:port:database:username:password``, the PostgreSQL manual's
  "The Password File"): five fields and nothing else on the line, the last one the password;
- the cookies of a ``Cookie:`` or ``Set-Cookie:`` header (RFC 6265): a session id is a
  bearer credential. A cookie whose name says it holds a session or a credential
  (``sessionid``, ``connect.sid``, ``csrftoken``, ``remember_token``) loses a value of 16
  characters or more that looks random, and so does any cookie whose value looks like a
  token; ``theme=dark`` and the ``Path``, ``Expires`` ... attributes of ``Set-Cookie`` stay;
- the ``private_key_id`` of a Google service-account key file (cloud.google.com, "Create and
  delete service account keys"): 40 hex, redacted when the text shows it is such a file
  (``service_account``, ``client_email``, ``private_key``).

Each pattern starts at a literal anchor (:class:`~.redact._Pass`; a ``.pgpass`` entry at
the start of a line its port field marks) and keeps the words of the format, replacing only
the value.
"""

from __future__ import annotations

import base64
import binascii
import re

from .redact_labels import labelled_secret
from .redact_values import REDACTED, announces_placeholder, looks_secret

__all__ = [
    "BASIC_CREDENTIAL",
    "COOKIE_HEADER",
    "CRYPT_HASH",
    "NETRC_PASSWORD",
    "PGPASS_LINE",
    "PGPASS_SEEK",
    "PUTTY_PRIVATE_LINES",
    "SECRET_ARMOUR",
    "SERVICE_ACCOUNT_KEY_ID",
    "SSH2_PRIVATE_KEY",
    "armour_replacement",
    "basic_replacement",
    "cookie_replacement",
    "crypt_hash_replacement",
    "kept_head_replacement",
    "pgpass_replacement",
    "service_account_key_id_replacement",
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


PGPASS_LINE = re.compile(
    r"^([ \t]*+(?:[^\n'\"`]{0,200}+['\"`])?"
    r"(?P<host>\*|[A-Za-z0-9][A-Za-z0-9._-]{0,252}+):(?:\*|[1-9][0-9]{1,4}+):"
    r"(?:\*|[^\s:'\"`\\]{1,63}+):(?:\*|[^\s:'\"`\\]{1,63}+):)"
    r"(?!\[REDACTED\])(?P<password>(?:[^\s:'\"`\\]|\\[:\\])++)(?=[ \t]*+(?:['\"`]|\r?\n|\Z))",
    re.MULTILINE,
)
"""A ``.pgpass`` entry, tried at the start of a line (or after a quote on it: ``echo
'db:5432:app:u:pw' >> ~/.pgpass``): host, port, database, user, and a password that ends the
line; ``\\:`` and ``\\\\`` are the file's escapes."""

PGPASS_SEEK = re.compile(r":(?:\*|[1-9][0-9]{1,4}+):")
"""The port field (``:5432:`` or ``:*:``), which marks the lines :data:`PGPASS_LINE` is tried on."""


_FILE_NAME = re.compile(
    r".*\.(?:py|pyi|txt|md|rst|js|ts|tsx|jsx|go|rs|c|h|cc|cpp|java|kt|rb|php|cs|json|jsonl|"
    r"ya?ml|toml|ini|cfg|conf|log|sh|sql|html|css|xml|csv)",
    re.IGNORECASE,
)


def pgpass_replacement(match: re.Match[str]) -> str:
    """The entry's first four fields kept, the password redacted, when the host is one
    (``*``, a name with a letter or a dotted address: ``12:30:45:10:59`` is a time; a file
    name is ``grep -n`` output) and the password is not a placeholder or a number."""
    host, password = match.group("host"), match.group("password")
    if not (host == "*" or any(c.isalpha() or c == "." for c in host)):
        return match.group(0)
    if _FILE_NAME.fullmatch(host):
        return match.group(0)
    if len(password) < 4 or password.isdigit() or announces_placeholder(password):
        return match.group(0)
    return f"{match.group(1)}{REDACTED}"


COOKIE_HEADER = re.compile(
    r"((?<![A-Za-z0-9_])cookie\\?[\"']?[ \t]*:[ \t]*\\?[\"']?[ \t]*)"
    r"([^\r\n\"'\\]{1,4096}+)",
    re.IGNORECASE,
)
"""A ``Cookie:`` or ``Set-Cookie:`` header (also as a JSON or Python key), and its line up
to a quote: :func:`cookie_replacement` reads the pairs."""

_COOKIE_PAIR = re.compile(
    r"(?<![^\s;])([A-Za-z0-9_.!#$&*+^|~%-]{1,128}+)=(?!\[REDACTED\])([^;,\s]++)"
)
_CREDENTIAL_COOKIE = re.compile(
    r"sess|sid|auth|token|jwt|login|remember|csrf|xsrf|secret|credential|identity", re.IGNORECASE
)
_COOKIE_ATTRIBUTES = frozenset(
    {"path", "domain", "expires", "max-age", "samesite", "secure", "httponly", "partitioned",
     "priority", "version", "comment"}
)  # fmt: skip


def _secret_cookie(name: str, value: str) -> bool:
    """A session id is generated: 16 characters or more (Django's 32, a JSESSIONID's 32
    hex, Express's signed ``s%3A…``) of random text; under any other name a cookie must
    look like a token (:func:`~.redact_labels.labelled_secret`): ``PART_NUMBER=
    ROCKET_LAUNCHER_0001`` is a value, not a credential."""
    if len(value) < 16 or name.lower() in _COOKIE_ATTRIBUTES:
        return False
    if _CREDENTIAL_COOKIE.search(name):
        return looks_secret(value)
    return len(value) >= 20 and labelled_secret(value)


def cookie_replacement(match: re.Match[str]) -> str:
    """Each cookie of the header that holds a credential redacted, its name kept."""

    def pair(cookie: re.Match[str]) -> str:
        name, value = cookie.group(1), cookie.group(2)
        return f"{name}={REDACTED}" if _secret_cookie(name, value) else cookie.group(0)

    return match.group(1) + _COOKIE_PAIR.sub(pair, match.group(2))


SERVICE_ACCOUNT_KEY_ID = re.compile(
    r"(private_key_id\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?)([0-9a-f]{40})(?![0-9A-Za-z])"
)
"""A ``private_key_id`` and its 40 hex; :func:`service_account_key_id_replacement` checks that
the text is a service-account key file."""

_SERVICE_ACCOUNT = re.compile(r"service_account|client_email|private_key(?!_)|gserviceaccount\.com")
_KEY_FILE_REACH = 2_000


def service_account_key_id_replacement(match: re.Match[str]) -> str:
    """The key id redacted when, within a key file's length of it, the text names a
    service account (its ``type``, ``client_email`` or ``private_key``)."""
    text = match.string
    start = max(0, match.start() - _KEY_FILE_REACH)
    if _SERVICE_ACCOUNT.search(text, start, match.end() + _KEY_FILE_REACH) is None:
        return match.group(0)
    return f"{match.group(1)}{REDACTED}"


SECRET_ARMOUR = re.compile(
    r"(-----BEGIN (?P<label>[A-Za-z0-9][A-Za-z0-9 ._-]{0,60}?)-----)"
    r"(?=[ \t]*+(?:\r?\n|\\r?\\n))(?!\[REDACTED\])"
    r"(?:.*?(-----END (?P=label)-----)|[A-Za-z0-9+/=\s\\:,-]++)",
    re.DOTALL,
)
"""A PEM-style armour of any label (RFC 7468's ``-----BEGIN <label>-----``): OpenVPN's
``OpenVPN Static key V1``, ``WireGuard PRIVATE KEY``, an ``ENCRYPTED SECRET``, a vendor's
own label. :func:`armour_replacement` decides by the label."""

_SECRET_LABEL = re.compile(r"key|secret|password|passphrase|token|credential", re.IGNORECASE)
_PUBLIC_LABEL = re.compile(r"public|certificate|signature|parameters|crl|pkcs7|cms", re.IGNORECASE)


def armour_replacement(match: re.Match[str]) -> str:
    """The armour lines kept and the body redacted, when the label names a secret (a key,
    a secret, a password, a token) and not a public object (``PUBLIC KEY``, a certificate,
    a signature, ``DH PARAMETERS``). ``PRIVATE KEY`` bodies are redacted before this
    (:mod:`.redact`); everything else in a block is left."""
    label = match.group("label")
    if not _SECRET_LABEL.search(label) or _PUBLIC_LABEL.search(label):
        return match.group(0)
    return f"{match.group(1)}{REDACTED}{match.group(3) or ''}"


CRYPT_HASH = re.compile(
    r"(?P<head>\$(?<![A-Za-z0-9./$]\$)(?:2[abxy]?\$[0-9]{2}\$"
    r"|(?:1|apr1|md5)\$[./A-Za-z0-9]{1,8}\$"
    r"|[56]\$(?:rounds=[0-9]{1,9}\$)?[./A-Za-z0-9]{1,16}\$"
    r"|y\$[./A-Za-z0-9]{1,32}\$[./A-Za-z0-9]{1,86}\$"
    r"|gy\$[./A-Za-z0-9]{1,32}\$[./A-Za-z0-9]{1,86}\$"
    r"|argon2(?:id|i|d)\$v=[0-9]+\$m=[0-9]+,t=[0-9]+,p=[0-9]+\$"
    r"|scrypt\$ln=[0-9]+,r=[0-9]+,p=[0-9]+\$"
    r"|pbkdf2(?:-sha[0-9]+)?\$[0-9]+\$))"
    r"(?!\[REDACTED\])(?P<hash>[./A-Za-z0-9+$]{16,200}+={0,2})"
)
"""A password hash in the modular crypt format (``crypt(5)``: ``.htpasswd``,
``/etc/shadow``, ``mkpasswd`` and ``htpasswd -nB`` output, passlib and Django hashes): bcrypt
``$2y$10$…``, md5-crypt ``$1$``/``$apr1$``, sha-crypt ``$5$``/``$6$``, yescrypt ``$y$``,
Argon2, scrypt and PBKDF2. A hash is as good as the password to whoever can run a cracker,
so the salt and hash go and the algorithm's head stays."""


def crypt_hash_replacement(match: re.Match[str]) -> str:
    value = match.group("hash")
    if not any(c.isdigit() for c in value) and not any(c.isupper() for c in value):
        return match.group(0)  # words, not base64 of a hash
    return f"{match.group('head')}{REDACTED}"
