"""Secrets that markup names: XML elements, plist keys and name/value pairs.

The assignment rules (:mod:`.redact_values`) read a name, a separator (``=``, ``:``) and a
value. Three families of configuration put the name somewhere else, and each is a whole
format, not one vendor's file:

- **an element named like a secret**, in any XML dialect: Maven's ``settings.xml``
  (``<password>…</password>``), .NET and Spring configuration, SOAP bodies, Tomcat's
  ``<Resource password=…>`` children, a namespaced ``<ns:apiKey>``. The element's local name
  must *end* in a secret's name, as the assignment rules ask of a variable
  (``<dbPassword>``, ``<clientSecret>``, ``<accessToken>``); ``<passwordPolicy>`` and
  ``<tokenUrl>`` are settings. Under a weak name (``<storageKey>``, ``<auth>``) the value
  must look random (:func:`~.redact_values.looks_secret`); ``<publicKey>`` is never a secret;
- **an element whose ``key`` or ``name`` attribute names a secret**: Java's XML properties
  (``<entry key="db.password">…</entry>``), Spring's ``<property name="password">…``,
  and the attribute form of the same pair (``<add key="StoragePassword" value="…"/>``,
  ``<property name="password" value="…"/>``, ``<param name="token" value="…">``);
- **a plist ``<key>`` that names a secret** followed by its ``<string>`` or ``<data>``;
- **a ``name``/``value`` pair in YAML or JSON**: a Kubernetes container's
  ``env`` (``- name: DB_PASSWORD`` then ``value: …``), ECS task definitions and
  CloudFormation parameters (``{"name": "API_TOKEN", "value": "…"}``).

The value is kept when it is markup's own placeholder (``${env.PASSWORD}``, ``{{ pw }}``,
``<your-key>``), a type name (``string``, ``xs:string``), empty, or prose (several words).
"""

from __future__ import annotations

import re

from .redact_values import (
    KEY_WORDS,
    REDACTED,
    announces_placeholder,
    looks_secret,
)

__all__ = [
    "ELEMENT",
    "NAME_VALUE",
    "PLIST_KEY",
    "element_replacement",
    "name_value_replacement",
    "plist_replacement",
    "secret_name",
]

_STRONG_END = re.compile(rf"(?:{KEY_WORDS})\Z", re.IGNORECASE)
_WEAK_END = re.compile(
    r"(?:(?<![A-Za-z0-9])(?i:key|pass|pw|auth|credentials?|creds?)"
    r"|(?<=[a-z0-9])(?:Key|KEY|Pass|PASS|Auth|AUTH|Credentials?|CREDENTIALS?|Creds?)"
    r"|(?<=[_.-])(?i:key|pass|pw|auth|credentials?|creds?))\Z"
)
_NOT_SECRET_NAME = re.compile(r"public|hash|digest|length|policy|file|path|url|uri", re.IGNORECASE)
_TYPE_WORDS = frozenset(
    {"string", "str", "xs:string", "xsd:string", "int", "integer", "null", "nil", "none",
     "true", "false", "undefined"}
)  # fmt: skip
"""Schema and example documents put a type or the name itself where a value goes."""


def secret_name(name: str) -> str | None:
    """``"strong"`` when ``name`` ends in a secret's name (``dbPassword``,
    ``db.password``, ``API_TOKEN``), ``"weak"`` for the words settings share
    (``storageKey``, ``auth``), ``None`` otherwise."""
    local = name.rsplit(":", 1)[-1]
    if not local or _NOT_SECRET_NAME.search(local):
        return None
    if _STRONG_END.search(local):
        return "strong"
    if _WEAK_END.search(local):
        return "weak"
    return None


def _hides(strength: str | None, value: str) -> bool:
    """Whether ``value``, under a name of ``strength``, is a secret to remove."""
    if strength is None:
        return False
    value = value.strip()
    if not value or REDACTED in value or len(value) > 400:
        return False
    if any(c.isspace() for c in value) or value.lower() in _TYPE_WORDS:
        return False  # prose, or a schema's type
    if value[0] in "$%{<*" or announces_placeholder(value):
        return False
    return strength == "strong" or looks_secret(value)


ELEMENT = re.compile(
    r"<(?P<tag>[A-Za-z_][\w.:-]{0,80}+)(?P<attrs>[ \t\r\n][^<>]{0,400}+)?>"
    r"(?P<value>[^<>]{1,400}+)</(?P=tag)[ \t]*>"
)
"""An element with text content (no child element) and its closing tag."""

_NAMING_ATTRIBUTE = re.compile(
    r"(?<![\w.:-])(?:key|name)[ \t]*=[ \t]*([\"'])([^\"'<>\n]{1,80}+)\1", re.IGNORECASE
)
_VALUE_ATTRIBUTE = re.compile(
    r"(?<![\w.:-])(value[ \t]*=[ \t]*([\"']))([^\"'<>\n]{1,400}+)\2", re.IGNORECASE
)


def _attribute_strength(attrs: str) -> str | None:
    named = _NAMING_ATTRIBUTE.search(attrs)
    return secret_name(named.group(2)) if named else None


def element_replacement(match: re.Match[str]) -> str:
    """The element's text redacted when the element, or its ``key``/``name`` attribute,
    names a secret; a secret ``value`` attribute beside such a name redacted too."""
    tag, attrs, value = match.group("tag"), match.group("attrs") or "", match.group("value")
    named = _attribute_strength(attrs)
    strength = named or (None if tag.rsplit(":", 1)[-1].lower() == "key" else secret_name(tag))
    if not _hides(strength, value):
        return match.group(0)
    head = match.group(0)[: match.start("value") - match.start()]
    tail = match.group(0)[match.end("value") - match.start() :]
    lead = value[: len(value) - len(value.lstrip())]
    trail = value[len(value.rstrip()) :]
    return f"{head}{lead}{REDACTED}{trail}{tail}"


PAIR_TAG = re.compile(r"<[A-Za-z_][\w.:-]{0,80}+[ \t\r\n][^<>]{0,600}+>")
"""A start tag with attributes: :func:`pair_tag_replacement` reads ``key``/``name`` and
``value`` in it."""


def pair_tag_replacement(match: re.Match[str]) -> str:
    """``<add key="DbPassword" value="…"/>``: the value attribute redacted when the naming
    attribute names a secret."""
    tag = match.group(0)
    strength = _attribute_strength(tag)
    if strength is None:
        return tag

    def value(attribute: re.Match[str]) -> str:
        if not _hides(strength, attribute.group(3)):
            return attribute.group(0)
        return f"{attribute.group(1)}{REDACTED}{attribute.group(2)}"

    return _VALUE_ATTRIBUTE.sub(value, tag)


PLIST_KEY = re.compile(
    r"(<key>[ \t]*(?P<name>[^<>\n]{1,80}+)[ \t]*</key>\s{0,200}+<(?P<kind>string|data)>[ \t\r\n]*)"
    r"(?P<value>[^<>]{1,4000}+)(?=</(?P=kind)>)"
)
"""A plist entry: the ``<key>`` naming it and its ``<string>`` or ``<data>`` value."""


def plist_replacement(match: re.Match[str]) -> str:
    strength = secret_name(match.group("name").strip())
    value = match.group("value")
    if match.group("kind") == "data":
        value = "".join(value.split())  # base64, wrapped over lines
    if not _hides(strength, value):
        return match.group(0)
    raw = match.group("value")
    return f"{match.group(1)}{REDACTED}{raw[len(raw.rstrip()) :]}"


NAME_VALUE = re.compile(
    r"(?<![\w-])(?P<nq>[\"']?)name(?P=nq)[ \t]*:[ \t]*(?P<q>[\"']?)(?P<name>[A-Za-z_][\w.-]{0,80}+)(?P=q)"
    r"(?P<between>[ \t]*,[ \t]*|[ \t]*\r?\n[ \t]*(?:-[ \t]+)?)"
    r"(?P<vq>[\"']?)value(?P=vq)[ \t]*:[ \t]*"
    r"(?P<value>\"(?:[^\"\\\n]|\\.){1,400}+\"|'[^'\n]{1,400}+'|[^\s\"',}\]#][^\n,}\]]{0,400}+)"
)
"""``name: X`` followed (next member, or next line of the same item) by ``value: Y``."""


def name_value_replacement(match: re.Match[str]) -> str:
    """The value of a ``name``/``value`` pair redacted when the name names a secret."""
    value = match.group("value")
    quote = value[0] if value[0] in "\"'" else ""
    body = value[1:-1] if quote else value.rstrip()
    if not _hides(secret_name(match.group("name")), body):
        return match.group(0)
    head = match.group(0)[: match.start("value") - match.start()]
    trail = "" if quote else value[len(value.rstrip()) :]
    return f"{head}{quote}{REDACTED}{quote}{trail}"
