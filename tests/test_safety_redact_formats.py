"""Credentials a file format carries (``.netrc``, HTTP Basic, PuTTY, SSH2 armour)."""

from __future__ import annotations

import base64

import pytest

from palimpsest.safety.redact import REDACTED, redact

PASSWORD = "Zq8mT2vLx9Rk"


@pytest.mark.parametrize(
    "text",
    [
        f"machine api.heroku.com login me@example.com password {PASSWORD}",
        f"machine git.internal\n  login deploy\n  password {PASSWORD}\n",
        f"default login anonymous password {PASSWORD}",
        f"I put `machine h login u password {PASSWORD}` in ~/.netrc",
    ],
)
def test_a_netrc_password_is_redacted_and_the_entry_kept(text: str) -> None:
    out = redact(text)
    assert PASSWORD not in out and REDACTED in out
    assert "password" in out and ("machine" in out or "default" in out)


@pytest.mark.parametrize(
    "text",
    [
        "the default password policy requires 12 characters",
        "on the machine prod password rotation happens weekly",
        "Set a password for the machine account in the console.",
    ],
)
def test_prose_about_machines_and_passwords_is_left(text: str) -> None:
    assert redact(text) == text


def test_a_basic_credential_outside_a_header_is_redacted_when_it_decodes() -> None:
    value = base64.b64encode(f"ci-bot:{PASSWORD}".encode()).decode()
    out = redact(f"the webhook was called with Basic {value}")
    assert value not in out and out.endswith(f"Basic {REDACTED}")


@pytest.mark.parametrize(
    "text",
    [
        "Basic auth is enough for the staging proxy",
        "Basic Authentication is described in RFC 7617",
        "Basic ZGVhZGJlZWZjYWZlYmFiZQ== decodes to no user:password pair",
    ],
)
def test_basic_that_is_not_a_credential_is_left(text: str) -> None:
    assert redact(text) == text


def test_putty_private_lines_are_redacted_and_the_public_half_kept() -> None:
    public = "AAAAC3NzaC1lZDI1NTE5AAAAIEh3"
    private = "QmFzZTY0UHJpdmF0ZUtleU1hdGVyaWFsT25lVHdvVGhyZWU="
    text = (
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy\n"
        f"Public-Lines: 1\n{public}\nPrivate-Lines: 1\n{private}\nPrivate-MAC: ab12"
    )
    out = redact(text)
    assert private not in out and public in out and "Private-MAC" in out


@pytest.mark.parametrize("closed", [True, False])
def test_an_ssh2_private_key_armour_is_redacted_whole(closed: bool) -> None:
    body = 'Comment: "rsa-key-20240101"\nP2/56wAAAi4AAAA3aWYtbW9kbntzaWdu\nZWQtcG9wLWZpcnN0fQ=='
    end = "\n---- END SSH2 ENCRYPTED PRIVATE KEY ----" if closed else ""
    out = redact(f"---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\n{body}{end}")
    assert "P2/56wAAAi4AAAA3" not in out and "rsa-key" not in out
    assert out.startswith("---- BEGIN SSH2") and REDACTED in out
    assert out.endswith("----") == closed


PG_PASSWORD = "hQ4tRw9ZxK2mvL7p"


@pytest.mark.parametrize(
    "text",
    [
        f"localhost:5432:*:postgres:{PG_PASSWORD}",
        f"pg-replica.example.net:6432:billing:svc_billing:{PG_PASSWORD}\n",
        f"$ tail -n 2 ~/.pgpass\n10.4.0.12:5432:analytics:reader:{PG_PASSWORD}\n*:*:*:backup:{PG_PASSWORD}",
        f"echo 'pg.internal:5433:orders:app:{PG_PASSWORD}' >> ~/.pgpass && chmod 600 ~/.pgpass",
    ],
)
def test_a_pgpass_entry_loses_its_password_and_keeps_its_fields(text: str) -> None:
    out = redact(text)
    assert PG_PASSWORD not in out and REDACTED in out
    assert ":5432:" in out or ":6432:" in out or ":5433:" in out


def test_a_pgpass_password_with_an_escaped_colon_goes_whole() -> None:
    out = redact(r"db.internal:5432:app:app_rw:Kx7\:pQ9vR2wL")
    assert out == f"db.internal:5432:app:app_rw:{REDACTED}"


@pytest.mark.parametrize(
    "text",
    [
        "12:30:45:10:59",
        "notes.txt:12:TODO:fix:later",
        "fe80:0:0:0:1",
        "ssh -N -L 5432:db.internal:5432 deploy@bastion",
        "db.internal:5432:app:app_rw:*",
        "the format is hostname:port:database:username:password",
    ],
)
def test_colon_separated_lines_that_are_not_pgpass_entries_are_left(text: str) -> None:
    assert redact(text) == text


SESSION = "k3v9x0q7m2z8w1r5t4y6u8i0o2p4a6s8"


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (f"Cookie: PHPSESSID={SESSION}; theme=dark", "theme=dark"),
        (
            f"< set-cookie: __Host-session={SESSION}; Path=/; Secure; HttpOnly; SameSite=Lax",
            "Path=/; Secure; HttpOnly; SameSite=Lax",
        ),
        (f'headers = {{"Cookie": "remember_user_token={SESSION}"}}', "remember_user_token="),
        (f"> Cookie: lang=en; _app_sid=s%3A{SESSION}.Zk2", "lang=en"),
    ],
)
def test_a_session_cookie_loses_its_value_and_keeps_the_rest(text: str, kept: str) -> None:
    out = redact(text)
    assert SESSION[:8] not in out and REDACTED in out
    assert kept in out


@pytest.mark.parametrize(
    "text",
    [
        "Set-Cookie: theme=dark; Path=/; Max-Age=31536000",
        "Cookie: lang=en-US; tz=Europe/Berlin; consent=yes",
        "Set-Cookie: PART_NUMBER=ROCKET_LAUNCHER_0001; path=/",
        "the Cookie: header is sent back on every request to the same origin",
        "Set-Cookie: sessionid=deleted; expires=Thu, 01 Jan 1970 00:00:00 GMT",
    ],
)
def test_cookies_that_hold_no_credential_are_left(text: str) -> None:
    assert redact(text) == text


KEY_ID = "3f9c0a7be1d24c6f8a05b9e7d1c3f2a4b6e8d0c1"


@pytest.mark.parametrize(
    "text",
    [
        "{\n"
        '  "type": "service_account",\n'
        '  "project_id": "ledger-staging",\n'
        f'  "private_key_id": "{KEY_ID}",\n'
        '  "client_email": "ci@ledger-staging.iam.gserviceaccount.com"\n}',
        f'{{"private_key_id": "{KEY_ID}", "private_key": "-----BEGIN PRIVATE KEY-----\\n..."}}',
        f'{{\\"client_email\\": \\"etl@data.iam.gserviceaccount.com\\", \\"private_key_id\\": \\"{KEY_ID}\\"}}',
    ],
)
def test_a_service_account_private_key_id_is_redacted(text: str) -> None:
    out = redact(text)
    assert KEY_ID[:8] not in out and REDACTED in out and "private_key_id" in out


def test_a_private_key_id_outside_a_service_account_file_is_left() -> None:
    text = f'{{"kid": "k1", "private_key_id": "{KEY_ID}", "alg": "RS256"}}'
    assert redact(text) == text


_HEX_LINES = "\n".join(
    "".join("0123456789abcdef"[(i * 7 + j * 13) % 16] for j in range(32)) for i in range(4)
)


@pytest.mark.parametrize(
    "label", ["OpenVPN Static key V1", "WireGuard PRIVATE KEY", "ACME SECRET", "VAULT TOKEN"]
)
def test_a_pem_style_block_with_a_secret_label_loses_its_body(label: str) -> None:
    text = f"<tls-auth>\n-----BEGIN {label}-----\n{_HEX_LINES}\n-----END {label}-----\n</tls-auth>"
    out = redact(text)
    assert _HEX_LINES.splitlines()[1] not in out and REDACTED in out
    assert f"-----BEGIN {label}-----" in out and f"-----END {label}-----" in out


@pytest.mark.parametrize(
    "label", ["CERTIFICATE", "PUBLIC KEY", "RSA PUBLIC KEY", "PGP SIGNATURE", "DH PARAMETERS"]
)
def test_a_pem_style_block_of_a_public_object_is_left(label: str) -> None:
    text = f"-----BEGIN {label}-----\n{_HEX_LINES}\n-----END {label}-----"
    assert redact(text) == text


BCRYPT = "XDxD7HGzwf89XEb1uGW1IVFJrGyny2xUbRvPvvNlaOADmXACGVLvO"


@pytest.mark.parametrize(
    ("text", "head"),
    [
        (f"admin:$2y$10${BCRYPT}", "$2y$10$"),
        (f"| admin | `$2b$12${BCRYPT}` |", "$2b$12$"),
        ("root:$6$rounds=5000$saltsalt$" + BCRYPT + ":19000:0:99999:7:::", "$6$rounds=5000$"),
        ("monitor:$apr1$me5BPPIf$mO70B7TTecIxiSJwMe7vVw", "$apr1$me5BPPIf$"),
        ("$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$" + BCRYPT[:43], "$argon2id$v=19$"),
    ],
)
def test_a_password_hash_loses_salt_and_hash_and_keeps_its_algorithm(text: str, head: str) -> None:
    out = redact(text)
    assert BCRYPT[:16] not in out and "mO70B7TTecIxiSJw" not in out
    assert head in out and REDACTED in out


@pytest.mark.parametrize(
    "text",
    [
        "price: $2$10$ each",
        "echo $1$HOME$PATH",
        "the cost went from $5$ to $6$ per seat",
    ],
)
def test_dollar_signs_that_are_no_password_hash_are_left(text: str) -> None:
    assert redact(text) == text
