"""Keys with no prefix: redacted when random *and* named by their sentence, left otherwise."""

from __future__ import annotations

import random
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.safety.redact import REDACTED, redact, redact_together

_R = random.Random(20261128)
_MIXED = string.ascii_letters + string.digits
_UPPER = string.ascii_uppercase + string.digits


def _rand(n: int, alphabet: str = _MIXED) -> str:
    while True:
        value = "".join(_R.choice(alphabet) for _ in range(n))
        if sum(c.isdigit() for c in value) >= 4 and any(c.isalpha() for c in value):
            return value


MIXED_40 = "q7Rk2VbW9xLp4NcT8sZd1HfY6mJa3GuE5oKi0BrP"
UPPER_34 = "Q7RK2VBW9XLP4NCT8SZD1HFY6MJA3GUE5O"
HEX_32 = "9c41e07b2d5af8361e0c7b94a2d5f3e8"

NAMED = (
    "Cohere gave me this API key {v} yesterday",
    "can you check whether token {v} still works?",
    "- revoke {v} (leaked in the CI log)",
    "{v} <- that's the secret for the webhook",
    "Login failed with {v}, trying the other one",
)


@pytest.mark.parametrize("value", [MIXED_40, UPPER_34, HEX_32])
@pytest.mark.parametrize("context", NAMED)
def test_a_bare_key_its_sentence_names_is_redacted(value: str, context: str) -> None:
    out = redact(context.format(v=value))
    assert value not in out
    assert REDACTED in out


@pytest.mark.parametrize("value", [UPPER_34, HEX_32, MIXED_40[:28]])
def test_a_bare_key_with_no_word_naming_it_is_left(value: str) -> None:
    # the documented limit: one case, hexadecimal or a short run is not evidence alone
    text = f"Use this one for the staging box: {value}"
    assert redact(text) == text


@pytest.mark.parametrize(
    "context",
    [
        "Use this one for the staging box: {v}",
        "Pasted from the dashboard: {v}",
        "| prod | {v} | expires 2027-01-01 |",
        "{v}",
        "printf '%s' {v} > /tmp/out.txt",
    ],
)
def test_a_long_random_run_of_both_cases_needs_no_name(context: str) -> None:
    out = redact(context.format(v=MIXED_40))
    assert MIXED_40 not in out and REDACTED in out


@pytest.mark.parametrize(
    "text",
    [
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBo4t6yVwGkq9Lk0cE0Y1sbJXK7bYxqJzPj9mZ2Y8dQk dev@laptop",
        f"commit sha256 {MIXED_40}",
        f"request id {MIXED_40}",
        "GetCartPoleWithProtobufObservationSpaceRequest2Handler",
        f"https://example.com/files/{MIXED_40}/view",
        f"/var/cache/{MIXED_40}",
        f"module.{MIXED_40}.attr",
        f"data:image/png;base64,{MIXED_40}+{MIXED_40}/{MIXED_40}==",
        # base64 of text, a line of a wrapped base64 body, the start of a PNG
        "Subject: =?utf-8?b?44Gf44KJ44KB44Gn44GZ44CC5a6f6Zqb44Gr44Gv44CMV2VubiBpc3QgZGFz?=",
        "IDEuMApDb250ZW50LVR5cGU6IHRleHQvcGxhaW47IGNoYXJzZXQ9aXNvLTg4NTktMQpDb250ZW50",
        f"Content-Transfer-Encoding: base64\n\n{MIXED_40}{MIXED_40}\n{MIXED_40}{MIXED_40}\n",
        "iVBORw0KGgoAAAANSUhEUgAAADAAAAAwBAMAAAClLOS0AAAAGFBMVEUAAAAkHiJeRUIcGBi9",
    ],
)
def test_a_random_run_that_is_a_name_path_or_public_key_is_left(text: str) -> None:
    assert redact(text) == text


def test_base64_keys_of_documented_lengths_are_redacted_alone() -> None:
    aws = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYq9Kz3dLm2Xv"[:40]
    assert len(aws) == 40
    assert aws not in redact(f"Pasted from the dashboard: {aws}")
    azure = (
        "Kq9" + "x7B+pL2/mN4vR8sT1wY5zA3cD6fG0hJ" * 2 + "Zk2mQ8rT4vW7yB1nP5sX9cF3gJ6=="[:23] + "=="
    )
    azure = azure[:86] + "=="
    assert len(azure) == 88
    assert azure[:40] not in redact(f"| storage | {azure} |")
    # an npm integrity value is a digest, refused by the boundary
    text = f'"integrity": "sha512-{azure}"'
    assert redact(text) == text


def test_key_alone_counts_for_mixed_case_only() -> None:
    assert MIXED_40 not in redact(f"the new key {MIXED_40} works")
    text = f"the cache key {HEX_32} was evicted"
    assert redact(text) == text


@pytest.mark.parametrize(
    "text",
    [
        f"commit {HEX_32} fixed the token refresh",
        f"the token's sha256 is {HEX_32}",
        f'{{"token_hash": "sha256", "sha256": "{HEX_32}"}}',
        f"request id {MIXED_40} failed to refresh the token",
        f"public key {MIXED_40} (not the secret one)",
        # longer than a key: a digest or key material in a test vector
        "password test vector: " + "0f" * 40,
        # an identifier in code, next to the word key
        "    PBESv1SHA1And3KeyTripleDESCBC = 'PBESv1 using SHA1 and 3-Key TripleDES'",
        "return PKCS12KeyAndCertificates(key, cert)  # token",
        # the header of a JWT and an elided example
        'verify_token="eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9..."',
        f"token = {MIXED_40}(secret)",
        # paths, URLs and dotted names are not bare runs
        f"the token lives in /var/run/{MIXED_40}/secret",
        f"see https://example.com/{MIXED_40} for the token docs",
    ],
)
def test_digests_ids_names_and_paths_are_left(text: str) -> None:
    assert redact(text) == text


def test_a_named_key_is_removed_where_it_appears_again_unnamed() -> None:
    text = f"rotate the key {MIXED_40} today.\nUse this one for staging: {MIXED_40}"
    out = redact(text)
    assert MIXED_40 not in out
    assert out.count(REDACTED) == 2


def test_a_named_key_is_removed_from_the_other_messages_shown_with_it() -> None:
    first = f"Use this one for staging: {UPPER_34}"
    second = f"that token {UPPER_34} is dead, revoke it"
    out = redact_together([first, second])
    assert all(UPPER_34 not in text for text in out)


_WORDS = st.sampled_from(
    ["Key", "Token", "Secret", "Pass", "Config", "Handler", "Manager", "Store", "Cache", "Retry",
     "Policy", "Client", "Http", "Json", "Async", "Base", "Error", "Value", "Auth", "Request"]
)  # fmt: skip


@given(st.lists(st.tuples(_WORDS, st.integers(0, 999)), min_size=3, max_size=6))
def test_camel_case_names_with_numbers_are_left(parts: list[tuple[str, int]]) -> None:
    name = "".join(f"{word}{number}" for word, number in parts)
    text = f"the token is passed to {name} before the secret rotates"
    assert redact(text) == text


def test_random_keys_are_mostly_caught_when_named() -> None:
    values = [_rand(40) for _ in range(200)] + [_rand(34, _UPPER) for _ in range(200)]
    caught = sum(value not in redact(f"old token {value} revoked") for value in values)
    assert caught >= 0.85 * len(values)
