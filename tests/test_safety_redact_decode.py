"""Base64 runs that decode to a secret are removed whole (palimpsest.safety.redact_decode)."""

from __future__ import annotations

import base64
import json

import pytest

from palimpsest.safety.redact import REDACTED, redact
from palimpsest.safety.redact_decode import redact_encoded


def b64(text: str, urlsafe: bool = False) -> str:
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    return encode(text.encode()).decode()


ENV = "MODE=live\nSTRIPE_KEY=sk_live_4eC39HqLyjWDarjtT1zdp7dc\nRETRIES=3\n"
CREDS = json.dumps({"region": "eu-west-1", "aws_access_key_id": "AKIAQ7XK2M4N6P8R1T3V"})


@pytest.mark.parametrize(
    "text",
    [
        f"echo {b64(ENV)} | base64 -d > .env",
        f"CONFIG_B64={b64(CREDS)}",
        f'{{"data": {{"dotenv": "{b64(ENV)}"}}}}',
        f"payload {b64('password=Kq7vN2pLx9Rw and more text', urlsafe=True).rstrip('=')} end",
    ],
)
def test_a_run_that_decodes_to_a_secret_goes_whole(text: str) -> None:
    out = redact(text)
    assert REDACTED in out
    assert not any(len(word) >= 32 for word in out.replace('"', " ").split())
    assert redact(out) == out


@pytest.mark.parametrize(
    "text",
    [
        "echo aGVsbG8gZnJvbSB0aGUgYnVpbGQgc2NyaXB0Cg== | base64 -d",  # "hello from the build script"
        "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
        "AccountManagerImplementationLoadAllWithRetries",
    ],
)
def test_text_binary_and_words_that_hold_no_secret_stay(text: str) -> None:
    assert redact(text) == text


def test_redact_encoded_asks_the_rules_about_the_decoded_text() -> None:
    found: list[str] = []
    seen: list[str] = []

    def inner(decoded: str) -> str:
        seen.append(decoded)
        return decoded.replace("secret", "[REDACTED]")

    run = b64("this text names a secret inside it")
    assert redact_encoded(f"x {run} y", inner, found) == f"x {REDACTED} y"
    assert seen == ["this text names a secret inside it"] and found == [run]
    assert redact_encoded("short", inner, found) == "short"
