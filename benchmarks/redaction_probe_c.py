"""Probe C: credentials in shapes no rule was written for, held out from issue 20's second stage.

Issue 20's third stage was designed on it, so it is no longer held out; probe D
(``redaction_probe_d.py``) is.

Written before any rule of issue 20's second stage changed and committed on its own, so
that rules designed on probes A and B (``benchmarks/redaction_unknown_vendors.py``) are
measured on shapes their authors did not tune on. 48 kinds: vendor tokens outside the
catalogue and outside A and B (Twilio, Datadog, Auth0, Supabase, Vercel, Railway, Azure,
AWS secret and session keys, Google refresh tokens, JFrog, Confluent, Cloudflare, Alibaba,
Tencent, OpenShift, Salesforce, kubeadm, JWE ...), webhook URLs, connection strings of
several database schemes, ``.netrc`` lines, ``Authorization: Basic`` values and private
keys in unusual armour. Values are random in each format's documented alphabet and length
(fixed seed), never live credentials.

Each value appears in contexts *without* a secret-like name beside it (a pasted line, a
table cell, a log line) and in contexts *with* one (an env line, a sentence naming the
key). A value *leaks* in a context when 8 consecutive characters of it survive ``redact``.

Run: ``python benchmarks/redaction_probe_c.py [--per-kind]``
"""

from __future__ import annotations

import argparse
import base64
import platform
import random
import string
from collections.abc import Callable
from dataclasses import dataclass

from palimpsest.safety.redact import redact

_B62 = string.ascii_letters + string.digits
_B64URL = _B62 + "-_"
_B64 = _B62 + "+/"
_HEX = "0123456789abcdef"
_LOWER = string.ascii_lowercase + string.digits
_BASE32_LOWER = "abcdefghijklmnopqrstuvwxyz234567"
_PW = _B62 + "-_."

UNNAMED = (
    "Pasted from the dashboard: {v}",
    "ran the job with {v} and it returned 403",
    "{v}",
    "| prod | {v} | expires 2027-01-01 |",
    "printf '%s' {v} > /tmp/out.txt",
)
"""Contexts that put no secret-like word beside the value."""

NAMED = (
    "{name}={v}",
    "here is the new {label} you asked for: {v}",
)
"""Contexts that name the value (an env line, a sentence)."""


@dataclass(frozen=True)
class Case:
    kind: str
    secret: str
    unnamed: tuple[str, ...]
    named: tuple[str, ...]
    source: str


def _token(kind: str, secret: str, name: str, label: str, source: str) -> Case:
    return Case(
        kind,
        secret,
        tuple(c.format(v=secret) for c in UNNAMED),
        tuple(c.format(v=secret, name=name, label=label) for c in NAMED),
        source,
    )


class Draw:
    """Random values in a format's alphabet, all from one seeded generator, so that a
    probe's cases are the same on every run (probes C and D share it)."""

    def __init__(self, seed: int) -> None:
        self._r = random.Random(seed)

    def rand(self, n: int, alphabet: str = _B62) -> str:
        return "".join(self._r.choice(alphabet) for _ in range(n))

    def uuid(self) -> str:
        return "-".join(self.rand(n, _HEX) for n in (8, 4, 4, 4, 12))

    def b64(self, n: int) -> str:
        return base64.b64encode(self._r.randbytes(n)).decode()

    def b64url(self, n: int) -> str:
        return base64.urlsafe_b64encode(self._r.randbytes(n)).decode().rstrip("=")


def cases(seed: int = 31337) -> list[Case]:
    draw = Draw(seed)
    rand, uuid, b64, b64url = draw.rand, draw.uuid, draw.b64, draw.b64url

    def pw() -> str:
        return rand(1, string.ascii_letters) + rand(15, _PW)

    out = [
        _token(
            "twilio-auth-token",
            rand(32, _HEX),
            "TWILIO_AUTH_TOKEN",
            "Twilio auth token",
            "https://www.twilio.com/docs/iam/api/authtoken",
        ),
        _token(
            "datadog-api-key",
            rand(32, _HEX),
            "DD_API_KEY",
            "Datadog API key",
            "https://docs.datadoghq.com/account_management/api-app-keys/",
        ),
        _token(
            "datadog-app-key",
            rand(40, _HEX),
            "DD_APP_KEY",
            "Datadog application key",
            "https://docs.datadoghq.com/account_management/api-app-keys/",
        ),
        _token(
            "auth0-client-secret",
            rand(64, _B64URL),
            "AUTH0_CLIENT_SECRET",
            "Auth0 client secret",
            "https://auth0.com/docs/get-started/applications/application-settings",
        ),
        _token(
            "supabase-secret",
            "sb_secret_" + rand(31, _B64URL),
            "SUPABASE_SECRET_KEY",
            "Supabase secret key",
            "https://supabase.com/docs/guides/api/api-keys",
        ),
        _token(
            "vercel-token",
            rand(24),
            "VERCEL_TOKEN",
            "Vercel token",
            "https://vercel.com/docs/rest-api#creating-an-access-token",
        ),
        _token(
            "railway-token",
            uuid(),
            "RAILWAY_TOKEN",
            "Railway project token",
            "https://docs.railway.com/guides/public-api#project-token",
        ),
        _token(
            "planetscale-password",
            "pscale_pw_" + rand(43, _B64URL),
            "DATABASE_PASSWORD",
            "PlanetScale password",
            "https://planetscale.com/docs/concepts/connection-strings",
        ),
        _token(
            "databricks-oauth-secret",
            "dose" + rand(32, _HEX),
            "DATABRICKS_CLIENT_SECRET",
            "Databricks OAuth secret",
            "https://docs.databricks.com/en/dev-tools/auth/oauth-m2m.html",
        ),
        _token(
            "azure-storage-key",
            b64(64),
            "AZURE_STORAGE_KEY",
            "storage account key",
            "https://learn.microsoft.com/en-us/azure/storage/common/storage-account-keys-manage",
        ),
        _token(
            "azure-ad-client-secret",
            rand(3) + "8Q~" + rand(34, _B62 + "_~.-"),
            "AZURE_CLIENT_SECRET",
            "Entra client secret",
            "https://learn.microsoft.com/en-us/entra/identity-platform/how-to-add-credentials",
        ),
        _token(
            "aws-secret-access-key",
            rand(40, _B64),
            "AWS_SECRET_ACCESS_KEY",
            "AWS secret access key",
            "https://docs.aws.amazon.com/IAM/latest/UserGuide/id_credentials_access-keys.html",
        ),
        _token(
            "aws-session-token",
            "IQoJb3JpZ2luX2VjE" + rand(300, _B64) + "==",
            "AWS_SESSION_TOKEN",
            "AWS session token",
            "https://docs.aws.amazon.com/STS/latest/APIReference/API_Credentials.html",
        ),
        _token(
            "google-refresh-token",
            "1//0" + rand(2) + rand(98, _B64URL),
            "GOOGLE_REFRESH_TOKEN",
            "Google refresh token",
            "https://developers.google.com/identity/protocols/oauth2",
        ),
        _token(
            "huggingface-org-token",
            "api_org_" + rand(34),
            "HF_API_TOKEN",
            "Hugging Face org token",
            "https://huggingface.co/docs/hub/security-tokens",
        ),
        _token(
            "azure-devops-pat",
            rand(52, _BASE32_LOWER),
            "AZURE_DEVOPS_EXT_PAT",
            "Azure DevOps PAT",
            "https://learn.microsoft.com/en-us/azure/devops/organizations/accounts/use-personal-access-tokens-to-authenticate",
        ),
        _token(
            "fcm-server-key",
            "AAAA" + rand(7, _B64URL) + ":APA91b" + rand(134, _B64URL),
            "FCM_SERVER_KEY",
            "FCM server key",
            "https://firebase.google.com/docs/cloud-messaging/auth-server",
        ),
        _token(
            "twitch-client-secret",
            rand(30, _LOWER),
            "TWITCH_CLIENT_SECRET",
            "Twitch client secret",
            "https://dev.twitch.tv/docs/authentication/register-app/",
        ),
        _token(
            "ngrok-authtoken",
            "2" + rand(26) + "_" + rand(21),
            "NGROK_AUTHTOKEN",
            "ngrok authtoken",
            "https://ngrok.com/docs/agent/#authtokens",
        ),
        _token(
            "snyk-token",
            uuid(),
            "SNYK_TOKEN",
            "Snyk API token",
            "https://docs.snyk.io/snyk-api/authentication-for-api",
        ),
        _token(
            "jfrog-api-key",
            "AKCp8" + rand(68),
            "ARTIFACTORY_API_KEY",
            "Artifactory API key",
            "https://jfrog.com/help/r/jfrog-platform-administration-documentation/api-key",
        ),
        _token(
            "jfrog-reference-token",
            "cmVmdGtuOjAxOjE3" + rand(48),
            "JFROG_ACCESS_TOKEN",
            "JFrog reference token",
            "https://jfrog.com/help/r/jfrog-platform-administration-documentation/reference-tokens",
        ),
        _token(
            "confluent-api-secret",
            rand(64, _B64),
            "CONFLUENT_API_SECRET",
            "Confluent Cloud API secret",
            "https://docs.confluent.io/cloud/current/security/authenticate/workload-identities/service-accounts/api-keys/overview.html",
        ),
        _token(
            "cloudflare-api-token",
            rand(40, _B64URL),
            "CLOUDFLARE_API_TOKEN",
            "Cloudflare API token",
            "https://developers.cloudflare.com/fundamentals/api/get-started/create-token/",
        ),
        _token(
            "cloudflare-global-key",
            rand(37, _HEX),
            "CF_API_KEY",
            "Cloudflare global API key",
            "https://developers.cloudflare.com/fundamentals/api/get-started/keys/",
        ),
        _token(
            "alibaba-access-key",
            "LTAI" + rand(20),
            "ALIBABA_CLOUD_ACCESS_KEY_ID",
            "Alibaba AccessKey",
            "https://www.alibabacloud.com/help/en/ram/user-guide/create-an-accesskey-pair",
        ),
        _token(
            "tencent-secret-id",
            "AKID" + rand(32),
            "TENCENTCLOUD_SECRET_ID",
            "Tencent SecretId",
            "https://www.tencentcloud.com/document/product/598/34228",
        ),
        _token(
            "openshift-token",
            "sha256~" + rand(43, _B64URL),
            "OPENSHIFT_TOKEN",
            "OpenShift token",
            "https://docs.openshift.com/container-platform/4.14/authentication/managing-oauth-access-tokens.html",
        ),
        _token(
            "gitea-token",
            rand(40, _HEX),
            "GITEA_TOKEN",
            "Gitea access token",
            "https://docs.gitea.com/development/api-usage",
        ),
        _token(
            "gitlab-runner-token",
            "glrt-" + rand(20, _B64URL),
            "CI_RUNNER_TOKEN",
            "runner authentication token",
            "https://docs.gitlab.com/ee/security/token_overview.html",
        ),
        _token(
            "salesforce-session",
            "00D" + rand(12) + "!AQ" + rand(4) + "." + rand(90, _B62 + "._"),
            "SF_ACCESS_TOKEN",
            "Salesforce session id",
            "https://help.salesforce.com/s/articleView?id=sf.remoteaccess_access_tokens.htm",
        ),
        _token(
            "kube-bootstrap-token",
            rand(6, _LOWER) + "." + rand(16, _LOWER),
            "KUBEADM_TOKEN",
            "kubeadm join token",
            "https://kubernetes.io/docs/reference/access-authn-authz/bootstrap-tokens/",
        ),
        _token(
            "jwe",
            "eyJhbGciOiJSU0EtT0FFUCIsImVuYyI6IkEyNTZHQ00ifQ."
            + b64url(256)
            + "."
            + b64url(12)
            + "."
            + b64url(120)
            + "."
            + b64url(16),
            "ID_TOKEN",
            "encrypted id token",
            "https://www.rfc-editor.org/rfc/rfc7516",
        ),
        _token(
            "jwt-pretty-payload",
            "eyJhbGciOiJIUzI1NiJ9."
            + base64.urlsafe_b64encode(b'{\n  "sub": "svc-deploy",\n  "exp": 1893456000\n}')
            .decode()
            .rstrip("=")
            + "."
            + b64url(32),
            "SESSION_JWT",
            "session JWT",
            "https://www.rfc-editor.org/rfc/rfc7519",
        ),
        _token(
            "wireguard-private-key",
            b64(32),
            "WG_PRIVATE_KEY",
            "WireGuard private key",
            "https://www.wireguard.com/quickstart/#key-generation",
        ),
        _token(
            "mailjet-secret",
            rand(32, _HEX),
            "MJ_APIKEY_PRIVATE",
            "Mailjet secret key",
            "https://dev.mailjet.com/email/guides/#authentication",
        ),
    ]
    hook_id = rand(18, string.digits)
    discord_hook = rand(68, _B64URL)
    out.append(
        Case(
            "discord-webhook",
            discord_hook,
            (
                f"posting alerts to https://discord.com/api/webhooks/{hook_id}/{discord_hook}",
                f"curl -X POST -d @msg.json https://discordapp.com/api/webhooks/{hook_id}/{discord_hook}",
            ),
            (f"DISCORD_WEBHOOK_URL=https://discord.com/api/webhooks/{hook_id}/{discord_hook}",),
            "https://discord.com/developers/docs/resources/webhook#execute-webhook",
        )
    )
    teams_secret = rand(32, _HEX)
    teams = (
        f"https://contoso.webhook.office.com/webhookb2/{uuid()}@{uuid()}/IncomingWebhook/"
        f"{teams_secret}/{uuid()}"
    )
    out.append(
        Case(
            "teams-webhook",
            teams_secret,
            (
                f"the connector posts to {teams}",
                f"Invoke-RestMethod -Method Post -Uri {teams} -Body $b",
            ),
            (f"TEAMS_WEBHOOK={teams}",),
            "https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/add-incoming-webhook",
        )
    )
    docker_pw = pw()
    docker_auth = base64.b64encode(f"ci-bot:{docker_pw}".encode()).decode()
    out.append(
        Case(
            "docker-config-auth",
            docker_auth,
            (
                f'{{"auths": {{"ghcr.io": {{"auth": "{docker_auth}"}}}}}}',
                f"cat ~/.docker/config.json shows ghcr.io -> {docker_auth}",
            ),
            (f"DOCKER_AUTH_CONFIG_B64={docker_auth}",),
            "https://docs.docker.com/reference/cli/docker/login/#credential-stores",
        )
    )
    netrc_pw = pw()
    out.append(
        Case(
            "netrc",
            netrc_pw,
            (
                f"machine api.heroku.com login ops@example.com password {netrc_pw}",
                f"machine git.example.org\n  login deploy\n  password {netrc_pw}",
                f"default login anonymous password {netrc_pw}",
            ),
            (f"NETRC_PASSWORD={netrc_pw}",),
            "https://www.gnu.org/software/inetutils/manual/html_node/The-_002enetrc-file.html",
        )
    )
    for kind, template, source in (
        (
            "postgres-url",
            "postgresql://app:{p}@db.internal:5432/app?sslmode=require",
            "https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-CONNSTRING-URIS",
        ),
        (
            "mongodb-srv-url",
            "mongodb+srv://admin:{p}@cluster0.ab1cd.mongodb.net/?retryWrites=true",
            "https://www.mongodb.com/docs/manual/reference/connection-string/",
        ),
        (
            "redis-url-no-user",
            "rediss://:{p}@cache.internal:6380/0",
            "https://www.iana.org/assignments/uri-schemes/prov/redis",
        ),
        (
            "amqp-url",
            "amqps://svc-orders:{p}@mq.example.net/prod",
            "https://www.rabbitmq.com/docs/uri-spec",
        ),
        (
            "jdbc-sqlserver",
            "jdbc:sqlserver://db01:1433;databaseName=sales;user=sa;password={p};encrypt=true",
            "https://learn.microsoft.com/en-us/sql/connect/jdbc/building-the-connection-url",
        ),
        (
            "ado-connection-string",
            "Server=tcp:sales.database.windows.net,1433;User ID=reporter;Pwd={p};Encrypt=True;",
            "https://learn.microsoft.com/en-us/dotnet/framework/data/adonet/connection-string-syntax",
        ),
        (
            "clickhouse-url",
            "clickhouse://default:{p}@ch.internal:9440/analytics?secure=true",
            "https://clickhouse.com/docs/en/interfaces/cli#connection_string",
        ),
    ):
        secret = pw()
        conn = template.format(p=secret)
        out.append(
            Case(
                kind,
                secret,
                (f"connecting with {conn}", conn, f"Error: could not connect using '{conn}'"),
                (f"DATABASE_URL={conn}",),
                source,
            )
        )
    basic = base64.b64encode(f"jenkins:{pw()}".encode()).decode()
    out.append(
        Case(
            "basic-auth",
            basic,
            (
                f"the webhook was called with Basic {basic}",
                f"> GET /api/v1/builds HTTP/1.1\n> Host: ci.internal\n> Authorization: Basic {basic}",
            ),
            (
                f"curl -H 'Proxy-Authorization: Basic {basic}' http://proxy.internal",
                f'headers = {{"Authorization": "Basic {basic}"}}',
            ),
            "https://www.rfc-editor.org/rfc/rfc7617",
        )
    )
    putty = b64(48)
    out.append(
        Case(
            "putty-private-key",
            putty,
            (
                f"PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy\nPublic-Lines: 2\n"
                f"{b64(33)}\n{b64(18)}\nPrivate-Lines: 1\n{putty}\nPrivate-MAC: {rand(64, _HEX)}",
            ),
            (),
            "https://the.earth.li/~sgtatham/putty/0.78/htmldoc/AppendixC.html",
        )
    )
    ssh2 = b64(57)
    out.append(
        Case(
            "ssh2-private-key",
            ssh2,
            (
                f'---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: "rsa-key-20240101"\n{ssh2}\n{b64(57)}\n'
                f"---- END SSH2 ENCRYPTED PRIVATE KEY ----",
            ),
            (),
            "https://www.rfc-editor.org/rfc/rfc4716",
        )
    )
    kube = rand(6, _LOWER) + "." + rand(16, _LOWER)
    out.append(
        Case(
            "kubeadm-join",
            kube,
            (
                f"kubeadm join 10.0.0.5:6443 --discovery-token-ca-cert-hash sha256:{rand(64, _HEX)} "
                f"--token {kube}",
            ),
            (f"bootstrap token {kube} expires in 24h",),
            "https://kubernetes.io/docs/reference/setup-tools/kubeadm/kubeadm-join/",
        )
    )
    return out


def leaked(secret: str, text: str) -> bool:
    return any(secret[i : i + 8] in text for i in range(max(1, len(secret) - 7)))


def measure(
    per_kind: bool = False, of: list[Case] | None = None
) -> dict[str, tuple[int, int, int, int]]:
    """Per kind: (unnamed leaked, unnamed total, named leaked, named total), over ``of``
    (probe C's cases when not given)."""
    out: dict[str, tuple[int, int, int, int]] = {}
    for case in cases() if of is None else of:
        unnamed = sum(leaked(case.secret, redact(c)) for c in case.unnamed)
        named = sum(leaked(case.secret, redact(c)) for c in case.named)
        out[case.kind] = (unnamed, len(case.unnamed), named, len(case.named))
    return out


def report(probe: str, results: dict[str, tuple[int, int, int, int]], per_kind: bool) -> None:
    """Print a probe's totals (and each kind's with ``per_kind``) as Markdown tables."""
    kinds_leaking = [k for k, (u, _, n, _) in results.items() if u or n]
    u_leak = sum(v[0] for v in results.values())
    u_all = sum(v[1] for v in results.values())
    n_leak = sum(v[2] for v in results.values())
    n_all = sum(v[3] for v in results.values())
    print(
        f"| probe {probe} | kinds | kinds leaking | unnamed contexts leaking | named contexts leaking |"
    )
    print("|---|---:|---:|---:|---:|")
    print(
        f"| held out | {len(results)} | {len(kinds_leaking)} | {u_leak}/{u_all} | {n_leak}/{n_all} |"
    )
    if per_kind:
        print()
        print("| kind | unnamed leaking | named leaking |")
        print("|---|---:|---:|")
        for kind, (u, ut, n, nt) in results.items():
            print(f"| {kind} | {u}/{ut} | {n}/{nt} |")
    print(f"leaking: {', '.join(kinds_leaking) or 'none'}")


def run_probe(probe: str, probe_cases: Callable[[], list[Case]], doc: str) -> None:
    """A probe script's command line (``[--per-kind]``; ``doc``'s first line is its
    description): measure the probe's cases and print the report."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--per-kind", action="store_true")
    args = parser.parse_args()
    print(f"python {platform.python_version()}, {platform.machine()}")
    report(probe, measure(of=probe_cases()), args.per_kind)


def main() -> None:
    run_probe("C", cases, __doc__)


if __name__ == "__main__":
    main()
