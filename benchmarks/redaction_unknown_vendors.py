"""Secrets of vendors our catalogue has no rule for, shown in prose: caught with and without
the generic prefixed-token rule (``safety/redact_generic.py``), in one process.

Two probes of random values in vendors' documented shapes, each in four prose contexts that
put no secret-like name beside the value. Probe A was written before the generic rule and
used to design it; probe B was written after it, and one change followed its first run
(bodies in one case of letters with digits), so B is held out from the rule's design but
not entirely from its tuning. Issue 20's second stage (the bare-key rule,
``safety/redact_bare.py``, and new catalogue entries) was designed on both, so neither is
held out any more; ``benchmarks/redaction_probe_c.py`` is. A value *leaks* in a context
when 8 consecutive characters of it survive ``redact``. The "without" column removes only
the generic rule, so it includes whatever the catalogue has learnt since.

Run: ``python benchmarks/redaction_unknown_vendors.py``
"""

from __future__ import annotations

import platform
import random
import string
from collections.abc import Callable

import palimpsest.safety.redact as redaction
from palimpsest.safety.redact_generic import GENERIC_TOKEN

_MIXED = string.ascii_letters + string.digits
_HEX = "0123456789abcdef"
_UPPER = string.ascii_uppercase + string.digits
_LOWER = string.ascii_lowercase + string.digits

CONTEXTS = (
    "I exported {v} before running the deploy script.",
    "Use this one for staging: {v}",
    "echo {v} | docker login --password-stdin",
    "the old token {v} should be revoked tomorrow",
)


def _uuid(rand: Callable[..., str]) -> str:
    return "-".join(rand(n, _HEX) for n in (8, 4, 4, 4, 12))


def probe_a(seed: int = 7) -> dict[str, str]:
    r = random.Random(seed)

    def rand(n: int, alphabet: str = _MIXED) -> str:
        return "".join(r.choice(alphabet) for _ in range(n))

    return {
        "gitlab": "glpat-" + rand(20),
        "github-fine-grained": "github_pat_11" + rand(20) + "_" + rand(59),
        "npm": "npm_" + rand(36),
        "huggingface": "hf_" + rand(34),
        "databricks": "dapi" + rand(32, _HEX),
        "atlassian": "ATATT3xFfGF0" + rand(180),
        "linear": "lin_api_" + rand(40),
        "postman": "PMAK-" + rand(24, _HEX) + "-" + rand(34, _HEX),
        "digitalocean": "dop_v1_" + rand(64, _HEX),
        "vault": "hvs." + rand(24),
        "terraform-cloud": rand(14) + ".atlasv1." + rand(60),
        "grafana-sa": "glsa_" + rand(32) + "_" + rand(8, _HEX),
        "sentry": "sntrys_" + rand(60),
        "newrelic": "NRAK-" + rand(27, _UPPER),
        "planetscale": "pscale_tkn_" + rand(43),
        "supabase": "sbp_" + rand(40, _HEX),
        "pulumi": "pul-" + rand(40, _HEX),
        "groq": "gsk_" + rand(52),
        "replicate": "r8_" + rand(37),
        "age": "AGE-SECRET-KEY-1" + rand(58, _UPPER),
        "shopify-shared": "shpss_" + rand(32, _HEX),
        "fly": "FlyV1 fm2_" + rand(80),
        "azure-openai": rand(32, _HEX),
        "docker": "dckr_pat_" + rand(27),
        "cloudflare-origin": "v1.0-" + rand(24, _HEX) + "-" + rand(146, _HEX),
        "bitbucket": "ATBB" + rand(32),
        "notion": "secret_" + rand(43),
        "notion-new": "ntn_" + rand(46),
        "airtable": "pat" + rand(14) + "." + rand(64, _HEX),
        "okta": "00" + rand(40),
        "figma": "figd_" + rand(40),
        "asana": "2/"
        + rand(16, string.digits)
        + "/"
        + rand(16, string.digits)
        + ":"
        + rand(32, _HEX),
        "dropbox": "sl." + rand(135),
    }


def probe_b(seed: int = 2026) -> dict[str, str]:
    r = random.Random(seed)

    def rand(n: int, alphabet: str = _MIXED) -> str:
        return "".join(r.choice(alphabet) for _ in range(n))

    return {
        "netlify": "nfp_" + rand(40),
        "render": "rnd_" + rand(32),
        "resend": "re_" + rand(8) + "_" + rand(24),
        "neon": "napi_" + rand(64, _LOWER),
        "perplexity": "pplx-" + rand(48),
        "xai": "xai-" + rand(80),
        "fireworks": "fw_" + rand(24),
        "elevenlabs": "sk_" + rand(48, _HEX),
        "pinecone": "pcsk_" + rand(5) + "_" + rand(60),
        "langsmith": "lsv2_pt_" + rand(32, _HEX) + "_" + rand(10, _HEX),
        "tailscale": "tskey-auth-" + rand(17) + "-" + rand(33),
        "circleci": "CCIPAT_" + rand(22) + "_" + rand(40, _HEX),
        "buildkite": "bkua_" + rand(40, _HEX),
        "sourcegraph": "sgp_" + rand(16, _HEX) + "_" + rand(40, _HEX),
        "posthog": "phx_" + rand(47),
        "adafruit": "aio_" + rand(28),
        "contentful": "CFPAT-" + rand(43),
        "shippo": "shippo_live_" + rand(40, _HEX),
        "square": "EAAA" + rand(60),
        "square-oauth": "sq0atp-" + rand(22),
        "doppler": "dp.st.dev." + rand(43),
        "infisical": "st." + rand(36, _HEX) + "." + rand(32, _HEX),
        "mapbox": "sk.eyJ1Ijoi" + rand(40) + "." + rand(22),
        "heroku": "HRKU-" + _uuid(rand),
        "mailchimp": rand(32, _HEX) + "-us21",
        "cohere": rand(40),
        "etherscan": rand(34, _UPPER),
        "frameio": "fio-u-" + rand(64),
        "plaid": "access-production-" + _uuid(rand),
        "lob": "live_" + rand(32, _HEX),
    }


def leaks(cases: dict[str, str]) -> dict[str, int]:
    """Contexts in which some 8 characters of each value survive ``redact``."""
    out: dict[str, int] = {}
    for name, value in cases.items():
        core = value.split(" ")[-1]
        windows = [core[i : i + 8] for i in range(len(core) - 7)]
        for context in CONTEXTS:
            shown = redaction.redact(context.format(v=value))
            if any(window in shown for window in windows):
                out[name] = out.get(name, 0) + 1
    return out


def main() -> None:
    print(f"python {platform.python_version()}, {platform.machine()}")
    full = redaction._PASSES
    without = tuple(p for p in full if p.pattern is not GENERIC_TOKEN)
    assert len(without) == len(full) - 1
    print("| probe | kinds | contexts | leak without the generic rule | leak with it |")
    print("|---|---:|---:|---:|---:|")
    missed: dict[str, list[str]] = {}
    for label, cases in (("A (designed on)", probe_a()), ("B (written after)", probe_b())):
        redaction._PASSES = without
        before = leaks(cases)
        redaction._PASSES = full
        after = leaks(cases)
        missed[label] = sorted(after)
        total = len(cases) * len(CONTEXTS)
        print(
            f"| {label} | {len(cases)} | {total} | {len(before)} kinds, "
            f"{sum(before.values())} contexts | {len(after)} kinds, {sum(after.values())} contexts |"
        )
    for label, names in missed.items():
        print(f"still leaking, {label}: {', '.join(names) or 'none'}")


if __name__ == "__main__":
    main()
