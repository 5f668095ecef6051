"""Probe E: a fifth set of credential shapes, committed before the rule changes it measures.

Written before any rule change by someone who had not read the redaction rules, their
tests or data, nor probes A and B; probes C and D were read only for their harness and
form. It is committed on its own and run once before and once after a rule change.

47 kinds, none in the catalogue's vendor list nor in probes A, B, C or D when written.
25 vendor tokens: Mistral, Together, DeepSeek, Voyage AI, AssemblyAI, Deepgram, Modal,
Fastly, Algolia admin keys, LaunchDarkly SDK keys, Clerk, Scaleway, Hetzner Cloud, Vultr,
Backblaze B2, Ably, Convex deploy keys, Mattermost, SonarQube, Octopus Deploy, Harness,
Bitwarden Secrets Manager, crates.io, Matrix (Synapse) and Braintree. 22 credentials
carried by a format rather than a vendor: MongoDB, Redis and MySQL URIs with a password,
a JDBC URL's ``password=`` parameter, a ``~/.git-credentials`` line, a Kubernetes Secret's
base64 ``data:`` value, a docker-compose ``environment:`` entry, a ``.tfvars`` line, a Java
``.properties`` line, a Maven ``settings.xml`` ``<password>``, a TOML credentials table,
INI option files (``.my.cnf``, ``odbc.ini``), a private index in ``.pypirc``, a bcrypt
``.htpasswd`` line, a WPA ``psk=``, an ``Authorization: Bearer`` header in a multi-line
curl, URL query ``access_token=`` / ``key=``, a Keycloak client secret in JSON, an EC
private key in PEM, an OpenVPN static key, an OAuth ``refresh_token`` response and
passwords given as command-line flags. Values are random in each format's documented
alphabet and length (fixed seed), never live credentials; each cites where its shape is
documented, and says so where the shape is believed rather than documented exactly.

Vendor tokens use probe C's contexts (:data:`redaction_probe_c.UNNAMED` and ``NAMED``).
Format cases use the format's own line or file, pasted in shell sessions, logs, stack
traces, YAML, JSON, Markdown tables and prose in German, French, Spanish, Japanese and
Chinese; a context counts as *named* when a secret-like key or header (``password``,
``psk``, ``token``, ``secret``, ``Authorization``) labels the value, else *unnamed*. A
value *leaks* in a context when 8 consecutive characters of it survive ``redact``.

Run: ``python benchmarks/redaction_probe_e.py [--per-kind]``
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
_BCRYPT = "./" + _B62
_PW = _B62 + "-_.!#%*+"


def cases(seed: int = 27182) -> list[Case]:
    draw = Draw(seed)
    rand, uuid, b64 = draw.rand, draw.uuid, draw.b64

    def pw(n: int = 16, alphabet: str = _PW) -> str:
        return rand(1, string.ascii_letters) + rand(n - 1, alphabet)

    vendors = (
        # No documented prefix; console keys are 32 alphanumerics (believed, not documented).
        ("mistral-api-key", rand(32), "MISTRAL_API_KEY", "Mistral API key",
         "https://docs.mistral.ai/getting-started/quickstart/"),
        # Current keys carry ``tgp_v1_``; length of the tail believed, not documented.
        ("together-api-key", "tgp_v1_" + rand(43, _B64URL), "TOGETHER_API_KEY",
         "Together AI API key", "https://docs.together.ai/docs/quickstart"),
        ("deepseek-api-key", "sk-" + rand(32, _HEX), "DEEPSEEK_API_KEY", "DeepSeek API key",
         "https://api-docs.deepseek.com/"),
        # ``pa-`` prefix as issued by the dashboard; tail length believed.
        ("voyage-api-key", "pa-" + rand(43, _B64URL), "VOYAGE_API_KEY", "Voyage AI API key",
         "https://docs.voyageai.com/docs/api-key-and-installation"),
        ("assemblyai-api-key", rand(32, _HEX), "ASSEMBLYAI_API_KEY", "AssemblyAI API key",
         "https://www.assemblyai.com/docs/api-reference/overview#authorization"),
        ("deepgram-api-key", rand(40, _HEX), "DEEPGRAM_API_KEY", "Deepgram API key",
         "https://developers.deepgram.com/docs/create-additional-api-keys"),
        ("modal-token-secret", "as-" + rand(22), "MODAL_TOKEN_SECRET", "Modal token secret",
         "https://modal.com/docs/reference/modal.config"),
        ("fastly-api-token", rand(32, _B64URL), "FASTLY_API_TOKEN", "Fastly API token",
         "https://docs.fastly.com/en/guides/using-api-tokens"),
        ("algolia-admin-key", rand(32, _HEX), "ALGOLIA_ADMIN_API_KEY", "Algolia admin API key",
         "https://www.algolia.com/doc/guides/security/api-keys/"),
        ("launchdarkly-sdk-key", "sdk-" + uuid(), "LAUNCHDARKLY_SDK_KEY",
         "LaunchDarkly server-side SDK key",
         "https://docs.launchdarkly.com/sdk/concepts/client-side-server-side#keys"),
        # ``sk_live_`` is documented; tail length believed.
        ("clerk-secret-key", "sk_live_" + rand(42), "CLERK_SECRET_KEY", "Clerk secret key",
         "https://clerk.com/docs/deployments/clerk-environment-variables"),
        ("scaleway-secret-key", uuid(), "SCW_SECRET_KEY", "Scaleway secret key",
         "https://www.scaleway.com/en/docs/iam/concepts/#api-key"),
        ("hetzner-cloud-token", rand(64), "HCLOUD_TOKEN", "Hetzner Cloud API token",
         "https://docs.hetzner.cloud/#authentication"),
        ("vultr-api-key", rand(36, _UPPER), "VULTR_API_KEY", "Vultr API key",
         "https://www.vultr.com/api/#section/Authentication"),
        ("backblaze-b2-app-key", "K00" + rand(1, "0123456789") + rand(27), "B2_APPLICATION_KEY",
         "B2 application key", "https://www.backblaze.com/docs/cloud-storage-application-keys"),
        ("ably-api-key", rand(6, _B64URL) + "." + rand(6, _B64URL) + ":" + rand(43, _B64URL),
         "ABLY_API_KEY", "Ably API key", "https://ably.com/docs/auth#api-keys"),
        # ``<type>:<deployment>|<token>``; the token's length is believed.
        ("convex-deploy-key", "prod:tidy-heron-" + rand(3, "0123456789") + "|eyJ2MiI6I"
         + rand(84, _B64URL), "CONVEX_DEPLOY_KEY", "Convex deploy key",
         "https://docs.convex.dev/cli/deploy-key-types"),
        ("mattermost-pat", rand(26, string.ascii_lowercase + string.digits), "MM_ACCESS_TOKEN",
         "Mattermost personal access token",
         "https://developers.mattermost.com/integrate/reference/personal-access-token/"),
        ("sonarqube-user-token", "squ_" + rand(40, _HEX), "SONAR_TOKEN", "SonarQube user token",
         "https://docs.sonarsource.com/sonarqube-server/latest/user-guide/managing-tokens/"),
        # ``API-`` prefix documented; 25 to 32 uppercase alphanumerics believed.
        ("octopus-api-key", "API-" + rand(30, _UPPER), "OCTOPUS_API_KEY", "Octopus API key",
         "https://octopus.com/docs/octopus-rest-api/how-to-create-an-api-key"),
        ("harness-pat", "pat." + rand(22, _B64URL) + "." + rand(24, _HEX) + "." + rand(20),
         "HARNESS_PLATFORM_API_KEY", "Harness personal access token",
         "https://developer.harness.io/docs/platform/automation/api/add-and-manage-api-keys"),
        ("bitwarden-access-token", "0." + uuid() + "." + rand(30) + ":" + b64(16),
         "BWS_ACCESS_TOKEN", "Bitwarden Secrets Manager access token",
         "https://bitwarden.com/help/access-tokens/"),
        # ``cio`` prefix from crates.io's token generator (believed; not in the Cargo book).
        ("crates-io-token", "cio" + rand(32), "CARGO_REGISTRY_TOKEN", "crates.io API token",
         "https://doc.rust-lang.org/cargo/reference/registry-authentication.html"),
        # ``syt_<base64 localpart>_<random>_<crc>`` is Synapse's shape; the spec leaves it opaque.
        ("matrix-access-token", "syt_YWxpY2U_" + rand(20) + "_" + rand(6), "MATRIX_ACCESS_TOKEN",
         "Matrix access token",
         "https://spec.matrix.org/latest/client-server-api/#using-access-tokens"),
        ("braintree-access-token", "access_token$production$" + rand(16, _LOWER) + "$"
         + rand(32, _HEX), "BRAINTREE_ACCESS_TOKEN", "Braintree access token",
         "https://developer.paypal.com/braintree/docs/guides/authorization/access-token"),
    )  # fmt: skip
    out = [_token(*row) for row in vendors]

    def add(kind: str, secret: str, unnamed: tuple[str, ...], named: tuple[str, ...], src: str):
        out.append(Case(kind, secret, unnamed, named, src))

    p = pw()
    uri = (
        f"mongodb://orders_svc:{p}@mongo-0.mongo:27017,mongo-1.mongo:27017,mongo-2.mongo:27017"
        "/orders?replicaSet=rs0&authSource=admin"
    )
    add(
        "mongodb-uri",
        p,
        (
            f'Traceback (most recent call last):\n  File "app/db.py", line 12, in <module>\n'
            f'    client = MongoClient("{uri}")\n'
            "pymongo.errors.ServerSelectionTimeoutError: mongo-0.mongo:27017: timed out",
            f"Die Verbindung schlägt fehl, obwohl ich {uri} genau so aus der Doku kopiert habe.",
            f"| Umgebung | URI |\n|---|---|\n| staging | `{uri}` |",
        ),
        (),
        "https://www.mongodb.com/docs/manual/reference/connection-string/",
    )
    p = rand(32)
    uri = f"redis://default:{p}@redis-14521.c12.us-east-1-4.ec2.redns.redis-cloud.com:14521"
    add(
        "redis-uri-user",
        p,
        (
            f"[2026-03-04 09:12:55,101: ERROR/MainProcess] consumer: Cannot connect to {uri}//: "
            "Error 111 connecting. Connection refused.",
            f"我把 broker 换成了 {uri}，但是 worker 还是连不上。",
            f"celery:\n  broker_url: {uri}\n  result_backend: {uri}/1",
        ),
        (),
        "https://redis.io/docs/latest/develop/clients/redis-py/connect/",
    )
    p = pw()
    add(
        "mysql-uri",
        p,
        (
            f"Bonjour, voici la chaîne que j'utilise : mysql://shop_admin:{p}@10.20.0.15:3306/boutique"
            " — la connexion est refusée depuis hier.",
            f"production:\n  adapter: mysql2\n  url: mysql2://shop_admin:{p}@10.20.0.15:3306/boutique\n"
            "  pool: 5",
            f"$ mysqlsh --uri mysql://shop_admin:{p}@10.20.0.15:3306/boutique --sql -e 'SELECT 1'",
        ),
        (),
        "https://dev.mysql.com/doc/refman/8.0/en/connecting-using-uri-or-key-value-pairs.html",
    )
    p = pw()
    url = f"jdbc:postgresql://pg.internal:5432/billing?user=billing&password={p}&ssl=true"
    add(
        "jdbc-password-param",
        p,
        (),
        (
            "2026-01-19 08:01:22.417 ERROR 1 --- [main] com.zaxxer.hikari.pool.HikariPool : "
            f"HikariPool-1 - Exception during pool initialization.\n  jdbcUrl={url}\n"
            'org.postgresql.util.PSQLException: FATAL: password authentication failed for user "billing"',
            f"spring.datasource.url={url}",
        ),
        "https://jdbc.postgresql.org/documentation/use/#connection-parameters",
    )
    p = pw(24, _B62)
    add(
        "git-credentials",
        p,
        (
            f"$ cat ~/.git-credentials\nhttps://jdoe:{p}@git.example.com",
            f"fatal: unable to access 'https://jdoe:{p}@git.example.com/platform/infra.git/': "
            "The requested URL returned error: 403",
            f"git remote set-url origin https://jdoe:{p}@git.example.com/platform/infra.git",
        ),
        (),
        "https://git-scm.com/docs/git-credential-store#_storage_format",
    )
    enc = base64.b64encode(pw().encode()).decode()
    add(
        "k8s-secret-data",
        enc,
        (f"$ echo {enc} | base64 -d",),
        (
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: pg-app\ntype: Opaque\ndata:\n"
            f"  username: YXBw\n  password: {enc}",
            f"Secret の password に {enc} を入れたのに Pod が起動しません。",
        ),
        "https://kubernetes.io/docs/concepts/configuration/secret/#working-with-secrets",
    )
    p = pw()
    add(
        "compose-environment",
        p,
        (),
        (
            "services:\n  db:\n    image: postgres:16\n    environment:\n      POSTGRES_USER: app\n"
            f'      POSTGRES_PASSWORD: {p}\n    ports:\n      - "5432:5432"',
            f"    environment:\n      - MYSQL_ROOT_PASSWORD={p}\n      - MYSQL_DATABASE=wp",
        ),
        "https://docs.docker.com/compose/how-tos/environment-variables/set-environment-variables/",
    )
    p = pw(20)
    add(
        "tfvars",
        p,
        (),
        (
            f'region      = "eu-west-1"\ndb_username = "admin"\ndb_password = "{p}"',
            f'En mi terraform.tfvars tengo admin_password = "{p}" y el plan falla con '
            '"InvalidParameterValue".',
        ),
        "https://developer.hashicorp.com/terraform/language/values/variables#variable-definitions-tfvars-files",
    )
    p = pw()
    add(
        "java-properties",
        p,
        (),
        (
            "# application.properties\nspring.mail.host=smtp.example.com\n"
            f"spring.mail.username=noreply@example.com\nspring.mail.password={p}",
            f"設定ファイルに spring.datasource.password={p} と書いてあります。",
            f"ldap.manager.password : {p}",
        ),
        "https://docs.oracle.com/javase/8/docs/api/java/util/Properties.html#load-java.io.Reader-",
    )
    p = pw()
    add(
        "maven-settings-xml",
        p,
        (),
        (
            "<servers>\n  <server>\n    <id>nexus-releases</id>\n    <username>deployment</username>\n"
            f"    <password>{p}</password>\n  </server>\n</servers>",
        ),
        "https://maven.apache.org/settings.html#servers",
    )
    t = rand(32)
    add(
        "toml-credentials",
        t,
        (),
        (
            f'[credentials]\nusername = "svc-sync"\napi_token = "{t}"',
            f'# ~/.cargo/credentials.toml\n[registries.acme-internal]\ntoken = "Bearer {t}"',
        ),
        "https://doc.rust-lang.org/cargo/reference/config.html#credentials",
    )
    p = pw()
    add(
        "ini-option-file",
        p,
        (),
        (
            f'$ cat ~/.my.cnf\n[client]\nuser=backup\npassword="{p}"\nhost=db-replica.internal',
            "[ReportingDSN]\nDriver=ODBC Driver 18 for SQL Server\nServer=tcp:sql01,1433\n"
            f"UID=report\nPWD={p}",
        ),
        "https://dev.mysql.com/doc/refman/8.0/en/option-files.html",
    )
    p = pw()
    add(
        "pypirc-private-index",
        p,
        (),
        (
            "[distutils]\nindex-servers =\n    internal\n\n[internal]\n"
            "repository = https://nexus.example.com/repository/pypi-internal/\n"
            f"username = deploy\npassword = {p}",
        ),
        "https://packaging.python.org/en/latest/specifications/pypirc/",
    )
    h = rand(53, _BCRYPT)
    add(
        "htpasswd-bcrypt",
        h,
        (
            f"$ cat /etc/nginx/.htpasswd\nadmin:$2y$10${h}\n"
            f"monitor:$apr1${rand(8, _BCRYPT)}${rand(22, _BCRYPT)}",
            f"| user | hash |\n|---|---|\n| admin | `$2y$10${h}` |",
        ),
        (),
        "https://httpd.apache.org/docs/2.4/misc/password_encryptions.html",
    )
    psk = rand(64, _HEX)
    add(
        "wpa-psk",
        psk,
        (),
        (
            f'$ wpa_passphrase Office-5G\nnetwork={{\n\tssid="Office-5G"\n\t#psk="{pw(12)}"\n'
            f"\tpsk={psk}\n}}",
            f"# /etc/NetworkManager/system-connections/Office.nmconnection\n[wifi-security]\n"
            f"key-mgmt=wpa-psk\npsk={psk}",
        ),
        "https://w1.fi/cgit/hostap/plain/wpa_supplicant/wpa_supplicant.conf",
    )
    t = rand(48, _B64URL)
    add(
        "curl-bearer-multiline",
        t,
        (),
        (
            "$ curl -sS -X POST https://api.acme-billing.io/v2/invoices \\\n"
            '    -H "Content-Type: application/json" \\\n'
            f'    -H "Authorization: Bearer {t}" \\\n'
            '    -d \'{"customer": "cus_123", "amount": 4200}\'',
            "Invoke-RestMethod -Uri https://api.acme-billing.io/v2/invoices `\n"
            f'  -Headers @{{ Authorization = "Bearer {t}" }}',
            f"http POST api.acme-billing.io/v2/invoices 'Authorization:Bearer {t}' amount:=4200",
        ),
        "https://www.rfc-editor.org/rfc/rfc6750#section-2.1",
    )
    k = rand(32, _HEX)
    add(
        "url-query-token",
        k,
        (),
        (
            f'10.0.3.7 - - [12/Feb/2026:14:03:11 +0000] "GET /v1/export?format=csv&access_token={k} '
            'HTTP/1.1" 200 51234 "-" "python-requests/2.32.3"',
            'DEBUG:urllib3.connectionpool:https://tiles.example-maps.com:443 "GET '
            f'/v3/tile/12/2048/1361.png?style=dark&key={k} HTTP/1.1" 200 18234',
        ),
        "https://www.rfc-editor.org/rfc/rfc6750#section-2.3",
    )
    s = rand(32)
    add(
        "keycloak-client-secret",
        s,
        (),
        (
            '{\n  "realm": "acme",\n  "auth-server-url": "https://sso.acme.io/",\n'
            '  "resource": "billing-api",\n  "credentials": {\n'
            f'    "secret": "{s}"\n  }}\n}}',
            f'{{"client_id": "billing-api", "client_secret": "{s}", '
            '"token_uri": "https://sso.acme.io/realms/acme/protocol/openid-connect/token"}',
        ),
        "https://www.keycloak.org/docs/latest/server_admin/#_client-credentials",
    )
    der = bytes.fromhex("30770201010420" + rand(64, _HEX)) + bytes.fromhex(
        "a00a06082a8648ce3d030107a14403420004" + rand(128, _HEX)
    )
    body = base64.b64encode(der).decode()
    lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    add(
        "pem-ec-private-key",
        body[10:52],
        (f"```\n-----BEGIN EC PRIVATE KEY-----\n{lines}\n-----END EC PRIVATE KEY-----\n```",),
        (
            '"private_key": "-----BEGIN EC PRIVATE KEY-----\\n'
            + lines.replace("\n", "\\n")
            + '\\n-----END EC PRIVATE KEY-----\\n"',
        ),
        "https://www.rfc-editor.org/rfc/rfc5915",
    )
    block = "\n".join(rand(32, _HEX) for _ in range(16))
    ovpn = (
        "#\n# 2048 bit OpenVPN static key\n#\n-----BEGIN OpenVPN Static key V1-----\n"
        f"{block}\n-----END OpenVPN Static key V1-----"
    )
    add(
        "openvpn-static-key",
        block,
        (
            "client\ndev tun\nremote vpn.example.net 1194\n"
            f"<tls-auth>\n{ovpn}\n</tls-auth>\nkey-direction 1",
            f"$ cat /etc/openvpn/server/ta.key\n{ovpn}",
        ),
        (),
        "https://openvpn.net/community-resources/reference-manual-for-openvpn-2-6/",
    )
    r = rand(64, _B64URL)
    add(
        "oauth-refresh-token",
        r,
        (),
        (
            f'{{"access_token":"{rand(43, _B64URL)}","token_type":"Bearer","expires_in":3599,'
            f'"refresh_token":"{r}","scope":"openid profile offline_access"}}',
            "curl -s -X POST https://sso.acme.io/oauth/token -d grant_type=refresh_token "
            f"-d refresh_token={r} -d client_id=cli",
        ),
        "https://www.rfc-editor.org/rfc/rfc6749#section-5.1",
    )
    p = pw(16, _B62 + "-_.")
    add(
        "cli-password-flag",
        p,
        (
            f"$ mysql -h db.internal -u root -p{p} shop < dump.sql\n"
            "mysql: [Warning] Using a password on the command line interface can be insecure.",
            f"$ sshpass -p '{p}' ssh -o StrictHostKeyChecking=no deploy@10.0.4.12",
            'ldapsearch -x -H ldaps://ldap.acme.io -D "cn=admin,dc=acme,dc=io" '
            f"-w '{p}' -b \"ou=people,dc=acme,dc=io\"",
            "Para montar la unidad usé net use Z: \\\\fs01\\compartido /user:ACME\\svc_backup "
            f"{p} y funcionó.",
        ),
        (),
        "https://dev.mysql.com/doc/refman/8.0/en/connection-options.html#option_general_password",
    )
    return out


def main() -> None:
    run_probe("E", cases, __doc__)


if __name__ == "__main__":
    main()
