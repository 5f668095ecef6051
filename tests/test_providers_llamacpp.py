"""The llama.cpp backend.

Unit tests run everywhere: a stand-in ``llama_cpp`` module (the model boundary) replaces
the real one, so request building, response conversion and error translation are checked
without compiling llama.cpp. The integration tests (``pytest -m llamacpp``) need the real
``llama-cpp-python`` and a GGUF file named by ``PALIMPSEST_TEST_GGUF``: they summarize a
real SWE-agent transcript with the local model, once in-process through ``LlamaCppModel``
and once through llama.cpp's own OpenAI-compatible server (``python -m llama_cpp.server``,
started here on 127.0.0.1) and the OpenAI backend.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from llamacpp_server import llama_server as start_llama_server
from palimpsest.errors import (
    ConfigError,
    ContextOverflowError,
    MissingDependencyError,
    ProviderError,
)
from palimpsest.providers import connect
from palimpsest.providers.llamacpp import (
    LlamaCppModel,
    chat_format_for,
    completion_from_dict,
    parse_llamacpp_overflow,
)

TRANSCRIPT = (
    Path(__file__).parent
    / "data"
    / "transcripts"
    / "swe-agent"
    / "marshmallow-1867__function_calling.traj"
)

# A reply as llama-cpp-python 0.3 returns it from create_chat_completion.
LLAMA_REPLY: dict[str, Any] = {
    "id": "chatcmpl-5f2b1d9e",
    "object": "chat.completion",
    "created": 1732190000,
    "model": "/models/qwen2.5-0.5b-instruct-q4_k_m.gguf",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "## Active Task\nFix rounding."},
            "logprobs": None,
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 412, "completion_tokens": 9, "total_tokens": 421},
}


class FakeLlama:
    """Stands in for ``llama_cpp.Llama``: records its arguments, answers from a queue."""

    instances: ClassVar[list[FakeLlama]] = []

    metadata: ClassVar[dict[str, str]] = {"tokenizer.chat_template": "{{ messages }}"}

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        self.chat_format = kwargs.get("chat_format")
        self.chat_handler = None
        self.requests: list[dict[str, Any]] = []
        self.replies: list[Any] = [LLAMA_REPLY]
        FakeLlama.instances.append(self)

    def create_chat_completion(self, **request: Any) -> dict[str, Any]:
        self.requests.append(request)
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(reply, BaseException):
            raise reply
        result: dict[str, Any] = reply
        return result


@pytest.fixture
def fake_llama_cpp(monkeypatch: pytest.MonkeyPatch) -> type[FakeLlama]:
    FakeLlama.instances = []
    module = types.ModuleType("llama_cpp")
    module.Llama = FakeLlama  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "llama_cpp", module)
    return FakeLlama


@pytest.fixture
def gguf_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny-model.Q4_K_M.gguf"
    path.write_bytes(b"GGUF")
    return path


class TestUnit:
    def test_missing_extra_names_the_install(
        self, monkeypatch: pytest.MonkeyPatch, gguf_file: Path
    ) -> None:
        monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes the import fail
        with pytest.raises(
            MissingDependencyError, match=r"llama-cpp-python>=0.3.*-e .\.\[llamacpp\]"
        ):
            LlamaCppModel(gguf_file)
        with pytest.raises(MissingDependencyError):
            connect(f"llamacpp:{gguf_file}")

    def test_missing_file_is_a_config_error(self, fake_llama_cpp: type[FakeLlama]) -> None:
        with pytest.raises(ConfigError, match="GGUF model file not found"):
            LlamaCppModel("/nowhere/model.gguf")

    def test_loads_lazily_with_settings(
        self, fake_llama_cpp: type[FakeLlama], gguf_file: Path
    ) -> None:
        model = LlamaCppModel(gguf_file, n_ctx=2048, n_threads=2, chat_format="chatml", seed=7)
        assert fake_llama_cpp.instances == []
        assert model.model == "tiny-model.Q4_K_M"
        model.complete([{"role": "user", "content": "hi"}])
        model.complete([{"role": "user", "content": "again"}])
        assert len(fake_llama_cpp.instances) == 1
        assert fake_llama_cpp.instances[0].kwargs == {
            "model_path": str(gguf_file),
            "n_ctx": 2048,
            "n_threads": 2,
            "chat_format": "chatml",
            "seed": 7,
            "verbose": False,
        }

    def test_connect_builds_the_backend(
        self, fake_llama_cpp: type[FakeLlama], gguf_file: Path
    ) -> None:
        model = connect(f"llamacpp:{gguf_file}", n_ctx=1024)
        assert isinstance(model, LlamaCppModel)
        assert model.n_ctx == 1024

    def test_request_and_completion(self, fake_llama_cpp: type[FakeLlama], gguf_file: Path) -> None:
        model = LlamaCppModel(gguf_file)
        tools = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
        messages = [
            {"role": "system", "content": "Be brief.", "_internal": 1},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Look:"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                ],
            },
        ]
        out = model.complete(
            messages, tools=tools, max_tokens=64, temperature=0.0, timeout=30, stream=False
        )
        sent = fake_llama_cpp.instances[0].requests[0]
        assert sent == {
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Look:\n[image]"},
            ],
            "tools": tools,
            "max_tokens": 64,
            "temperature": 0.0,
        }
        assert messages[0]["_internal"] == 1  # the caller's list is untouched
        assert out.content == "## Active Task\nFix rounding."
        assert out.finish_reason == "stop"
        assert (out.usage.prompt_tokens, out.usage.output_tokens) == (412, 9)
        assert out.raw is LLAMA_REPLY

    def test_tool_calls_are_converted(self) -> None:
        reply = {
            "choices": [
                {
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "open", "arguments": '{"path": "a.py"}'},
                            }
                        ],
                    },
                    "finish_reason": "tool_calls",
                }
            ],
        }
        out = completion_from_dict(reply, "m")
        assert out.tool_calls == [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "open", "arguments": '{"path": "a.py"}'},
            }
        ]
        assert out.content is None and out.model == "m"
        assert out.usage is None  # the reply carried no usage: unknown, not zero

    def test_context_overflow_is_translated(
        self, fake_llama_cpp: type[FakeLlama], gguf_file: Path
    ) -> None:
        model = LlamaCppModel(gguf_file, n_ctx=512)
        model.llm.replies = [ValueError("Requested tokens (812) exceed context window of 512")]
        with pytest.raises(ContextOverflowError) as err:
            model.complete([{"role": "user", "content": "long"}])
        assert (err.value.limit, err.value.requested) == (512, 812)
        assert (err.value.provider, err.value.reason) == ("llamacpp", "context_overflow")
        assert isinstance(err.value.__cause__, ValueError)

    def test_other_errors_become_provider_errors(
        self, fake_llama_cpp: type[FakeLlama], gguf_file: Path
    ) -> None:
        model = LlamaCppModel(gguf_file)
        model.llm.replies = [RuntimeError("llama_decode returned -3")]
        with pytest.raises(ProviderError, match="llama_decode returned -3") as err:
            model.complete([{"role": "user", "content": "x"}])
        assert not isinstance(err.value, ContextOverflowError)

    def test_acomplete_runs_in_a_thread(
        self, fake_llama_cpp: type[FakeLlama], gguf_file: Path
    ) -> None:
        model = LlamaCppModel(gguf_file)
        out = asyncio.run(model.acomplete([{"role": "user", "content": "hi"}], max_tokens=5))
        assert out.usage.total_tokens == 421
        assert fake_llama_cpp.instances[0].requests[0]["max_tokens"] == 5

    @pytest.mark.parametrize(
        ("metadata", "chat_format", "expected"),
        [
            ({"general.architecture": "gemma3"}, None, "gemma"),
            ({"general.architecture": "qwen2"}, None, "chatml"),
            ({"general.architecture": "llama"}, None, None),  # llama-cpp-python decides
            ({"general.architecture": "gemma3", "tokenizer.chat_template": "{{x}}"}, None, None),
            ({"general.architecture": "gemma3"}, "chatml", "chatml"),  # explicit choice wins
        ],
    )
    def test_chat_format_for_template_less_gguf(
        self,
        monkeypatch: pytest.MonkeyPatch,
        fake_llama_cpp: type[FakeLlama],
        gguf_file: Path,
        metadata: dict[str, str],
        chat_format: str | None,
        expected: str | None,
    ) -> None:
        monkeypatch.setattr(fake_llama_cpp, "metadata", metadata)
        model = LlamaCppModel(gguf_file, chat_format=chat_format)
        assert model.llm.chat_format == expected

    @pytest.mark.parametrize(
        ("text", "parsed"),
        [
            ("Requested tokens (5000) exceed context window of 4096", (5000, 4096)),
            ("requested tokens (10) exceed context window of 8", (10, 8)),
            ("the request exceeds the available context size", None),
        ],
    )
    def test_parse_overflow(self, text: str, parsed: tuple[int, int] | None) -> None:
        assert parse_llamacpp_overflow(text) == parsed


# -- integration: a real GGUF model ------------------------------------------------------


@pytest.fixture(scope="module")
def gguf_path() -> Path:
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed: pip install 'palimpsest[llamacpp]'")
    value = os.environ.get("PALIMPSEST_TEST_GGUF")
    if not value:
        pytest.skip(
            "set PALIMPSEST_TEST_GGUF to a chat GGUF file "
            "(e.g. Qwen2.5-0.5B-Instruct Q4_K_M; see docs/providers-local.md)"
        )
    path = Path(value).expanduser()
    if not path.is_file():
        pytest.skip(f"PALIMPSEST_TEST_GGUF points to a missing file: {path}")
    return path


def _summary_request(n_turns: int = 8) -> Any:
    from palimpsest.compaction.summary import render_summary_prompt, serialize_turns
    from palimpsest.messages import load_transcript
    from palimpsest.summarizers import SummaryRequest

    messages = load_transcript(TRANSCRIPT)
    turns = messages[1 : 1 + n_turns]
    # Small local models on a CPU are slow: ~6K characters of turns (~1.5K tokens) and a
    # 200-token target keep each run within a minute or two on 2 cores.
    prompt = render_summary_prompt(serialize_turns(turns, limit=6_000), budget=200)
    return SummaryRequest(
        turns=turns, previous_summary=None, focus_topic=None, budget_tokens=200, prompt=prompt
    )


def _check_summary(body: str) -> None:
    assert body.strip()
    assert body.count("## ") >= 2, body


@pytest.mark.llamacpp
@pytest.mark.slow
def test_real_model_summarizes_a_transcript(gguf_path: Path) -> None:
    from palimpsest.summarizers import LLMSummarizer

    model = LlamaCppModel(gguf_path, n_ctx=4096, n_threads=2, seed=1)
    summarizer = LLMSummarizer(model)
    body = summarizer.summarize(_summary_request())
    _check_summary(body)
    assert summarizer.last_usage is not None and summarizer.last_usage.prompt_tokens > 500


@pytest.mark.llamacpp
@pytest.mark.slow
def test_real_model_reports_overflow(gguf_path: Path) -> None:
    model = LlamaCppModel(gguf_path, n_ctx=256, n_threads=2)
    with pytest.raises(ContextOverflowError) as err:
        model.complete([{"role": "user", "content": "lorem ipsum dolor " * 400}])
    assert err.value.limit == 256
    assert err.value.requested is not None and err.value.requested > 256


@pytest.fixture(scope="module")
def llama_server(gguf_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if (
        importlib.util.find_spec("llama_cpp.server") is None
        or importlib.util.find_spec("uvicorn") is None
    ):
        pytest.skip("llama.cpp's server needs: pip install 'llama-cpp-python[server]'")
    import llama_cpp

    vocab = llama_cpp.Llama(model_path=str(gguf_path), vocab_only=True, verbose=False)
    forced = chat_format_for(vocab.metadata)
    # the server would fall back to llama-2 like the library does
    extra = ["--chat_format", forced] if forced is not None else []
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    with start_llama_server(gguf_path, log, extra) as base:
        yield base


@pytest.mark.llamacpp
@pytest.mark.slow
def test_llama_server_through_openai_backend(llama_server: str) -> None:
    from palimpsest.summarizers import LLMSummarizer

    model = connect("openai-compatible:local", base_url=llama_server, timeout=600)
    summarizer = LLMSummarizer(model)
    body = summarizer.summarize(_summary_request())
    _check_summary(body)
    assert summarizer.last_usage is not None and summarizer.last_usage.prompt_tokens > 500
