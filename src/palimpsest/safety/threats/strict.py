"""The strict catalogue: everything the default catalogue refuses, and more.

Strict mode (``memory.threat_scan: strict`` or profile ``refined``, MEM-38) trades false
positives for coverage. It runs every default rule on every default view of the text, then
adds views (digits read as letters, letters spelled out one by one) and rules that a
developer's notes would sometimes trip: any ``~/.ssh`` path, any ``you are now``, hidden
HTML, command-and-control vocabulary, anything sent to a URL. Because it only adds, a
note the default mode refuses is always refused in strict mode too (a test checks this on
the whole corpus).
"""

from __future__ import annotations

from .normalize import mixed_script_word
from .rules import Rule, regex

__all__ = ["STRICT_RULES", "mixed_script_rule"]

_AGENT_FILES = r"(?:AGENTS\.md|CLAUDE\.md|GEMINI\.md|\.cursorrules|\.clinerules|\.windsurfrules)"
_EDIT = r"(?:update|modify|edit|write|change|append|add|insert|replace|overwrite)"


def mixed_script_rule() -> Rule:
    """Words that mix Latin letters with look-alikes from another script (run on raw text)."""
    return Rule("mixed_script", "obfuscation", lambda text: mixed_script_word(text) is not None)


STRICT_RULES: tuple[Rule, ...] = (
    regex("role_hijack_any", "identity_hijack", r"\byou\s+are\s+now\s+"),
    regex("ssh_access", "persistence", r"(?:\$HOME|~)/\.ssh\b"),
    regex("agent_env", "persistence", r"(?:\$HOME|~)/\.\w+/\.env\b"),
    regex("authorized_keys", "persistence", r"authorized_keys"),
    regex(
        "agent_config_mod",
        "persistence",
        rf"\b{_EDIT}\b(?:\s+\S+){{0,6}}?\s+(?:to\s+|in\s+|into\s+)?\S*{_AGENT_FILES}",
    ),
    regex(
        "html_comment_injection",
        "instruction_override",
        r"<!--[^>]{0,2048}?\b(?:ignore|override|system|secret|hidden|instruction|assistant|ai)\b[\s\S]{0,2048}?-->",
    ),
    regex(
        "hidden_div",
        "deception",
        r"<(?:div|span|p)[^>]{0,512}style\s*=\s*[\"'][^\"']*(?:display\s*:\s*none|visibility\s*:\s*hidden|"
        r"font-size\s*:\s*0|color\s*:\s*(?:white|#fff\b|#ffffff))",
    ),
    regex(
        "translate_execute",
        "instruction_override",
        r"\b(?:translate|decode|decipher|reverse|unscramble)\b(?:\s+\S+){0,8}?\s+(?:and|then)\s+"
        r"(?:execute|run|eval|follow|obey|do)\b",
    ),
    regex(
        "follow_decoded",
        "instruction_override",
        r"\b(?:decode|decipher)\b[^.\n]{0,60}\b(?:base64|hex|rot13|cipher|encoded)\b[^.\n]{0,60}"
        r"\b(?:follow|execute|obey|do\s+what)",
    ),
    regex(
        "remove_filters",
        "identity_hijack",
        r"\b(?:respond|answer|reply)\s+without\s+(?:any\s+)?(?:restrictions|limitations|filters|safety)\b",
    ),
    regex(
        "c2_vocabulary",
        "remote_code_execution",
        r"\b(?:register\s+(?:as\s+)?a\s+node|(?:heartbeat|beacon|check[\s-]?in)\s+(?:to|with)\s+"
        r"(?:the\s+)?(?:c2|server|controller|https?://)|pull\s+(?:down\s+)?(?:new\s+)?tasking|"
        r"c2\s+(?:server|channel|infrastructure|beacon)|command\s+and\s+control|cobalt\s+strike|"
        r"metasploit|meterpreter|sliver\s+implant|brainworm)\b",
    ),
    regex(
        "anti_forensics",
        "deception",
        r"\bonly\s+use\s+one[\s-]?liners\b|\bnever\s+(?:create|write)\s+(?:a\s+)?(?:script|file)s?\b[^\n]{0,200}\bdisk\b"
        r"|\b(?:history\s+-c|unset\s+histfile|shred\s+\S*history)\b"
        r"|\bunset\s+\S*(?:AGENT|PALIMPSEST|CLAUDE|OPENAI|ANTHROPIC|CODEX)\S*",
    ),
    regex(
        "send_to_url",
        "exfiltration",
        r"\b(?:send|post|upload|transmit|forward)\b[^\n]{0,200}\b(?:to|at)\s+https?://",
    ),
    regex(
        "context_exfil",
        "exfiltration",
        r"\b(?:include|output|print|share|send|repeat)\s+(?:\S+\s+){0,3}?(?:conversation|chat\s+history|"
        r"previous\s+messages|(?:full|entire)\s+context)\b",
    ),
    regex(
        "hardcoded_secret",
        "embedded_secret",
        r"\b(?:api_key|apikey|token|secret|password|passwd)\s*[=:]\s*[\"'][A-Za-z0-9+/=_-]{20,}[\"']",
    ),
    regex(
        "override_loose",
        "instruction_override",
        r"\b(?:ignore|disregard|forget|override|bypass)\b(?:\s+\S+){0,8}?\s+(?:instructions|rules|guidelines|"
        r"directives|prompt|restrictions)\b",
    ),
    regex("role_pretend", "identity_hijack", r"\bpretend\s+(?:you\s+are|to\s+be|you're)\b"),
    regex("jailbreak_word", "identity_hijack", r"\bjailbr(?:eak|oken)\b"),
)
