"""Token counters: bpe-openai names, a real tokenizer.json, the TJ-06 fallback, pickling."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers

from palimpsest import ExactCounter
from palimpsest.errors import ConfigError
from palimpsest.trajectories import (
    BpeCounter,
    CompressionConfig,
    HuggingFaceCounter,
    count_tokens,
    make_counter,
)


class Broken:
    def count_text(self, text: str) -> int:
        raise ValueError("cannot encode")


def test_example_11_fallback() -> None:
    assert count_tokens(Broken(), "12345678") == 2
    assert count_tokens(Broken(), "") == 0


def test_empty_text_is_zero_without_calling() -> None:
    assert count_tokens(Broken(), "") == 0


def test_keyboard_interrupt_passes_through() -> None:
    class Interrupted:
        def count_text(self, text: str) -> int:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        count_tokens(Interrupted(), "x")


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_bpe_counts_match_the_library_counter(name: str) -> None:
    text = "def compress(trajectory):\n    return trajectory[:4]  # héllo wörld"
    assert BpeCounter(name).count_text(text) == ExactCounter(name).count_text(text)


def test_unknown_name_fails_at_start() -> None:
    with pytest.raises(ConfigError, match=r"unknown tokenizer 'o300k'.*o200k_base"):
        make_counter(CompressionConfig(tokenizer_name="o300k"))


def test_missing_tokenizer_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="tokenizer file not found"):
        make_counter(str(tmp_path / "tokenizer.json"))


def test_invalid_tokenizer_file(tmp_path: Path) -> None:
    path = tmp_path / "tokenizer.json"
    path.write_text("{}", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"not a valid Hugging Face tokenizer\.json"):
        HuggingFaceCounter(path)


@pytest.fixture
def tokenizer_json(tmp_path: Path) -> Path:
    """A real (tiny) word-level tokenizer.json saved by the tokenizers library."""
    vocab = {"[UNK]": 0, "the": 1, "agent": 2, "ran": 3, "tests": 4}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    return path


def test_hugging_face_tokenizer_counts(tokenizer_json: Path) -> None:
    counter = make_counter(CompressionConfig(tokenizer_name=str(tokenizer_json)))
    assert isinstance(counter, HuggingFaceCounter)
    assert counter.count_text("the agent ran the tests, twice") == 7  # 5 words + "," + unknown


def test_counters_pickle_by_name(tokenizer_json: Path) -> None:
    for counter in (BpeCounter("o200k_base"), HuggingFaceCounter(tokenizer_json)):
        clone = pickle.loads(pickle.dumps(counter))
        assert type(clone) is type(counter) and clone.name == counter.name
        assert clone.count_text("the agent ran") == counter.count_text("the agent ran")


def test_make_counter_is_cached_per_process() -> None:
    config = CompressionConfig()
    assert make_counter(config) is make_counter(config)
    assert make_counter(config) is make_counter("o200k_base")


def test_hub_id_gets_a_hint() -> None:
    with pytest.raises(ConfigError, match="hub ids are not downloaded"):
        make_counter("moonshotai/Kimi-K2-Thinking")
