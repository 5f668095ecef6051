"""The catalogue of credentials recognisable by their own shape (vendor tokens).

:mod:`palimpsest.safety.redact` applies these; they live apart so the catalogue can grow
without crowding the redaction machinery. Each entry names the literal every match starts
with (the *anchors*, found with ``str.find`` before the regex runs), the pattern, and the
vendor's documented format. Patterns obey the module's linear-time rule: they begin with a
literal or a short bounded class, and repeat with possessive or bounded quantifiers.

A shape that ordinary text can also take (a Discord token is three base64url parts, which a
long dotted name could imitate) is confirmed by a *check* on the match before it is
replaced; a match the check rejects is left as it was.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["TOKEN_PATTERNS", "TokenPattern"]


@dataclass(frozen=True)
class TokenPattern:
    """One vendor format: anchors, pattern, and an optional check of the whole match."""

    name: str
    anchors: tuple[str, ...]
    pattern: re.Pattern[str]
    check: Callable[[re.Match[str]], bool] | None = None
    # When the anchor sits inside the token (the ":" of a Telegram token), the match
    # starts at the beginning of the run of ``lead`` characters before it, at most
    # ``lead_max`` back: the pattern's left boundary guarantees that is the only start.
    lead: str = ""
    lead_max: int = 0
    # How many ``lead`` characters every match has before the anchor, at least (the
    # pattern's own minimum): an anchor with fewer before it is not tried.
    lead_min: int = 0
    # An anchor too common to seek with ``str.find`` (``:`` in JSON): let the regex engine
    # scan the text instead, once the anchor is present at all.
    regex_scan: bool = False


_B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
_UPPER_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_B62 = _B64URL[:62]
_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"


def _discord_user_id(match: re.Match[str]) -> bool:
    """A Discord token's first part is the bot's numeric snowflake id in base64."""
    head = match.group(0).split(".", 1)[0]
    try:
        decoded = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
    except (binascii.Error, ValueError):
        return False
    return 15 <= len(decoded) <= 21 and decoded.isdigit()


def _jose_header(match: re.Match[str]) -> bool:
    """The first part decodes to a JOSE header: JSON that names its ``alg``."""
    head = match.group(0).split(".", 1)[0]
    try:
        decoded = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
    except (binascii.Error, ValueError):
        return False
    return decoded.startswith(b"{") and b'"alg"' in decoded


def _url_encoded(match: re.Match[str]) -> bool:
    """An X (Twitter) app-only bearer token is URL-encoded base64: it holds a ``%XX``
    escape, and past its run of ``A`` characters random letters of both cases and digits;
    a run of zeros in a base64 blob does not."""
    token = match.group(0)
    body = token.lstrip("A")
    return (
        _PERCENT_ESCAPE.search(token) is not None
        and any(c.islower() for c in body)
        and any(c.isupper() for c in body)
        and any(c.isdigit() for c in body)
    )


_PERCENT_ESCAPE = re.compile(r"%[0-9A-F]{2}")


def _digits_at_least(count: int, skip: int) -> Callable[[re.Match[str]], bool]:
    """The match holds ``count`` digits or more after its first ``skip`` characters (a
    random one-case body has several; a word or a name has none)."""
    return lambda match: sum(c.isdigit() for c in match.group(0)[skip:]) >= count


TOKEN_PATTERNS: tuple[TokenPattern, ...] = (
    # OpenAI (sk-, sk-proj-, sk-svcacct-, sk-admin-), Anthropic (sk-ant-), OpenRouter
    # (sk-or-v1-). Real keys always contain a digit; kebab-case words do not.
    TokenPattern(
        "openai-anthropic-openrouter",
        ("sk-",),
        re.compile(r"(?<![A-Za-z0-9_-])sk-(?=[A-Za-z0-9_-]{0,200}?\d)[A-Za-z0-9_-]{20,}+"),
    ),
    # Stripe secret / restricted keys.
    TokenPattern(
        "stripe",
        ("sk_live_", "sk_test_", "rk_live_", "rk_test_"),
        re.compile(r"(?<![A-Za-z0-9])[sr]k_(?:live|test)_[A-Za-z0-9]{16,}+"),
    ),
    # Stripe webhook signing secret, ``whsec_`` + base62 (docs.stripe.com/webhooks).
    TokenPattern(
        "stripe-webhook",
        ("whsec_",),
        re.compile(r"(?<![A-Za-z0-9])whsec_[A-Za-z0-9+/]{24,}+=*"),
    ),
    TokenPattern("google-api", ("AIza",), re.compile(r"AIza[0-9A-Za-z_-]{35}")),
    # Google OAuth client secret, ``GOCSPX-`` + 28 characters (Google Auth Platform,
    # client secrets issued since 2021).
    TokenPattern(
        "google-oauth", ("GOCSPX-",), re.compile(r"(?<![A-Za-z0-9])GOCSPX-[A-Za-z0-9_-]{20,}+")
    ),
    # Google OAuth 2.0 access token (``ya29.`` + base64url), as returned by the token
    # endpoint (developers.google.com/identity/protocols/oauth2).
    TokenPattern(
        "google-access-token",
        ("ya29.",),
        re.compile(r"(?<![A-Za-z0-9])ya29\.[0-9A-Za-z_-]{20,}+"),
    ),
    TokenPattern(
        "github",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        re.compile(
            r"(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9_]{16,}+|github_pat_[A-Za-z0-9_]{22,}+)"
        ),
    ),
    # GitLab tokens by their documented prefixes: personal/project/group access (glpat-),
    # runner authentication (glrt-), deploy (gldt-), pipeline trigger (glptt-), feed
    # (glft-), CI job (glcbt-), incoming mail (glimt-), feature-flag client (glffct-),
    # OAuth application secret (gloas-), SCIM OAuth (glsoat-) and agent (glagent-) tokens
    # (docs.gitlab.com/security/tokens/#token-prefixes).
    # Eleven prefixes would be eleven scans of the text: the engine finds ``gl`` instead.
    TokenPattern(
        "gitlab",
        ("gl",),
        re.compile(
            r"gl(?<![A-Za-z0-9_-]gl)(?:pat|rt|dt|ptt|ft|cbt|imt|ffct|oas|soat|agent)-"
            r"[A-Za-z0-9_-]{20,}+"
        ),
        regex_scan=True,
    ),
    # Hugging Face user (``hf_``) and organization (``api_org_``) tokens.
    TokenPattern(
        "huggingface",
        ("hf_", "api_org_"),
        re.compile(r"(?<![A-Za-z0-9])(?:hf_|api_org_)[A-Za-z0-9]{30,}+"),
    ),
    TokenPattern("npm", ("npm_",), re.compile(r"(?<![A-Za-z0-9])npm_[A-Za-z0-9]{36,}+")),
    # Slack bot, user, app, refresh and session tokens (``xox?-``), and app-level tokens
    # ``xapp-<n>-A<app id>-<number>-<64 hex>`` (api.slack.com/authentication/token-types);
    # one scan by the engine for ``x`` costs less than one for each prefix.
    TokenPattern(
        "slack",
        ("x",),
        re.compile(
            r"x(?<![A-Za-z0-9]x)(?:ox[abeprs]-[A-Za-z0-9-]{10,}+"
            r"|app-[0-9]-[A-Z0-9]{8,14}-[0-9]{8,16}-[a-f0-9]{40,80}(?![A-Za-z0-9]))"
        ),
        regex_scan=True,
    ),
    TokenPattern(
        "aws-access-key-id",
        ("AKIA", "ASIA"),
        re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])"),
    ),
    # JSON Web Tokens: header and payload are base64url JSON, so both start with "eyJ".
    TokenPattern(
        "jwt",
        ("eyJ",),
        re.compile(
            r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}+\.eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]*+"
        ),
    ),
    # SendGrid: ``SG.`` + 22-character key id + ``.`` + 43-character secret, 69 in all
    # (twilio.com/docs/sendgrid/ui/account-and-settings/api-keys).
    TokenPattern(
        "sendgrid",
        ("SG.",),
        re.compile(r"(?<![A-Za-z0-9_-])SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}"),
    ),
    # Twilio API key SID: ``SK`` + 32 hex digits, pattern ``^SK[0-9a-fA-F]{32}$``
    # (twilio.com/docs/iam/api-keys/key-resource-v1), and the key's secret (32 base62)
    # when it follows as ``SID:secret``, the HTTP Basic pair Twilio's API takes
    # (twilio.com/docs/iam/api-keys). Account SIDs (``AC``) are not secret.
    TokenPattern(
        "twilio",
        ("SK",),
        re.compile(r"(?<![A-Za-z0-9])SK[0-9a-fA-F]{32}(?::[A-Za-z0-9]{32})?(?![A-Za-z0-9])"),
    ),
    # Mailgun private API key, ``key-`` + 32 hex (older accounts), and the current
    # ``<32 hex>-<8 hex>-<8 hex>`` form. ``pubkey-`` is the public validation key.
    TokenPattern(
        "mailgun",
        ("key-",),
        re.compile(r"(?<![A-Za-z0-9_-])key-[0-9a-zA-Z]{32}(?![A-Za-z0-9])"),
    ),
    TokenPattern(
        "mailgun-v2",
        ("-",),
        re.compile(r"(?<![0-9A-Za-z-])[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8}(?![0-9A-Za-z-])"),
        lead="0123456789abcdef",
        lead_max=32,
        lead_min=32,
    ),
    # DigitalOcean: ``dop_v1_`` personal, ``doo_v1_`` OAuth, ``dor_v1_`` refresh tokens,
    # each + 64 hex (docs.digitalocean.com/notes/2022/api-token-format).
    TokenPattern(
        "digitalocean",
        ("dop_v1_", "doo_v1_", "dor_v1_"),
        re.compile(r"(?<![A-Za-z0-9])do[opr]_v1_[a-f0-9]{64}(?![A-Za-z0-9])"),
    ),
    # Telegram bot token from @BotFather: the bot's numeric id, ``:``, 35 base64url
    # characters (core.telegram.org/bots/api#authorizing-your-bot; the docs' own example
    # has 34, so a few either side are accepted).
    TokenPattern(
        "telegram",
        (":",),
        re.compile(
            # mixed case: a "1712345678:<md5 hex>" log key is not a bot token
            r"(?<![0-9])[0-9]{6,10}:(?=[A-Za-z0-9_-]{0,40}?[A-Z])(?=[A-Za-z0-9_-]{0,40}?[a-z])"
            r"[A-Za-z0-9_-]{32,40}(?![A-Za-z0-9_-])"
        ),
        lead="0123456789",
        lead_max=10,
        lead_min=6,
    ),
    # Discord bot token: base64 user id . base64 timestamp (6 chars) . HMAC (27 chars,
    # 38 since 2022), as documented by discord.py (docs/token.rst). The id part is
    # checked: it must decode to the digits of a snowflake.
    TokenPattern(
        "discord",
        (".",),
        re.compile(
            r"(?<![A-Za-z0-9_-])[MNO][A-Za-z0-9_-]{22,27}\.[A-Za-z0-9_-]{6,7}\."
            r"[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])"
        ),
        check=_discord_user_id,
        lead=_B64URL,
        lead_max=28,
        lead_min=23,
    ),
    # PyPI API token: ``pypi-`` + a base64url macaroon whose serialisation starts "Ag"
    # (``AgEIcHlwaS5vcmc`` names pypi.org, ``AgENdGVzdC5weXBp`` test.pypi.org); ~180 chars
    # (docs.pypi.org/project/api-tokens).
    TokenPattern(
        "pypi",
        ("pypi-Ag",),
        re.compile(r"(?<![A-Za-z0-9_-])pypi-Ag[A-Za-z0-9_-]{40,}+"),
    ),
    # Shopify: admin API access (shpat_), custom app (shpca_), private app (shppa_) tokens
    # and app shared secrets (shpss_), each + 32 hex (shopify.dev, access tokens).
    TokenPattern(
        "shopify",
        ("shpat_", "shpca_", "shppa_", "shpss_"),
        re.compile(r"(?<![A-Za-z0-9])shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}(?![A-Za-z0-9])"),
    ),
    # Doppler: personal (dp.pt.), CLI (dp.ct.), service (dp.st.[config.]), service account
    # (dp.sa.), SCIM (dp.scim.) and audit (dp.audit.) tokens, 40-44 base62 characters
    # after the prefix (docs.doppler.com/reference/auth-token-formats).
    TokenPattern(
        "doppler",
        ("dp.",),
        re.compile(
            r"(?<![A-Za-z0-9_.-])dp\.(?:pt|ct|st|sa|scim|audit)\.(?:[a-z0-9_-]{2,35}\.)?"
            r"[A-Za-z0-9]{40,44}(?![A-Za-z0-9])"
        ),
    ),
    # Heroku API keys: ``HRKU-`` + a UUID (2024 format), or ``HRKU-AA`` + base64url
    # (devcenter.heroku.com/articles/authentication, "API token format").
    TokenPattern(
        "heroku",
        ("HRKU-",),
        re.compile(rf"(?<![A-Za-z0-9_-])HRKU-(?:{_UUID}|[A-Za-z0-9_-]{{30,}}+)(?![A-Za-z0-9_-])"),
    ),
    # Plaid access and public tokens: ``access-<environment>-<uuid>``
    # (plaid.com/docs/api/tokens).
    TokenPattern(
        "plaid",
        ("access-", "public-"),
        re.compile(
            rf"(?<![A-Za-z0-9_-])(?:access|public)-(?:sandbox|development|production)-{_UUID}"
            r"(?![A-Za-z0-9_-])"
        ),
    ),
    # Mapbox secret (``sk.``) and temporary (``tk.``) tokens: a base64url JSON payload
    # naming the user (``eyJ1Ijoi`` = ``{"u":"``), a dot, a signature
    # (docs.mapbox.com/api/accounts/tokens). ``pk.`` tokens are public by design.
    TokenPattern(
        "mapbox",
        ("sk.eyJ", "tk.eyJ"),
        re.compile(r"(?<![A-Za-z0-9_.-])[st]k\.eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{16,}+"),
    ),
    # Infisical service tokens: ``st.`` + token id + ``.`` + one or two hexadecimal secrets
    # (infisical.com/docs/documentation/platform/token).
    TokenPattern(
        "infisical",
        ("st.",),
        re.compile(
            r"(?<![A-Za-z0-9_.-])st\.[0-9a-f]{16,}+\.[0-9a-f]{16,}+(?:\.[0-9a-f]{16,}+)?"
            r"(?![A-Za-z0-9_-])"
        ),
    ),
    # Mailchimp API key: 32 hex + ``-us`` + the data centre number
    # (mailchimp.com/developer/marketing/guides/quick-start, "API key").
    TokenPattern(
        "mailchimp",
        ("-us",),
        re.compile(r"(?<![0-9A-Za-z-])[0-9a-f]{32}-us[0-9]{1,2}(?![0-9A-Za-z-])"),
        lead="0123456789abcdef",
        lead_max=32,
        lead_min=32,
    ),
    # Square: production access tokens ``EAAA`` + 60 base64url, OAuth secrets and older
    # tokens ``sq0atp-``/``sq0csp-`` + 22-43 characters
    # (developer.squareup.com/docs/build-basics/access-tokens).
    TokenPattern(
        "square",
        ("EAAA", "sq0"),
        re.compile(
            r"(?<![A-Za-z0-9_-])(?:EAAA(?=[A-Za-z0-9_-]{0,80}?\d)[A-Za-z0-9_-]{56,}+"
            r"|sq0(?:atp|csp|idp)-[A-Za-z0-9_-]{22,43}+)(?![A-Za-z0-9_-])"
        ),
    ),
    # Databricks personal access token: ``dapi`` + 32 hex, sometimes ``-<n>``
    # (docs.databricks.com/en/dev-tools/auth/pat.html).
    TokenPattern(
        "databricks",
        ("dapi",),
        re.compile(r"(?<![A-Za-z0-9_-])dapi[0-9a-f]{32}(?:-[0-9]{1,2})?(?![A-Za-z0-9_-])"),
    ),
    # Atlassian API tokens ``ATATT3`` + ~180 base64url with a ``=<8 hex>`` checksum, and
    # Bitbucket app passwords ``ATBB`` + 32 base62
    # (support.atlassian.com, "Manage API tokens for your Atlassian account").
    TokenPattern(
        "atlassian",
        ("ATATT3", "ATBB"),
        re.compile(
            r"(?<![A-Za-z0-9_-])(?:ATATT3[A-Za-z0-9_=-]{60,}+|ATBB[A-Za-z0-9]{28,}+)"
            r"(?![A-Za-z0-9_-])"
        ),
    ),
    # New Relic user API keys ``NRAK-`` + 27 capitals and digits (also ``NRII-`` ingest
    # keys) (docs.newrelic.com/docs/apis/intro-apis/new-relic-api-keys).
    TokenPattern(
        "newrelic",
        ("NRAK-", "NRII-"),
        re.compile(r"(?<![A-Za-z0-9_-])NR(?:AK|II)-[A-Z0-9]{27,32}(?![A-Za-z0-9_-])"),
    ),
    # Terraform Cloud / HCP Terraform tokens: 14 base62 + ``.atlasv1.`` + 60+ base64url
    # (developer.hashicorp.com/terraform/cloud-docs/users-teams-organizations/api-tokens).
    TokenPattern(
        "terraform-cloud",
        (".atlasv1.",),
        re.compile(r"(?<![A-Za-z0-9_.-])[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_-]{60,}+"),
        lead=_B62,
        lead_max=14,
        lead_min=14,
    ),
    # Airtable personal access tokens: ``pat`` + 14 base62 + ``.`` + 64 hex
    # (airtable.com/developers/web/guides/personal-access-tokens).
    TokenPattern(
        "airtable",
        ("pat",),
        re.compile(r"(?<![A-Za-z0-9_.-])pat[A-Za-z0-9]{14}\.[0-9a-f]{64}(?![A-Za-z0-9_-])"),
    ),
    # Asana personal access tokens: ``<version>/<user id>/<token id>:<32 hex>``
    # (developers.asana.com/docs/personal-access-token).
    TokenPattern(
        "asana",
        (":",),
        # the boundary is checked after "<digit>/", which the engine finds fast
        re.compile(
            r"[0-9]/(?<![A-Za-z0-9/][0-9]/)[0-9]{10,20}/[0-9]{10,20}:[0-9a-f]{32}"
            r"(?![A-Za-z0-9])"
        ),
        regex_scan=True,
    ),
    # Cloudflare Origin CA keys: ``v1.0-`` + 24 hex + ``-`` + 146 hex
    # (developers.cloudflare.com/fundamentals/api/get-started/ca-keys).
    TokenPattern(
        "cloudflare-origin-ca",
        ("v1.0-",),
        re.compile(r"(?<![A-Za-z0-9_.-])v1\.0-[0-9a-f]{24}-[0-9a-f]{140,150}(?![A-Za-z0-9])"),
    ),
    # Supabase secret API keys, ``sb_secret_`` + base64url (supabase.com/docs/guides/api/
    # api-keys; ``sb_publishable_`` keys are public by design and left alone).
    TokenPattern(
        "supabase-secret",
        ("sb_secret_",),
        re.compile(r"(?<![A-Za-z0-9_])sb_secret_[A-Za-z0-9_-]{20,}+"),
    ),
    # OpenShift OAuth access tokens, ``sha256~`` + 43 base64url (OpenShift's "Managing
    # OAuth tokens"); a digest is written ``sha256:``, never with a tilde.
    TokenPattern(
        "openshift",
        ("sha256~",),
        re.compile(r"(?<![A-Za-z0-9_-])sha256~[A-Za-z0-9_-]{40,50}(?![A-Za-z0-9_-])"),
    ),
    # Alibaba Cloud AccessKey ids (``LTAI`` + 12-20 base62) and Tencent Cloud SecretIds
    # (``AKID`` + 32-36 base62), as their consoles issue them; a digit is always present.
    TokenPattern(
        "alibaba-tencent",
        ("LTAI", "AKID"),
        re.compile(
            r"(?<![A-Za-z0-9])(?:LTAI[A-Za-z0-9]{12,20}|AKID[A-Za-z0-9]{32,36})(?![A-Za-z0-9])"
        ),
        check=lambda m: any(c.isdigit() for c in m.group(0)[4:]),
    ),
    # JFrog API keys (``AKCp`` + 60-80 base62) and reference tokens (base64 of
    # ``reftkn:01:``, so they start ``cmVmdGtuOjAxOj``) (jfrog.com/help, access tokens).
    TokenPattern(
        "jfrog",
        ("AKCp", "cmVmdGtuOjAxOj"),
        re.compile(
            r"(?<![A-Za-z0-9])(?:AKCp[A-Za-z0-9]{60,80}|cmVmdGtuOjAxOj[A-Za-z0-9]{40,}+)"
            r"(?![A-Za-z0-9])"
        ),
    ),
    # Databricks OAuth secrets, ``dose`` + 32 hex (docs.databricks.com, OAuth M2M).
    TokenPattern(
        "databricks-oauth",
        ("dose",),
        re.compile(r"(?<![A-Za-z0-9])dose[0-9a-f]{32}(?![A-Za-z0-9])"),
    ),
    # Google OAuth refresh tokens, ``1//0`` + base64url (developers.google.com/identity/
    # protocols/oauth2: the token endpoint's ``refresh_token``).
    TokenPattern(
        "google-refresh-token",
        ("1//0",),
        re.compile(r"(?<![A-Za-z0-9/])1//0[A-Za-z0-9_-]{30,}+"),
    ),
    # Salesforce session ids: the org id (``00D`` + 12 or 15) ``!`` the session part.
    TokenPattern(
        "salesforce-session",
        ("00D",),
        re.compile(r"(?<![A-Za-z0-9])00D[A-Za-z0-9]{12,15}![A-Za-z0-9._]{40,}+"),
    ),
    # Firebase Cloud Messaging legacy server keys: ``AAAA`` + 7 + ``:APA91b`` + 100+.
    TokenPattern(
        "fcm-server-key",
        (":APA91b",),
        re.compile(r"(?<![A-Za-z0-9_-])AAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,}+"),
        lead=_B64URL,
        lead_max=11,
        lead_min=11,
    ),
    # Discord webhook URLs carry their secret in the path: ``/api/webhooks/<id>/<token>``
    # (discord.com/developers/docs/resources/webhook).
    TokenPattern(
        "discord-webhook",
        ("/api/webhooks/",),
        re.compile(r"/api/webhooks/[0-9]{15,21}/[A-Za-z0-9_-]{60,}+"),
    ),
    # Microsoft Teams incoming webhooks: ``/IncomingWebhook/<32 hex>/<guid>`` after the
    # ``webhookb2`` path (learn.microsoft.com, "Create an Incoming Webhook").
    TokenPattern(
        "teams-webhook",
        ("/IncomingWebhook/",),
        re.compile(r"/IncomingWebhook/[0-9a-f]{32}/" + _UUID),
    ),
    # AWS session tokens (STS): base64 whose first bytes are the same for every token
    # issued, so it starts ``IQoJb3JpZ2luX2Vj`` (or ``FwoGZXIvYXdz`` for older ones).
    TokenPattern(
        "aws-session-token",
        ("IQoJb3JpZ2luX2Vj", "FwoGZXIvYXdz"),
        re.compile(r"(?<![A-Za-z0-9+/])(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdz)[A-Za-z0-9+/]{80,}+=*"),
    ),
    # JSON Web Encryption (five parts, RFC 7516) and a signed JWT whose payload is not
    # compact JSON (a pretty-printed payload does not start ``eyJ``): the header must
    # decode to JSON naming an ``alg``.
    TokenPattern(
        "jwe-jwt",
        ("eyJ",),
        re.compile(
            r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]*+\.[A-Za-z0-9_-]{8,}+"
            r"(?:\.[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}+)?(?![A-Za-z0-9_.-])"
        ),
        check=_jose_header,
    ),
    # A Slack incoming-webhook path without its host (``/services/T…/B…/<secret>``): the
    # workspace id, the channel hook id, 24 base62 (api.slack.com/messaging/webhooks).
    TokenPattern(
        "slack-webhook-path",
        ("/B",),
        re.compile(
            r"(?<![A-Za-z0-9])T[A-Z0-9]{8,12}/B[A-Z0-9]{8,12}/[A-Za-z0-9]{20,32}(?![A-Za-z0-9])"
        ),
        lead=_UPPER_DIGITS,
        lead_max=13,
        lead_min=9,
    ),
    # Firecrawl API keys, ``fc-`` + 32 hex (docs.firecrawl.dev, "fc-YOUR_API_KEY"); the
    # generic rule leaves ``fc`` to OpenAI's function-call ids (``fc_`` + 48 or more).
    TokenPattern(
        "firecrawl",
        ("fc-",),
        re.compile(r"(?<![A-Za-z0-9_-])fc-[0-9a-f]{32}(?![A-Za-z0-9_-])"),
    ),
    # Browserbase API keys, ``bb_live_`` + base64url (docs.browserbase.com, "API key").
    TokenPattern(
        "browserbase",
        ("bb_live_",),
        re.compile(r"(?<![A-Za-z0-9_])bb_live_[A-Za-z0-9_-]{20,}+"),
    ),
    # HubSpot private app access tokens, ``pat-<region>-`` + a UUID (``pat-na1-``,
    # ``pat-eu1-``; developers.hubspot.com/docs/api/private-apps).
    TokenPattern(
        "hubspot",
        ("pat-",),
        re.compile(rf"(?<![A-Za-z0-9_-])pat-[a-z]{{2}}[0-9]{{1,2}}-{_UUID}(?![A-Za-z0-9_-])"),
    ),
    # NuGet API keys: ``oy2`` + 43 characters of lowercase base32, 46 in all (nuget.org
    # "Scoped API keys"; GitGuardian lists the prefix). A random base32 body has digits.
    TokenPattern(
        "nuget",
        ("oy2",),
        re.compile(r"(?<![A-Za-z0-9])oy2[a-z2-7]{43}(?![A-Za-z0-9])"),
        check=_digits_at_least(2, 3),
    ),
    # MailerSend API tokens, ``mlsn.`` + 64 hex (developers.mailersend.com, "API token").
    TokenPattern(
        "mailersend",
        ("mlsn.",),
        re.compile(r"(?<![A-Za-z0-9_.-])mlsn\.[0-9a-f]{64}(?![A-Za-z0-9])"),
    ),
    # Flutterwave secret keys ``FLWSECK-`` / ``FLWSECK_TEST-`` + 32 characters + ``-X``, and
    # encryption keys ``FLWSECK_TEST`` / ``FLWSECK`` + 12 hex (developer.flutterwave.com,
    # "Authentication": API keys). ``FLWPUBK`` public keys are left.
    TokenPattern(
        "flutterwave",
        ("FLWSECK",),
        re.compile(
            r"(?<![A-Za-z0-9_-])FLWSECK(?:_TEST)?(?:-[A-Za-z0-9]{32}-X|[0-9a-f]{12})"
            r"(?![A-Za-z0-9_-])"
        ),
    ),
    # Dynatrace tokens: a prefix (``dt0c01`` API tokens, ``dt0s01``/``dt0s16`` ... platform
    # and OAuth tokens), ``.``, a 24-character public portion, ``.``, a 64-character secret
    # portion (docs.dynatrace.com, "Access tokens": token format).
    TokenPattern(
        "dynatrace",
        ("dt0",),
        re.compile(
            r"(?<![A-Za-z0-9_.-])dt0[a-z][0-9]{2}\.[A-Z0-9]{24}\.[A-Z0-9]{64}(?![A-Za-z0-9])"
        ),
    ),
    # X (Twitter) app-only bearer tokens: a run of ``A`` (about 21), then URL-encoded base64
    # with a ``%3D`` inside, ~110 characters (developer.x.com, OAuth 2.0 bearer tokens).
    TokenPattern(
        "twitter-bearer",
        ("A" * 20,),
        re.compile(r"(?<![A-Za-z0-9%+/=])A{20,24}[A-Za-z0-9%]{50,160}+(?![A-Za-z0-9%+/=])"),
        check=_url_encoded,
    ),
    # DigitalOcean Spaces access keys, ``DO00`` + 16 capitals and digits (the key half of a
    # Spaces key pair; docs.digitalocean.com/products/spaces/how-to/manage-access).
    TokenPattern(
        "digitalocean-spaces",
        ("DO00",),
        re.compile(r"(?<![A-Za-z0-9])DO00[A-Z0-9]{16}(?![A-Za-z0-9])"),
        check=lambda m: sum(c.isalpha() for c in m.group(0)[4:]) >= 4,
    ),
)
