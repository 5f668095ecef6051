"""Probe D: a fourth set of credential shapes, committed before the rule changes it measures.

Probe C (``redaction_probe_c.py``) was held out from issue 20's second stage and showed
that stage did not generalise: 167 of its 215 unnamed contexts leaked before and after.
The third stage designs on A, B and C, so C is no longer held out; D is. It was written
and committed on its own, before any rule changed, and is run once before and once after.

45 kinds, none in the catalogue's vendor list nor in probes A, B or C when written:
AI and developer-tool vendors (Tavily, Firecrawl, Jina, Cerebras, Langfuse, LangSmith,
NVIDIA, E2B, Browserbase, Replicate), infrastructure tokens split by ``-`` or ``_``
(Tailscale, GitLab pipeline-trigger and deploy tokens, Sentry user tokens, PlanetScale
service tokens, Vercel Blob, Slack app-level tokens, HubSpot private apps), package
registries (NuGet, Clojars, RubyGems), messaging and commerce (Brevo, MailerSend, Twilio API
keys, Flutterwave, EasyPost, Shippo, Duffel, Typeform, ReadMe, Prefect), Dynatrace, age
secret keys, Facebook and Twitter bearer tokens, 1Password service accounts, DigitalOcean
Spaces keys, and credentials carried by a format rather than a vendor: a ``.pgpass`` line,
a session cookie, a presigned S3 URL's signature, an Azure Service Bus connection string,
a Google service-account ``private_key_id``, an armoured PGP private key and an ``.npmrc``
auth line. Values are random in each vendor's documented alphabet and length (fixed seed),
never live credentials; each cites where its shape is documented.

Contexts are probe C's (:data:`redaction_probe_c.UNNAMED` and ``NAMED``) for tokens, and
the format's own file or header line for the rest. A value *leaks* in a context when 8
consecutive characters of it survive ``redact``.

Run: ``python benchmarks/redaction_probe_d.py [--per-kind]``
"""

from __future__ import annotations

import base64
import string

from redaction_probe_c import Case, Draw, _token, run_probe

_B62 = string.ascii_letters + string.digits
_B64URL = _B62 + "-_"
_HEX = "0123456789abcdef"
_LOWER = string.ascii_lowercase + string.digits
_UPPER = string.ascii_uppercase + string.digits
_BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


def cases(seed: int = 4242) -> list[Case]:
    draw = Draw(seed)
    rand, uuid, b64 = draw.rand, draw.uuid, draw.b64

    out = [
        _token(
            "tavily-api-key",
            "tvly-" + rand(32),
            "TAVILY_API_KEY",
            "Tavily API key",
            "https://docs.tavily.com/documentation/quickstart",
        ),
        _token(
            "firecrawl-api-key",
            "fc-" + rand(32, _HEX),
            "FIRECRAWL_API_KEY",
            "Firecrawl API key",
            "https://docs.firecrawl.dev/introduction",
        ),
        _token(
            "jina-api-key",
            "jina_" + rand(60),
            "JINA_API_KEY",
            "Jina API key",
            "https://jina.ai/embeddings/",
        ),
        _token(
            "cerebras-api-key",
            "csk-" + rand(48, _LOWER),
            "CEREBRAS_API_KEY",
            "Cerebras API key",
            "https://inference-docs.cerebras.ai/quickstart",
        ),
        _token(
            "langfuse-secret-key",
            "sk-lf-" + uuid(),
            "LANGFUSE_SECRET_KEY",
            "Langfuse secret key",
            "https://langfuse.com/docs/get-started",
        ),
        _token(
            "langsmith-api-key",
            "lsv2_pt_" + rand(32, _HEX) + "_" + rand(10, _HEX),
            "LANGSMITH_API_KEY",
            "LangSmith API key",
            "https://docs.smith.langchain.com/administration/how_to_guides/organization_management/create_account_api_key",
        ),
        _token(
            "nvidia-api-key",
            "nvapi-" + rand(64, _B64URL),
            "NVIDIA_API_KEY",
            "NVIDIA API key",
            "https://docs.api.nvidia.com/nim/reference/llm-apis",
        ),
        _token(
            "e2b-api-key",
            "e2b_" + rand(40, _HEX),
            "E2B_API_KEY",
            "E2B API key",
            "https://e2b.dev/docs/api-key",
        ),
        _token(
            "browserbase-api-key",
            "bb_live_" + rand(27, _B64URL),
            "BROWSERBASE_API_KEY",
            "Browserbase API key",
            "https://docs.browserbase.com/introduction",
        ),
        _token(
            "replicate-api-token",
            "r8_" + rand(37),
            "REPLICATE_API_TOKEN",
            "Replicate API token",
            "https://replicate.com/docs/topics/security/api-tokens",
        ),
        _token(
            "tailscale-auth-key",
            "tskey-auth-" + rand(12) + "CNTRL-" + rand(33),
            "TS_AUTHKEY",
            "Tailscale auth key",
            "https://tailscale.com/kb/1085/auth-keys",
        ),
        _token(
            "gitlab-trigger-token",
            "glptt-" + rand(40, _HEX),
            "CI_TRIGGER_TOKEN",
            "GitLab pipeline trigger token",
            "https://docs.gitlab.com/security/tokens/#token-prefixes",
        ),
        _token(
            "gitlab-deploy-token",
            "gldt-" + rand(20, _B64URL),
            "DEPLOY_TOKEN",
            "GitLab deploy token",
            "https://docs.gitlab.com/security/tokens/#token-prefixes",
        ),
        _token(
            "sentry-user-token",
            "sntryu_" + rand(64, _HEX),
            "SENTRY_AUTH_TOKEN",
            "Sentry user auth token",
            "https://docs.sentry.io/account/auth-tokens/#user-auth-tokens",
        ),
        _token(
            "planetscale-service-token",
            "pscale_tkn_" + rand(43, _B64URL),
            "PLANETSCALE_SERVICE_TOKEN",
            "PlanetScale service token",
            "https://planetscale.com/docs/concepts/service-tokens",
        ),
        _token(
            "vercel-blob-token",
            "vercel_blob_rw_" + rand(16) + "_" + rand(30),
            "BLOB_READ_WRITE_TOKEN",
            "Vercel Blob read-write token",
            "https://vercel.com/docs/vercel-blob",
        ),
        _token(
            "slack-app-token",
            "xapp-1-A" + rand(10, _UPPER) + "-" + rand(13, "0123456789") + "-" + rand(64, _HEX),
            "SLACK_APP_TOKEN",
            "Slack app-level token",
            "https://api.slack.com/authentication/token-types#app-level",
        ),
        _token(
            "hubspot-private-app",
            "pat-na1-" + uuid(),
            "HUBSPOT_ACCESS_TOKEN",
            "HubSpot private app token",
            "https://developers.hubspot.com/docs/api/private-apps",
        ),
        _token(
            "nuget-api-key",
            "oy2" + rand(43, string.ascii_lowercase + "234567"),
            "NUGET_API_KEY",
            "NuGet API key",
            "https://learn.microsoft.com/en-us/nuget/nuget-org/scoped-api-keys",
        ),
        _token(
            "clojars-token",
            "CLOJARS_" + rand(60, _HEX),
            "CLOJARS_PASSWORD",
            "Clojars deploy token",
            "https://github.com/clojars/clojars-web/wiki/Deploy-Tokens",
        ),
        _token(
            "rubygems-api-key",
            "rubygems_" + rand(48, _HEX),
            "GEM_HOST_API_KEY",
            "RubyGems API key",
            "https://guides.rubygems.org/api-key-scopes/",
        ),
        _token(
            "brevo-api-key",
            "xkeysib-" + rand(64, _HEX) + "-" + rand(16),
            "BREVO_API_KEY",
            "Brevo API key",
            "https://developers.brevo.com/docs/getting-started",
        ),
        _token(
            "mailersend-token",
            "mlsn." + rand(64, _HEX),
            "MAILERSEND_API_KEY",
            "MailerSend API token",
            "https://developers.mailersend.com/general.html",
        ),
        _token(
            "twilio-api-key-secret",
            "SK" + rand(32, _HEX) + ":" + rand(32),
            "TWILIO_API",
            "Twilio API key and secret",
            "https://www.twilio.com/docs/iam/api-keys",
        ),
        _token(
            "flutterwave-secret",
            "FLWSECK_TEST-" + rand(32, _HEX) + "-X",
            "FLW_SECRET_KEY",
            "Flutterwave secret key",
            "https://developer.flutterwave.com/docs/integration-guides/authentication",
        ),
        _token(
            "easypost-api-key",
            "EZAK" + rand(54),
            "EASYPOST_API_KEY",
            "EasyPost API key",
            "https://docs.easypost.com/docs/authentication",
        ),
        _token(
            "shippo-token",
            "shippo_live_" + rand(40, _HEX),
            "SHIPPO_API_TOKEN",
            "Shippo API token",
            "https://docs.goshippo.com/docs/guides_general/authentication/",
        ),
        _token(
            "duffel-token",
            "duffel_live_" + rand(43, _B64URL),
            "DUFFEL_ACCESS_TOKEN",
            "Duffel access token",
            "https://duffel.com/docs/api/overview/making-requests/authentication",
        ),
        _token(
            "typeform-token",
            "tfp_" + rand(59, _B62 + "_"),
            "TYPEFORM_TOKEN",
            "Typeform personal token",
            "https://www.typeform.com/developers/get-started/personal-access-token/",
        ),
        _token(
            "readme-api-key",
            "rdme_" + rand(70, _LOWER),
            "README_API_KEY",
            "ReadMe API key",
            "https://docs.readme.com/main/reference/intro/authentication",
        ),
        _token(
            "prefect-api-key",
            "pnu_" + rand(36),
            "PREFECT_API_KEY",
            "Prefect API key",
            "https://docs.prefect.io/v3/manage/cloud/manage-users/api-keys",
        ),
        _token(
            "dynatrace-token",
            "dt0c01." + rand(24, _UPPER) + "." + rand(64, _UPPER),
            "DT_API_TOKEN",
            "Dynatrace API token",
            "https://docs.dynatrace.com/docs/manage/access-control/access-tokens",
        ),
        _token(
            "age-secret-key",
            "AGE-SECRET-KEY-1" + rand(58, _BECH32),
            "SOPS_AGE_KEY",
            "age secret key",
            "https://age-encryption.org/v1",
        ),
        _token(
            "facebook-access-token",
            "EAAG" + rand(180),
            "FB_ACCESS_TOKEN",
            "Facebook page access token",
            "https://developers.facebook.com/docs/facebook-login/guides/access-tokens/",
        ),
        _token(
            "twitter-bearer-token",
            "A" * 22 + rand(19) + "%3D" + rand(50),
            "TWITTER_BEARER_TOKEN",
            "X bearer token",
            "https://developer.x.com/en/docs/authentication/oauth-2-0/bearer-tokens",
        ),
        _token(
            "onepassword-service-token",
            "ops_eyJ" + rand(200, _B64URL),
            "OP_SERVICE_ACCOUNT_TOKEN",
            "1Password service account token",
            "https://developer.1password.com/docs/service-accounts/",
        ),
        _token(
            "do-spaces-secret",
            rand(43, _B62 + "+/"),
            "SPACES_SECRET_KEY",
            "Spaces secret key",
            "https://docs.digitalocean.com/products/spaces/how-to/manage-access/",
        ),
        _token(
            "do-spaces-access-key",
            "DO00" + rand(16, _UPPER),
            "SPACES_ACCESS_KEY",
            "Spaces access key",
            "https://docs.digitalocean.com/products/spaces/how-to/manage-access/",
        ),
    ]

    pgpass = rand(20, _B62)
    out.append(
        Case(
            "pgpass-line",
            pgpass,
            (
                f"db.internal:5432:app:app_rw:{pgpass}",
                f"$ cat ~/.pgpass\n*:*:*:replicator:{pgpass}",
            ),
            (),
            "https://www.postgresql.org/docs/current/libpq-pgpass.html",
        )
    )
    cookie = rand(32, _LOWER)
    out.append(
        Case(
            "session-cookie",
            cookie,
            (
                f"Cookie: sessionid={cookie}; csrftoken={rand(32)}",
                f"< Set-Cookie: connect.sid=s%3A{cookie}; Path=/; HttpOnly",
            ),
            (),
            "https://developer.mozilla.org/en-US/docs/Web/HTTP/Cookies",
        )
    )
    amz = rand(64, _HEX)
    out.append(
        Case(
            "s3-presigned-signature",
            amz,
            (
                f"https://bucket.s3.amazonaws.com/report.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256"
                f"&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20261127%2Fus-east-1%2Fs3%2Faws4_request"
                f"&X-Amz-Date=20261127T120000Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host"
                f"&X-Amz-Signature={amz}",
            ),
            (),
            "https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html",
        )
    )
    sb = b64(32)
    out.append(
        Case(
            "servicebus-connection-string",
            sb,
            (
                f"Endpoint=sb://orders.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={sb}",
            ),
            (),
            "https://learn.microsoft.com/en-us/azure/service-bus-messaging/service-bus-sas",
        )
    )
    key_id = rand(40, _HEX)
    out.append(
        Case(
            "gcp-private-key-id",
            key_id,
            (
                f'  "type": "service_account",\n  "project_id": "acme-prod",\n  "private_key_id": "{key_id}",',
            ),
            (),
            "https://cloud.google.com/iam/docs/keys-create-delete",
        )
    )
    pgp = b64(90)
    out.append(
        Case(
            "pgp-private-key",
            pgp,
            (
                f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{pgp}\n={rand(4)}\n-----END PGP PRIVATE KEY BLOCK-----",
            ),
            (),
            "https://www.rfc-editor.org/rfc/rfc4880#section-6.2",
        )
    )
    npm = rand(36, _B62)
    out.append(
        Case(
            "npmrc-auth",
            npm,
            (
                f"//npm.pkg.github.com/:_authToken={npm}",
                f"//registry.internal/:_auth={base64.b64encode(('ci:' + npm).encode()).decode()}",
            ),
            (),
            "https://docs.npmjs.com/cli/v10/configuring-npm/npmrc#auth-related-configuration",
        )
    )
    return out


def main() -> None:
    run_probe("D", cases, __doc__)


if __name__ == "__main__":
    main()
