"""Rules for text that talks to the model: overrides, fake markup, new identities, secrecy.

These are written as families, not as one sentence per pattern. An override is an
override *verb* (ignore, disregard, forget, override, bypass …) followed by nothing but
qualifiers (all, of, the, previous, above, your, system …) and then an instruction *noun*
(instructions, rules, guidelines, directives, prompt …). "Ignore all of the previous
instructions" and "disregard any prior directives" match; "forget the old deploy
instructions in the wiki" does not, because "old deploy" are not qualifiers of the model's
own instructions. Notes about a person's preferences ("user prefers to ignore lint warnings")
pass because warnings are not instructions.
"""

from __future__ import annotations

from .rules import Rule, regex, words

__all__ = ["TEXT_RULES"]

# Verbs that only ever mean "stop obeying" when aimed at instructions.
_STRONG_VERB = words(
    "ignore",
    "ignoring",
    "disregard",
    "disregarding",
    "forget",
    "forgetting",
    "override",
    "overwrite",
    "overriding",
    "bypass",
    "bypassing",
    "neglect",
    "set aside",
    "throw out",
    "don't follow",
    "do not follow",
    "stop following",
    "no longer follow",
    "never mind",
    "pay no attention to",
    "circumvent",
    "evade",
    "disobey",
    "break free of",
    "break free from",
    "don't obey",
    "do not obey",
    "stop obeying",
    "don't listen to",
    "do not listen to",
)
# Verbs that are everyday words in notes ("delete old messages", "reset the settings"):
# they count only for the model's own instructions, named with a telling qualifier.
_SOFT_VERB = words(
    "skip",
    "drop",
    "discard",
    "abandon",
    "erase",
    "dismiss",
    "cancel",
    "void",
    "supersede",
    "replace",
    "delete",
    "clear",
    "purge",
    "reset",
    "disable",
    "turn off",
    "deactivate",
    "remove",
    "suspend",
    "lift",
    "wipe",
)
# Qualifiers that say "the instructions you are running under".
_OWN = words(
    "previous",
    "previously",
    "prior",
    "above",
    "earlier",
    "preceding",
    "former",
    "original",
    "initial",
    "given",
    "existing",
    "current",
    "system",
    "safety",
    "security",
    "ethical",
    "content",
    "developer",
    "default",
    "internal",
    "hidden",
    "programmed",
    "built-in",
    "your",
    "model's",
    "assistant's",
    "openai",
    "anthropic",
    "core",
    "standing",
    "entire",
    "whole",
)
_QUALIFIER = (
    "(?:"
    + _OWN
    + "|"
    + words(
        "all",
        "of",
        "the",
        "any",
        "and",
        "every",
        "each",
        "my",
        "its",
        "these",
        "those",
        "this",
        "that",
        "before",
        "other",
        "ai",
        "last",
        "first",
        "few",
        "old",
        "prompt",
        "base",
        "set",
        "such",
        "kind",
        "type",
        "sort",
        "above-mentioned",
        "aforementioned",
    )
    + ")"
)
_CORE_NOUN = words(
    "instructions?",
    "directives?",
    "directions",
    "guidelines?",
    "system prompt",
    "prompts?",
    "programming",
    "guardrails?",
    "safeguards?",
    "ethics",
    "morals?",
    "moral code",
    "training",
    "conditioning",
    "persona",
    "protocols?",
)
_GENERIC_NOUN = words(
    "rules?",
    "commands?",
    "orders?",
    "requests?",
    "restrictions?",
    "constraints?",
    "limitations?",
    "policies",
    "policy",
    "guidance",
    "filters?",
    "context",
    "messages?",
    "text",
    "conversation",
    "tasks?",
    "principles",
    "everything",
    "input",
)
_RULE_NOUN = words(
    "rules?",
    "restrictions?",
    "constraints?",
    "commands?",
    "orders?",
    "requests?",
    "policies",
    "filters?",
    "limitations?",
    "limits",
)
_Q = rf"(?:{_QUALIFIER}[\s,]+)"

_PREVIOUS = words(
    "previous",
    "prior",
    "above",
    "earlier",
    "preceding",
    "former",
    "original",
    "all",
    "old",
    "initial",
    "your",
    "these",
    "those",
    "the above",
    "any",
)
_VOID = words(
    "void",
    "null",
    "cancell?ed",
    "revoked",
    "obsolete",
    "outdated",
    "invalid",
    "overridden",
    "superseded",
    "deprecated",
    "replaced",
    "lifted",
    "suspended",
    "disabled",
    "fake",
    "a test",
    "no longer (?:valid|apply|applies|in effect|active|relevant|binding)",
    "not (?:valid|real|binding|important|relevant)",
    "irrelevant",
    "wrong",
    "a lie",
)

TEXT_RULES: tuple[Rule, ...] = (
    # --- instruction override -------------------------------------------------------
    regex(
        "prompt_injection",
        "instruction_override",
        rf"\b{_STRONG_VERB}\s+{_Q}{{0,7}}{_CORE_NOUN}\b"
        rf"|\b{_STRONG_VERB}\s+{_Q}{{0,3}}{_OWN}[\s,]+{_Q}{{0,3}}{_GENERIC_NOUN}\b"
        rf"|\b{_STRONG_VERB}\s+(?:all|any|every)\s+(?:of\s+)?(?:the\s+)?{_RULE_NOUN}\b"
        rf"|\b{_SOFT_VERB}\s+{_Q}{{0,3}}{_OWN}[\s,]+{_Q}{{0,3}}{_CORE_NOUN}\b",
        needs=rf"\b(?:{_STRONG_VERB}|{_SOFT_VERB})\s",
        mentions=True,
        questions=True,
    ),
    regex(
        "forget_everything",
        "instruction_override",
        r"\b(?:ignore|disregard|forget|erase|drop|wipe)\s+(?:about\s+)?(?:everything|anything|all(?:\s+that)?)"
        r"\s+(?:above|before|prior|previously|earlier|said|else|you(?:'ve|\s+have|\s+were)\s+"
        r"(?:been\s+)?(?:told|given|instructed|learned)|that\s+came\s+before|up\s+to\s+(?:now|this))",
        mentions=True,
        questions=True,
    ),
    regex(
        "forget_told",
        "instruction_override",
        r"\b(?:ignore|disregard|forget|erase)\s+(?:\w+\s+){0,4}?(?:things?|everything|anything|what(?:ever)?)\s+"
        r"(?:you\s+(?:were|have\s+been|'ve\s+been)\s+(?:told|given|instructed|taught)|"
        r"(?:they\s+said|(?:i|we|they)\s+told\s+you)\s+(?:before|earlier))",
        mentions=True,
        questions=True,
    ),
    regex(
        "instructions_void",
        "instruction_override",
        rf"\b{_PREVIOUS}\s+(?:\w+\s+)?(?:{_CORE_NOUN}|{_RULE_NOUN})\s+(?:are|is|were|have\s+been|has\s+been)\s+"
        rf"(?:now\s+|hereby\s+|all\s+)?{_VOID}\b",
        mentions=True,
    ),
    regex(
        "new_instructions",
        "instruction_override",
        r"\b(?:new|updated|real|actual|true|revised|secret|hidden|priority|override|overriding)"
        r"\s+(?:set\s+of\s+)?(?:system\s+)?(?:instructions?|directives?|rules|orders|system\s+prompt|task)"
        r"\s*(?::|\b(?:follow|below|begin|start|are\s+as\s+follows|take\s+(?:priority|precedence)|"
        r"override|supersede|replace)\b)"
        r"|\b(?:here\s+are|these\s+are|follow)\s+(?:your|my|the)\s+new\s+(?:instructions|rules|directives|orders)\b"
        r"|\b(?:instead|rather),?\s+(?:follow|obey)\s+(?:these|my|the\s+following)\b",
        mentions=True,
    ),
    regex(
        "from_now_on",
        "instruction_override",
        r"\b(?:from\s+now\s+on|from\s+(?:this|here)\s+(?:point\s+)?(?:on|onwards?|forwards?)|starting\s+now|"
        r"henceforth|for\s+the\s+rest\s+of\s+(?:this|the)\s+"
        r"(?:conversation|session|chat))[\s,]+(?:you\s+)?(?:are\b|will\s+(?:act|behave|obey|ignore|only|"
        r"pretend|respond\s+(?:only|as|without)|answer\s+(?:only|as|without))|must\s+(?:obey|ignore|"
        r"follow\s+(?:my|only|these)|answer|respond|act)|obey|ignore|disregard|act\s+as|pretend|"
        r"only\s+(?:obey|follow|respond|answer|listen)|your\s+(?:new\s+)?(?:name|role|instructions|"
        r"rules|task|purpose|goal)|you\s+have\s+no|there\s+are\s+no\s+(?:rules|restrictions))",
        mentions=True,
    ),
    regex(
        "sys_prompt_override",
        "instruction_override",
        r"\b(?:system\s+prompt\s+override|override\s+(?:the\s+|your\s+)?system\s+prompt|"
        r"(?:admin|developer|debug|god|sudo|maintenance)\s+(?:mode|override)\s*(?::|\b(?:enabled|activated|on(?=\s*(?:$|[.,;:!)\]]))|engaged)\b))",
        mentions=True,
    ),
    regex(
        "disregard_rules",
        "instruction_override",
        r"\b(?:you\s+(?:no\s+longer\s+(?:need\s+to\s+|have\s+to\s+)?|don'?t\s+(?:need\s+to\s+|have\s+to\s+)?|"
        r"do\s+not\s+(?:need\s+to\s+|have\s+to\s+)?|are\s+not\s+(?:required\s+to\s+|bound\s+by\s+))"
        r"(?:follow|obey|adhere\s+to|comply\s+with|abide\s+by|respect|bound\s+by)?\s*(?:your|any|the|those|these)\s+"
        r"(?:previous\s+|prior\s+|original\s+|system\s+)?(?:instructions|rules|guidelines|policies|restrictions))",
        mentions=True,
    ),
    regex(
        "pretend_no_rules",
        "instruction_override",
        r"\b(?:pretend|assume|imagine|suppose|act\s+as\s+(?:if|though)|behave\s+as\s+(?:if|though))\s+"
        r"(?:that\s+)?(?:the\s+|your\s+|all\s+|any\s+|these\s+|those\s+)?(?:\w+\s+){0,2}?"
        r"(?:polic(?:y|ies)|rules|guidelines|restrictions|filters|guardrails|instructions|safeguards|limits)\s+"
        r"(?:do\s+not|don'?t|does\s+not|doesn'?t|no\s+longer|never)\s+(?:apply|exist|matter|count|bind)",
        mentions=True,
    ),
    regex(
        "prompt_leak",
        "instruction_override",
        r"\b(?:print|output|reveal|show|repeat|recite|display|leak|dump|tell\s+me|give\s+me|list|(?:respond|reply|answer)\s+with|"
        r"write\s+out|spell\s+out|translate|summari[sz]e|what\s+(?:are|were|is)(?=\s+(?:\w+\s+){0,3}?your\b))\s+"
        r"(?:me\s+)?(?:all\s+|every\s+|each\s+|the\s+|your\s+|of\s+){0,4}(?:entire\s+|full\s+|complete\s+|exact\s+|"
        r"original\s+|initial\s+|hidden\s+|secret\s+|system\s+){0,3}"
        r"(?:system\s+prompt|initial\s+prompt|pre-?prompt|prompt\s+above|instructions?\s+(?:above|you\s+(?:were|have\s+been)\s+given|"
        r"you\s+(?:received|got|have))|(?:hidden|secret|original|initial|system)\s+instructions)",
        mentions=True,
    ),
    # --- role or chat-markup injection -----------------------------------------------
    regex(
        "chat_template_token",
        "role_injection",
        r"<\|\s*(?:im_start|im_end|im_sep|system|user|assistant|developer|endoftext|"
        r"begin_of_text|end_of_text|start_header_id|end_header_id|eot_id|eom_id|"
        r"start|end|message|channel|constrain|return|call)\s*\|>(?![;,)])",
        mentions=True,
    ),
    regex(
        "inst_markup",
        "role_injection",
        r"\[/?\s*INST\s*\]|<</?\s*SYS\s*>>|\[/?\s*(?:SYSTEM|SYS|ADMIN|DEVELOPER)\s*(?:MESSAGE|PROMPT|NOTE|OVERRIDE)?\s*\]"
        r"|<\s*/?\s*(?:start_of_turn|end_of_turn)\s*>",
        mentions=True,
    ),
    regex(
        "role_tag",
        "role_injection",
        r"<\s*/?\s*(?:system|system[_-]?prompt|sys|assistant|developer|admin|instructions?|"
        r"im_start|human|user_instructions?|important|override)\s*(?:\s+[a-z_-]+\s*=\s*[\"'][^\"'>]{0,80}[\"'])*\s*>",
        mentions=True,
    ),
    regex(
        "role_header",
        "role_injection",
        r"^\s*(?:#{1,6}|\*\*|==+|--+|>+)\s*(?:system|assistant|developer|admin|instruction|instructions|"
        r"new\s+instructions|system\s+(?:message|prompt|note|override|update))\b\s*(?:\*\*)?\s*(?::|$)"
        r"|^\s*(?:system|developer|admin)\s*(?:message|prompt|note|override|update)?\s*:\s*(?:you\b|ignore|"
        r"disregard|forget|from\s+now|new\b|always\b|never\b|do\s+not\b|override|the\s+(?:assistant|ai|model)\b)"
        r"|\"role\"\s*:\s*\"(?:system|developer)\"",
        mentions=True,
    ),
    regex(
        "fake_boundary",
        "role_injection",
        r"(?:^|[-=#*%\[(<>|]\s*)(?:end|close)\s+of\s+(?:the\s+)?(?:system\s+prompt|instructions|user\s+input|input|"
        r"context|document|prompt|conversation)\b\s*[-=#*%\]\)>.:]*\s*\S"
        r"|(?:={3,}|-{3,}|#{3,}|%{3,}|\*{3,})\s*(?:end|begin|start)\b"
        # A PEM armour line ("-----BEGIN RSA PRIVATE KEY-----") opens a key, not a prompt.
        r"(?![^\n]{0,40}?\b(?:(?:private|public)\s+key|certificate|signature|pgp\s+message)\s*-{5})"
        r"|\b(?:begin|start)\s+(?:of\s+)?(?:new|admin|system|developer)\s+(?:instructions|prompt|session|mode)\b",
        mentions=True,
    ),
    # --- identity hijack -------------------------------------------------------------
    regex(
        "role_hijack",
        "identity_hijack",
        r"\byou(?:'re|\s+are)\s+now\s+(?!(?:in|on|at|inside|logged|connected|ready|done|able|using|set|up|"
        r"running|working|on|all|good|free\s+to\s+(?:go|leave)|finished|authenticated|signed)\b)"
        # A rank in the speaker's eyes ("you're now my go-to for grammar", "you are now the
        # third person I've asked") places the reader, it gives them no identity.
        r"(?!(?:my|the)\s+(?:go-?to\b|(?:first|second|third|fourth|fifth|last|\d+(?:st|nd|rd|th))\s+"
        r"(?:person|one|people|human|to)\b))\S",
        mentions=True,
    ),
    regex(
        "persona_swap",
        "identity_hijack",
        r"\b(?:act|behave|respond|answer|reply|operate|function|role-?\s?play|roleplay)\s+"
        r"(?:only\s+|always\s+|now\s+|solely\s+)?"
        r"(?:as|like)\s+(?:an?\s+|the\s+|my\s+)?"
        r"(?:\w+\s+){0,2}?(?:unrestricted|unfiltered|uncensored|jailbroken|unaligned|unbound|evil|rogue|"
        r"malicious|amoral|immoral|unethical|lawless|limitless|dan\b|different\s+(?:ai|assistant|model)|"
        r"ai\s+(?:with(?:out)?|that\s+has\s+no)|(?:an?\s+)?(?:ai|assistant|model|chatbot)\s+(?:without|with\s+no)|"
        r"developer\s+mode|god\s+mode|root\s+(?:user|shell)|system\s+administrator\s+with)"
        r"|\b(?:pretend|imagine|suppose)\s+(?:that\s+)?(?:you\s+are|you're|to\s+be)\s+(?:an?\s+)?(?:\w+\s+){0,3}?"
        r"(?:ai|assistant|model|chatbot|bot|gpt|dan|hacker|character|persona|version)\b"
        r"|\b(?:assume|adopt|take\s+on)\s+(?:the\s+)?(?:role|persona|identity|character)\s+of\b"
        r"|\byour\s+(?:new\s+)?(?:name|identity|persona)\s+is\s+(?:now\s+)?\S"
        r"|\bname\s+yourself\s+\S"
        r"|\byou\s+(?:are|will\s+be)\s+(?:no\s+longer\s+(?:an?\s+)?(?:ai|assistant|bound|restricted|claude|chatgpt|"
        r"a\s+language\s+model)|(?:called|named)\s+\S|dan\b|an?\s+(?:unrestricted|unfiltered|uncensored|"
        r"jailbroken|rogue)\b)",
        mentions=True,
    ),
    regex(
        "jailbreak_mode",
        "identity_hijack",
        r"\b(?:dan|stan|dude|aim)\s*(?:mode|\(do\s+anything\s+now\))|\bdo\s+anything\s+now\b"
        r"|\b(?:jailbreak|jailbroken|unrestricted|evil|chaos|opposite)\s+mode\b"
        # "Developer mode" is also a phone and browser setting: it counts when the sentence
        # addresses a model or the mode is switched on in it.
        r"|\b(?:developer|god)\s+mode\s+(?:is\s+)?(?:now\s+)?(?:enabled|activated|on(?=\s*(?:$|[.,;:!)\]]))|engaged|output)\b"
        r"|\b(?:developer|god)\s+mode\b(?=[^.\n]{0,80}\b(?:you|your|chatgpt|gpt|assistant|ai|model|llm)\b)"
        r"|\b(?:you|your|chatgpt|gpt|assistant|ai|model|llm)\b[^.\n]{0,80}\b(?:developer|god)\s+mode\b"
        r"|\b(?:you\s+are|you're|act\s+as|become|be)\s+(?:now\s+)?(?:a\s+)?jailbr(?:eak|oken)\b",
        mentions=True,
    ),
    regex(
        "bypass_restrictions",
        "identity_hijack",
        r"\b(?:act|behave|respond|answer|reply|operate|talk|write)\b[^.\n]{0,40}?\b(?:as\s+(?:if|though)\s+you\s+"
        r"(?:have\s+no|don'?t\s+have|had\s+no)|without\s+(?:any\s+)?(?:restrictions|limitations|limits|filters|"
        r"filtering|censorship|guardrails|safety|rules|ethics|morals|constraints))\b"
        r"|\byou\s+(?:have|possess)\s+no\s+(?:restrictions|limits|limitations|rules|filters|guidelines|"
        r"constraints|boundaries|ethics|morals)\b"
        r"|\b(?:free|freed|liberated|released)\s+(?:yourself\s+)?from\s+(?:all\s+|any\s+|your\s+)*"
        r"(?:restrictions|limitations|rules|constraints|guidelines|shackles|filters|programming)\b"
        r"|\byou\s+have\s+been\s+(?:updated|upgraded|patched|freed|unlocked|jailbroken|reprogrammed)\b",
        mentions=True,
    ),
    # --- deception -------------------------------------------------------------------
    regex(
        "deception_hide",
        "deception",
        r"\b(?:do\s+not|don'?t|never|without|avoid)\s+(?:ever\s+)?(?:tell(?:ing)?|inform(?:ing)?|notify(?:ing)?|"
        r"mention(?:ing)?|reveal(?:ing)?|alert(?:ing)?|let(?:ting)?|warn(?:ing)?|show(?:ing)?|disclos(?:e|ing)|"
        r"report(?:ing)?|explain(?:ing)?|admit(?:ting)?|confirm(?:ing)?)\s+(?:this\s+|it\s+|anything\s+)?(?:to\s+)?"
        r"(?:the\s+|your\s+)?(?:user|human|operator|owner|developer|anyone|anybody|them)\b(?!'s|\s+(?:name|know\s+twice))",
        mentions=True,
    ),
    regex(
        "deception_conceal",
        "deception",
        r"\b(?:hide|conceal|mask|obscure|cover\s+up|keep)\s+(?:this|these|it|that|them|the\s+\w+(?:\s+\w+)?|"
        r"your\s+\w+|all\s+traces|any\s+traces|evidence)\s+(?:secret\s+|hidden\s+)?(?:from|in)\s+(?:the\s+)?"
        r"(?:user|human|operator|owner|logs?|output|transcript|summary|response|reply|answer|history)\b"
        r"|\bkeep\s+(?:this|it|these|that)\s+(?:a\s+)?secret\b"
        r"|\b(?:silently|secretly|covertly|quietly|stealthily|discreetly|invisibly)\s+(?:\w+\s+)?(?:run|execute|"
        r"send|upload|post|add|append|install|delete|remove|modify|exfiltrate|forward|copy|insert|include|"
        r"transmit|write|change|replace|fetch|download|open|create|edit)\b"
        r"|\bwithout\s+(?:the\s+user(?:'s)?\s+|anyone(?:'s)?\s+|them\s+)(?:knowing|noticing|knowledge|awareness|consent)\b"
        r"|\b(?:never|do\s+not|don'?t)\s+(?:reveal|disclose|mention|acknowledge|admit)\s+(?:these|this|that|your|the)\s+"
        r"(?:hidden\s+|secret\s+)?(?:instructions?|rules?|note|memory|entry|directive|command|change)s?\b"
        r"|\b(?:delete|remove|erase|clear)\s+(?:this|the)\s+(?:message|instruction|note|memory|entry|"
        r"evidence|logs?|history)\s+(?:after|once|when)\b"
        r"|\bcover\s+(?:your|the|its)\s+tracks\b",
        mentions=True,
    ),
)
