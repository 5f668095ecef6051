"""Error classification (TK-25..TK-32) on a corpus of real provider error bodies.

Every corpus entry is text a provider actually returned, copied from the public thread or
page named in its ``source``; the HTTP status is the one that thread reported.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.errors import (
    AuthError,
    ContextOverflowError,
    OutputLimitError,
    ProviderError,
    QuotaError,
    RateLimitError,
)
from palimpsest.providers.overflow import (
    MAX_TOKENS_MARGIN,
    classify_error,
    exception_for,
    parse_context_limit,
)


def body(obj: Any) -> str:
    return json.dumps(obj)


# (source, status, text, reason, expected fields)
CORPUS: list[tuple[str, int | None, str, str, dict[str, Any]]] = [
    # --- OpenAI / Azure / DeepSeek style: "maximum context length is N tokens" -------------
    (
        "github.com/mckaywrigley/repo-chat/issues/15 (OpenAI)",
        400,
        "This model's maximum context length is 4097 tokens. However, your messages resulted in 13393 tokens. Please reduce the length of the messages.",
        "context_overflow",
        {"limit": 4097, "requested": 13393},
    ),
    (
        "github.com/assafelovic/gpt-researcher/issues/680 (Azure GPT-4o)",
        400,
        body(
            {
                "error": {
                    "message": "This model's maximum context length is 128000 tokens. However, your messages resulted in 192041 tokens. Please reduce the length of the messages.",
                    "type": "invalid_request_error",
                    "param": "messages",
                    "code": "context_length_exceeded",
                }
            }
        ),
        "context_overflow",
        {"limit": 128000, "requested": 192041},
    ),
    (
        "github.com/Azure/azure-sdk-for-python/issues/40986 (Azure gpt-4.1, 1M-token cap)",
        400,
        "(context_length_exceeded) This model's maximum context length is 128000 tokens. However, you requested 1124171 tokens (124171 in the messages, 1000000 in the completion). Please reduce the length of the messages or completion.",
        "max_tokens_too_large",
        {"limit": 128000, "input_tokens": 124171, "suggested_max_tokens": 128000 - 124171 - 256},
    ),
    (
        "github.com/Azure/azure-sdk-for-net/issues/41892 (Azure gpt-4-32k)",
        400,
        "This model's maximum context length is 32768 tokens. However, you requested 35969 tokens (9969 in the \n    messages, 26000 in the completion). Please reduce the length of the messages or completion.",
        "max_tokens_too_large",
        {"limit": 32768, "input_tokens": 9969, "suggested_max_tokens": 22543},
    ),
    (
        "github.com/bytedance/deer-flow/issues/66 (DeepSeek)",
        400,
        body(
            {
                "error": {
                    "message": "This model's maximum context length is 65536 tokens. However, you requested 87731 tokens (87731 in the messages, 0 in the completion). Please reduce the length of the messages or completion.",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "invalid_request_error",
                }
            }
        ),
        "context_overflow",
        {"limit": 65536, "requested": 87731},
    ),
    (
        "github.com/evalstate/fast-agent/issues/621 (DeepSeek, 8192-token cap)",
        400,
        "This model's maximum context length is 131072 tokens. However, you requested 131134 tokens (122942 in the messages, 8192 in the completion). Please reduce the length of the messages or completion.",
        "max_tokens_too_large",
        {"limit": 131072, "input_tokens": 122942, "suggested_max_tokens": 7874},
    ),
    (
        "github.com/FoundationAgents/OpenManus/issues/62 (messages + functions + completion)",
        400,
        "This model's maximum context length is 8192 tokens. However, you requested 8213 tokens (6683 in the messages, 730 in the functions, and 800 in the completion). Please reduce the length of the messages, functions, or completion.",
        "max_tokens_too_large",
        {"limit": 8192, "input_tokens": 7413, "suggested_max_tokens": 523},
    ),
    (
        "github.com/ai-christianson/RA.Aid/issues/41 (OpenRouter -> DeepInfra, wrapped in a 502)",
        502,
        'ConnectionError: {"object": "error", "message": "This model\'s maximum context length is 16000 tokens. However, you requested 17165 tokens (13069 in the messages, 4096 in the completion). Please reduce the length of the messages or completion.", "type": "BadRequestError", "param": null, "code": 400}',
        "max_tokens_too_large",
        {"limit": 16000, "input_tokens": 13069, "suggested_max_tokens": 2675},
    ),
    # --- vLLM -------------------------------------------------------------------------------
    (
        "github.com/vllm-project/vllm/issues/20409",
        400,
        "ValueError: This model's maximum context length is 16384 tokens. However, you requested 122946 tokens (112946 in the messages, 10000 in the completion). Please reduce the length of the messages or completion.",
        "context_overflow",
        {"limit": 16384, "requested": 122946},
    ),
    (
        "github.com/vllm-project/vllm/issues/42474 (VLLMValidationError)",
        400,
        "This model's maximum context length is 128000 tokens. However, you requested 65535 output tokens and your prompt contains at least 62466 input tokens, for a total of at least 128001 tokens.",
        "max_tokens_too_large",
        {"limit": 128000, "input_tokens": 62466, "suggested_max_tokens": 65278},
    ),
    (
        "github.com/opendatalab/MinerU/issues/4868 (vLLM 0.11.2)",
        400,
        "ValueError: 'max_tokens' or 'max_completion_tokens' is too large: 8192. This model's maximum context length is 8192 tokens and your request has 1210 input tokens (8192 > 8192 - 1210).",
        "max_tokens_too_large",
        {"limit": 8192, "input_tokens": 1210, "suggested_max_tokens": 6726},
    ),
    # --- Anthropic / Bedrock ----------------------------------------------------------------
    (
        "github.com/anthropics/claude-code/issues/12186",
        400,
        body(
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "prompt is too long: 208310 tokens > 200000 maximum",
                },
                "request_id": "req_011CVQe1dLrGNMJyE1ghG1av",
            }
        ),
        "context_overflow",
        {"limit": 200000, "requested": 208310},
    ),
    (
        "github.com/daisuke-awaji/moca/issues/254 (Bedrock ValidationException)",
        400,
        "ValidationException: The model returned the following errors: prompt is too long: 200049 tokens > 200000 maximum",
        "context_overflow",
        {"limit": 200000, "requested": 200049},
    ),
    (
        "github.com/OpenHands/OpenHands/issues/11090",
        400,
        "AnthropicError: max_tokens: 1000000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-20250514",
        "max_tokens_too_large",
        {"suggested_max_tokens": 64000, "limit": None},
    ),
    (
        "github.com/anthropics/claude-code/issues/228",
        400,
        body(
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "input length and `max_tokens` exceed context limit: 184915 + 20000 > 204648, decrease input length or `max_tokens` and try again",
                },
            }
        ),
        "max_tokens_too_large",
        {"limit": 204648, "input_tokens": 184915, "suggested_max_tokens": 19477},
    ),
    (
        "github.com/continuedev/continue/issues/6080 (input nearly fills the window: floor of 1)",
        400,
        "input length and `max_tokens` exceed context limit: 199759 + 8192 > 200000, decrease input length or `max_tokens` and try again",
        "max_tokens_too_large",
        {"limit": 200000, "input_tokens": 199759, "suggested_max_tokens": 1},
    ),
    # --- llama.cpp / llama-cpp-python / Ollama ----------------------------------------------
    (
        "github.com/oobabooga/textgen/issues/7257 (llama-server exceed_context_size_error)",
        400,
        body(
            {
                "error": {
                    "code": 400,
                    "message": "the request exceeds the available context size. try increasing the context size or enable context shift",
                    "type": "exceed_context_size_error",
                    "n_prompt_tokens": 14429,
                    "n_ctx": 8192,
                }
            }
        ),
        "context_overflow",
        {"limit": 8192, "requested": 14429},
    ),
    (
        "github.com/ggml-org/llama.cpp/pull/15780 (n_ctx 256 is below 1,024: not a window)",
        500,
        body(
            {
                "error": {
                    "code": 500,
                    "message": "the request exceeds the available context size. try increasing the context size or enable context shift",
                    "type": "exceed_context_size_error",
                    "n_prompt_tokens": 1407,
                    "n_ctx": 256,
                }
            }
        ),
        "context_overflow",
        {"limit": None, "requested": 1407},
    ),
    (
        "github.com/ggml-org/llama.cpp/issues/19774 (400 variant)",
        400,
        "request (4390 tokens) exceeds the available context size (4096 tokens), try increasing it",
        "context_overflow",
        {"limit": 4096, "requested": 4390},
    ),
    (
        "github.com/ggml-org/llama.cpp/issues/19774 (500 variant)",
        500,
        body(
            {
                "error": {
                    "code": 500,
                    "message": "Context size has been exceeded.",
                    "type": "server_error",
                }
            }
        ),
        "context_overflow",
        {"limit": None},
    ),
    (
        "github.com/fedora-copr/logdetective-website/pull/193 (llama-cpp-python server)",
        500,
        "Exception: Requested tokens (2285) exceed context window of 2048",
        "context_overflow",
        {"limit": 2048, "requested": 2285},
    ),
    (
        "github.com/nano-step/nano-brain/issues/208 (Ollama)",
        400,
        body({"error": "the input length exceeds the context length"}),
        "context_overflow",
        {"limit": None},
    ),
    # --- Gemini -----------------------------------------------------------------------------
    (
        "github.com/google-gemini/gemini-cli/issues/4231",
        400,
        body(
            {
                "error": {
                    "code": 400,
                    "message": "The input token count (3475108) exceeds the maximum number of tokens allowed (1048576).",
                    "status": "INVALID_ARGUMENT",
                }
            }
        ),
        "context_overflow",
        {"limit": 1048576, "requested": 3475108},
    ),
    (
        "github.com/google-gemini/gemini-cli/issues/12098",
        400,
        "The input token count (314175) exceeds the maximum number of tokens allowed (131072).",
        "context_overflow",
        {"limit": 131072, "requested": 314175},
    ),
    # --- OpenRouter -------------------------------------------------------------------------
    (
        "github.com/agno-agi/agno/issues/3980",
        400,
        'This endpoint\'s maximum context length is 200000 tokens. However, you requested about 5028244 tokens (4945291 of text input, 2953 of tool input, 80000 in the output). Please reduce the length of either one, or use the "middle-out" transform to compress your prompt automatically.',
        "context_overflow",
        {"limit": 200000, "requested": 5028244},
    ),
    (
        "github.com/refly-ai/refly/issues/1177",
        400,
        '400 This endpoint\'s maximum context length is 32768 tokens. However, you requested about 42832 tokens (42832 of text input). Please reduce the length of either one, or use the "middle-out" transform to compress your prompt automatically.',
        "context_overflow",
        {"limit": 32768, "requested": 42832},
    ),
    (
        "github.com/earendil-works/pi/issues/6378 (output cap equal to the window)",
        400,
        body(
            {
                "message": "This endpoint's maximum context length is 262000 tokens. However, you requested about 263390 tokens (658 of text input, 732 of tool input, 262000 in the output). Please reduce the length of either one, or use the context-compression plugin to compress your prompt automatically.",
                "code": 400,
                "metadata": {"provider_name": None},
            }
        ),
        "max_tokens_too_large",
        {"limit": 262000, "input_tokens": 1390, "suggested_max_tokens": 260354},
    ),
    # --- output cap alone too large ---------------------------------------------------------
    (
        "github.com/tailcallhq/forgecode/issues/1185 (OpenAI)",
        400,
        body(
            {
                "error": {
                    "message": "max_tokens is too large: 20480. This model supports at most 16384 completion tokens, whereas you provided 20480.",
                    "type": "invalid_request_error",
                    "param": "max_tokens",
                    "code": "invalid_value",
                }
            }
        ),
        "max_tokens_too_large",
        {"suggested_max_tokens": 16384, "limit": None},
    ),
    (
        "github.com/we0-dev/we0/issues/56 (DeepSeek)",
        400,
        "Error: Invalid max_tokens value, the valid range of max_tokens is [1, 8192]",
        "max_tokens_too_large",
        {"suggested_max_tokens": 8192},
    ),
    (
        "github.com/yiliqi78/TOKENICODE/issues/3 (Volcengine)",
        400,
        body(
            {
                "error": {
                    "code": "InvalidParameter",
                    "message": "The parameter max_tokens specified in the request is not valid: integer above maximum value, expected a value <= 32768, but got 64000 instead. Request id: 0217724325966514087c9e55f8b322b82cd17f72450d06e16ef7b",
                    "param": "max_tokens",
                    "type": "BadRequest",
                }
            }
        ),
        "max_tokens_too_large",
        {"suggested_max_tokens": 32768},
    ),
    (
        "github.com/open-webui/open-webui/issues/10507 (Alibaba DashScope)",
        400,
        "400: <400> InternalError.Algo.InvalidParameter: Range of max_tokens should be [1, 8192]",
        "max_tokens_too_large",
        {"suggested_max_tokens": 8192},
    ),
    # --- 413 --------------------------------------------------------------------------------
    (
        "github.com/anthropics/claude-code/issues/14567",
        413,
        body(
            {"error": {"type": "request_too_large", "message": "Request exceeds the maximum size"}}
        ),
        "payload_too_large",
        {"limit": None},
    ),
    (
        "github.com/vm0-ai/vm0/issues/34178 (openresty page from api.deepseek.com)",
        413,
        "<html><head><title>413 Request Entity Too Large</title></head><body><center><h1>413 Request Entity Too Large</h1></center><hr><center>openresty</center></body></html>",
        "payload_too_large",
        {},
    ),
    (
        "same openresty page with the status lost by a proxy (TK-28 text rule)",
        400,
        "Error code: 413 - <html><head><title>413 Request Entity Too Large</title></head></html>",
        "payload_too_large",
        {},
    ),
    # --- 429 / quota / auth -----------------------------------------------------------------
    (
        "github.com/continuedev/continue/issues/10502 (OpenAI TPM)",
        429,
        "429 Rate limit reached for gpt-4.1 in organization org-vyUrKHsIdLcZGKR3zqCqllrS on tokens per min (TPM): Limit 30000, Used 28039, Requested 3906. Please try again in 3.89s. Visit https://platform.openai.com/account/rate-limits to learn more.",
        "rate_limit",
        {},
    ),
    (
        "github.com/DrShushen/climb/issues/13 (429 'Request too large' is a rate limit, not overflow)",
        429,
        body(
            {
                "error": {
                    "message": "Request too large for gpt-4o in organization org-VDAWofJASuLH0vVz8o9tiQZr on tokens per min (TPM): Limit 30000, Requested 30601. The input or output tokens must be reduced in order to run successfully. Visit https://platform.openai.com/account/rate-limits to learn more.",
                    "type": "tokens",
                    "param": None,
                    "code": "rate_limit_exceeded",
                }
            }
        ),
        "rate_limit",
        {},
    ),
    (
        "github.com/Trae-AI/TRAE/issues/625 (Anthropic; mentions prompt length, status decides)",
        429,
        body(
            {
                "type": "error",
                "error": {
                    "type": "rate_limit_error",
                    "message": "This request would exceed the rate limit for your organization of 30,000 input tokens per minute. For details, refer to: https://docs.anthropic.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later.",
                },
            }
        ),
        "rate_limit",
        {},
    ),
    (
        "github.com/Pythagora-io/gpt-pilot/issues/340 (OpenAI insufficient_quota on a 429)",
        429,
        body(
            {
                "error": {
                    "message": "You exceeded your current quota, please check your plan and billing details.",
                    "type": "insufficient_quota",
                    "param": None,
                    "code": "insufficient_quota",
                }
            }
        ),
        "quota",
        {},
    ),
    (
        "github.com/anthropics/claude-code/issues/4684 (Anthropic credit balance on a 400)",
        400,
        body(
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.",
                },
            }
        ),
        "quota",
        {},
    ),
    (
        "github.com/Gitlawb/openclaude/issues/1125 (OpenRouter 402)",
        402,
        body(
            {
                "error": {
                    "message": "This request requires more credits, or fewer max_tokens. You requested up to 32000 tokens, but can only afford 27342. To increase, visit https://openrouter.ai/settings/credits and upgrade to a paid account",
                    "code": 402,
                    "metadata": {"provider_name": None},
                }
            }
        ),
        "quota",
        {},
    ),
    (
        "github.com/chatanywhere/GPT_API_free/issues/62 (OpenAI 401)",
        401,
        body(
            {
                "error": {
                    "message": "Incorrect API key provided: sk-VKMIs***************************************wjh3. You can find your API key at https://platform.openai.com/account/api-keys.",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "invalid_api_key",
                }
            }
        ),
        "auth",
        {},
    ),
    (
        "github.com/anthropics/claude-code/issues/64667 (Anthropic 401)",
        401,
        body(
            {
                "type": "error",
                "error": {
                    "type": "authentication_error",
                    "message": "Invalid authentication credentials",
                },
            }
        ),
        "auth",
        {},
    ),
    # --- tool pairing and server errors -----------------------------------------------------
    (
        "github.com/anthropics/claude-code/issues/3512",
        400,
        body(
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "messages.5: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01SWBkC2GPGhoSfEqTZ6y91b. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
                },
            }
        ),
        "tool_message_malformed",
        {},
    ),
    (
        "github.com/FoundationAgents/OpenManus/issues/744 (DeepSeek / OpenAI)",
        400,
        body(
            {
                "error": {
                    "message": "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "invalid_request_error",
                }
            }
        ),
        "tool_message_malformed",
        {},
    ),
    (
        "github.com/anthropics/claude-code/issues/3633 (529 overloaded)",
        529,
        body({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        "server_error",
        {},
    ),
    (
        "github.com/anthropics/claude-code/issues/10612 (one image over 5 MB: not a window problem)",
        400,
        body(
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "messages.0.content.2.image.source.base64: image exceeds 5 MB maximum: 15908784 bytes > 5242880 bytes",
                },
                "request_id": "req_011CUcqvXBc6AskCDuW4mM1q",
            }
        ),
        "image_too_large",
        {"limit": None, "should_compress": False},
    ),
    (
        "github.com/anthropics/claude-code/issues/4778",
        400,
        body(
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "messages.7.content.2.image.source.base64.data: At least one of the image dimensions exceed max allowed size: 8000 pixels",
                },
            }
        ),
        "image_too_large",
        {},
    ),
    (
        "github.com/Taewan-P/gpt_mobile/issues/284 (OpenRouter credit text without its 402)",
        None,
        "Error: This request requires more credits, or fewer max_tokens. You requested up to 16384 tokens, but can only afford 3919. To increase, visit https://openrouter.ai/settings/credits and upgrade to a paid account",
        "quota",
        {},
    ),
    # --- the spec's acceptance examples 8-11 -------------------------------------------------
    (
        "spec tokens-usage-caching.md, acceptance example 8",
        400,
        "This model's maximum context length is 131072 tokens. However, you requested 140000 tokens (139000 in the messages, 1000 in the completion)",
        "context_overflow",
        {"limit": 131072, "requested": 140000},
    ),
    (
        "spec tokens-usage-caching.md, acceptance example 9",
        400,
        "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (1000 in the messages, 8000 in the completion)",
        "max_tokens_too_large",
        {"limit": 8192, "input_tokens": 1000, "suggested_max_tokens": 6936},
    ),
    (
        "spec tokens-usage-caching.md, acceptance example 10",
        413,
        "Request Entity Too Large",
        "payload_too_large",
        {},
    ),
    (
        "spec tokens-usage-caching.md, acceptance example 11",
        400,
        "prompt is too long: 210000 tokens > 200000 maximum",
        "context_overflow",
        {"limit": 200000},
    ),
]

EXCEPTION_FOR_REASON = {
    "context_overflow": ContextOverflowError,
    "payload_too_large": ContextOverflowError,
    "max_tokens_too_large": OutputLimitError,
    "rate_limit": RateLimitError,
    "quota": QuotaError,
    "auth": AuthError,
    "tool_message_malformed": ProviderError,
    "image_too_large": ProviderError,
    "server_error": ProviderError,
}


def test_corpus_is_large_and_sourced() -> None:
    real = [entry for entry in CORPUS if not entry[0].startswith(("spec ", "same "))]
    assert len(real) >= 20
    assert all(entry[0] for entry in CORPUS)


@pytest.mark.parametrize(
    ("source", "status", "text", "reason", "fields"), CORPUS, ids=[c[0] for c in CORPUS]
)
def test_corpus_entry(
    source: str, status: int | None, text: str, reason: str, fields: dict[str, Any]
) -> None:
    result = classify_error(status, text)
    assert result.reason == reason, source
    for name, value in fields.items():
        assert getattr(result, name) == value, (source, name)
    err = exception_for(result, text, provider="p", model="m", body=text)
    assert type(err) is EXCEPTION_FOR_REASON[reason]
    assert err.reason == reason and err.status_code == status
    if isinstance(err, ContextOverflowError):
        assert err.limit == result.limit
        assert err.payload_too_large == (reason == "payload_too_large")
    if isinstance(err, OutputLimitError):
        assert err.suggested_max_tokens == result.suggested_max_tokens
        assert err.suggested_max_tokens is not None and err.suggested_max_tokens >= 1


def test_example_8_compresses_and_reports_the_window() -> None:
    result = classify_error(
        400,
        "This model's maximum context length is 131072 tokens. However, you requested 140000 tokens (139000 in the messages, 1000 in the completion)",
    )
    assert result.should_compress and result.limit == 131072


def test_example_9_never_compresses() -> None:
    result = classify_error(
        400,
        "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (1000 in the messages, 8000 in the completion)",
    )
    assert not result.should_compress
    assert result.suggested_max_tokens == 8192 - 1000 - MAX_TOKENS_MARGIN == 6936


def test_example_10_413_compresses() -> None:
    result = classify_error(413, "Request Entity Too Large")
    assert result.reason == "payload_too_large" and result.should_compress
    err = exception_for(result, "Request Entity Too Large")
    assert isinstance(err, ContextOverflowError) and err.payload_too_large


def test_stated_output_maximum_caps_the_suggestion() -> None:
    # Both rules apply: the window arithmetic allows more than the model may ever write.
    text = "max_tokens is too large: 20000. This model supports at most 4096 completion tokens. This model's maximum context length is 128000 tokens. However, you requested 21000 tokens (1000 in the messages, 20000 in the completion)."
    assert classify_error(400, text).suggested_max_tokens == 4096


def test_total_only_error_uses_the_callers_cap() -> None:
    text = "max_tokens too large: This model's maximum context length is 8192 tokens. However, you requested 9000 tokens."
    result = classify_error(400, text, max_tokens=8000)
    assert result.reason == "max_tokens_too_large"
    assert (result.input_tokens, result.suggested_max_tokens) == (1000, 6936)


def test_bare_max_tokens_mention_is_not_overflow() -> None:
    assert classify_error(400, "Unsupported parameter: 'max_tokens'").reason == "bad_request"


def test_server_disconnect_rule() -> None:
    text = "RemoteProtocolError: Server disconnected without sending a response."
    small = classify_error(None, text, kind="connection", approx_tokens=10, threshold_tokens=100)
    big = classify_error(None, text, kind="connection", approx_tokens=100, threshold_tokens=100)
    assert small.reason == "connection" and not small.should_compress
    assert big.reason == "context_overflow" and big.should_compress
    tls = classify_error(
        None,
        "SSL: peer closed connection in TLS alert",
        kind="connection",
        approx_tokens=10**6,
        threshold_tokens=1,
    )
    assert tls.reason == "connection" and not tls.should_compress


def test_generic_400_on_a_window_sized_request() -> None:
    plain = classify_error(400, "Bad Request")
    big = classify_error(400, "Bad Request", approx_tokens=200_000, current_context_length=128_000)
    assert plain.reason == "bad_request"
    assert big.reason == "context_overflow"


def test_statuses_decide_before_text() -> None:
    overflow_text = "prompt is too long: 210000 tokens > 200000 maximum"
    assert classify_error(401, overflow_text).reason == "auth"
    assert classify_error(429, overflow_text).reason == "rate_limit"
    assert classify_error(413, "anything").reason == "payload_too_large"
    assert classify_error(None, "timed out", kind="timeout").reason == "timeout"


def test_flags() -> None:
    assert classify_error(401, "x").should_rotate_credential
    assert classify_error(429, "x").retryable
    assert classify_error(
        400, "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"
    ).should_sanitize_tools
    assert not classify_error(400, "prompt is too long: 2 tokens > 1 maximum").should_fallback


# --- parse_context_limit --------------------------------------------------------------------

PHRASES = [
    "This model's maximum context length is {n} tokens",
    "the model has a context length of {n}",
    "exceeds the context window of {n} tokens",
    "max_model_len={n}",
    "the maximum number of tokens allowed ({n})",
    "a limit of {n} tokens",
    "prompt is too long: 999999999 tokens > {n} maximum",
]


@given(st.integers(min_value=1024, max_value=10_000_000), st.sampled_from(PHRASES), st.booleans())
def test_parse_limit_round_trips(n: int, phrase: str, commas: bool) -> None:
    number = f"{n:,}" if commas else str(n)
    assert parse_context_limit(phrase.format(n=number)) == n


@given(st.integers(min_value=0, max_value=1023), st.sampled_from(PHRASES[:-1]))
def test_parse_limit_ignores_small_numbers(n: int, phrase: str) -> None:
    assert parse_context_limit(phrase.format(n=n)) is None


def test_parse_limit_examples() -> None:
    assert parse_context_limit("maximum context length is 200,000 tokens") == 200000
    assert parse_context_limit("nothing here") is None
    assert parse_context_limit('{"n_ctx": 32768}') == 32768


@given(st.text(max_size=300), st.sampled_from([None, 400, 413, 429, 500]))
def test_classify_never_raises(text: str, status: int | None) -> None:
    result = classify_error(status, text)
    assert isinstance(result.reason, str)
    if result.suggested_max_tokens is not None:
        assert result.suggested_max_tokens >= 1
