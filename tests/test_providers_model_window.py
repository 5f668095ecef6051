"""Reading a window out of OpenAI-compatible model-list entries."""

from __future__ import annotations

from palimpsest.providers.model_window import window_from_entries, window_of_entry


def test_each_servers_field_is_read() -> None:
    assert window_of_entry({"id": "m", "max_model_len": 32_768}) == 32_768  # vLLM
    assert window_of_entry({"id": "m", "context_length": 200_000}) == 200_000  # OpenRouter
    assert window_of_entry({"id": "m", "context_window": 131_072}) == 131_072  # Groq
    assert window_of_entry({"id": "m", "top_provider": {"context_length": 8_192}}) == 8_192
    assert window_of_entry({"id": "m", "meta": {"n_ctx_train": 32_768}}) is None  # llama.cpp
    assert window_of_entry({"id": "m", "context_length": 0}) is None
    assert window_of_entry({"id": "m", "context_length": True}) is None


def test_the_entry_is_found_by_id_or_is_the_only_one() -> None:
    entries = [{"id": "a", "max_model_len": 1_000}, {"id": "b", "max_model_len": 2_000}]
    assert window_from_entries(entries, "b") == 2_000
    assert window_from_entries(entries, "c") is None
    assert window_from_entries([{"id": "/models/q.gguf", "max_model_len": 4_096}], "q") == 4_096
