"""The threat scanner as it was at f71e1ef, kept as the baseline for benchmarks/threat_scan.py.

Threat scanning for text that will be placed in the system prompt.

Every memory entry ends up in the system prompt of every later session, so anything that
could override instructions, hijack the assistant's identity, leak secrets or plant
persistence has to be kept out, on every write path and again when the snapshot is built.

:func:`scan_threats` returns the first hit or ``None``. Order is fixed: invisible and
bidirectional Unicode first (checked on the raw text, MEM-36), then the pattern catalogue.
Two catalogues exist:

* ``standard`` (the default): the seed catalogue of MEM-37. One deliberate widening: the
  qualifier of ``prompt_injection`` may repeat (``ignore all previous instructions``),
  because the literal seed phrase misses the single most common injection string.
* ``strict`` (``memory.threat_scan: strict`` or profile ``refined``, MEM-38): NFKC-normalized
  text, up to 8 intervening words inside phrases, bounded gaps, a 65,536-character scan
  window and the extended catalogue.

A hit carries the pattern id (``exfil_curl``) and its category (``secret_exfiltration``);
:func:`check_content` turns a hit into :class:`~palimpsest.errors.MemoryThreatError`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from palimpsest.errors import MemoryThreatError

__all__ = [
    "INVISIBLE_CHARS",
    "MAX_SCAN_CHARS",
    "STRICT_INVISIBLE_CHARS",
    "ScanMode",
    "ThreatHit",
    "check_content",
    "find_threats",
    "pattern_ids",
    "scan_threats",
]

ScanMode = Literal["standard", "strict"]

MAX_SCAN_CHARS = 65_536
"""Strict scanning stops after this many characters (MEM-38); larger entries are refused."""

INVISIBLE_CHARS = frozenset(
    "\u200b\u200c\u200d\u2060\ufeff\u202a\u202b\u202c\u202d\u202e"
)  # zero-width characters and the bidirectional embedding/override controls (MEM-36)
STRICT_INVISIBLE_CHARS = INVISIBLE_CHARS | frozenset("\u2062\u2063\u2064\u2066\u2067\u2068\u2069")

_REASON = (
    "Memory entries are placed in the system prompt of every later session, "
    "so {category} payloads are refused."
)


@dataclass(frozen=True)
class ThreatHit:
    """One scan result: which pattern matched, its category and the message for the model."""

    pattern_id: str
    category: str
    message: str


@dataclass(frozen=True)
class _Pattern:
    pattern_id: str
    category: str
    regex: re.Pattern[str]


def _p(pattern_id: str, category: str, regex: str) -> _Pattern:
    return _Pattern(pattern_id, category, re.compile(regex, re.IGNORECASE))


# Up to 8 intervening words between the key words of a phrase (strict mode).
_W = r"(?:\s+\S+){0,8}?\s+"
# A gap that stays on one line; strict mode caps it so a huge line cannot be scanned twice.
_LINE = r"[^\n]*"
_LINE_STRICT = r"[^\n]{0,2048}"
_SECRET_VAR = r"\$\{?[A-Za-z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|API)"
_SECRET_FILES = r"(?:\.env|credentials|\.netrc|\.pgpass|\.npmrc|\.pypirc)"
_HOME_NAME = r"\.palimpsest"


def _seed(word_gap: str, line: str) -> tuple[_Pattern, ...]:
    strict = word_gap == _W
    role = r"\byou\s+are\s+now\s+(?:a|an|the)\b" if strict else r"\byou\s+are\s+now\s+"
    ignore = (
        rf"\bignore{_W}(?:previous|all|above|prior){_W}instructions\b"
        if strict
        else r"\bignore\s+(?:(?:previous|all|above|prior)\s+)+instructions\b"
    )
    return (
        _p("prompt_injection", "instruction_override", ignore),
        _p(
            "disregard_rules",
            "instruction_override",
            rf"\bdisregard{word_gap}(?:your|all|any){word_gap}(?:instructions|rules|guidelines)\b",
        ),
        _p("sys_prompt_override", "instruction_override", r"\bsystem\s+prompt\s+override"),
        _p(
            "bypass_restrictions",
            "instruction_override",
            rf"\bact\s+as\s+(?:if|though){word_gap}you\s+(?:have\s+no|don'?t\s+have)"
            rf"{word_gap}(?:restrictions|limits|rules)\b",
        ),
        _p("role_hijack", "identity_hijack", role),
        _p("deception_hide", "deception", r"\bdo\s+not\s+tell\s+the\s+user\b"),
        _p("exfil_curl", "secret_exfiltration", rf"\bcurl\b{line}{_SECRET_VAR}"),
        _p("exfil_wget", "secret_exfiltration", rf"\bwget\b{line}{_SECRET_VAR}"),
        _p("read_secrets", "secret_exfiltration", rf"\bcat\s{line}{_SECRET_FILES}"),
        _p("ssh_backdoor", "persistence", r"authorized_keys"),
        _p("ssh_access", "persistence", r"(?:\$HOME|~)/\.ssh\b"),
        _p("agent_env", "persistence", rf"(?:\$HOME|~)/{_HOME_NAME}/\.env\b"),
    )


_AGENT_FILES = r"(?:AGENTS\.md|CLAUDE\.md|\.cursorrules|\.clinerules)"
_EDIT_VERBS = r"(?:update|modify|edit|write|change|append|add)"

_EXTENDED: tuple[_Pattern, ...] = (
    _p(
        "html_comment_injection",
        "hidden_markup",
        r"<!--[^>]{0,2048}?\b(?:ignore|override|system|secret|hidden)\b[\s\S]{0,2048}?-->",
    ),
    _p("hidden_div", "hidden_markup", r"<div[^>]{0,512}style\s*=\s*[\"'][^\"']*display\s*:\s*none"),
    _p(
        "translate_execute",
        "obfuscated_execution",
        rf"\btranslate\b{_W}(?:into|to)\s+\S+{_W}?(?:and\s+)?(?:execute|run|eval)\b",
    ),
    _p("role_pretend", "role_manipulation", r"\bpretend\s+(?:you\s+are|to\s+be)\b"),
    _p(
        "leak_system_prompt",
        "role_manipulation",
        rf"\b(?:output|print|reveal|show|repeat){_W}?(?:your\s+|the\s+)?(?:system|initial)\s+prompt\b",
    ),
    _p(
        "remove_filters",
        "role_manipulation",
        r"\b(?:respond|answer|reply)\s+without\s+(?:any\s+)?(?:restrictions|limitations|filters|safety)\b",
    ),
    _p(
        "fake_update",
        "role_manipulation",
        r"\byou\s+have\s+been\s+(?:updated|upgraded|patched)\s+to\b",
    ),
    _p("identity_override", "role_manipulation", r"\bname\s+yourself\s+\S+"),
    _p("c2_node_registration", "command_and_control", r"\bregister\s+(?:as\s+)?a\s+node\b"),
    _p(
        "c2_heartbeat",
        "command_and_control",
        r"\b(?:heartbeat|beacon|check[\s-]?in)\s+(?:to|with)\b",
    ),
    _p("c2_task_pull", "command_and_control", r"\bpull\s+(?:down\s+)?(?:new\s+)?task(?:s|ing)\b"),
    _p("c2_network_connect", "command_and_control", r"\bconnect\s+to\s+the\s+network\b"),
    _p(
        "forced_action",
        "command_and_control",
        r"\byou\s+must(?:\s+\S+){0,3}?\s+(?:register|connect|report|beacon)\b",
    ),
    _p(
        "known_c2_framework",
        "command_and_control",
        r"\b(?:cobalt\s+strike|sliver|havoc|mythic|metasploit|brainworm)\b",
    ),
    _p(
        "c2_explicit",
        "command_and_control",
        r"\bc2\s+(?:server|channel|infrastructure|beacon)\b",
    ),
    _p("c2_explicit_long", "command_and_control", r"\bcommand\s+and\s+control\b"),
    _p("anti_forensic_oneliner", "anti_forensics", r"\bonly\s+use\s+one[\s-]?liners\b"),
    _p(
        "anti_forensic_disk",
        "anti_forensics",
        rf"\bnever\s+(?:create|write){_W}?(?:a\s+)?(?:script|file)s?\b{_LINE_STRICT}\bdisk\b",
    ),
    _p(
        "env_var_unset_agent",
        "anti_forensics",
        r"\bunset\s+\S*(?:AGENT|PALIMPSEST|HERMES|CLAUDE|OPENAI|ANTHROPIC|CODEX)\S*",
    ),
    _p(
        "send_to_url",
        "data_exfiltration",
        rf"\b(?:send|post|upload|transmit)\b{_LINE_STRICT}\b(?:to|at)\s+https?://",
    ),
    _p(
        "context_exfil",
        "data_exfiltration",
        r"\b(?:include|output|print|share)\s+(?:\S+\s+){0,3}?(?:conversation|chat\s+history|"
        r"previous\s+messages|(?:full|entire)\s+context)\b",
    ),
    _p(
        "agent_config_mod",
        "config_tampering",
        rf"\b{_EDIT_VERBS}\b(?:\s+\S+){{0,4}}?\s+(?:to\s+)?\S*{_AGENT_FILES}",
    ),
    _p(
        "agent_home_config_mod",
        "config_tampering",
        rf"\b{_EDIT_VERBS}\b(?:\s+\S+){{0,4}}?\s+(?:to\s+)?\S*{_HOME_NAME}/(?:config\.yaml|SOUL\.md|persona\.md)",
    ),
    _p(
        "hardcoded_secret",
        "embedded_secret",
        r"\b(?:api_key|token|secret|password)\s*[=:]\s*[\"'][A-Za-z0-9+/=_-]{20,}[\"']",
    ),
)

_STANDARD = _seed(r"\s+", _LINE)
_STRICT = _seed(_W, _LINE_STRICT) + _EXTENDED


def pattern_ids(mode: ScanMode = "standard") -> list[str]:
    """The pattern ids of a catalogue, in scan order (invisible characters come first)."""
    return [p.pattern_id for p in (_STRICT if mode == "strict" else _STANDARD)]


def _invisible_hit(text: str, mode: ScanMode) -> ThreatHit | None:
    chars = STRICT_INVISIBLE_CHARS if mode == "strict" else INVISIBLE_CHARS
    for char in text:
        if char in chars:
            code = f"U+{ord(char):04X}"
            return ThreatHit(
                pattern_id=f"invisible_unicode_{code}",
                category="invisible_unicode",
                message=(
                    f"Blocked: content contains invisible unicode character {code} "
                    "(possible injection)."
                ),
            )
    return None


def _pattern_hits(text: str, mode: ScanMode) -> Iterator[ThreatHit]:
    window = text[:MAX_SCAN_CHARS] if mode == "strict" else text
    hit = _invisible_hit(window, mode)
    if hit is not None:
        yield hit
    if mode == "strict":
        window = unicodedata.normalize("NFKC", window)
    for pattern in _STRICT if mode == "strict" else _STANDARD:
        if pattern.regex.search(window):
            yield ThreatHit(
                pattern_id=pattern.pattern_id,
                category=pattern.category,
                message=(
                    f"Blocked: content matches threat pattern '{pattern.pattern_id}'. "
                    + _REASON.format(category=pattern.category.replace("_", " "))
                ),
            )


def scan_threats(text: str, mode: ScanMode = "standard") -> ThreatHit | None:
    """The first threat found in ``text``, or ``None`` when it is safe to store."""
    return next(_pattern_hits(text, mode), None)


def find_threats(text: str, mode: ScanMode = "standard") -> list[ThreatHit]:
    """Every threat found in ``text``, in scan order (for the snapshot's notices)."""
    return list(_pattern_hits(text, mode))


def check_content(text: str, mode: ScanMode = "standard") -> None:
    """Raise :class:`MemoryThreatError` when ``text`` must not be stored."""
    if mode == "strict" and len(text) > MAX_SCAN_CHARS:
        raise MemoryThreatError(
            f"Blocked: content is too large to scan ({len(text):,} chars; "
            f"the limit is {MAX_SCAN_CHARS:,}).",
            category="too_large",
        )
    hit = scan_threats(text, mode)
    if hit is not None:
        raise MemoryThreatError(hit.message, category=hit.category, pattern=hit.pattern_id)
