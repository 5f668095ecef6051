"""connect(): model spec strings, keys from settings or env, clear errors for each mistake."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from palimpsest.errors import ConfigError, MissingDependencyError, PluginNotFoundError, UserError
from palimpsest.providers import ChatModel, connect, parse_model_spec
from palimpsest.providers.anthropic_messages import AnthropicChatModel
from palimpsest.providers.connect import OPENROUTER_BASE_URL
from palimpsest.providers.openai_chat import OpenAIChatModel
from providers_fixtures import ReplayServer, running_server


@pytest.fixture
def replay() -> Iterator[ReplayServer]:
    yield from running_server()


def test_parse_model_spec() -> None:
    assert parse_model_spec("OpenAI:gpt-4o-mini") == ("openai", "gpt-4o-mini")
    assert parse_model_spec("openrouter:anthropic/claude-3.5-sonnet:beta") == (
        "openrouter",
        "anthropic/claude-3.5-sonnet:beta",
    )
    with pytest.raises(ConfigError, match="<provider>:<model>"):
        parse_model_spec("gpt-4o")


def test_unknown_prefix_lists_the_known_ones() -> None:
    with pytest.raises(PluginNotFoundError) as info:
        connect("mistral:large")
    assert "openai" in str(info.value) and "anthropic" in str(info.value)
    assert isinstance(info.value, UserError)


def test_openai_key_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="OPENAI_API_KEY") as info:
        connect("openai:gpt-4o-mini")
    assert info.value.key == "OPENAI_API_KEY"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    model = connect("openai:gpt-4o-mini", timeout=12.5)
    assert isinstance(model, OpenAIChatModel) and isinstance(model, ChatModel)
    assert (model.model, model.provider, model.timeout) == ("gpt-4o-mini", "openai", 12.5)
    assert model.client.api_key == "sk-env"


def test_openrouter(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="OPENROUTER_API_KEY"):
        connect("openrouter:anthropic/claude-sonnet-4")
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or")
    model = connect("openrouter:anthropic/claude-sonnet-4")
    assert isinstance(model, OpenAIChatModel)
    assert model.base_url == OPENROUTER_BASE_URL and model.provider == "openrouter"
    assert model.prompt_caching is True
    assert connect("openrouter:openai/gpt-4o").prompt_caching is False  # type: ignore[attr-defined]


def test_openai_compatible_needs_base_url_not_key() -> None:
    with pytest.raises(ConfigError) as info:
        connect("openai-compatible:qwen2.5")
    assert info.value.key == "base_url"
    model = connect("openai-compatible:qwen2.5", base_url="http://127.0.0.1:8080/v1")
    assert isinstance(model, OpenAIChatModel) and model.provider == "openai-compatible"


def test_anthropic(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        connect("anthropic:claude-sonnet-4-6")
    model = connect("anthropic:claude-sonnet-4-6", api_key="sk-ant", max_retries=0)
    assert isinstance(model, AnthropicChatModel) and model.max_retries == 0


def test_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # makes `import openai` fail
    with pytest.raises(MissingDependencyError) as info:
        connect("openai:gpt-4o", api_key="sk")
    assert info.value.extra == "openai"
    assert "pip install 'openai>=1.40'" in str(info.value)
    assert "palimpsest[" not in str(info.value)  # that PyPI name is another project
    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(MissingDependencyError, match=r"anthropic>=0.40.*-e .\.\[anthropic\]"):
        connect("anthropic:claude-sonnet-4-6", api_key="sk")


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is not None, reason="llama_cpp installed")
def test_llamacpp_without_the_extra(tmp_path: Path) -> None:
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF")
    with pytest.raises(MissingDependencyError, match=r"llama-cpp-python>=0.3.*-e .\.\[llamacpp\]"):
        connect(f"llamacpp:{gguf}")


def test_connected_model_talks_to_a_server(replay: ReplayServer) -> None:
    replay.file("openai/chat_completion_tool_call.json")
    model = connect("openai-compatible:local-model", base_url=f"{replay.url}/v1", max_retries=0)
    done = model.complete([{"role": "user", "content": "weather?"}], max_tokens=64)
    assert done.tool_calls[0]["function"]["name"] == "get_weather"
    assert replay.last.body["model"] == "local-model"
    assert replay.last.body["max_tokens"] == 64
