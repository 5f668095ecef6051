"""Tokens of vendors the catalogue does not know, recognised by the shape most tokens share."""

from __future__ import annotations

import random
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.safety.redact import REDACTED, redact
from palimpsest.safety.redact_generic import GENERIC_TOKEN, looks_like_token

_R = random.Random(20261127)
_MIXED = string.ascii_letters + string.digits
_HEX = "0123456789abcdef"
_LOWER = string.ascii_lowercase + string.digits


def _rand(n: int, alphabet: str = _MIXED) -> str:
    return "".join(_R.choice(alphabet) for _ in range(n))


# Shapes of real vendors' tokens that the catalogue has no rule for (random values).
UNKNOWN_VENDORS = {
    "linear": "lin_api_" + _rand(40),
    "sentry": "sntrys_" + _rand(60),
    "planetscale": "pscale_tkn_" + _rand(43),
    "groq": "gsk_" + _rand(52),
    "figma": "figd_" + _rand(40),
    "docker": "dckr_pat_" + _rand(27),
    "notion": "ntn_" + _rand(46),
    "netlify": "nfp_" + _rand(40),
    "render": "rnd_" + _rand(32),
    "perplexity": "pplx-" + _rand(48),
    "posthog": "phx_" + _rand(47),
    "contentful": "CFPAT-" + _rand(43),
    "supabase": "sbp_" + _rand(40, _HEX),
    "pulumi": "pul-" + _rand(40, _HEX),
    "buildkite": "bkua_" + _rand(40, _HEX),
    "neon": "napi_" + _rand(64, _LOWER),
    "vault": "hvs." + _rand(90),
}

CONTEXTS = (
    "I exported {v} before running the deploy script.",
    "Use this one for staging: {v}",
    "echo {v} | docker login --password-stdin",
    '{{"note": "rotated", "value": "{v}"}}',
)


@pytest.mark.parametrize("name", sorted(UNKNOWN_VENDORS))
@pytest.mark.parametrize("context", CONTEXTS)
def test_an_unknown_vendors_token_in_prose_is_redacted(name: str, context: str) -> None:
    value = UNKNOWN_VENDORS[name]
    out = redact(context.format(v=value))
    assert REDACTED in out
    assert not any(value[i : i + 8] in out for i in range(len(value) - 7)), out


@pytest.mark.parametrize(
    "text",
    [
        # ids that providers print as ids
        "tool call call_9diWc1DYm4RLmPfHgIaP2wdQxZ7aBc3d answered",
        "toolu_01D7FLrfh4GYq7yT1ULFeyMVx9Qa and msg_01XFDUDYJgAACzvnptvVoYELk2",
        "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b",
        # names with numbers are names
        "class BetaCodeExecutionTool20250825Param(TypedDict):",
        "PPO_CartPoleWithProtobufObservationSpace_47dd2_00000",
        "def test_makeFY5253NearestEndMonthQuarter_offsets():",
        "from ray.serve.generated import serve_pb2_grpc.RayServeAPIServiceStub2",
        # digests and public material
        "sha256-4f9a1c0e2b7d3a8f6e5c4b3a29180f7e6d5c4b3a29180f7e6d5c4b3a29180f7e",
        "commit_3f9a2c41d8e07b65a1c29f3e0d4b7a6c58e1f2d3 merged",
        "pubkey-0123456789abcdef0123456789abcdef",
        # identifiers made of words
        "test_invalid_database_configuration_with_many_words_and_number_2",
        "my-project-staging-environment-2024-eu-west-1-cluster",
        "node_modules/.cache/some-package-name-with-version-1-2-3",
    ],
)
def test_look_alikes_are_left_alone(text: str) -> None:
    assert redact(text) == text


@given(st.lists(st.sampled_from(["alpha", "Beta", "data", "Parser", "v2", "io", "X"]), min_size=3))
def test_names_built_of_words_are_never_tokens(words: list[str]) -> None:
    body = "".join(words) + "Handler"
    assert not looks_like_token("app_", body * 2)


@given(st.text(alphabet=string.ascii_letters + "_-", min_size=24, max_size=80))
def test_a_body_without_a_digit_is_never_a_token(body: str) -> None:
    assert not looks_like_token("tok_", body)


def test_the_match_stops_at_a_path_or_a_longer_token() -> None:
    value = "gsk_" + _rand(52)
    # A token in a URL's path is a token; a path's hexadecimal part is a cache key.
    assert (
        redact(f"https://hooks.example.net/in/{value}")
        == f"https://hooks.example.net/in/{REDACTED}"
    )
    ray = "/tmp/ray-9a7972c3a75f55e976e620484f58410c920db091/env"
    assert redact(ray) == ray
    assert GENERIC_TOKEN.search("x" + value[1:]) is not None
    assert GENERIC_TOKEN.search("base64:" + value + "+/==") is None


@pytest.mark.parametrize(
    "text",
    [
        # what the rule flagged in the standard library's tests (docs/benchmarks.md)
        'b"Hello-Another-Way--fc4qua05auwb3674vfr0b"',  # punycode test string
        'boundary="b1_76a486bee62b0d200f33dc2ca08220ad"',  # MIME boundary
        "Doug Hellmann <doug.hellmann-Re5JQEeQqe8AvxtiuMwx3w@public.gmane.org>",  # message id
    ],
)
def test_others_text_it_once_flagged_is_left(text: str) -> None:
    assert redact(text) == text
