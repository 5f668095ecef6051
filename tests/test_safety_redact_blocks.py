"""Values on the lines after their name: next-line values and YAML block scalars (issue 20)."""

from __future__ import annotations

import json

import pytest

from palimpsest.safety.redact import REDACTED, redact
from palimpsest.safety.redact_blocks import on_escaped_lines, redact_blocks

KEY = "Vb7nQ2xL9kWp4RtZ8mCs"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"New password:\n{KEY}\nsaved", f"New password:\n{REDACTED}\nsaved"),
        (f"Secret:\r\n{KEY}\r\n", f"Secret:\r\n{REDACTED}\r\n"),
        (f"ci:\n  deploy_token:\n    {KEY}\n", f"ci:\n  deploy_token:\n    {REDACTED}\n"),
        (f"passphrase:\n{KEY}", f"passphrase:\n{REDACTED}"),
    ],
)
def test_a_value_on_the_next_line_goes(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Password:\nSorry, try again.",
        "api_key:\n  type: string\n  description: the caller's key",
        "token:\n  ${DEPLOY_TOKEN}",
        "secret:\n  <set me>",
        "Token:\nAborted.",
        "password:\n---",
        "description:\n  Vb7nQ2xL9kWp4RtZ8mCs",  # not the name of a secret
        "Enter passphrase (empty for no passphrase):\nEnter same passphrase again:",
    ],
)
def test_what_follows_a_name_on_the_next_line_can_stay(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize("indicator", ["|", "|-", ">", ">-", "|+", "|2", ">-  # folded"])
def test_a_block_scalar_under_a_secret_name_goes_whole(indicator: str) -> None:
    text = f"app:\n  client_secret: {indicator}\n    {KEY}\n    {KEY[::-1]}\n  client_id: web\n"
    out = redact(text)
    assert out == f"app:\n  client_secret: {indicator}\n    {REDACTED}\n  client_id: web\n"


def test_a_block_at_the_end_of_the_text_and_after_blank_lines() -> None:
    assert redact(f"password: |\n\n  {KEY}") == f"password: |\n\n  {REDACTED}"


@pytest.mark.parametrize(
    "text",
    [
        "description: |\n  The API key rotates every 30 days.\n  Ask #platform for access.",
        "password: >-\n  <set in vault under prod/db>",
        "secret: |\n  ${SIGNING_SECRET}",
        "token_help: >-\n  Paste the token you generated in settings.",
        "secret: |\n  This is the secret used to sign the session cookies.",
    ],
)
def test_placeholder_prose_and_other_names_keep_their_blocks(text: str) -> None:
    assert redact(text) == text


def test_a_pem_block_keeps_its_armour() -> None:
    body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + KEY
    text = f"tls:\n  key: |\n    -----BEGIN PRIVATE KEY-----\n    {body}\n    -----END PRIVATE KEY-----\n"
    out = redact(text)
    assert body not in out and "-----BEGIN PRIVATE KEY-----" in out


def test_json_escaped_lines_are_read_as_lines() -> None:
    arguments = json.dumps({"file": f"signing_key: |\n  {KEY}\nalg: HS512", "n": 1})
    out = redact(arguments)
    assert KEY not in out
    assert json.loads(out) == {"file": f"signing_key: |\n  {REDACTED}\nalg: HS512", "n": 1}


def test_on_escaped_lines_round_trips_exactly() -> None:
    text = '{"a": "x\\ny\\r\\nz"}'
    assert on_escaped_lines(text, lambda lines: lines) == text
    assert on_escaped_lines(text, lambda lines: lines.replace("y", "Y")) == '{"a": "x\\nY\\r\\nz"}'
    escaped_backslash = '{"a": "C:\\\\new"}'  # "\\n" here is a backslash and an n
    assert (
        on_escaped_lines(escaped_backslash, lambda lines: lines.upper())
        == escaped_backslash.upper()
    )


def test_redact_blocks_reports_what_it_removed() -> None:
    found: list[str] = []
    assert redact_blocks(f"token:\n{KEY}", found) == f"token:\n{REDACTED}"
    assert found == [KEY]


def test_crlf_blocks_keep_their_line_ends() -> None:
    text = f"password: |\r\n  {KEY}\r\nuser: app\r\n"
    assert redact(text) == f"password: |\r\n  {REDACTED}\r\nuser: app\r\n"
