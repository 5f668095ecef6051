"""The catalogue's vendor formats added for issue 20's second and third stages, each in its
own contexts."""

from __future__ import annotations

import random
import string

import pytest

from palimpsest.safety.redact import REDACTED, redact
from palimpsest.safety.redact_patterns import TOKEN_PATTERNS

_R = random.Random(4401)
_B62 = string.ascii_letters + string.digits
_B64URL = _B62 + "-_"
_HEX = "0123456789abcdef"
_UPPER = string.ascii_uppercase + string.digits


def _rand(n: int, alphabet: str = _B62) -> str:
    return "".join(_R.choice(alphabet) for _ in range(n))


def _uuid() -> str:
    return "-".join(_rand(n, _HEX) for n in (8, 4, 4, 4, 12))


TOKENS = {
    "heroku": "HRKU-" + _uuid(),
    "heroku-new": "HRKU-AA" + _rand(58, _B64URL),
    "plaid": "access-sandbox-" + _uuid(),
    "plaid-public": "public-production-" + _uuid(),
    "mapbox": "sk.eyJ1IjoiZGV2b3BzIiwiYSI6I" + _rand(20) + "." + _rand(22, _B64URL),
    "mapbox-temporary": "tk.eyJ1IjoibWFwcyIsImV4cCI6M" + _rand(30) + "." + _rand(22, _B64URL),
    "infisical": "st." + _rand(24, _HEX) + "." + _rand(32, _HEX) + "." + _rand(32, _HEX),
    "mailchimp": _rand(32, _HEX) + "-us6",
    "square": "EAAAl" + _rand(59, _B64URL).replace("_", "4"),
    "square-oauth": "sq0csp-" + _rand(43, _B64URL),
    "databricks": "dapi" + _rand(32, _HEX) + "-2",
    "atlassian": "ATATT3xFfGF0" + _rand(170, _B64URL) + "=" + _rand(8, "0123456789ABCDEF"),
    "bitbucket": "ATBB" + _rand(32),
    "newrelic": "NRAK-" + _rand(27, _UPPER),
    "terraform": _rand(14) + ".atlasv1." + _rand(70, _B64URL),
    "airtable": "pat" + _rand(14) + "." + _rand(64, _HEX),
    "asana": "1/"
    + _rand(16, string.digits)
    + "/"
    + _rand(16, string.digits)
    + ":"
    + _rand(32, _HEX),
    "cloudflare-origin-ca": "v1.0-" + _rand(24, _HEX) + "-" + _rand(146, _HEX),
    # issue 20, third stage (designed on probe C)
    "supabase-secret": "sb_secret_" + _rand(31, _B64URL),
    "gitlab-runner": "glrt-" + _rand(20, _B64URL),
    "huggingface-org": "api_org_" + _rand(34),
    "openshift": "sha256~" + _rand(43, _B64URL),
    "alibaba": "LTAI" + _rand(19) + "7",
    "tencent": "AKID" + _rand(31) + "3",
    "jfrog-api-key": "AKCp" + _rand(69),
    "jfrog-reference": "cmVmdGtuOjAxOjE3" + _rand(48),
    "databricks-oauth": "dose" + _rand(32, _HEX),
    "google-refresh": "1//0" + _rand(2) + _rand(98, _B64URL),
    "salesforce": "00D" + _rand(12) + "!AQ" + _rand(4) + "." + _rand(90, _B62 + "._"),
    "fcm": "AAAA" + _rand(7, _B64URL) + ":APA91b" + _rand(134, _B64URL),
    "aws-session-token": "IQoJb3JpZ2luX2VjE" + _rand(300, _B62 + "+/") + "==",
    "jwe": "eyJhbGciOiJSU0EtT0FFUCIsImVuYyI6IkEyNTZHQ00ifQ."
    + _rand(40, _B64URL)
    + "."
    + _rand(16, _B64URL)
    + "."
    + _rand(60, _B64URL)
    + "."
    + _rand(22, _B64URL),
    "jwt-pretty-payload": "eyJhbGciOiJIUzI1NiJ9.ewogICJzdWIiOiAic3ZjIgp9." + _rand(43, _B64URL),
    # issue 20, fourth stage (designed on probe D)
    "firecrawl": "fc-" + _rand(32, _HEX),
    "browserbase": "bb_live_" + _rand(27, _B64URL),
    "gitlab-deploy": "gldt-" + _rand(20, _B64URL),
    "gitlab-feed": "glft-" + _rand(20, _B62),
    "gitlab-oauth-secret": "gloas-" + _rand(64, _HEX),
    "slack-app": "xapp-1-A"
    + _rand(10, _UPPER)
    + "-"
    + _rand(13, "0123456789")
    + "-"
    + _rand(64, _HEX),
    "hubspot": "pat-eu1-" + _uuid(),
    "nuget": "oy2" + _rand(40, "abcdefghijklmnopqrstuvwxyz234567") + "k7q",
    "mailersend": "mlsn." + _rand(64, _HEX),
    "twilio-key-and-secret": "SK" + _rand(32, _HEX) + ":" + _rand(32),
    "flutterwave": "FLWSECK-" + _rand(32, _HEX) + "-X",
    "flutterwave-encryption": "FLWSECK_TEST" + _rand(12, _HEX),
    "dynatrace": "dt0s16." + _rand(24, _UPPER) + "." + _rand(64, _UPPER),
    "x-bearer": "A" * 21 + _rand(12) + "%2B" + _rand(20) + "%3D" + _rand(50),
    "spaces-access-key": "DO00" + _rand(12, _UPPER) + "QZ7K",
}

CONTEXTS = (
    "fwiw the deploy used {v} last night",
    "- {v}",
    "curl -sS -H @headers.txt https://api.example.test/v1 # {v}",
    "['{v}']",
)


@pytest.mark.parametrize("name", sorted(TOKENS))
@pytest.mark.parametrize("context", CONTEXTS)
def test_a_vendor_token_is_redacted_whole_in_any_context(name: str, context: str) -> None:
    value = TOKENS[name]
    out = redact(context.format(v=value))
    assert REDACTED in out
    assert not any(value[i : i + 8] in out for i in range(len(value) - 7)), out


WEBHOOK_SECRETS = {
    "discord": ("https://discord.com/api/webhooks/123456789012345678/", _rand(68, _B64URL)),
    "teams": (
        "https://contoso.webhook.office.com/webhookb2/x@y/IncomingWebhook/",
        _rand(32, _HEX) + "/" + _uuid(),
    ),
}


@pytest.mark.parametrize("name", sorted(WEBHOOK_SECRETS))
@pytest.mark.parametrize("context", CONTEXTS)
def test_a_webhook_url_loses_the_secret_in_its_path(name: str, context: str) -> None:
    head, secret = WEBHOOK_SECRETS[name]
    out = redact(context.format(v=head + secret))
    assert REDACTED in out
    assert not any(secret[i : i + 8] in out for i in range(len(secret) - 7)), out


@pytest.mark.parametrize(
    "text",
    [
        # Mapbox public tokens are meant to be shipped to browsers
        "the map page ships pk.eyJ1IjoiZGV2b3BzIiwiYSI6ImNrMnR4In0.abcdefghijklmnopqrstuv in its bundle",
        "st.session_state.counter += 1",
        "st.markdown(text); st.write(df)",
        "plaid link flow: exchange the public-token for an access-token",
        "the 2/3 majority in 1/1234567890123/4567890123456 was 0",
        "atlasv1 is the token prefix HashiCorp uses",
        "HRKU- prefixes every new Heroku token",
        "patch.object(Path, 'exists')",
        "v1.0-rc1 release notes",
        "NRAK-123 is the Jira ticket",
        "EAAA is how Square access tokens start",
        "dapi is the prefix of a Databricks token",
        "sha256~ prefixes OpenShift tokens; a digest is sha256:" + "ab" * 32,
        "the LTAI and AKID prefixes name Alibaba and Tencent keys",
        "a dose of 1//0 is undefined",
        "eyJhbGciOiJIUzI1NiJ9 is the header alone",
        "Use the /api/webhooks/ endpoint to create one",
        "version 00D1234.5 of the firmware",
        "the fc-1a2b shard and the fc-switch config",
        "HubSpot tokens start pat-na1- and the rest is a UUID",
        "dt0c01 is the prefix of a classic Dynatrace token",
        "the serial is DO001234567890123456 on the label",
        "oy2 is how NuGet keys begin; oy2abcdefghijklmnopqrstuvwxyzabcdefghijklmnopq has no digit",
        # Flutterwave public keys are meant to be shipped to browsers
        "checkout.js embeds FLWPUBK_TEST-" + "0a1b2c3d" * 4 + "-X",
        # a run of A is base64 of zero bytes, not a bearer token
        "blob: " + "A" * 64 + "==",
        "xapp-1- prefixes Slack app-level tokens",
    ],
)
def test_look_alikes_are_left(text: str) -> None:
    assert redact(text) == text


def test_every_catalogue_entry_has_a_documented_name_and_anchor() -> None:
    names = [t.name for t in TOKEN_PATTERNS]
    assert len(names) == len(set(names))
    assert all(t.anchors and all(t.anchors) for t in TOKEN_PATTERNS)
