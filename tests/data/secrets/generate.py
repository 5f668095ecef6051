"""Write secrets.jsonl: one kind of credential a line, a realistic random value, 3+ contexts.

Run from the repository root: ``python tests/data/secrets/generate.py``. The output is
deterministic (fixed seed), so the committed file can be regenerated and compared. Values
are random in each vendor's documented alphabet and length, never entropy-free fakes;
none of them is a live credential. Each kind cites where its format is documented.

Record fields: ``kind``, ``group`` (``recognised`` = the 35 kinds of issue 11, ``vendor``
= the 10 kinds issue 12 found missed, ``general`` = the name/value rule), ``secret``,
``contexts`` (lines with the secret in place), ``source``.
"""

from __future__ import annotations

import base64
import json
import random
import string
from pathlib import Path

RNG = random.Random(20_240_612)
HERE = Path(__file__).parent

B62 = string.ascii_letters + string.digits
B64URL = B62 + "-_"
B64 = B62 + "+/"
HEX = "0123456789abcdef"
UPPER_DIGITS = string.ascii_uppercase + string.digits
# Password alphabet: what people type, minus characters that end a bare value in a config
# line (quotes, ``;``, ``&``, ``,``, brackets) or open a variable (``$``, ``%``).
PW = B62 + "!@#^*_-+.~"


def pick(alphabet: str, n: int) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


def password(n: int, alphabet: str = PW) -> str:
    # starts with a letter and mixes classes, like a generated password
    while True:
        value = RNG.choice(string.ascii_letters) + pick(alphabet, n - 1)
        if any(c.isdigit() for c in value) and any(c.isupper() for c in value):
            return value


def b64_bytes(n: int) -> str:
    return base64.b64encode(RNG.randbytes(n)).decode()


def b64url_bytes(n: int) -> str:
    return base64.urlsafe_b64encode(RNG.randbytes(n)).decode().rstrip("=")


def jwt() -> str:
    header = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    claims = {"sub": str(RNG.randrange(10**9)), "iat": 1_717_000_000 + RNG.randrange(10**6)}
    payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    return f"{header}.{payload}.{b64url_bytes(32)}"


def discord() -> str:
    snowflake = str(RNG.randrange(10**17, 10**19))
    head = base64.b64encode(snowflake.encode()).decode().rstrip("=")
    return f"{head}.G{pick(B64URL, 5)}.{pick(B64URL, 38)}"


def sas_signature() -> str:
    raw = b64_bytes(32)
    return raw.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")


GITHUB = "https://docs.github.com/en/authentication/keeping-your-account-and-data-secure/about-authentication-to-github#githubs-token-formats"
AWS = "https://docs.aws.amazon.com/IAM/latest/UserGuide/id_credentials_access-keys.html"
RFC6750 = "https://www.rfc-editor.org/rfc/rfc6750"
RFC3986 = "https://www.rfc-editor.org/rfc/rfc3986#section-3.2.1"
RFC7468 = "https://www.rfc-editor.org/rfc/rfc7468"
OPENSSH = "https://github.com/openssh/openssh-portable/blob/master/PROTOCOL.key"
DOTENV = "https://12factor.net/config"
NPMRC = "https://docs.npmjs.com/cli/v10/configuring-npm/npmrc#auth-related-configuration"
OAUTH = "https://www.rfc-editor.org/rfc/rfc6749#section-5.1"
MYSQL = "https://dev.mysql.com/doc/refman/8.0/en/connection-options.html#option_general_password"


def kinds() -> list[dict[str, object]]:
    rsa_line = b64_bytes(48)
    rows: list[tuple[str, str, str, list[str], str]] = [
        # --- the 35 kinds redaction already recognised (issue 11) ----------------------
        (
            "openai",
            "recognised",
            "sk-" + pick(B62, 48),
            ["OPENAI_API_KEY={s}", '{{"api_key": "{s}"}}', "my openai key is {s} ok"],
            "https://platform.openai.com/docs/api-reference/authentication",
        ),
        (
            "openai-proj",
            "recognised",
            "sk-proj-" + pick(B64URL, 120),
            ["key {s}", "export OPENAI_API_KEY='{s}'", 'client = OpenAI(api_key="{s}")'],
            "https://platform.openai.com/docs/api-reference/authentication",
        ),
        (
            "anthropic",
            "recognised",
            "sk-ant-api03-" + pick(B64URL, 93) + "AA",
            ["ANTHROPIC_API_KEY={s}", "x-api-key: {s}", "use {s} for the eval run"],
            "https://docs.anthropic.com/en/api/getting-started#authentication",
        ),
        (
            "openrouter",
            "recognised",
            "sk-or-v1-" + pick(HEX, 64),
            ["router key: {s}", "Authorization: Bearer {s}", '{{"key": "{s}"}}'],
            "https://openrouter.ai/docs/api-reference/authentication",
        ),
        (
            "google",
            "recognised",
            "AIza" + pick(B64URL, 35),
            [
                "maps key {s} here",
                "https://maps.googleapis.com/maps/api/geocode/json?key={s}",
                "GOOGLE_API_KEY={s}",
            ],
            "https://cloud.google.com/docs/authentication/api-keys",
        ),
        (
            "github-ghp",
            "recognised",
            "ghp_" + pick(B62, 36),
            [
                "token {s}",
                "git clone https://x-access-token:{s}@github.com/org/repo.git",
                "GITHUB_TOKEN={s}",
            ],
            GITHUB,
        ),
        (
            "github-pat",
            "recognised",
            "github_pat_11" + pick(UPPER_DIGITS, 20) + "_" + pick(B62, 59),
            ["pat {s}", '{{"github_token": "{s}"}}', "gh auth login --with-token <<< {s}"],
            GITHUB,
        ),
        (
            "slack-xoxb",
            "recognised",
            f"xoxb-{pick(string.digits, 12)}-{pick(string.digits, 13)}-{pick(B62, 24)}",
            ["bot {s}", "SLACK_BOT_TOKEN={s}", "Authorization: Bearer {s}"],
            "https://api.slack.com/authentication/token-types",
        ),
        (
            "slack-webhook",
            "recognised",
            f"T{pick(UPPER_DIGITS, 8)}/B{pick(UPPER_DIGITS, 10)}/{pick(B62, 24)}",
            [
                "POST https://hooks.slack.com/services/{s}",
                'SLACK_WEBHOOK_URL="https://hooks.slack.com/services/{s}"',
                "curl -X POST https://hooks.slack.com/services/{s} -d @msg.json",
            ],
            "https://api.slack.com/messaging/webhooks",
        ),
        (
            "aws-akia",
            "recognised",
            "AKIA" + pick(UPPER_DIGITS, 16),
            ["aws_access_key_id={s}", "AWS_ACCESS_KEY_ID: {s}", "the key id {s} is rotated"],
            AWS,
        ),
        (
            "aws-secret",
            "recognised",
            pick(B64, 40),
            [
                "aws_secret_access_key = {s}",
                "AWS_SECRET_ACCESS_KEY={s}",
                '{{"SecretAccessKey": "{s}"}}',
            ],
            AWS,
        ),
        (
            "auth-header",
            "recognised",
            b64url_bytes(30),
            [
                "Authorization: Bearer {s}",
                "curl -H 'Authorization: Token {s}' https://api.x.io",
                '{{"headers": {{"Authorization": "Bearer {s}"}}}}',
            ],
            RFC6750,
        ),
        (
            "bearer",
            "recognised",
            pick(B62, 40),
            ["send Bearer {s} upstream", "bearer {s}", "-H 'authorization: bearer {s}'"],
            RFC6750,
        ),
        (
            "private-key-rsa",
            "recognised",
            rsa_line,
            [
                "-----BEGIN RSA PRIVATE KEY-----\n{s}\n"
                + b64_bytes(48)
                + "\n-----END RSA PRIVATE KEY-----",
                "key: |\n  -----BEGIN RSA PRIVATE KEY-----\n  {s}\n  -----END RSA PRIVATE KEY-----",
                '{{"private_key": "-----BEGIN RSA PRIVATE KEY-----\\n{s}\\n-----END RSA PRIVATE KEY-----\\n"}}',
            ],
            RFC7468,
        ),
        (
            "private-key-openssh",
            "recognised",
            "b3BlbnNzaC1rZXktdjEAAAAA" + pick(B64, 40),
            [
                "-----BEGIN OPENSSH PRIVATE KEY-----\n{s}\n-----END OPENSSH PRIVATE KEY-----",
                "$ cat ~/.ssh/id_ed25519\n-----BEGIN OPENSSH PRIVATE KEY-----\n{s}\n-----END OPENSSH PRIVATE KEY-----",
                "DEPLOY_KEY='-----BEGIN OPENSSH PRIVATE KEY-----\n{s}\n-----END OPENSSH PRIVATE KEY-----'",
            ],
            OPENSSH,
        ),
        (
            "private-key-truncated",
            "recognised",
            "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + pick(B64, 32),
            [
                "-----BEGIN PRIVATE KEY-----\n{s}",
                "output truncated:\n-----BEGIN PRIVATE KEY-----\n{s}",
                '"-----BEGIN PRIVATE KEY-----\\n{s}',
            ],
            RFC7468,
        ),
        (
            "password-env",
            "recognised",
            password(16),
            ["DB_PASSWORD={s}", "export POSTGRES_PASSWORD='{s}'", '{{"db_password": "{s}"}}'],
            DOTENV,
        ),
        (
            "passwd",
            "recognised",
            password(12),
            ["passwd={s}", "smtp_passwd: {s}", "--passwd {s}"],
            DOTENV,
        ),
        (
            "token-code",
            "recognised",
            pick(B62, 32),
            ['token = "{s}"', "const token = '{s}';", "API_TOKEN={s}"],
            DOTENV,
        ),
        (
            "secret-yaml",
            "recognised",
            pick(B62, 24),
            ["secret: {s}", "  jwt_secret: {s}", '{{"secret": "{s}"}}'],
            "https://yaml.org/spec/1.2.2/",
        ),
        (
            "password-yaml",
            "recognised",
            password(14),
            ["  password: {s}", "    redis_password: {s}", "password: '{s}'"],
            "https://yaml.org/spec/1.2.2/",
        ),
        (
            "api_key-py",
            "recognised",
            pick(HEX, 32),
            ["api_key = '{s}'", "client = Client(api_key='{s}')", "API_KEY={s}"],
            DOTENV,
        ),
        (
            "apikey",
            "recognised",
            pick(B62, 32),
            [
                "apikey={s}",
                "https://api.example.com/v2/data?apikey={s}&limit=10",
                '{{"apiKey": "{s}"}}',
            ],
            DOTENV,
        ),
        (
            "access_token-json",
            "recognised",
            "ya29." + pick(B64URL, 60),
            [
                '{{"access_token": "{s}", "expires_in": 3599}}',
                "access_token={s}",
                "GET /v1/me?access_token={s}",
            ],
            OAUTH,
        ),
        (
            "client_secret-json",
            "recognised",
            b64url_bytes(30),
            ['{{"client_secret": "{s}", "id": 1}}', "CLIENT_SECRET={s}", "--client-secret {s}"],
            OAUTH,
        ),
        (
            "password-json",
            "recognised",
            password(16),
            ['{{"user": "bob", "password": "{s}"}}', "password = '{s}'", "PASSWORD={s}"],
            DOTENV,
        ),
        (
            "cli-password",
            "recognised",
            password(14),
            ["mysql --password {s} appdb", "psql --password={s}", "tool --password '{s}' run"],
            MYSQL,
        ),
        (
            "cli-token",
            "recognised",
            pick(B62, 40),
            ["deploy --token={s}", "vault login --token {s}", "cli --auth-token '{s}'"],
            "https://developer.hashicorp.com/vault/docs/commands/login",
        ),
        (
            "url-userinfo",
            "recognised",
            password(18, B62),
            [
                "postgres://admin:{s}@db.internal:5432/app",
                "DATABASE_URL=mysql://app:{s}@10.0.0.5/app",
                "redis://:{s}@cache:6379/0",
            ],
            RFC3986,
        ),
        (
            "curl-user",
            "recognised",
            password(16, B62),
            [
                "curl -u admin:{s} https://api.example.com",
                "curl --user deploy:{s} -X POST https://ci.x",
                "curl -u 'ci:{s}' https://registry.x/v2/",
            ],
            "https://curl.se/docs/manpage.html#-u",
        ),
        (
            "npmrc",
            "recognised",
            "npm_" + pick(B62, 36),
            ["//registry.npmjs.org/:_authToken={s}", "NPM_TOKEN={s}", "npm token {s}"],
            NPMRC,
        ),
        (
            "url-token-param",
            "recognised",
            pick(B62, 32),
            [
                "GET https://api.example.com/v1/items?token={s}&page=2",
                "https://x.io/hook?token={s}",
                "wss://stream.example.com/ws?access_token={s}",
            ],
            OAUTH,
        ),
        (
            "url-sig-param",
            "recognised",
            sas_signature(),
            [
                "https://acct.blob.core.windows.net/c/f?sv=2022-11-02&sig={s}&se=2030-01-01",
                "SAS=?sv=2022-11-02&ss=b&sig={s}",
                "curl 'https://acct.blob.core.windows.net/c?restype=container&sig={s}'",
            ],
            "https://learn.microsoft.com/en-us/rest/api/storageservices/create-service-sas",
        ),
        (
            "jwt",
            "recognised",
            jwt(),
            ["cookie: session={s}", "Authorization: Bearer {s}", '{{"id_token": "{s}"}}'],
            "https://www.rfc-editor.org/rfc/rfc7519",
        ),
        (
            "stripe",
            "recognised",
            "sk_live_" + pick(B62, 24),
            ["STRIPE {s}", "STRIPE_SECRET_KEY={s}", "stripe.api_key = '{s}'"],
            "https://docs.stripe.com/keys",
        ),
        # --- the ten kinds issue 12 found missed --------------------------------------
        (
            "stripe-webhook",
            "vendor",
            "whsec_" + pick(B62, 32),
            [
                "STRIPE_WEBHOOK={s}",
                '{{"endpoint_secret": "{s}"}}',
                "the signing secret {s} rotates",
            ],
            "https://docs.stripe.com/webhooks#verify-official-libraries",
        ),
        (
            "google-oauth",
            "vendor",
            "GOCSPX-" + pick(B64URL, 28),
            [
                "oauth client {s}",
                '{{"web": {{"client_secret": "{s}"}}}}',
                "GOOGLE_CLIENT_SECRET={s}",
            ],
            "https://support.google.com/cloud/answer/15549257",
        ),
        (
            "sendgrid",
            "vendor",
            f"SG.{pick(B64URL, 22)}.{pick(B64URL, 43)}",
            ["MAIL_KEY={s}", '{{"sendgrid": "{s}"}}', "sendgrid {s} for mail"],
            "https://www.twilio.com/docs/sendgrid/ui/account-and-settings/api-keys",
        ),
        (
            "twilio",
            "vendor",
            "SK" + pick(HEX, 32),
            ["twilio sid {s}", "TWILIO_API_KEY={s}", "client = Client('{s}', secret)"],
            "https://www.twilio.com/docs/iam/api-keys/key-resource-v1",
        ),
        (
            "discord-bot",
            "vendor",
            discord(),
            ["bot {s}", "DISCORD_TOKEN={s}", "client.run('{s}')"],
            "https://github.com/Rapptz/discord.py/blob/master/docs/token.rst",
        ),
        (
            "telegram-bot",
            "vendor",
            f"{RNG.randrange(10**9, 10**10)}:AA{pick(B64URL, 33)}",
            ["telegram {s}", "https://api.telegram.org/bot{s}/getMe", "TELEGRAM_BOT={s}"],
            "https://core.telegram.org/bots/api#authorizing-your-bot",
        ),
        (
            "azure-storage",
            "vendor",
            b64_bytes(64),
            [
                "AccountKey={s};x=y",
                "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={s};EndpointSuffix=core.windows.net",
                '{{"AZURE_STORAGE_KEY": "{s}"}}',
            ],
            "https://learn.microsoft.com/en-us/azure/storage/common/storage-configure-connection-string",
        ),
        (
            "mailgun",
            "vendor",
            "key-" + pick(HEX, 32),
            [
                "mailgun {s}",
                "MAILGUN_API_KEY={s}",
                "curl -s --user 'api:{s}' https://api.mailgun.net/v3",
            ],
            "https://help.mailgun.com/hc/en-us/articles/203380100",
        ),
        (
            "digitalocean",
            "vendor",
            "dop_v1_" + pick(HEX, 64),
            ["do {s}", "doctl auth init -t {s}", "DIGITALOCEAN_TOKEN={s}"],
            "https://docs.digitalocean.com/notes/2022/api-token-format",
        ),
        (
            "prose-password",
            "vendor",
            password(17),
            [
                "my gmail password is {s}",
                "FYI the password is {s} until Friday",
                "Her wifi password is now {s}, see you",
            ],
            "issue 12 (prose a user types into a chat)",
        ),
        # --- the general rule: a random value next to a key-like name -----------------
        (
            "weak-key-env",
            "general",
            pick(HEX, 40),
            ["WEBHOOK_KEY={s}", '{{"license_key": "{s}"}}', "storageKey: {s}"],
            DOTENV,
        ),
        (
            "weak-header",
            "general",
            pick(HEX, 32),
            ["Ocp-Apim-Subscription-Key: {s}", "-H 'X-Auth-Key: {s}'", "apim_key={s}"],
            "https://learn.microsoft.com/en-us/azure/api-management/api-management-subscriptions",
        ),
        (
            "db-pass",
            "general",
            password(14, B62),
            ["DB_PASS={s}", "  smtp_pass: {s}", '{{"mongo_pass": "{s}"}}'],
            DOTENV,
        ),
        (
            "credentials",
            "general",
            b64_bytes(24),
            ['{{"credentials": "{s}"}}', "_auth={s}", "REGISTRY_CREDS={s}"],
            NPMRC,
        ),
        (
            "ado-password",
            "general",
            password(15),
            [
                "Server=tcp:db.example.net,1433;Database=app;User ID=app;Password={s};",
                "Data Source=db;Initial Catalog=app;User Id=sa;Pwd={s};",
                "Host=pg;Username=app;Password={s}",
            ],
            "https://learn.microsoft.com/en-us/dotnet/framework/data/adonet/connection-string-syntax",
        ),
        (
            "mysql-p",
            "general",
            password(13, B62),
            [
                "mysql -h db -u app -p{s} app",
                "mysqldump -uroot -p{s} shop > dump.sql",
                "docker exec db mysql -uroot -p{s} -e 'show databases'",
            ],
            MYSQL,
        ),
        (
            "sshpass",
            "general",
            password(12),
            [
                "sshpass -p {s} ssh deploy@10.0.0.7",
                "sshpass -p '{s}' scp a.tgz host:",
                "run: sshpass -p {s} rsync -a dist/ web:/srv",
            ],
            "https://man.archlinux.org/man/sshpass.1",
        ),
        (
            "prose-for",
            "general",
            password(15),
            [
                "the password for the staging db is {s}",
                "The root password on box7 is {s}.",
                "password for grafana admin is: {s}",
            ],
            "issue 12 (prose)",
        ),
        (
            "prose-apikey",
            "general",
            pick(B62, 32),
            [
                "my api key is {s}",
                "The API key for the weather service is {s}",
                "their token is {s} (expires monday)",
            ],
            "issue 12 (prose)",
        ),
        (
            "pw-colon",
            "general",
            password(13),
            ["pw: {s}", "wifi pw: {s}", "root_pw={s}"],
            "issue 12 (prose: 'pw: X')",
        ),
    ]
    out: list[dict[str, object]] = []
    for kind, group, secret, contexts, source in rows:
        out.append(
            {
                "kind": kind,
                "group": group,
                "secret": secret,
                "contexts": [c.format(s=secret) for c in contexts],
                "source": source,
            }
        )
    for kind, group, secret, contexts, source in issue20_kinds():
        out.append(
            {
                "kind": kind,
                "group": group,
                "secret": secret,
                "contexts": [c.format(s=secret) for c in contexts],
                "held_out": [held_out_index(kind)],
                "source": source,
            }
        )
    for kind, secret, contexts, source in unprefixed_kinds():
        out.append(
            {
                "kind": kind,
                "group": "unknown-vendors",
                "secret": secret,
                "contexts": [c.format(s=secret) for c in contexts],
                "source": source,
            }
        )
    return out


# --- issue 20, second stage: tokens with no prefix, or a prefix the catalogue lacked ---
# Written after probes A and B of benchmarks/redaction_unknown_vendors.py found them leaking;
# the contexts are new sentences, not the probes' own. A third generator keeps every row
# above unchanged.
RNG_U = random.Random(20_261_128)


def pick_u(alphabet: str, n: int) -> str:
    return "".join(RNG_U.choice(alphabet) for _ in range(n))


def uuid_u() -> str:
    return "-".join(pick_u(HEX, n) for n in (8, 4, 4, 4, 12))


def unprefixed_kinds() -> list[tuple[str, str, list[str], str]]:
    """Bare keys in sentences that name them, and vendor prefixes added to the catalogue."""
    return [
        (
            "bare-mixed-40",
            pick_u(B62, 40),
            [
                "Cohere support rotated our key: {s}",
                "got a 401 with token {s} on /v1/chat",
                "- [ ] revoke {s} before Friday",
            ],
            "https://docs.cohere.com/reference/about (keys are 40 characters of letters and digits)",
        ),
        (
            "bare-upper-34",
            pick_u(UPPER_DIGITS, 34),
            [
                "etherscan api key {s} hit the rate limit",
                "the bot logs in with {s} every hour",
                "> {s} was leaked in a screenshot",
            ],
            "https://docs.etherscan.io/getting-started/viewing-api-usage-statistics",
        ),
        (
            "bare-hex-32",
            pick_u(HEX, 32),
            [
                "Azure OpenAI: secret {s}, region westeurope",
                "that credential ({s}) belongs to the old resource",
                "access key {s} stopped working after the rotation",
            ],
            "https://learn.microsoft.com/en-us/azure/ai-services/openai/reference#authentication",
        ),
        (
            "heroku-uuid",
            "HRKU-" + uuid_u(),
            [
                "heroku authorizations:create printed {s}",
                "use {s} for the pipeline",
                "[{s}]",
            ],
            "https://devcenter.heroku.com/articles/authentication",
        ),
        (
            "plaid-access",
            "access-production-" + uuid_u(),
            [
                "exchange returned {s} for item 42",
                "stored {s} in the items table",
                "<td>{s}</td>",
            ],
            "https://plaid.com/docs/api/tokens/",
        ),
        (
            "mapbox-secret",
            "sk.eyJ1IjoibWFwcGVyIiwiYSI6I" + pick_u(B62, 24) + "." + pick_u(B64URL, 22),
            [
                "tiles upload worked with {s}",
                "{s}",
                "The style editor shows {s} under Account",
            ],
            "https://docs.mapbox.com/api/accounts/tokens/",
        ),
        (
            "infisical-service",
            "st." + pick_u(HEX, 24) + "." + pick_u(HEX, 32) + "." + pick_u(HEX, 32),
            [
                "infisical run picked up {s}",
                "ci/secrets.sh: {s}",
                "({s})",
            ],
            "https://infisical.com/docs/documentation/platform/token",
        ),
        (
            "mailchimp",
            pick_u(HEX, 32) + "-us14",
            [
                "audience sync uses {s}",
                "mc: {s}",
                "copy {s} into the form",
            ],
            "https://mailchimp.com/developer/marketing/guides/quick-start/",
        ),
        (
            "square-access",
            "EAAAE" + pick_u(B62, 59),
            [
                "square sandbox call with {s} returned 200",
                "{s} (seller account)",
                "paste {s} in Postman",
            ],
            "https://developer.squareup.com/docs/build-basics/access-tokens",
        ),
        (
            "square-short",
            "sq0atp-" + pick_u(B64URL, 22),
            [
                "older app still has {s}",
                "{s}",
                "ok: {s}",
            ],
            "https://developer.squareup.com/docs/build-basics/access-tokens",
        ),
        (
            "databricks-pat",
            "dapi" + pick_u(HEX, 32),
            [
                "databricks fs ls worked once I used {s}",
                "{s}",
                "notebook widget value = {s}",
            ],
            "https://docs.databricks.com/en/dev-tools/auth/pat.html",
        ),
        (
            "newrelic-user",
            "NRAK-" + pick_u(UPPER_DIGITS, 27),
            [
                "NerdGraph accepted {s}",
                "{s}",
                "dashboards api ({s})",
            ],
            "https://docs.newrelic.com/docs/apis/intro-apis/new-relic-api-keys/",
        ),
        (
            "terraform-cloud",
            pick_u(B62, 14) + ".atlasv1." + pick_u(B64URL, 67),
            [
                "terraform login stored {s}",
                "{s}",
                "credentials.tfrc.json has {s} in it",
            ],
            "https://developer.hashicorp.com/terraform/cloud-docs/users-teams-organizations/api-tokens",
        ),
        (
            "airtable-pat",
            "pat" + pick_u(B62, 14) + "." + pick_u(HEX, 64),
            [
                "base sync with {s}",
                "{s}",
                "new PAT {s} scoped to data.records:read",
            ],
            "https://airtable.com/developers/web/guides/personal-access-tokens",
        ),
    ]


# --- issue 20: shapes measured as leaking (values, chains, lines, blocks, new vendors) ---
# A second generator, so the rows above keep their values when these are added.
RNG20 = random.Random(20_261_127)
PYPI = "https://docs.pypi.org/project/api-tokens/"
SHOPIFY = "https://shopify.dev/docs/apps/build/authentication-authorization/access-tokens"
DOPPLER = "https://docs.doppler.com/reference/auth-token-formats"
YAML_BLOCK = "https://yaml.org/spec/1.2.2/#81-block-scalar-styles"


def pick20(alphabet: str, n: int) -> str:
    return "".join(RNG20.choice(alphabet) for _ in range(n))


def password20(n: int, alphabet: str = PW) -> str:
    while True:
        value = RNG20.choice(string.ascii_letters) + pick20(alphabet, n - 1)
        if any(c.isdigit() for c in value) and any(c.isupper() for c in value):
            return value


def b64_20(n: int) -> str:
    return base64.b64encode(RNG20.randbytes(n)).decode()


def pypi_token() -> str:
    # "AgEIcHlwaS5vcmc" is the base64 macaroon header naming pypi.org; the rest is random.
    return "pypi-AgEIcHlwaS5vcmc" + pick20(B64URL, 120)


def wrapped(secret: str, at: int) -> str:
    return secret[:at] + "\n" + secret[at:]


def issue20_kinds() -> list[tuple[str, str, str, list[str], str]]:
    """Contexts written after issue 20, in new words; none is a copy of the issue's lines."""
    stripe_inside = "sk_live_" + pick20(B62, 24)
    blob_env = f"PAYMENTS_MODE=live\nSTRIPE_SECRET_KEY={stripe_inside}\nRETRIES=3\n"
    aws_inside = "AKIA" + pick20(UPPER_DIGITS, 16)
    blob_json = json.dumps({"region": "eu-west-1", "access_key_id": aws_inside}) + "\n"
    ghp = "ghp_" + pick20(B62, 36)
    pem_body = b64_20(48)
    rows: list[tuple[str, str, str, list[str], str]] = [
        (
            "repeat-prose",
            "issue20",
            password20(15),
            [
                "rotated the relay login: SMTP_PASSWORD={s} -- and yes, {s} also opens the web UI",
                "vault printed db_pass = {s}\nthen psql accepted {s} on the first try",
                '{{"admin_password": "{s}", "comment": "unchanged since March, still {s}"}}',
            ],
            "issue 20 (a value shown again after its redacted first occurrence)",
        ),
        (
            "repeat-other-key",
            "issue20",
            pick20(B62, 28),
            [
                "auth:\n  secret: {s}\nlegacy:\n  fallback_value: {s}",
                "SERVICE_TOKEN={s}\nBACKUP_COPY={s}",
                "[creds]\npassphrase = {s}\n[mirror]\nvalue = {s}",
            ],
            "issue 20 (the same value under a second, harmless-looking name)",
        ),
        (
            "chain-connection-key",
            "issue20",
            b64_20(32),
            [
                "conn_secret=AccountKey={s}",
                "STORAGE_PASSWORD: SharedAccessKey={s}",
                "blob_token=AccountKey={s};EndpointSuffix=core.windows.net",
            ],
            "https://learn.microsoft.com/en-us/azure/storage/common/storage-configure-connection-string",
        ),
        (
            "chain-keyword-colon",
            "issue20",
            password20(16),
            [
                "deploy token: secret: {s}",
                "vault entry -> password: {s}",
                "  api_key: token: {s}",
            ],
            "issue 20 (a keyword followed by another keyword)",
        ),
        (
            "chain-keyword-equals",
            "issue20",
            pick20(B62, 30),
            [
                "client_secret=apikey={s}",
                "--token api_key={s}",
                "PASSWORD=passwd={s}",
            ],
            "issue 20 (a keyword followed by another keyword)",
        ),
        (
            "next-line-password",
            "issue20",
            password20(14),
            [
                "Enter the new password:\n{s}\nPassword updated.",
                "here's the token for the build bot\ntoken:\n  {s}\n",
                "Secret:\r\n{s}\r\n",
            ],
            "issue 20 (a value on the line after its keyword)",
        ),
        (
            "yaml-block-secret",
            "issue20",
            b64_20(36),
            [
                "signing_key: |\n  {s}\nalgorithm: HS512",
                "  client_secret: >-\n    {s}\n  client_id: web",
                "database:\n  password: |-\n    {s}\n  host: db.internal",
            ],
            YAML_BLOCK,
        ),
        (
            "pypi-token",
            "issue20",
            pypi_token(),
            [
                "poetry config pypi-token.pypi {s}",
                "upload creds for the release job: {s}",
                "[distutils]\nindex-servers = pypi\n# token {s}",
            ],
            PYPI,
        ),
        (
            "shopify-admin",
            "issue20",
            "shpat_" + pick20(HEX, 32),
            [
                "curl -H 'X-Shopify-Access-Token: {s}' https://acme.myshopify.com/admin/api/2024-07/shop.json",
                "const shop = createClient({{ storeDomain, adminToken: '{s}' }});",
                "the sync job uses {s} against the dev store",
            ],
            SHOPIFY,
        ),
        (
            "shopify-shared-secret",
            "issue20",
            "shpss_" + pick20(HEX, 32),
            [
                "app secret {s} (partners dashboard)",
                'SHOPIFY_API_SECRET="{s}"',
                "verify hmac with {s} before trusting the webhook",
            ],
            SHOPIFY,
        ),
        (
            "doppler-service",
            "issue20",
            "dp.st.prd." + pick20(B62, 44),
            [
                "DOPPLER_TOKEN={s}",
                "doppler run --token {s} -- ./start.sh",
                "CI pulls config with {s} every deploy",
            ],
            DOPPLER,
        ),
        (
            "doppler-personal",
            "issue20",
            "dp.pt." + pick20(B62, 43),
            [
                "my doppler login is {s}",
                "export DOPPLER_PERSONAL_TOKEN={s}",
                "doppler:\n  cli_token: {s}",
            ],
            DOPPLER,
        ),
        (
            "suffix-name-dotted",
            "issue20",
            "v2." + pick20(B62, 20) + "." + pick20(HEX, 24),
            [
                "WEBHOOK_SIGNING_SECRET={s}",
                "export RELEASE_BOT_TOKEN={s}",
                "  ANALYTICS_INGEST_KEY: {s}",
            ],
            DOTENV,
        ),
        (
            "slack-webhook-path",
            "issue20",
            f"T{pick20(UPPER_DIGITS, 10)}/B{pick20(UPPER_DIGITS, 10)}/{pick20(B62, 24)}",
            [
                "alerts go to /services/{s}",
                "webhook_path: services/{s}",
                "Slack incoming hook (services/{s}) posts to #deploys",
            ],
            "https://api.slack.com/messaging/webhooks",
        ),
        (
            "azure-sas-sig",
            "issue20",
            b64_20(32).replace("+", "%2B").replace("/", "%2F").replace("=", "%3D"),
            [
                "sig={s}&se=2031-04-01T00:00:00Z&sp=racwdl",
                'az storage blob list --sas-token "sv=2023-01-03&ss=b&srt=co&sp=rl&sig={s}"',
                "SharedAccessSignature=sv=2022-11-02&sr=c&sig={s}",
            ],
            "https://learn.microsoft.com/en-us/rest/api/storageservices/create-service-sas",
        ),
        (
            "base64-env-file",
            "issue20",
            base64.b64encode(blob_env.encode()).decode(),
            [
                "echo {s} | base64 -d > .env",
                'kubectl patch secret app -p \'{{"data":{{"dotenv":"{s}"}}}}\'',
                "the blob {s} is last week's config",
            ],
            "https://kubernetes.io/docs/concepts/configuration/secret/",
        ),
        (
            "base64-json-creds",
            "issue20",
            base64.b64encode(blob_json.encode()).decode(),
            [
                "CONFIG_B64={s}",
                "decode this and check the region: {s}",
                '{{"payload": "{s}"}}',
            ],
            "https://kubernetes.io/docs/concepts/configuration/secret/",
        ),
        (
            "wrapped-token",
            "issue20",
            ghp,
            [
                "GH_TOKEN=" + wrapped(ghp, 22),
                "clone with token " + wrapped(ghp, 30) + "\nthen push",
                "Authorization: token " + wrapped(ghp, 15),
            ],
            GITHUB,
        ),
        (
            "wrapped-pem",
            "issue20",
            pem_body,
            [
                "-----BEGIN EC PRIVATE KEY-----\n"
                + wrapped(pem_body, 40)
                + "\n-----END EC PRIVATE KEY-----",
                'tls_key: "-----BEGIN PRIVATE KEY-----\\n'
                + pem_body
                + '\\n-----END PRIVATE KEY-----"',
                "key material (truncated):\n-----BEGIN RSA PRIVATE KEY-----\n"
                + wrapped(pem_body, 33),
            ],
            RFC7468,
        ),
    ]
    return rows


def held_out_index(kind: str) -> int:
    """The one context of three (a third of the corpus) kept out of rule tuning."""
    return random.Random(f"held-out:{kind}").randrange(3)


def main() -> None:
    rows = kinds()
    with (HERE / "secrets.jsonl").open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(rows)} kinds, {sum(len(r['contexts']) for r in rows)} lines")  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
