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
