"""Shared fixtures: every test runs in its own data directory with provider keys cleared."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
REAL_TRANSCRIPTS = DATA / "transcripts"
"""Copies of ../shared/data/transcripts (same relative paths; test_messages_formats keeps them
equal), so a clone without ../shared runs every test that reads a real transcript."""
SHARED_SETS = ("swe-agent", "mini-swe-agent", "format-samples")
"""The folders of REAL_TRANSCRIPTS that hold the shared data's transcripts."""

PROVIDER_ENV = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENROUTER_API_KEY",
    "PALIMPSEST_CONFIG",
)


def pytest_report_header(config: pytest.Config) -> list[str]:
    import apsw

    con = apsw.Connection(":memory:")
    try:
        con.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='trigram')")
        trigram = "yes"
    except apsw.Error:
        trigram = "no"
    options = {row[0] for row in con.execute("PRAGMA compile_options")}
    fts5 = "yes" if "ENABLE_FTS5" in options else "no"
    return [f"apsw SQLite {apsw.sqlite_lib_version()}, FTS5: {fts5}, trigram: {trigram}"]


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point PALIMPSEST_HOME at a fresh directory and clear provider credentials."""
    home = tmp_path / "palimpsest-home"
    monkeypatch.setenv("PALIMPSEST_HOME", str(home))
    for name in PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def data_dir() -> Path:
    """The repository's copied test transcripts (tests/data)."""
    return DATA
