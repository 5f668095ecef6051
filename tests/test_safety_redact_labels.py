"""A value its sentence labels before a colon (``safety/redact_labels.py``): "the new API key
for staging: …". The values are of vendors no catalogue entry knows, so only this rule can
catch them."""

from __future__ import annotations

import random
import string

import pytest

from palimpsest.safety.redact import REDACTED, redact
from palimpsest.safety.redact_labels import labelled_secret

_R = random.Random(20261128)
_B62 = string.ascii_letters + string.digits


def _rand(n: int, alphabet: str = _B62) -> str:
    return "".join(_R.choice(alphabet) for _ in range(n))


VALUES = {
    "separated": "qk7-" + _rand(18) + "_" + _rand(9),
    "uuid": "-".join(_rand(n, "0123456789abcdef") for n in (8, 4, 4, 4, 12)),
    "hex": _rand(40, "0123456789abcdef"),
    "base64": _rand(20, _B62 + "+/") + "+" + _rand(20, _B62 + "+/") + "/x=",
    "upper": "ZX" + _rand(18, string.ascii_uppercase + string.digits),
    "lower-base32": _rand(52, "abcdefghijklmnopqrstuvwxyz234567"),
    "dotted": "v3."
    + _rand(24, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
    + "."
    + _rand(40, "0123456789abcdef"),
    "short-mixed": _rand(24),
}

SENTENCES = (
    "Your new deploy key for the staging cluster: {v}",
    "Generated the access token for the nightly job (expires in 30 days): {v}",
    "client secret of the OAuth app we registered: `{v}`",
    "Rotated! The webhook signing secret is now live, copy it from here: '{v}'",
    "PAT for the build agent: {v}",
    "ok so the password for the read replica: {v}.",
)


@pytest.mark.parametrize("kind", sorted(VALUES))
@pytest.mark.parametrize("sentence", SENTENCES)
def test_a_value_labelled_before_a_colon_is_redacted(kind: str, sentence: str) -> None:
    value = VALUES[kind]
    out = redact(sentence.format(v=value))
    assert REDACTED in out
    assert not any(value[i : i + 8] in out for i in range(len(value) - 7)), out
    assert out.startswith(sentence.split("{v}")[0].rstrip("`'"))


def test_the_full_stop_after_the_value_stays() -> None:
    value = VALUES["separated"]
    assert (
        redact(f"the API key you asked for: {value}.") == f"the API key you asked for: {REDACTED}."
    )


@pytest.mark.parametrize(
    "text",
    [
        "token endpoint: https://auth.example.com/oauth2/token",
        "API key ID for the audit log: 4f1c2a9e-0b7d-4e21-9c3a-5d6e7f8a9b0c",
        "secret name in the vault: prod-db-credentials-2024",
        "token usage for this run: 12,345",
        "the tokenizer we load: cl100k_base",
        "secrets loaded from file: config/secrets2.yaml",
        "API key header: X-Api-Key",
        "access key for the bucket: AWS_ACCESS_KEY_ID_2",
        "tokens per second on this host: 1840.5",
        "Token budget for the summary model: gpt-4o-mini-2024-07-18",
        "The secret's sha256: "
        + "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "Hostname of the token service: api2.example.com",
        "key for the cache: 5d41402abc4b2a76b9719d911017c592",
        "password policy for new accounts: min-length-12",
        "Where the token is stored: ~/.config/gh/hosts2.yml",
        "the token refresh failed: invalid_grant",
        "API keys are read from the environment: OPENAI_API_KEY",
        "personal access tokens (classic) are listed at: github.com/settings/tokens",
    ],
)
def test_what_else_follows_a_name_and_a_colon_is_left(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    ("value", "secret"),
    [
        ("fc-3a9d0c7b1e2f4a5b6c7d8e9f0a1b2c3d", True),
        ("X5CmT8v2XEvfoOtqav2FqncD", True),
        ("src/app2/settings3.py", False),
        ("github-actions-deploy-prod1", False),
        ("api_key_v2", False),
        ("DEPLOY_TOKEN_2", False),
        ("v2.3.1-rc4", False),
        ("your-api-key-here", False),
    ],
)
def test_what_a_labelled_value_must_look_like(value: str, secret: bool) -> None:
    assert labelled_secret(value) is secret


@pytest.mark.parametrize(
    "value",
    [
        "8eTNyv.VB_RTg:_a34jnqckMJ0X67tl856UNCmFvbkTsNCxtpB_rgNvNN",
        "prod:tidy-heron-021|eyJ2MiI6IhHVujLMc9TiAvSm09woolEv_YthXG8niLfv0MQ",
        "access_token$production$ctb11mgz0wlutcgh$0ee0a79bcec3f126fec4e595eea5a35c",
        "pat.qH4QFFfTjMTGuuzJU89-Fo.6f8b9df130c0d4542e002b0c.lOkBZWmlSkaZEVOepXCQ",
        "0.322a51a9-b384-4d3d-7e65-66318b410d01.91lVimtknAing2ESrgPifJ:SdRth6eIVCO14/kHKOGpjw==",
    ],
)
def test_labelled_values_may_hold_colons_dollars_and_bars(value: str) -> None:
    out = redact(f"here is the new access token you asked for: {value}")
    assert out.endswith(REDACTED)


@pytest.mark.parametrize("kind", ["SDK", "server", "license", "webhook", "project"])
def test_a_key_of_any_credential_kind_labels_its_value(kind: str) -> None:
    value = "sdk-71f9028e-5d4c-26b7-c374-bb1d3c675c28"
    assert redact(f"the new {kind} key you asked for: {value}").endswith(REDACTED)


@pytest.mark.parametrize(
    "text",
    [
        "the cache entry for this user key, see: ab:12:cd",
        "the token endpoint host: api.example.com:8443",
        "the API key was saved at: 12:30:45",
        "the secret lives in: settings.PaymentGateway",
    ],
)
def test_labelled_colons_times_and_names_are_left(text: str) -> None:
    assert redact(text) == text
