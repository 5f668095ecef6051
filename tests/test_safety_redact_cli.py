"""Passwords on command lines (``safety/redact_cli.py``): the short flags of programs that
take one, single-dash long flags, Windows switches, and user-and-password arguments."""

from __future__ import annotations

import re
import re._parser as parser  # the widths of the program names' patterns
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.safety.redact import REDACTED, redact
from palimpsest.safety.redact_cli import _PROGRAM_FLAGS, PROGRAM_NEAR, PROGRAM_REACH

PW = "w9wPumU5kvPY6n40"


@pytest.mark.parametrize(
    "text",
    [
        f"ldapsearch -x -H ldaps://ldap.acme.io -D 'cn=admin,dc=acme' -w '{PW}' -b 'dc=acme'",
        f"ldapmodify -D cn=admin -w {PW} -f change.ldif",
        f"redis-cli -h cache.internal -p 6379 -a {PW} PING",
        f'sqlcmd -S tcp:sql01,1433 -U sa -P "{PW}" -Q "SELECT 1"',
        f"mosquitto_pub -h broker -u dev -P {PW} -t test -m hi",
        f"7z x -p{PW} backup.7z",
        f"mongosh mongodb://db:27017 -u admin -p {PW}",
        f"docker login registry.example.com -u ci -p {PW}",
        f"helm registry login ghcr.io -u bot -p {PW}",
        f"plink -ssh deploy@host -pw {PW}",
        f"keytool -importkeystore -srckeystore a.p12 -srcstorepass {PW} -deststorepass {PW}",
        f"openssl pkcs12 -export -in c.pem -passout pass:{PW} -out c.p12",
        f"influx -username admin -password {PW}",
        f"redis-cli --pass {PW} info",
        f"cmdkey /generic:TERMSRV/host /user:admin /pass:{PW}",
        f"xfreerdp /v:10.0.0.4 /u:admin /p:{PW}",
        f"net use Z: \\\\fs01\\share /user:ACME\\svc_backup {PW} y funcionó.",
        f"smbclient //fs01/share -U backup%{PW}",
        f"sqlplus scott/{PW}@orcl",
    ],
)
def test_a_password_on_a_command_line_is_redacted(text: str) -> None:
    out = redact(text)
    assert PW not in out and REDACTED in out


@pytest.mark.parametrize(
    "text",
    [
        "redis-cli -h cache.internal -p 6379 PING",
        "docker run -p 8080:80 nginx",
        "ldapsearch -x -W -b dc=acme",
        "ldapsearch -D cn=admin -w $LDAP_PW -b dc=acme",
        "openssl enc -aes256 -pass env:BACKUP_PW -in a -out b",
        "openssl pkcs12 -passin file:/run/secrets/p12pass -in c.p12",
        "keytool -list -storepass:env STOREPASS",
        "gzip --pass 2 data.txt",
        "the module's `forward`-pass to the action logits",
        "keytool -list -storepass changeit",
        "zip -r out.zip dir",
        "msbuild app.sln /p:Configuration=Release",
        "net use Z: \\\\fs01\\share /user:ACME\\svc_backup /persistent:yes",
        "sqlplus / as sysdba",
        "# No broadcasting, base w/ mask, exp w/o mask",
        "smbclient -L fs01 -U guest%",
    ],
)
def test_command_lines_without_a_password_are_left(text: str) -> None:
    assert redact(text) == text


@given(st.sampled_from(["-p", "-P", "-w", "-a"]), st.integers(1, 65535))
def test_a_short_flag_of_a_program_not_taking_a_password_is_left(flag: str, number: int) -> None:
    text = f"curl -s {flag} {number} https://example.com"
    assert redact(text) == text


def test_every_program_flag_is_near_its_trigger_and_within_reach() -> None:
    """Program names are looked for only within PROGRAM_REACH characters before a match of
    PROGRAM_NEAR: every flag must start with one, every name be short enough."""
    for program, flag in _PROGRAM_FLAGS:
        assert parser.parse(program).getwidth()[1] + 200 + 1 <= PROGRAM_REACH
        for char in string.ascii_letters:
            if re.match(flag, f"-{char}w"):
                assert PROGRAM_NEAR.match(f" -{char}", 1), (flag, char)


@pytest.mark.parametrize("gap", [0, 150, 198, 199, 200, 260])
@pytest.mark.parametrize(
    ("program", "flag"), [("mosquitto_pub", "-P"), ("ldapsearch", "-w"), ("7z x", "-p")]
)
def test_a_program_flag_far_after_the_name(gap: int, program: str, flag: str) -> None:
    """Up to 200 characters between the name and the flag's space the value goes, past them
    it stays (the flag trigger's reach covers the longest name and the whole gap)."""
    text = f"{program} {'a' * gap} {flag} {PW}"
    assert (PW not in redact(text)) == (
        len(text) - len(f" {flag} {PW}") - len(program.split()[0]) <= 200
    )
