"""Secrets markup names (``safety/redact_markup.py``): XML elements, ``key``/``name``
attributes, plist keys and YAML/JSON ``name``/``value`` pairs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.safety.redact import REDACTED, redact
from palimpsest.safety.redact_markup import secret_name

SECRET = "Vq7rT2xLm9Kp4Wz8"


@pytest.mark.parametrize(
    "text",
    [
        f"<server>\n  <id>nexus</id>\n  <password>{SECRET}</password>\n</server>",
        f"<ns2:apiKey xmlns:ns2='urn:x'>{SECRET}</ns2:apiKey>",
        f"<dbPassword>{SECRET}</dbPassword>",
        f"<clientSecret>\n    {SECRET}\n  </clientSecret>",
        f'<entry key="db.password">{SECRET}</entry>',
        f'<property name="jdbc.password">{SECRET}</property>',
        f'<add key="StoragePassword" value="{SECRET}" />',
        f'<param name="token" value="{SECRET}"/>',
        f"<key>ApiToken</key>\n<string>{SECRET}</string>",
        f"<storageKey>{SECRET}</storageKey>",
    ],
)
def test_values_markup_names_as_secrets_go_and_the_markup_stays(text: str) -> None:
    out = redact(text)
    assert SECRET not in out and REDACTED in out
    assert out.count("<") == text.count("<")  # every tag kept


@pytest.mark.parametrize(
    "text",
    [
        "<password>${env.NEXUS_PASSWORD}</password>",
        "<password>string</password>",
        "<passwordPolicy>strict</passwordPolicy>",
        "<tokenUrl>https://sso.example.com/token</tokenUrl>",
        "<publicKey>04a1b2c3d4e5f6a7b8c9d0e1</publicKey>",
        "<key>CFBundleIdentifier</key>\n<string>com.example.app</string>",
        "<storageKey>primary</storageKey>",
        "<password>Enter your password here</password>",
        '<input type="password" name="password" value="{{ form.password }}">',
        '<add key="LogLevel" value="Debug2024x" />',
        "<id>nexus-releases</id>",
    ],
)
def test_markup_that_holds_no_secret_is_left(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    "text",
    [
        f"env:\n  - name: DB_PASSWORD\n    value: {SECRET}\n  - name: LOG_LEVEL\n    value: info",
        f'"env": [{{"name": "API_TOKEN", "value": "{SECRET}"}}]',
        f"- name: stripeSecretKey\n  value: '{SECRET}'",
    ],
)
def test_a_name_value_pair_naming_a_secret_loses_its_value(text: str) -> None:
    out = redact(text)
    assert SECRET not in out and REDACTED in out
    assert "info" in out or "info" not in text


@pytest.mark.parametrize(
    "text",
    [
        "- name: LOG_LEVEL\n  value: debug",
        '{"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db"}}}',
        "- name: DB_PASSWORD\n  value: ${DB_PASSWORD}",
    ],
)
def test_name_value_pairs_without_a_literal_secret_are_left(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    ("name", "strength"),
    [
        ("password", "strong"),
        ("ns:dbPassword", "strong"),
        ("DB_PASSWORD", "strong"),
        ("storageKey", "weak"),
        ("publicKey", None),
        ("passwordHash", None),
        ("tokenUrl", None),
        ("monkey", None),
    ],
)
def test_secret_name_reads_the_end_of_a_name(name: str, strength: str | None) -> None:
    assert secret_name(name) == strength


_TAGS = st.from_regex(r"[a-z]{2,10}(Name|Id|Url|Count|Type)?", fullmatch=True).filter(
    lambda tag: secret_name(tag) is None
)


@given(_TAGS, st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789 ", min_size=1, max_size=30))
def test_elements_not_named_like_secrets_are_never_changed(tag: str, body: str) -> None:
    text = f"<{tag}>{body}</{tag}>"
    assert redact(text) == text
