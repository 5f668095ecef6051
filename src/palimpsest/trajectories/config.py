"""``CompressionConfig``: every knob of the offline trajectory compressor, and its YAML form.

One frozen value describes a run (spec TJ-03, TJ-04): the budget, which turns are protected,
how summaries are written and how the batch is processed. It is a plain dataclass so it
pickles into process-pool and Ray workers unchanged; each worker rebuilds its token counter
and summarizer from it. :meth:`CompressionConfig.from_yaml` reads the sectioned YAML layout
of TJ-05; an unknown section or key is a :class:`~palimpsest.errors.ConfigError` naming the
dotted key and the file, so a typo never silently falls back to a default.

Where the reference design names hosted services our defaults stay offline: counting uses
the ``o200k_base`` BPE vocabulary shipped with ``bpe-openai`` and, with no
``summarization_model``, summaries come from the deterministic extractive summarizer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from ..config import not_utf8_error
from ..errors import ConfigError

__all__ = [
    "DEFAULT_API_KEY_ENV",
    "DEFAULT_BASE_URL",
    "DEFAULT_METRICS_FILE",
    "DEFAULT_OUTPUT_SUFFIX",
    "DEFAULT_SUMMARY_NOTICE",
    "DEFAULT_SUMMARY_TARGET_TOKENS",
    "DEFAULT_TARGET_MAX_TOKENS",
    "DEFAULT_TOKENIZER",
    "YAML_SECTIONS",
    "CompressionConfig",
]

DEFAULT_TARGET_MAX_TOKENS: Final = 15_250
DEFAULT_SUMMARY_TARGET_TOKENS: Final = 750
DEFAULT_SUMMARY_NOTICE: Final = (
    "\n\nSome of your previous tool responses may be summarized to preserve context."
)
DEFAULT_TOKENIZER: Final = "o200k_base"
"""Offline through ``bpe-openai``; a path to a ``tokenizer.json`` selects a Hugging Face one."""
DEFAULT_BASE_URL: Final = "https://openrouter.ai/api/v1"
"""The OpenAI-compatible aggregator the reference design sends summaries to."""
DEFAULT_API_KEY_ENV: Final = "OPENROUTER_API_KEY"
DEFAULT_OUTPUT_SUFFIX: Final = "_compressed"
DEFAULT_METRICS_FILE: Final = "compression_metrics.json"


@dataclass(frozen=True)
class CompressionConfig:
    """All settings of one trajectory-compression run (spec TJ-03, TJ-04)."""

    # tokenizer
    tokenizer_name: str = DEFAULT_TOKENIZER
    trust_remote_code: bool = True
    # compression
    target_max_tokens: int = DEFAULT_TARGET_MAX_TOKENS
    summary_target_tokens: int = DEFAULT_SUMMARY_TARGET_TOKENS
    # protected turns
    protect_first_system: bool = True
    protect_first_human: bool = True
    protect_first_gpt: bool = True
    protect_first_tool: bool = True
    protect_last_n_turns: int = 4
    # summarization (None: the deterministic extractive summarizer, no model call)
    summarization_model: str | None = None
    base_url: str = DEFAULT_BASE_URL
    api_key_env: str = DEFAULT_API_KEY_ENV
    temperature: float | None = 0.3
    """``None`` sends no temperature at all (for models that fix or forbid it)."""
    max_retries: int = 3
    retry_delay: float = 2.0
    # output
    add_summary_notice: bool = True
    summary_notice_text: str = DEFAULT_SUMMARY_NOTICE
    output_suffix: str = DEFAULT_OUTPUT_SUFFIX
    # processing
    num_workers: int = 4
    max_concurrent_requests: int = 50
    skip_under_target: bool = True
    save_over_limit: bool = True
    per_trajectory_timeout: float = 300.0
    # metrics
    metrics_enabled: bool = True
    metrics_per_trajectory: bool = True
    metrics_output_file: str = DEFAULT_METRICS_FILE

    def __post_init__(self) -> None:
        for name in ("target_max_tokens", "num_workers", "max_concurrent_requests"):
            _check_int(name, getattr(self, name), minimum=1)
        for name in ("summary_target_tokens", "protect_last_n_turns"):
            _check_int(name, getattr(self, name), minimum=0)
        _check_int("max_retries", self.max_retries, minimum=1)
        for name in ("retry_delay", "per_trajectory_timeout"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ConfigError(f"{name} must be a number >= 0, got {value!r}", key=name)
        if self.temperature is not None and (
            isinstance(self.temperature, bool) or not isinstance(self.temperature, int | float)
        ):
            raise ConfigError(
                f"temperature must be a number or null, got {self.temperature!r}",
                key="temperature",
            )
        for name in ("tokenizer_name", "summary_notice_text", "output_suffix"):
            if not isinstance(getattr(self, name), str):
                raise ConfigError(f"{name} must be a string", key=name)
        if not self.tokenizer_name:
            raise ConfigError("tokenizer_name must not be empty", key="tokenizer_name")

    def replace(self, **changes: Any) -> CompressionConfig:
        """A copy with ``changes`` applied (validated like a new config)."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_mapping(
        cls, data: Mapping[str, Any], *, source: str | Path | None = None
    ) -> CompressionConfig:
        """A config from the sectioned layout of TJ-05 (see :data:`YAML_SECTIONS`)."""
        where = f"{source}: " if source is not None else ""
        values: dict[str, Any] = {}
        for section, body in data.items():
            fields = YAML_SECTIONS.get(str(section))
            if fields is None:
                known = ", ".join(YAML_SECTIONS)
                raise ConfigError(
                    f"{where}unknown section {section!r}; sections are: {known}",
                    key=str(section),
                    path=source,
                )
            if body is None:
                continue
            if not isinstance(body, Mapping):
                raise ConfigError(
                    f"{where}section {section!r} must be a mapping of keys to values",
                    key=str(section),
                    path=source,
                )
            for key, value in body.items():
                field = fields.get(str(key))
                if field is None:
                    known = ", ".join(fields)
                    raise ConfigError(
                        f"{where}unknown key '{section}.{key}'; keys of {section!r} are: {known}",
                        key=f"{section}.{key}",
                        path=source,
                    )
                if value is None and field in _NULL_KEEPS_DEFAULT:
                    continue  # ``base_url: null`` and friends keep the default
                values[field] = value
        try:
            return cls(**values)
        except ConfigError as exc:
            dotted = _DOTTED.get(exc.key or "", exc.key)
            raise ConfigError(f"{where}{exc}", key=dotted, path=source) from None

    @classmethod
    def from_yaml(cls, path: str | Path) -> CompressionConfig:
        """Read a YAML file; missing keys keep their defaults (TJ-05)."""
        target = Path(path).expanduser()
        try:
            text = target.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ConfigError(f"{target}: config file not found", path=target) from None
        except UnicodeDecodeError as exc:
            raise not_utf8_error(target, exc) from None
        except OSError as exc:
            raise ConfigError(f"{target}: cannot read: {exc.strerror}", path=target) from None
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ConfigError(f"{target}: not valid YAML: {exc}", path=target) from None
        if data is None:
            return cls()
        if not isinstance(data, Mapping):
            raise ConfigError(f"{target}: the top level must be a mapping", path=target)
        return cls.from_mapping(data, source=target)


YAML_SECTIONS: Final[Mapping[str, Mapping[str, str]]] = {
    "tokenizer": {"name": "tokenizer_name", "trust_remote_code": "trust_remote_code"},
    "compression": {
        "target_max_tokens": "target_max_tokens",
        "summary_target_tokens": "summary_target_tokens",
    },
    "protected_turns": {
        "first_system": "protect_first_system",
        "first_human": "protect_first_human",
        "first_gpt": "protect_first_gpt",
        "first_tool": "protect_first_tool",
        "last_n_turns": "protect_last_n_turns",
    },
    "summarization": {
        "model": "summarization_model",
        "base_url": "base_url",
        "api_key_env": "api_key_env",
        "temperature": "temperature",
        "max_retries": "max_retries",
        "retry_delay": "retry_delay",
    },
    "output": {
        "add_summary_notice": "add_summary_notice",
        "summary_notice_text": "summary_notice_text",
        "output_suffix": "output_suffix",
    },
    "processing": {
        "num_workers": "num_workers",
        "max_concurrent_requests": "max_concurrent_requests",
        "skip_under_target": "skip_under_target",
        "save_over_limit": "save_over_limit",
        "per_trajectory_timeout": "per_trajectory_timeout",
    },
    "metrics": {
        "enabled": "metrics_enabled",
        "per_trajectory": "metrics_per_trajectory",
        "output_file": "metrics_output_file",
    },
}
"""YAML section -> key -> ``CompressionConfig`` field (TJ-05, plus the per-trajectory timeout)."""

_DOTTED = {field: f"{s}.{k}" for s, keys in YAML_SECTIONS.items() for k, field in keys.items()}
_NULL_KEEPS_DEFAULT = frozenset({"base_url", "api_key_env", "tokenizer_name"})


def _check_int(name: str, value: Any, *, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{name} must be an integer >= {minimum}, got {value!r}", key=name)
