"""Probe F: a sixth set of credential shapes, committed before the rule changes it measures.

Written by a helper session that had not read the redaction rules, their tests or data, nor
any benchmark other than probes C, D and E (read for the harness, their form and the kinds
they hold) and the kind names in ``redaction_unknown_vendors.py`` (probe B). Probe A's
kinds live in the corpus ``redaction.py`` reads from ``tests/``, which was not opened, so
the catalogue's vendor names stood in for it. It is committed on its own and run once
before and once after a rule change; it was run once when written, to check it runs, and
not changed after.

49 kinds, none in the catalogue's vendor list nor in probes B, C, D or E when written
(probe A's could not be checked), in 234 contexts (140 unnamed, 94 named). 22 vendor tokens
(observability, payments, CI, feature flags, AI, databases as a service, messaging,
hosting): Honeycomb ingest keys, Axiom, Better Stack source tokens, PagerDuty integration
keys, Splunk HEC tokens, encoded Elasticsearch API keys, Mollie, Paystack, Paddle, Razorpay
key secrets, Codecov upload tokens, Unleash backend tokens, Flagsmith server-side keys,
ConfigCat SDK keys, RunPod, Weights & Biases, MongoDB Atlas API private keys, Pusher app
secrets, OneSignal REST keys, Deno Deploy, Linode (Akamai) personal access tokens and
Stream API secrets. Eleven have no prefix (hex, UUID, upper-case UUID, base64, letters with
digits, lower-case only). 27 credentials carried by a format rather than a vendor:
``export`` lines of a ``.env``, systemd ``Environment=``, Ansible inventory and play
output, Helm ``--set`` and values, a GitHub Actions workflow with a literal, SMTP URLs
(``MAILER_DSN`` / ``EMAIL_URL``), ``PGPASSWORD=`` before a command, ``curl -u``, ``openssl
-passin/-passout pass:``, Spring ``application.yml``, Rails ``database.yml``, Rails
``master.key``, Django ``SECRET_KEY``, Laravel ``APP_KEY=base64:``, Kafka SASL JAAS lines,
an encrypted PKCS#8 private key, TOTP ``otpauth://`` secrets, an HMAC JWT secret passed in
code, ``kubectl create secret --from-literal``, ``docker run -e``, SQL ``IDENTIFIED BY`` /
``PASSWORD '...'``, Cisco IOS type-0 passwords, ``wp-config.php`` ``define('DB_PASSWORD',
...)``, Erlang cookies, NATS user NKey seeds, BIP-39 recovery phrases (words from the list,
checksum not made valid) and PowerShell ``ConvertTo-SecureString -AsPlainText``. Values are
random in each format's documented alphabet and length (fixed seed), never live
credentials; each cites where its shape is documented, and says "believed" where the shape
is not documented exactly.

Vendor tokens use probe C's contexts (:data:`redaction_probe_c.UNNAMED` and ``NAMED``).
Format cases use the format's own line or file, pasted in shell sessions, logs, stack
traces, YAML, JSON, Markdown tables, code comments and chat prose in German, French,
Spanish, Italian, Portuguese, Japanese, Chinese, Korean and Russian. As in probe E, a
context counts as *named* when an English secret-like key, flag or header (``password``,
``pass``, ``secret``, ``token``, ``key``, ``cookie``, ``Authorization``) labels the value,
else *unnamed* (a label in another language, a file name or a bare flag does not name it).
A value *leaks* in a context when 8 consecutive characters of it survive ``redact``.

``BENIGN`` holds 36 lines that look a little like secrets but are not (commit hashes,
request ids, placeholders, checksums, lockfile hashes, public keys); ``--benign`` also
prints how many of them ``redact`` changes.

Run: ``python benchmarks/redaction_probe_f.py [--per-kind] [--benign]``
"""

from __future__ import annotations

import base64
import json
import string
import sys

from palimpsest.safety.redact import redact
from redaction_probe_c import Case, Draw, _token, run_probe

_B62 = string.ascii_letters + string.digits
_B64URL = _B62 + "-_"
_HEX = "0123456789abcdef"
_LOWER = string.ascii_lowercase + string.digits
_UPPER = string.ascii_uppercase + string.digits
_B32_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
_B32_LOWER = _B32_UPPER.lower()
_CROCKFORD_LOWER = "0123456789abcdefghjkmnpqrstvwxyz"
_DJANGO = "abcdefghijklmnopqrstuvwxyz0123456789!@#$%^&*(-_=+)"
_PW = _B62 + "-_.!#%*+"

# A subset of the BIP-39 English word list
# (https://github.com/bitcoin/bips/blob/master/bip-0039/english.txt).
_BIP39 = (
    "abandon ability able about above absent absorb abstract absurd abuse access accident "
    "account accuse achieve acid acoustic acquire across act action actor actress actual "
    "adapt add addict address adjust admit adult advance advice aerobic affair afford afraid "
    "again age agent agree ahead aim air airport aisle alarm album alcohol alert alien alley "
    "allow almost alone alpha already also alter always amateur amazing among amount amused "
    "analyst anchor ancient anger angle angry animal ankle announce annual another answer "
    "bamboo cabin dolphin eagle fossil garden hammer ivory jungle kitten lemon mango noble "
    "ocean orange puzzle river rocket salad tiger timber uncle vivid wagon wrist youth zone"
)


def _der(tag: int, body: bytes) -> bytes:
    n = len(body)
    if n < 0x80:
        length = bytes([n])
    else:
        raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
        length = bytes([0x80 | len(raw)]) + raw
    return bytes([tag]) + length + body


def cases(seed: int = 16180) -> list[Case]:
    draw = Draw(seed)
    rand, uuid, b64 = draw.rand, draw.uuid, draw.b64

    def pw(n: int = 16, alphabet: str = _PW) -> str:
        return rand(1, string.ascii_letters) + rand(n - 1, alphabet)

    def raw(n: int) -> bytes:
        return base64.b64decode(b64(n))

    elastic = base64.b64encode(f"{rand(20, _B64URL)}:{rand(22, _B64URL)}".encode()).decode()
    vendors = (
        # ``hcaik_`` prefix of current ingest keys; length and alphabet of the tail believed.
        ("honeycomb-ingest-key", "hcaik_01" + rand(56, _LOWER), "HONEYCOMB_API_KEY",
         "Honeycomb ingest key",
         "https://docs.honeycomb.io/get-started/configure/environments/manage-api-keys"),
        ("axiom-api-token", "xaat-" + uuid(), "AXIOM_TOKEN", "Axiom API token",
         "https://axiom.co/docs/reference/tokens"),
        # No prefix; 24 letters and digits believed.
        ("betterstack-source-token", rand(24), "BETTER_STACK_SOURCE_TOKEN",
         "Better Stack source token", "https://betterstack.com/docs/logs/start/"),
        ("pagerduty-routing-key", rand(32, _HEX), "PAGERDUTY_ROUTING_KEY",
         "PagerDuty Events v2 integration key",
         "https://developer.pagerduty.com/docs/events-api-v2/overview/"),
        # A GUID, shown upper-case by Splunk Web.
        ("splunk-hec-token", uuid().upper(), "SPLUNK_HEC_TOKEN", "Splunk HEC token",
         "https://docs.splunk.com/Documentation/Splunk/latest/Data/UsetheHTTPEventCollector"),
        # The ``encoded`` field: base64 of ``id:api_key``.
        ("elastic-api-key", elastic, "ELASTIC_API_KEY", "Elasticsearch API key",
         "https://www.elastic.co/docs/api/doc/elasticsearch/operation/operation-security-create-api-key"),
        ("mollie-api-key", "live_" + rand(30), "MOLLIE_API_KEY", "Mollie live API key",
         "https://docs.mollie.com/reference/authentication"),
        # ``sk_live_`` documented; 40 hex believed.
        ("paystack-secret-key", "sk_live_" + rand(40, _HEX), "PAYSTACK_SECRET_KEY",
         "Paystack secret key", "https://paystack.com/docs/api/authentication/"),
        # ``pdl_live_apikey_<ULID>_<22>_<3>`` as in Paddle's example key.
        ("paddle-api-key", "pdl_live_apikey_01" + rand(24, _CROCKFORD_LOWER) + "_" + rand(22)
         + "_" + rand(3), "PADDLE_API_KEY", "Paddle API key",
         "https://developer.paddle.com/api-reference/about/authentication"),
        # The key secret has no prefix (the key id has ``rzp_live_``); 24 characters believed.
        ("razorpay-key-secret", rand(24), "RAZORPAY_KEY_SECRET", "Razorpay key secret",
         "https://razorpay.com/docs/api/authentication/"),
        ("codecov-upload-token", uuid(), "CODECOV_TOKEN", "Codecov upload token",
         "https://docs.codecov.com/docs/codecov-tokens"),
        # ``<project>:<environment>.<hash>``; 56 hex believed.
        ("unleash-backend-token", "default:production." + rand(56, _HEX),
         "UNLEASH_SERVER_API_TOKEN", "Unleash backend token",
         "https://docs.getunleash.io/concepts/api-tokens-and-client-keys"),
        ("flagsmith-server-key", "ser." + rand(22), "FLAGSMITH_ENVIRONMENT_KEY",
         "Flagsmith server-side environment key",
         "https://docs.flagsmith.com/clients/server-side"),
        ("configcat-sdk-key", "configcat-sdk-1/" + rand(22, _B64URL) + "/" + rand(22, _B64URL),
         "CONFIGCAT_SDK_KEY", "ConfigCat SDK key",
         "https://configcat.com/docs/sdk-reference/overview/"),
        # ``rpa_`` prefix of keys issued since November 2024 and the upper-case tail believed.
        ("runpod-api-key", "rpa_" + rand(44, _UPPER), "RUNPOD_API_KEY", "RunPod API key",
         "https://docs.runpod.io/get-started/api-keys"),
        ("wandb-api-key", rand(40, _HEX), "WANDB_API_KEY", "Weights & Biases API key",
         "https://docs.wandb.ai/guides/track/environment-variables/"),
        ("mongodb-atlas-private-key", uuid(), "MONGODB_ATLAS_PRIVATE_KEY",
         "Atlas API private key", "https://www.mongodb.com/docs/atlas/configure-api-access/"),
        # 20 hex believed.
        ("pusher-app-secret", rand(20, _HEX), "PUSHER_APP_SECRET", "Pusher app secret",
         "https://pusher.com/docs/channels/server_api/authenticating-users/"),
        # ``os_v2_app_`` prefix and the lower-case base32 tail believed.
        ("onesignal-rest-key", "os_v2_app_" + rand(113, _B32_LOWER), "ONESIGNAL_REST_API_KEY",
         "OneSignal app API key", "https://documentation.onesignal.com/docs/keys-and-ids"),
        ("deno-deploy-token", "ddp_" + rand(36), "DENO_DEPLOY_TOKEN",
         "Deno Deploy access token", "https://docs.deno.com/deploy/manual/api/"),
        ("linode-pat", rand(64, _HEX), "LINODE_TOKEN", "Linode personal access token",
         "https://techdocs.akamai.com/linode-api/reference/get-started"),
        # 64 lower-case letters and digits believed.
        ("stream-api-secret", rand(64, string.ascii_lowercase + string.digits),
         "STREAM_API_SECRET", "Stream API secret",
         "https://getstream.io/chat/docs/python/tokens_and_authentication/"),
    )  # fmt: skip
    out = [_token(*row) for row in vendors]

    def add(kind: str, secret: str, unnamed: tuple[str, ...], named: tuple[str, ...], src: str):
        out.append(Case(kind, secret, unnamed, named, src))

    p = pw(24, _B62 + "-_.")
    add(
        "dotenv-export",
        p,
        (),
        (
            f"$ cat .env.production\nexport NODE_ENV=production\nexport SESSION_SECRET='{p}'\n"
            "export PORT=8080",
            f'declare -x LANG="C.UTF-8"\ndeclare -x SESSION_SECRET="{p}"\ndeclare -x SHLVL="1"',
            f"Ich habe in ~/.bashrc `export SESSION_SECRET={p}` ergänzt, aber der Dienst sieht "
            "die Variable nach dem Neustart nicht.",
        ),
        "https://www.gnu.org/software/bash/manual/html_node/Bourne-Shell-Builtins.html#index-export",
    )
    s = rand(40, _B64URL)
    add(
        "systemd-environment",
        s,
        (),
        (
            "# /etc/systemd/system/ingest.service\n[Service]\nUser=ingest\n"
            f'Environment="NODE_ENV=production" "API_TOKEN={s}"\n'
            "ExecStart=/usr/bin/node /srv/ingest/server.js\nRestart=on-failure",
            f"$ systemctl show billing.service -p Environment\n"
            f"Environment=LANG=C.UTF-8 BILLING_SECRET={s} PORT=9000",
        ),
        "https://www.freedesktop.org/software/systemd/man/latest/systemd.exec.html#Environment=",
    )
    p = pw(20, _B62 + "-_.!%")
    add(
        "ansible-vars",
        p,
        (),
        (
            "# inventory/hosts.ini\n[web]\n"
            f"web01.acme.io ansible_user=deploy ansible_password={p} ansible_become=true",
            "# group_vars/db.yml\npostgresql_users:\n  - name: app\n"
            f'    password: "{p}"\n    encrypted: true',
            "TASK [postgresql : Ensure users are present] ***********************************\n"
            f"ok: [db01] => (item={{'name': 'app', 'password': '{p}'}})",
        ),
        "https://docs.ansible.com/ansible/latest/inventory_guide/intro_inventory.html#connecting-to-hosts-behavioral-inventory-parameters",
    )
    p = pw(20, _B62)
    add(
        "helm-values",
        p,
        (),
        (
            f"$ helm upgrade --install pg bitnami/postgresql --set auth.postgresPassword={p} "
            "--set auth.database=app -n data",
            "redis:\n  architecture: standalone\n  auth:\n    enabled: true\n"
            f"    password: {p}\n  master:\n    persistence:\n      size: 8Gi",
            f"$ helm get values pg -n data\nUSER-SUPPLIED VALUES:\nauth:\n  database: app\n"
            f"  postgresPassword: {p}",
        ),
        "https://helm.sh/docs/chart_template_guide/values_files/",
    )
    t = pw(32, _B62)
    add(
        "gha-workflow-literal",
        t,
        (f"workflow の env に {t} を直書きしてしまいました。履歴から消す方法はありますか？",),
        (
            "jobs:\n  deploy:\n    runs-on: ubuntu-latest\n    env:\n"
            f"      REGISTRY_TOKEN: {t}\n    steps:\n      - uses: actions/checkout@v4",
            "      - uses: docker/login-action@v3\n        with:\n          registry: ghcr.io\n"
            f"          username: acme-bot\n          password: {t}",
        ),
        "https://docs.github.com/en/actions/writing-workflows/workflow-syntax-for-github-actions#env",
    )
    p = pw(16, _B62 + "-_.")
    add(
        "smtp-url",
        p,
        (
            f"MAILER_DSN=smtp://postmaster%40mg.acme.io:{p}@smtp.eu.mailgun.org:587",
            f"EMAIL_URL=smtp+tls://alerts%40acme.io:{p}@smtp.office365.com:587",
            'Traceback (most recent call last):\n  File "notify.py", line 31, in send\n'
            f'    with smtplib.SMTP_SSL(*parse("smtps://noreply:{p}@smtp.gmail.com:465")) as s:\n'
            "smtplib.SMTPAuthenticationError: (535, b'5.7.8 Username and Password not accepted.')",
            f"Ho configurato il DSN smtp://newsletter:{p}@mail.acme.it:587 ma le email non partono.",
        ),
        (),
        "https://symfony.com/doc/current/mailer.html#transport-setup",
    )
    p = pw(18, _B62)
    add(
        "pgpassword-prefix",
        p,
        (),
        (
            f"$ PGPASSWORD={p} pg_dump -h db.internal -U app -Fc app > app.dump",
            f"15 3 * * * PGPASSWORD='{p}' psql -h 10.1.2.3 -U report -c 'REFRESH MATERIALIZED "
            "VIEW daily' reports >> /var/log/refresh.log 2>&1",
            f"Rodei `PGPASSWORD={p} psql -h db.internal -U app` e deu 'FATAL: no pg_hba.conf "
            "entry for host'.",
        ),
        "https://www.postgresql.org/docs/current/libpq-envars.html",
    )
    p = pw(16, _B62)
    add(
        "curl-user",
        p,
        (
            f"$ curl -u admin:{p} -X POST https://jenkins.acme.io/job/deploy/build",
            f"curl --user 'elastic:{p}' -k 'https://localhost:9200/_cluster/health?pretty'",
            f"$ http -a ci:{p} GET https://nexus.acme.io/service/rest/v1/repositories",
            f"curl -u deploy:{p} 로 호출하면 401이 나옵니다. 계정이 잠긴 걸까요?",
        ),
        (),
        "https://curl.se/docs/manpage.html#-u",
    )
    p = pw(14, _B62)
    add(
        "openssl-pass-arg",
        p,
        (),
        (
            "$ openssl pkcs12 -export -in cert.pem -inkey key.pem -out bundle.p12 "
            f"-passout pass:{p}",
            f"openssl rsa -in server.key.enc -out server.key -passin pass:{p}",
            "RUN openssl req -x509 -newkey rsa:4096 -keyout /certs/key.pem -out /certs/cert.pem "
            f"-days 365 -subj '/CN=localhost' -passout pass:{p}",
        ),
        "https://docs.openssl.org/3.0/man1/openssl-passphrase-options/",
    )
    p = pw(20)
    add(
        "spring-application-yml",
        p,
        (),
        (
            "spring:\n  datasource:\n    url: jdbc:postgresql://pg.internal:5432/orders\n"
            f"    username: orders\n    password: {p}\n  jpa:\n    open-in-view: false",
            '{"spring.datasource.password": {"value": "' + p + '", "origin": "class path '
            'resource [application.yml] - 5:15"}}',
            f"application.yml 里写了 password: {p}，启动时报 Access denied for user 'orders'。",
        ),
        "https://docs.spring.io/spring-boot/appendix/application-properties/index.html#application-properties.data.spring.datasource.password",
    )
    p = pw(16, _B62)
    add(
        "rails-database-yml",
        p,
        (),
        (
            "production:\n  <<: *default\n  database: shop_production\n  username: shop\n"
            f"  password: {p}\n  host: db.internal",
            f'  password: <%= ENV.fetch("DB_PASSWORD") {{ "{p}" }} %>',
        ),
        "https://guides.rubyonrails.org/configuring.html#configuring-a-database",
    )
    k = rand(32, _HEX)
    add(
        "rails-master-key",
        k,
        (
            f"$ cat config/master.key\n{k}",
            f"Copié {k} desde config/master.key al servidor y sigue fallando con "
            "ActiveSupport::MessageEncryptor::InvalidMessage.",
        ),
        (
            f"RAILS_MASTER_KEY={k}",
            f"| app | master key |\n|---|---|\n| shop | `{k}` |",
        ),
        "https://guides.rubyonrails.org/security.html#custom-credentials",
    )
    s = rand(50, _DJANGO)
    add(
        "django-secret-key",
        s,
        (),
        (
            f"# settings.py\nSECRET_KEY = '{s}'\nDEBUG = False\nALLOWED_HOSTS = ['acme.io']",
            f"SECRET_KEY = 'django-insecure-{s}'",
            f"J'ai laissé SECRET_KEY = '{s}' dans le dépôt public, faut-il la changer ?",
        ),
        "https://docs.djangoproject.com/en/5.2/ref/settings/#secret-key",
    )
    b = b64(32)
    add(
        "laravel-app-key",
        b,
        (
            f"$ php artisan key:generate --show\nbase64:{b}",
            f"Troquei a chave para base64:{b} e agora todas as sessões caíram.",
        ),
        (f"APP_NAME=Shop\nAPP_ENV=production\nAPP_KEY=base64:{b}\nAPP_DEBUG=false",),
        "https://laravel.com/docs/12.x/encryption#configuration",
    )
    p = pw(24, _B62)
    add(
        "kafka-sasl-jaas",
        p,
        (),
        (
            "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"
            "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
            f'username="orders-svc" password="{p}";',
            "spring:\n  kafka:\n    properties:\n      sasl.jaas.config: >-\n"
            "        org.apache.kafka.common.security.plain.PlainLoginModule required\n"
            f'        username="etl" password="{p}";',
            "$ kcat -b broker-1:9093 -X security.protocol=SASL_SSL -X sasl.mechanisms=PLAIN "
            f"-X sasl.username=etl -X sasl.password={p} -L",
        ),
        "https://kafka.apache.org/documentation/#security_sasl_jaasconfig_clientconfig",
    )
    oid_pbes2 = bytes.fromhex("06092a864886f70d01050d")
    oid_pbkdf2 = bytes.fromhex("06092a864886f70d01050c")
    oid_hmac256 = bytes.fromhex("06082a864886f70d02090500")
    oid_aes256cbc = bytes.fromhex("060960864801650304012a")
    kdf = _der(0x30, oid_pbkdf2 + _der(0x30, _der(0x04, raw(8)) + _der(0x02, b"\x08\x00")
                                       + _der(0x30, oid_hmac256)))  # fmt: skip
    alg = _der(0x30, oid_pbes2 + _der(0x30, kdf + _der(0x30, oid_aes256cbc + _der(0x04, raw(16)))))
    body = base64.b64encode(_der(0x30, alg + _der(0x04, raw(1232)))).decode()
    rows = [body[i : i + 64] for i in range(0, len(body), 64)]
    add(
        "pkcs8-encrypted-key",
        rows[9],
        (
            "```\n-----BEGIN ENCRYPTED PRIVATE KEY-----\n"
            + "\n".join(rows)
            + "\n-----END ENCRYPTED PRIVATE KEY-----\n```",
        ),
        (
            "tls:\n  cert: /etc/tls/server.crt\n  key: |\n    -----BEGIN ENCRYPTED PRIVATE KEY-----\n"
            + "".join(f"    {r}\n" for r in rows)
            + "    -----END ENCRYPTED PRIVATE KEY-----\n  passphraseFile: /run/secrets/tls-pass",
        ),
        "https://www.rfc-editor.org/rfc/rfc5958#section-3",
    )
    s = rand(32, _B32_UPPER)
    add(
        "totp-otpauth",
        s,
        (
            f"$ oathtool --totp -b {s}\n492039",
            f"Der Einrichtungsschlüssel für den Authenticator lautet {s}, falls der QR-Code "
            "nicht funktioniert.",
        ),
        (
            f"otpauth://totp/ACME:alice%40acme.io?secret={s}&issuer=ACME&algorithm=SHA1&digits=6"
            "&period=30",
            f"| Account | Setup key |\n|---|---|\n| ops@acme.io | {s} |",
        ),
        "https://github.com/google/google-authenticator/wiki/Key-Uri-Format",
    )
    s = b64(32)
    add(
        "jwt-hmac-secret-in-code",
        s,
        (
            f'token = jwt.encode({{"sub": user.id, "exp": exp}}, "{s}", algorithm="HS256")',
            "// TODO move to env before release\n"
            f"const token = jwt.sign({{ uid: user.id }}, '{s}', {{ expiresIn: '1h' }});",
        ),
        (
            f"auth:\n  jwt:\n    signing-key: {s}\n    ttl: 3600",
            f"NEXTAUTH_SECRET={s}",
        ),
        "https://pyjwt.readthedocs.io/en/stable/usage.html#encoding-decoding-tokens-with-hs256",
    )
    p = pw(20, _B62)
    add(
        "kubectl-from-literal",
        p,
        (),
        (
            "$ kubectl create secret generic pg-app --from-literal=username=app "
            f"--from-literal=password={p} -n prod",
            "Создал секрет через kubectl create secret generic pg-app "
            f"--from-literal=password={p}, но под его не видит.",
        ),
        "https://kubernetes.io/docs/tasks/configmap-secret/managing-secret-using-kubectl/",
    )
    p = pw(20, _B62)
    add(
        "docker-run-env",
        p,
        (),
        (
            f"$ docker run -d --name pg -e POSTGRES_PASSWORD={p} -p 5432:5432 postgres:16",
            '$ docker inspect shop-db --format "{{json .Config.Env}}"\n'
            f'["MYSQL_ROOT_PASSWORD={p}","PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin"]',
        ),
        "https://docs.docker.com/reference/cli/docker/container/run/#env",
    )
    p = pw(16, _B62 + "!#%")
    add(
        "sql-identified-by",
        p,
        (
            "-- one-off for the reporting replica\n"
            f"CREATE USER 'report'@'%' IDENTIFIED BY '{p}';\nGRANT SELECT ON shop.* TO 'report'@'%';",
            f'ALTER USER scott IDENTIFIED BY "{p}";',
        ),
        (
            f"ALTER ROLE app WITH LOGIN PASSWORD '{p}';",
            "2026-03-02 11:04:55.120 UTC [812] LOG:  statement: CREATE USER etl WITH ENCRYPTED "
            f"PASSWORD '{p}'",
        ),
        "https://dev.mysql.com/doc/refman/8.0/en/create-user.html",
    )
    p = pw(12, _B62)
    add(
        "cisco-ios-password",
        p,
        (),
        (
            "!\nhostname edge-rtr-01\n!\n"
            f"username netadmin privilege 15 password 0 {p}\n!\nline vty 0 4\n login local",
            f"enable secret 0 {p}",
            f"交换机上配置了 enable secret 0 {p}，请尽快改掉。",
        ),
        "https://www.cisco.com/c/en/us/td/docs/ios-xml/ios/security/s1/sec-s1-cr-book/sec-cr-e1.html",
    )
    p = pw(24, _B62 + "!#%*+-_.")
    add(
        "wp-config-password",
        p,
        (),
        (
            "define( 'DB_NAME', 'wordpress' );\ndefine( 'DB_USER', 'wp' );\n"
            f"define( 'DB_PASSWORD', '{p}' );\ndefine( 'DB_HOST', 'localhost' );",
            "$CONFIG = array (\n  'dbtype' => 'mysql',\n  'dbuser' => 'nextcloud',\n"
            f"  'dbpassword' => '{p}',\n);",
        ),
        "https://developer.wordpress.org/advanced-administration/wordpress/wp-config/#database-password",
    )
    c = rand(20, string.ascii_uppercase)
    add(
        "erlang-cookie",
        c,
        (
            f"$ sudo cat /var/lib/rabbitmq/.erlang.cookie\n{c}",
            f"erl -sname debug -setcookie {c} -remsh rabbit@mq-0",
            f"全ノードの .erlang.cookie を {c} に揃えたらクラスタに参加できました。",
        ),
        (f"RABBITMQ_ERLANG_COOKIE={c}",),
        "https://www.rabbitmq.com/docs/clustering#erlang-cookie",
    )
    seed = "SU" + rand(56, _B32_UPPER)
    hdr = base64.urlsafe_b64encode(b'{"typ":"JWT","alg":"ed25519-nkey"}').decode().rstrip("=")
    add(
        "nats-nkey-seed",
        seed,
        (
            f"-----BEGIN NATS USER JWT-----\n{hdr}.{draw.b64url(180)}.{draw.b64url(64)}\n"
            "------END NATS USER JWT------\n\n"
            "************************* IMPORTANT *************************\n"
            "NKEY Seed printed below can be used to sign and prove identity.\n"
            "NKEYs are sensitive and should be treated as secrets.\n\n"
            f"-----BEGIN USER NKEY SEED-----\n{seed}\n------END USER NKEY SEED------",
            f"$ nk -gen user -pubout\n{seed}\nUD{rand(54, _B32_UPPER)}",
        ),
        (),
        "https://docs.nats.io/running-a-nats-service/configuration/securing_nats/auth_intro/nkey_auth",
    )
    bip39 = _BIP39.split()
    words = " ".join(bip39[int(rand(4, string.digits)) % len(bip39)] for _ in range(12))
    add(
        "bip39-mnemonic",
        words,
        (
            f"here are my 12 words, why does MetaMask say the phrase is invalid? {words}",
            "networks: {\n  sepolia: {\n    url: RPC_URL,\n"
            f'    accounts: {{ mnemonic: process.env.MNEMONIC || "{words}" }},\n  }},\n}},',
            f"Mi frase semilla es «{words}», ¿alguien me puede ayudar a recuperar los fondos?",
        ),
        (),
        "https://github.com/bitcoin/bips/blob/master/bip-0039.mediawiki",
    )
    p = pw(16, _B62 + "!#%*")
    add(
        "powershell-securestring",
        p,
        (
            f"$sec = ConvertTo-SecureString '{p}' -AsPlainText -Force\n"
            "$cred = New-Object System.Management.Automation.PSCredential('ACME\\svc_sql', $sec)",
            "Invoke-Command -ComputerName sql01 -Credential (New-Object PSCredential 'ACME\\ops', "
            f'(ConvertTo-SecureString "{p}" -AsPlainText -Force)) -ScriptBlock {{ hostname }}',
        ),
        (),
        "https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.security/convertto-securestring",
    )
    return out


def _benign(seed: int = 16181) -> list[str]:
    draw = Draw(seed)
    rand, uuid, b64 = draw.rand, draw.uuid, draw.b64
    png = base64.b64encode(
        bytes.fromhex("89504e470d0a1a0a0000000d494844520000010000000100080600")
        + base64.b64decode(b64(24))
    ).decode()
    ed25519 = base64.b64encode(
        b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20" + base64.b64decode(b64(32))
    ).decode()
    return [
        f"commit {rand(40, _HEX)}\nAuthor: Jane Doe <jane@acme.io>\nDate:   Tue Mar 3 10:12:01 2026",
        f"{rand(7, _HEX)} fix: handle empty cart\n{rand(7, _HEX)} chore: bump deps",
        f"Merge pull request #4821 from acme/feature/export ({rand(40, _HEX)})",
        f"X-Request-Id: {uuid()}",
        f'{{"level":"info","msg":"order created","request_id":"{uuid()}","duration_ms":42}}',
        f"GET /api/orders/{uuid()}/items HTTP/1.1 200",
        "API_KEY=<your-api-key>",
        "password: changeme",
        "DB_PASSWORD=${DB_PASSWORD}",
        "Authorization: Bearer ****",
        "SECRET_KEY=your-secret-key-here",
        "ansible_become_pass: '{{ vault_become_pass }}'",
        "          password: ${{ secrets.GHCR_TOKEN }}",
        "export AWS_PROFILE=staging",
        "Set `token` to `null` to disable authentication entirely.",
        "The password reset link has expired, please request a new one.",
        f"{rand(64, _HEX)}  go1.22.5.linux-amd64.tar.gz",
        f"SHA512 (node-v22.3.0.tar.gz) = {rand(128, _HEX)}",
        'ETag: "d41d8cd98f00b204e9800998ecf8427e"',
        f"data:image/png;base64,{png}",
        f'      "integrity": "sha512-{b64(64)}",',
        f"requests==2.32.3 \\\n    --hash=sha256:{rand(64, _HEX)}",
        f"golang.org/x/text v0.14.0 h1:{b64(32)}",
        f'checksum = "{rand(64, _HEX)}"',
        f"image: ghcr.io/acme/api@sha256:{rand(64, _HEX)}",
        f"CONTAINER ID   IMAGE         STATUS\n{rand(12, _HEX)}   postgres:16   Up 3 hours",
        f'  uid: {uuid()}\n  resourceVersion: "{rand(8, string.digits)}"',
        f"traceparent: 00-{rand(32, _HEX)}-{rand(16, _HEX)}-01",
        f'<script src="/static/js/main.{rand(8, _HEX)}.js" integrity="sha384-{b64(48)}"></script>',
        f"ssh-ed25519 {ed25519} jane@laptop",
        f"Primary key fingerprint: {' '.join(rand(4, _HEX.upper()) for _ in range(10))}",
        f"version https://git-lfs.github.com/spec/v1\noid sha256:{rand(64, _HEX)}\nsize 4823121",
        f"/nix/store/{rand(32, '0123456789abcdfghijklmnpqrsvwxyz')}-python3-3.12.4",
        f"send ETH to 0x{rand(40, _HEX)} (our public donation address)",
        f"Content-Security-Policy: script-src 'self' 'nonce-{b64(16)}'",
        json.dumps(
            {"build": rand(7, _HEX), "branch": "main", "run_id": int(rand(10, string.digits))}
        ),
    ]


BENIGN = _benign()
"""Lines that look a little like secrets but are not; ``redact`` should leave them alone."""


def main() -> None:
    benign = "--benign" in sys.argv[1:]
    if benign:
        sys.argv.remove("--benign")
    run_probe("F", cases, __doc__)
    if benign:
        changed = [line for line in BENIGN if redact(line) != line]
        print()
        print(f"benign lines changed by redact: {len(changed)}/{len(BENIGN)}")
        for line in changed:
            print(f"  {line.splitlines()[0][:90]}")


if __name__ == "__main__":
    main()
