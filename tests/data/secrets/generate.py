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
    return out


def main() -> None:
    rows = kinds()
    with (HERE / "secrets.jsonl").open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(rows)} kinds, {sum(len(r['contexts']) for r in rows)} lines")  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
