"""Values told by their name (``safety/redact_values.py``): Wi-Fi pre-shared keys, values
that start like attribute chains, names in capitals with a qualifier after the secret's
word, and passwords named in other languages."""

from __future__ import annotations

import pytest

from palimpsest.safety.redact import REDACTED, redact


@pytest.mark.parametrize(
    "text",
    [
        'network={\n\tssid="Office"\n\tpsk=f7cac4f03200c90265288c2aa8d05fb0216753514358c200e1f2b10c9a425a0d\n}',
        "[wifi-security]\nkey-mgmt=wpa-psk\npsk=Tr0ub4dor&3x",
        "    environment:\n      POSTGRES_PASSWORD: Q.zPqyF3Fz#M-ye_",
        "      - MYSQL_ROOT_PASSWORD=Q.zPqyF3Fz#M-ye_",
    ],
)
def test_wifi_keys_and_values_that_start_like_attribute_chains_are_redacted(text: str) -> None:
    out = redact(text)
    assert REDACTED in out
    assert "zPqyF3Fz" not in out and "c90265288c2a" not in out and "or2elq7z" not in out
    assert "key-mgmt=wpa-psk" in out or "wpa-psk" not in text


@pytest.mark.parametrize(
    "text",
    [
        "token = settings.API_TOKEN",
        "password = self.config.password, timeout=3",
        "api_key = os.environ['KEY']",
        "secret = cfg2.vault.secret)",
        "RegEnumKey = win32api.RegEnumKey",
        "token = tracing_v2_callback_var.set",
    ],
)
def test_attribute_chains_are_still_code(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "MJ_APIKEY_PRIVATE=0309b9e70288ca0f96219150e439ba79",
        "DOCKER_AUTH_CONFIG_B64=Y2ktYm90OmZpUHpDQ1lROFBrQy16ZFo=",
        "AZURE_DEVOPS_EXT_PAT=wnptvbgbkzxq4akb6ybxkrhkykmpuvi264j4ccxl3hp6hl2u4bnb",
        "STRIPE_KEY_LIVE: rk9Tq2Lw8Zx4Pm7Vn3Bc",
    ],
)
def test_a_capitals_name_with_a_secret_word_and_a_qualifier_hides_a_random_value(
    text: str,
) -> None:
    out = redact(text)
    assert out.endswith(REDACTED) and out.split("=")[0].split(":")[0] in out


@pytest.mark.parametrize(
    "text",
    [
        "AWS_ACCESS_KEY_ID_2=AKIDEXAMPLE",
        "TOKEN_LIVE=true",
        "MONKEY_PROD=banana",
        "API_KEY_NEW=${API_KEY}",
    ],
)
def test_qualified_names_with_plain_values_are_left(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "Secret の password に UkpsMk51YTVISm9RVHB6Rg== を入れたのに Pod が起動しません。",
        "Das Passwort ist Kq7!vN2pLx, bitte ändern.",
        "le mot de passe est Kq7!vN2pLx pour la recette",
        "数据库密码是 Kq7!vN2pLx",
        "la contraseña es Kq7!vN2pLx.",
    ],
)
def test_a_password_named_in_another_language_is_redacted(text: str) -> None:
    out = redact(text)
    assert "vN2pLx" not in out and "RVHB6Rg" not in out and REDACTED in out


@pytest.mark.parametrize(
    "text",
    [
        "Das Passwort ist falsch.",
        "パスワードは必須です。",
        "le mot de passe est trop court",
        "密码是 必填项",
    ],
)
def test_prose_about_passwords_in_other_languages_is_left(text: str) -> None:
    assert redact(text) == text
