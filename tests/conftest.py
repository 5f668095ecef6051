"""Shared fixtures: every test runs in its own data directory with provider keys cleared."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

# Time lives in benchmarks/: a property test's per-example deadline (200 ms by default) only
# measures how loaded the machine is, and failed suite runs beside other jobs.
settings.register_profile("suite", deadline=None)
settings.load_profile("suite")

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
    "PALIMPSEST_DATABASE_URL",
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


@pytest.fixture(scope="session")
def empty_user_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty directory for HOME (outside every test's ``tmp_path``, which tests list)."""
    return tmp_path_factory.mktemp("user-home")


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, empty_user_home: Path) -> Path:
    """Point PALIMPSEST_HOME at a fresh directory and clear provider credentials.

    HOME moves to an empty directory too: the agent's shell tool runs ``bash -lc``, and a
    login shell sources the user's profile (on the CI image, ``pyenv init`` makes that
    160 ms a command, 16 s of one 100-turn test); nothing a test does should depend on
    the profile of whoever runs the suite."""
    home = tmp_path / "palimpsest-home"
    monkeypatch.setenv("PALIMPSEST_HOME", str(home))
    monkeypatch.setenv("HOME", str(empty_user_home))
    for name in PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def data_dir() -> Path:
    """The repository's copied test transcripts (tests/data)."""
    return DATA


# -- PostgreSQL ---------------------------------------------------------------------------

PG_URL_ENV = "PALIMPSEST_TEST_PG_URL"
"""The server the PostgreSQL tests use (``.ci/with-postgres`` starts one and sets it)."""
PG_REQUIRED_ENV = "PALIMPSEST_REQUIRE_PG"
"""Set to 1 (CI does): a missing server fails the PostgreSQL tests instead of skipping."""


def _pg_unavailable(reason: str) -> None:
    import os

    if os.environ.get(PG_REQUIRED_ENV) == "1":
        pytest.fail(f"PostgreSQL required ({PG_REQUIRED_ENV}=1) but {reason}", pytrace=False)
    pytest.skip(f"PostgreSQL tests need a server: {reason}")


def _worker_database_url(base: str, worker: str) -> str:
    """A fresh database for this pytest-xdist worker on ``base``'s server, as a URL.

    Workers share one server but not one database: schemas, advisory locks and the
    benchmark's ``bench_*`` schema count stay per worker. Created anew (a killed run may
    have left one behind) and dropped when the session ends (:func:`pg_server`)."""
    from urllib.parse import urlsplit, urlunsplit

    import psycopg
    from psycopg import sql

    parts = urlsplit(base)
    name = f"{parts.path.strip('/') or 'palimpsest_test'}_{worker}"
    with psycopg.connect(base, autocommit=True, connect_timeout=5) as con:
        con.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        con.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return urlunsplit(parts._replace(path=f"/{name}"))


def _drop_worker_database(base: str, url: str) -> None:
    from urllib.parse import urlsplit

    import psycopg
    from psycopg import sql

    name = urlsplit(url).path.strip("/")
    with psycopg.connect(base, autocommit=True, connect_timeout=5) as con:
        con.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """The base URL of a reachable PostgreSQL server with ``pg_trgm`` in ``public``.

    Skips (with the reason) when there is none; fails instead under
    ``PALIMPSEST_REQUIRE_PG=1``. Run ``.ci/with-postgres python -m pytest ...`` to get one.
    Under pytest-xdist each worker gets a database of its own on that server.
    """
    import os

    base = os.environ.get(PG_URL_ENV, "").strip()
    if not base:
        _pg_unavailable(f"{PG_URL_ENV} is not set (see .ci/with-postgres)")
    try:
        import psycopg
    except ImportError:
        _pg_unavailable("psycopg is not installed (pip install -e '.[postgres]')")
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    url = base
    try:
        if worker:
            url = _worker_database_url(base, worker)
        with psycopg.connect(url, autocommit=True, connect_timeout=5) as con:
            con.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public")
    except psycopg.Error as exc:
        _pg_unavailable(f"cannot connect to {PG_URL_ENV}: {str(exc).strip().splitlines()[0]}")
    yield url
    if url != base:
        _drop_worker_database(base, url)


def pg_schema_url(base: str, schema: str) -> str:
    """``base`` with ``search_path`` set to ``schema`` (then ``public``, for pg_trgm)."""
    from urllib.parse import quote

    joiner = "&" if "?" in base else "?"
    return f"{base}{joiner}options={quote(f'-csearch_path={schema},public')}"


@pytest.fixture
def pg_url(pg_server: str) -> Iterator[str]:
    """A URL whose tables live in a fresh schema, dropped after the test."""
    import secrets

    import psycopg

    schema = f"t_{secrets.token_hex(6)}"
    with psycopg.connect(pg_server, autocommit=True) as con:
        con.execute(f"CREATE SCHEMA {schema}")
    try:
        yield pg_schema_url(pg_server, schema)
    finally:
        with psycopg.connect(pg_server, autocommit=True) as con:
            con.execute(f"DROP SCHEMA {schema} CASCADE")
