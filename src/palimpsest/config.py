"""Settings: every seed default in one place, overridable from a YAML file.

Each section is a pydantic model that rejects unknown keys, so a typo in ``config.yaml``
fails loudly with the dotted key named instead of being silently ignored. The data
directory is ``$PALIMPSEST_HOME`` (default ``~/.palimpsest``); the config file is
``$PALIMPSEST_HOME/config.yaml`` unless ``$PALIMPSEST_CONFIG`` points elsewhere.
Importing this module reads nothing; :func:`load_settings` does.

:func:`explain_settings` reads the same sources and also says where each value came from
(the default, the config file, an environment variable, a command-line flag), which
``palimpsest config show`` prints.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .errors import ConfigError
from .home import CONFIG_ENV, DEFAULT_HOME, HOME_ENV, config_path, home_dir

__all__ = [
    "DEFAULT_HOME",
    "CompressionSettings",
    "ContextSettings",
    "MemorySettings",
    "ModelSettings",
    "OutputsSettings",
    "SettingValue",
    "Settings",
    "ToolBudgetSettings",
    "ValueSource",
    "config_path",
    "config_path_source",
    "explain_settings",
    "home_dir",
    "home_dir_source",
    "load_settings",
    "not_utf8_error",
]

SourceKind = Literal["default", "file", "environment", "flag"]


@dataclass(frozen=True)
class ValueSource:
    """Where a setting's value came from.

    ``detail`` names the place: the config file's path (``file``), the variable
    (``environment``), the option (``flag``); ``None`` for a ``default``.
    """

    kind: SourceKind
    detail: str | None = None

    def __str__(self) -> str:
        return self.kind if self.detail is None else f"{self.kind} {self.detail}"


DEFAULT_SOURCE = ValueSource("default")


@dataclass(frozen=True)
class SettingValue:
    """One effective setting: its dotted key, its value and where the value came from."""

    key: str
    value: Any
    source: ValueSource


def home_dir_source() -> tuple[Path, ValueSource]:
    """:func:`home_dir` and where it came from (``$PALIMPSEST_HOME`` or the default)."""
    if os.environ.get(HOME_ENV):
        return home_dir(), ValueSource("environment", HOME_ENV)
    return home_dir(), DEFAULT_SOURCE


def config_path_source(path: str | Path | None = None) -> tuple[Path, ValueSource]:
    """The config file read for ``path`` (a ``--config`` flag) and where the choice came from.

    A given ``path`` is a flag; else ``$PALIMPSEST_CONFIG``; else the file in the data
    directory, whose source is the data directory's own (environment or default).
    """
    if path is not None:
        return Path(path).expanduser(), ValueSource("flag", "--config")
    if os.environ.get(CONFIG_ENV):
        return config_path(), ValueSource("environment", CONFIG_ENV)
    return config_path(), home_dir_source()[1]


class _Section(BaseModel):
    # Attribute docstrings become field descriptions, which docs/configuration.md shows.
    model_config = ConfigDict(
        extra="forbid", validate_assignment=True, use_attribute_docstrings=True
    )


class ContextSettings(_Section):
    """``context``: which engine runs and which profile of behaviour applies."""

    engine: str = "compressor"
    """Context engine to load from the ``palimpsest.context_engines`` entry points;
    ``native`` lets the provider compact where the route offers it (docs/compaction.md)."""
    profile: Literal["seed", "refined"] = "seed"
    """Behaviour profile. ``refined`` turns on: preflight deferral to the provider's real
    usage when the estimate is close (agent), a 2-second pause before a reactive retry,
    strict threat scanning of memory writes, and memory-tool answers that do not echo
    entries. Everything else is the same in both profiles."""


class CompressionSettings(_Section):
    """``compression``: the seed defaults of the built-in compressor (spec CC-01..)."""

    enabled: bool = True
    """Automatic compression on or off for a host (the agent loop)."""
    threshold: float = Field(default=0.50, gt=0.0, le=1.0)
    """Compress when prompt tokens reach this fraction of the window. Set here (or passed
    explicitly) it is used as given; left at the default it is floored at 64,000 tokens."""
    target_ratio: float = 0.20
    """Tail budget as a fraction of the threshold; clamped to [0.10, 0.80]."""
    protect_first_n: int = Field(default=3, ge=0)
    """Messages at the start always kept verbatim (system prompt + first exchange)."""
    protect_last_n: int = Field(default=20, ge=1)
    """Recent messages never pruned, whatever the token budget says."""
    prune_style: Literal["summary", "placeholder"] = "summary"
    """Old tool results become informative one-liners, or the classic placeholder."""
    summary_template: Literal["handoff", "classic"] = "handoff"
    """Section layout asked of the summarizer."""
    fallback_summary: Literal["static", "deterministic"] = "deterministic"
    """When the summarizer fails: a rule-based summary, or the short static marker."""
    orphan_call_policy: Literal["stub", "strip"] = "stub"
    """A tool call whose result was compacted away gets a stub result, or is removed."""
    refuse_if_grow: bool = True
    """Discard a compaction whose result would not be smaller than its input."""
    abort_on_summary_failure: bool = False
    """When the summarizer fails, keep the middle (prune only) instead of a fallback summary."""
    threshold_tokens: int | None = None
    """Absolute cap on the threshold in tokens (unset: no cap)."""
    native_margin_tokens: int = Field(default=4_000, ge=0)
    """Engine ``native``: how far below the threshold an inline route compacts."""
    max_input_mb: float = Field(default=256.0, gt=0)
    """``palimpsest compress`` refuses input files larger than this many MiB."""
    summary_model: str | None = None
    """Legacy spelling of ``auxiliary.compression.model``."""
    in_place: bool = True
    """After a compaction the session keeps its id and the old messages are archived in it
    (searchable, restored by ``/undo``), instead of a continuation session (docs/compaction.md)."""
    hygiene_threshold: float = 0.85
    """Gateway hygiene compacts a stored session at this fraction of the window (AL-32);
    a value outside (0, 1] falls back to 0.85 (AL-35)."""
    hygiene_hard_message_limit: int = Field(default=5_000, ge=1)
    """Gateway hygiene compacts a session with this many messages whatever its tokens."""
    summary_timeout_seconds: float | None = Field(default=300.0, gt=0)
    """Wall-clock seconds one summary call may take, a synchronous one included; past it
    the call is abandoned and the deterministic fallback summary is used (``null``: no
    limit)."""
    rehydrate_files: int = Field(default=5, ge=0)
    """After a compaction the agent re-attaches the current content of up to this many
    files it most recently wrote or edited itself (``0``: off)."""
    rehydrate_file_tokens: int = Field(default=5_000, gt=0)
    """A file larger than this many tokens is re-attached by its path only."""
    rehydrate_total_tokens: int = Field(default=20_000, gt=0)
    """All re-attached contents together; also at most a tenth of the window."""

    model_thresholds: dict[str, float] = Field(default_factory=dict)
    """Per-model trigger ratios: a model-name substring (``gpt-5``, ``claude-sonnet``) or a
    provider-scoped one (``openai:gpt-5``, only on that provider) mapped to a fraction of the
    window in (0, 1]. The longest matching key wins; a match is used as given (no 64K floor)
    and wins over ``threshold``."""
    idle_minutes: float | None = Field(default=None, gt=0)
    """Idle compaction: when the last stored message is this many minutes old (a resumed
    session, or a long pause), compact before the first model call if the context is large.
    Unset: off."""
    idle_min_share: float = Field(default=0.5, gt=0.0, le=1.0)
    """Idle compaction runs only when the request is at least this share of the threshold."""
    min_tail_user_messages: int = Field(default=1, ge=1)
    """The last N real user messages (not tool results or summaries) are always kept
    verbatim in the tail, even past the tail's token budget. 1 is the seed rule."""
    max_tail_assistant_tokens: int | None = Field(default=None, gt=0)
    """An assistant message in the kept tail longer than this many tokens is cut to it, with
    a pointer to ``session_search`` for the full text. Unset: kept whole (the seed)."""

    @field_validator("model_thresholds")
    @classmethod
    def _ratios(cls, value: dict[str, float]) -> dict[str, float]:
        for key, ratio in value.items():
            if not key.strip():
                raise ValueError("model_thresholds keys must not be empty")
            if not 0.0 < ratio <= 1.0:
                raise ValueError(f"model_thresholds[{key!r}] must be in (0, 1], got {ratio}")
        return value

    proactive_prune_tokens: int = Field(default=0, ge=0)
    """Prune old tool results before a model call once the prompt reaches this many tokens
    (CC-45); 0 turns the proactive pass off."""
    proactive_prune_min_reclaim_tokens: int = Field(default=4_096, ge=0)
    """The proactive pass rewrites nothing that reclaims fewer tokens than this."""
    proactive_prune_min_result_chars: int = Field(default=8_000, ge=0)
    """Only tool results longer than this are pruned proactively (never below 200)."""
    cache_aware: bool = True
    """While the provider's prompt cache is warm, prune inside the cached prefix only when
    that saves more than it costs at the route's prices (docs/pruning.md)."""
    cache_horizon_calls: int = Field(default=8, ge=0)
    """The least number of calls a pruned token is assumed to be saved on, when weighing a
    rewrite; a session that has run longer with a warm cache since the last rewrite counts
    half those calls (docs/pruning.md)."""
    server_tool_clearing: bool = False
    """On the Anthropic Messages API, let the server clear old tool results
    (context editing, ``clear_tool_uses_20250919``) instead of pruning them here."""

    @field_validator("hygiene_threshold")
    @classmethod
    def _hygiene_fallback(cls, value: float) -> float:
        # AL-35: out of range falls back to the seed value instead of failing the gateway.
        return value if 0.0 < value <= 1.0 else 0.85

    @field_validator("target_ratio")
    @classmethod
    def _clamp_ratio(cls, value: float) -> float:
        # CC-02: the tail budget ratio is clamped, not rejected.
        return min(max(value, 0.10), 0.80)


class ModelSettings(_Section):
    """``model``: the main model and its window."""

    name: str | None = None
    """Model spec, e.g. ``openai:gpt-4o-mini``."""
    context_length: int | None = Field(default=None, gt=0)
    """The model's window in tokens; wins over any detected value."""
    max_tokens: int | None = None
    """Explicit output cap, reserved out of the window before the threshold is computed."""
    cache_ttl: Literal["5m", "1h"] = "5m"
    """Anthropic prompt-cache TTL."""


class AuxiliaryModelSettings(_Section):
    """``auxiliary.compression``: an optional separate model for summaries."""

    model: str | None = None
    """Summary model spec, e.g. ``openai:gpt-4o-mini`` or ``openai-compatible:local``."""
    provider: str | None = None
    """Provider prefix for a ``model`` written without one (``openai``, ``anthropic``, ...)."""
    base_url: str | None = None
    """Server of an ``openai-compatible`` summary model, e.g. ``http://127.0.0.1:8080/v1``."""
    timeout: float | None = Field(default=None, gt=0)
    """Seconds per summary call."""
    context_length: int | None = Field(default=None, gt=0)
    """The summary model's own window in tokens; the summary request is fitted to it."""


class SessionSearchSettings(_Section):
    """``auxiliary.session_search``: the recall summarizer and its cost limits (SS-62..SS-65)."""

    model: str | None = None
    provider: str | None = None
    timeout: float = Field(default=90.0, gt=0)
    """Seconds shared by all summaries of one search."""
    max_concurrency: int = Field(default=3, ge=1, le=5)
    max_tokens: int = Field(default=2_000, gt=0)
    window_chars: int = Field(default=100_000, gt=0)
    preview_chars: int = Field(default=2_000, gt=0)
    attempts: int = Field(default=3, ge=1)


class AuxiliarySettings(_Section):
    compression: AuxiliaryModelSettings = Field(default_factory=AuxiliaryModelSettings)
    session_search: SessionSearchSettings = Field(default_factory=SessionSearchSettings)


class MemorySettings(_Section):
    """``memory``: the L1 files, the external provider and the write scan (spec memory.md)."""

    memory_char_limit: int = Field(default=2_200, gt=0)
    user_char_limit: int = Field(default=1_375, gt=0)
    provider: str | None = None
    """Name of the one external memory provider (entry point ``palimpsest.memory_providers``)."""
    threat_scan: Literal["standard", "strict"] = "standard"
    prefetch_timeout: float = Field(default=8.0, gt=0)
    flush_min_turns: int = Field(default=6, ge=0)
    flush_before_compression: bool = True
    checkpoint_required: bool = False
    """Fail closed: a compaction whose memory checkpoint (the flush before it, the
    providers' ``on_pre_compress``) fails is not performed, and the user is told why.
    Off: the checkpoint is best effort and the compaction goes on."""
    nudge_interval: int = Field(default=10, ge=1)


class ModelPriceSettings(_Section):
    """One ``pricing.models`` entry: USD per million tokens (see docs/usage-and-costs.md)."""

    input: float | None = Field(default=None, ge=0)
    output: float | None = Field(default=None, ge=0)
    cache_read: float | None = Field(default=None, ge=0)
    cache_write: float | None = Field(default=None, ge=0)
    included: bool = False


class PricingSettings(_Section):
    """``pricing``: price overrides keyed by a model-name substring (longest match wins)."""

    models: dict[str, ModelPriceSettings] = Field(default_factory=dict)


class ToolBudgetSettings(_Section):
    """``tool_budget``: how large tool results are kept out of the context (tool-results.md)."""

    default_result_size_chars: int = Field(default=100_000, gt=0)
    """A result longer than this is saved to a file and a preview enters the context."""
    turn_budget_chars: int = Field(default=200_000, gt=0)
    """All results of one assistant turn together; the largest are spilled until they fit."""
    preview_size_chars: int = Field(default=1_500, gt=0)
    """Characters of a spilled result shown in the context."""
    mcp_result_size_chars: int = Field(default=50_000, gt=0)
    """Threshold of tools named ``mcp_*``."""
    tool_overrides: dict[str, int] = Field(default_factory=dict)
    """Per-tool thresholds in characters (0 spills every non-empty result)."""
    preview_mode: Literal["head", "head_tail"] = "head_tail"
    """``head_tail``: the start and the end of the output (where test summaries and errors
    are); ``head``: the start only, as in the seed design."""
    scale_to_context: bool = True
    """Scale the result size and the turn budget to the model's window (TR-19)."""

    @field_validator("tool_overrides")
    @classmethod
    def _non_negative(cls, value: dict[str, int]) -> dict[str, int]:
        for name, limit in value.items():
            if limit < 0:
                raise ValueError(f"tool_overrides[{name!r}] must be 0 or more")
        return value


class OutputsSettings(_Section):
    """``outputs``: where spilled tool outputs are kept and for how long (docs/tool-output.md)."""

    path: str | None = None
    """Directory of saved outputs; default ``$PALIMPSEST_HOME/outputs``."""
    max_total_mb: float = Field(default=2_048.0, gt=0)
    """``outputs gc`` removes the least recently used outputs past this total size."""
    max_age_days: float = Field(default=30.0, gt=0)
    """``outputs gc`` removes outputs not used for this many days."""


class StoreSettings(_Section):
    """``store``: the session database (spec sessions-search.md; docs/sessions.md)."""

    path: str | None = None
    """Database file; default ``$PALIMPSEST_HOME/state.db``."""
    url: str | None = None
    """Where sessions are kept, as a URL: ``postgresql://user@host/db`` for a PostgreSQL
    store shared by several processes or machines (docs/postgres.md), or a SQLite path.
    ``PALIMPSEST_DATABASE_URL`` overrides it; unset, ``path`` (SQLite) is used."""
    fts_layout: Literal["inline", "external"] | None = None
    """Full-text layout. Unset: a new file gets ``external`` (the indexes read the text
    from ``messages``: about 1.8x the raw text on disk instead of 3x) and an existing
    file keeps the layout it has. Set, the file is switched to it on open (its indexes
    rebuilt once): ``inline`` keeps a copy of the text in each index (the seed layout)."""
    background_upkeep: bool = True
    """Merge the full-text indexes, checkpoint the WAL and keep each session's revealed
    secrets (what search redacts with) in a background thread of a long-running process
    (started after some writes, stopped on close), so appends never do it; on PostgreSQL
    only the secrets. Turn off to run ``palimpsest sessions maintain`` from a timer
    instead."""
    embedder: str | None = None
    """Search by meaning beside words (docs/search.md): ``bundled`` (the ``vectors``
    extra's offline model) or ``package.module:function``, a function of yours taking a list
    of texts and returning one vector (a list of floats) per text. Unset: words only.
    Either backend (on PostgreSQL the vectors are scored in Python: docs/postgres.md)."""


class Settings(_Section):
    """All settings. Sections are added as components land; unknown keys are errors."""

    context: ContextSettings = Field(default_factory=ContextSettings)
    compression: CompressionSettings = Field(default_factory=CompressionSettings)
    model: ModelSettings = Field(default_factory=ModelSettings)
    auxiliary: AuxiliarySettings = Field(default_factory=AuxiliarySettings)
    pricing: PricingSettings = Field(default_factory=PricingSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    tool_budget: ToolBudgetSettings = Field(default_factory=ToolBudgetSettings)
    outputs: OutputsSettings = Field(default_factory=OutputsSettings)


def _error_key(err: dict[str, Any]) -> str:
    return ".".join(str(p) for p in err.get("loc", ()))


def settings_from_dict(data: dict[str, Any], *, source: str | Path | None = None) -> Settings:
    """Validate a mapping into :class:`Settings`; the first problem becomes a ConfigError."""
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = _error_key(dict(first))
        where = f"{source}: " if source else ""
        if first.get("type") == "extra_forbidden":
            message = f"{where}unknown config key {key!r}; see docs/configuration.md"
        else:
            message = f"{where}invalid value for {key!r}: {first.get('msg')}"
        raise ConfigError(message, key=key, path=source) from None


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """One line for a YAML error: where, and what (PyYAML's own text spans several)."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return f"{where}{' '.join(str(problem).split())}"


def not_utf8_error(target: Path, exc: UnicodeDecodeError) -> ConfigError:
    """The one line for a config file that is not UTF-8 text (a binary file, say)."""
    return ConfigError(
        f"{target}: not a UTF-8 YAML file (byte 0x{exc.object[exc.start]:02x} at offset "
        f"{exc.start} is not UTF-8)",
        path=target,
    )


def _read_file(path: str | Path | None) -> tuple[Path, dict[str, Any] | None]:
    """The config file for ``path`` and its mapping (``None`` when absent and not asked for)."""
    target = Path(path).expanduser() if path is not None else config_path()
    if not target.exists():
        if path is not None:
            raise ConfigError(f"{target}: config file not found", path=target)
        return target, None
    try:
        data = yaml.safe_load(target.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{target}: not valid YAML: {_yaml_problem(exc)}", path=target) from None
    except UnicodeDecodeError as exc:
        raise not_utf8_error(target, exc) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{target}: the top level must be a mapping", path=target)
    return target, data


def load_settings(path: str | Path | None = None) -> Settings:
    """Read settings from ``path`` (or :func:`config_path`); defaults when the file is absent."""
    target, data = _read_file(path)
    return Settings() if data is None else settings_from_dict(data, source=target)


def _leaves(model: BaseModel, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """``(dotted key, value)`` of every setting; a dict-valued field is one leaf."""
    for name in type(model).model_fields:
        value = getattr(model, name)
        key = f"{prefix}{name}"
        if isinstance(value, BaseModel):
            yield from _leaves(value, key + ".")
        else:
            yield key, value


def _in_file(data: dict[str, Any], key: str) -> bool:
    node: Any = data
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def explain_settings(path: str | Path | None = None) -> tuple[Settings, list[SettingValue]]:
    """The settings :func:`load_settings` would return, and every value with its source.

    Values come from the defaults or the config file; the data directory and the config
    file's location may also come from the environment or a ``--config`` flag (see
    :func:`home_dir_source`, :func:`config_path_source`).
    """
    target, data = _read_file(path)
    settings = Settings() if data is None else settings_from_dict(data, source=target)
    from_file = ValueSource("file", str(target))
    values = [
        SettingValue(key, value, from_file if data and _in_file(data, key) else DEFAULT_SOURCE)
        for key, value in _leaves(settings)
    ]
    return settings, values
