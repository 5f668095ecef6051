"""Passwords given on a command line: flags and arguments that take one.

``--password X`` and ``--db-token=X`` are read by the assignment rules
(:data:`~.redact_values.CLI_FLAG`), ``mysql -pX`` and ``sshpass -p X`` by their own. Most
tools that take a password on the command line do it some other way, and a short flag
means different things to different programs (``-p`` is a password to ``mongosh`` and
``docker login``, a port to ``redis-cli`` and ``docker run``), so this module reads four
families:

- **short flags of the programs that document one for a password** (:data:`_PROGRAM_FLAGS`):
  LDAP's ``-w``, ``redis-cli -a``, ``sqlcmd -P``, ``mosquitto_pub -P``, ``zip -P``, ``7z
  -p``, ``psexec -p``, PuTTY's ``-pw``, ``ipmitool -P``, SNMPv3's ``-A``/``-X``, and ``-p``
  of ``login`` subcommands (``docker login``, ``podman login``, ``helm registry login``,
  ``oc login``, ``cf login``, ``az login``). The flag must come after the program on the
  same command line;
- **single-dash long flags** that end in a secret's name (``-storepass``, ``-keypass``,
  ``-password``, ``-token``: Java's ``keytool``, Go's ``flag`` package, ``influx``), and
  ``--pass``/``--pw`` flags, whose value must look like a password since ``--pass 2`` is a
  count; OpenSSL's ``pass:`` source (``-passin pass:X``: ``env:`` and ``file:`` are
  references and stay);
- **Windows switches**: ``/pass:X``, ``/password:X``, ``/pwd:X`` (``cmdkey``, ``wmic``), FreeRDP's ``/p:X``, and ``net use … /user:NAME PASSWORD``;
- **a user and password in one argument**: ``smbclient -U user%password`` and the Oracle
  tools' ``user/password@service`` (``sqlplus``, ``expdp``, ``impdp``, ``sqlldr``, ``rman``).

The value stays when it is a variable (``$PW``, ``%PW%``), a prompt request (``-``, ``*``),
a placeholder, or a path (for the long flags).
"""

from __future__ import annotations

import re

from .redact_values import REDACTED, announces_placeholder, looks_secret_in_prose

__all__ = [
    "COMBINED_ANCHORS",
    "COMBINED_ARGUMENT",
    "LONG_FLAG",
    "PROGRAM_ANCHORS",
    "PROGRAM_FLAG",
    "PROGRAM_LEAD",
    "PROGRAM_NEAR",
    "PROGRAM_REACH",
    "WINDOWS_ANCHORS",
    "WINDOWS_SWITCH",
    "cli_value_replacement",
    "combined_replacement",
]

_PROGRAM_FLAGS: tuple[tuple[str, str], ...] = (
    # OpenLDAP clients: -w passwd (simple authentication)
    (r"ldap(?:search|add|modify|delete|whoami|passwd|compare|modrdn|exop|url)", r"-w"),
    (r"(?:redis|keydb|valkey)-cli", r"-a"),
    (r"sqlcmd|bcp|osql|isql", r"-P"),
    (r"mosquitto_(?:pub|sub|rr)", r"-P"),
    (r"zip|unzip|zipcloak", r"-P"),
    (r"7z|7za|7zr", r"-p"),
    (r"psexec(?:64)?|paexec|rdesktop", r"-p"),
    (r"mongo|mongosh|mongo(?:dump|restore|export|import|stat|top|files)", r"-p"),
    (r"plink|pscp|psftp", r"-pw"),
    (r"ipmitool", r"-P"),
    (r"snmp(?:walk|get|getnext|set|bulkwalk|bulkget|trap|table)", r"-[AX]"),
    (r"openssl", r"-k"),
    # ``login`` subcommands: the match starts at ``login``, the program is looked behind
    (
        r"login(?:"
        + "|".join(
            f"(?<={name}[ \\t]login)"
            for name in (
                "docker",
                "podman",
                "nerdctl",
                "buildah",
                "skopeo",
                "oras",
                "oc",
                "cf",
                "az",
                "registry",
            )
        )
        + ")",
        r"-p",
    ),
)
"""(program, its password flag): the flag means a password to that program only."""

_VALUE = (
    r"(?:(?P<quoted>\"[^\"\n]{1,200}+\"|'[^'\n]{1,200}+')"
    r"|(?![-$%*<{])(?P<bare>[^\s\"'|;&<>`]{1,200}+))"
)
PROGRAM_FLAG = re.compile(
    r"(?P<head>(?<![\w./-])(?:"
    + "|".join(
        f"(?:{program})(?![\\w-])[^\\n|;&]{{0,200}}?[ \\t]{flag}"
        for program, flag in _PROGRAM_FLAGS
    )
    + r")(?:[ \t]+|=)?)"
    + _VALUE
)
"""A program and, later on its command line, its password flag and the value."""

LONG_FLAG = re.compile(
    r"(?P<head>-(?<![^\s\"'=]-)(?:(?:[A-Za-z][A-Za-z0-9_-]{0,30}?)?"
    r"(?:password|passwd|passphrase|pass|pwd|token|secret|apikey)"
    r"|-(?:[A-Za-z0-9]+[_-])*(?:pass|pw))"
    r"(?![A-Za-z0-9_-])(?:[ \t]+|=)(?:pass:)?)" + _VALUE
)
"""``-storepass X``, ``-token=X``, ``--pass X``, ``-passin pass:X``."""

WINDOWS_SWITCH = re.compile(
    r"(?P<head>/(?<![\w/.:-]/)(?:pass|password|passwd|pwd)[:=]"
    r"|freerdp(?<![\w./-][xw]freerdp)3?(?![\w-])[^\n|;&]{0,200}?[ \t]/p:"
    r"|net(?<![\w./-]net)[ \t]+use(?![\w-])[^\n|&]{0,200}?[ \t]/u(?:ser)?:[^\s/]++[ \t]+)" + _VALUE,
    re.IGNORECASE,
)
"""``/pass:X``, FreeRDP's ``/p:X`` and ``net use \\\\host\\share /user:NAME X``; tried where
:data:`WINDOWS_ANCHORS` occur (in the lowered text)."""
WINDOWS_ANCHORS = ("/pass", "/pwd", "freerdp", "net use")

PROGRAM_ANCHORS = (
    "ldap", "-cli", "sql", "bcp", "mosquitto", "zip", "7z", "exec", "rdesktop", "mongo",
    "plink", "pscp", "psftp", "ipmitool", "snmp", "openssl", "login",
)  # fmt: skip
"""Pieces of :data:`PROGRAM_FLAG`'s programs' names; a match is tried from the start of
the name around each (:data:`PROGRAM_LEAD`)."""
PROGRAM_LEAD = "abcdefghijklmnopqrstuvwxyz0123456789-_"
PROGRAM_NEAR = re.compile(r"-(?<=[ \t]-)[AXPakpw]")
"""The start of every password flag of :data:`_PROGRAM_FLAGS` after its space (a literal
first character, so the regex engine scans for it in C), which a match of
:data:`PROGRAM_FLAG` holds at most :data:`PROGRAM_REACH` characters after its start: the
program names are looked for only before one (a text without a flag skips the pass)."""
PROGRAM_REACH = 256
"""The longest program name (13 characters, ``mosquitto_pub``), the 200 characters allowed
before its flag and the space before the flag's dash, rounded up."""
COMBINED_ANCHORS = (
    "smb", "rpcclient", "crackmapexec", "nxc", "net", "sql", "expdp", "impdp", "rman", "dgmgrl",
)  # fmt: skip
"""Where :data:`COMBINED_ARGUMENT` can start."""

COMBINED_ARGUMENT = re.compile(
    r"(?P<head>(?<![\w./-])(?:"
    r"(?:smbclient|rpcclient|smbmap|smbcacls|smbget|crackmapexec|nxc|net)(?![\w-])"
    r"[^\n|;&]{0,200}?[ \t](?:-U|--user(?:=|[ \t]))[ \t]*[\"']?[^\s%\"']{1,100}+%"
    r"|(?:sqlplus|expdp|impdp|sqlldr|rman|dgmgrl)(?![\w-])(?:[ \t]+-[A-Za-z]+)*+[ \t]+"
    r"[\"']?[A-Za-z_][\w$#]{0,60}+/))"
    r"(?![$%*<{])(?P<value>[^\s@\"'/|;&]{1,200}+)"
)
"""``smbclient -U user%PW`` and ``sqlplus scott/PW@orcl``: the user kept, the password
(up to ``@``, a quote or a space) removed."""


def _worth_hiding(value: str, strict: bool) -> bool:
    if not value or REDACTED in value or announces_placeholder(value):
        return False
    if value[0] in "$%*<{-" or value.startswith(("env:", "file:", "fd:", "stdin")):
        return False
    if value[0] in "/~." or "://" in value:
        return False  # a path: ``-storepass`` takes words, ``-passfile`` paths
    return not strict or looks_secret_in_prose(value)


def cli_value_replacement(match: re.Match[str]) -> str:
    """The flag (or switch) kept and its value removed, quotes kept around it.

    A ``--pass``/``--pw`` value must look like a password (letters with digits or
    symbols, 6+ characters): ``--pass 2`` is a count."""
    head = match.group("head")
    flag = head.split()[0].split("=")[0].lower() if head.strip() else ""
    strict = flag.startswith("--") or flag.endswith(("pass", "pw"))
    quoted, bare = match.group("quoted"), match.group("bare")
    if quoted is not None:
        if not _worth_hiding(quoted[1:-1], strict):
            return match.group(0)
        return f"{head}{quoted[0]}{REDACTED}{quoted[-1]}"
    if bare is None or not _worth_hiding(bare, strict):
        return match.group(0)
    return f"{head}{REDACTED}"


def combined_replacement(match: re.Match[str]) -> str:
    value = match.group("value")
    if not _worth_hiding(value, False):
        return match.group(0)
    return f"{match.group('head')}{REDACTED}"
