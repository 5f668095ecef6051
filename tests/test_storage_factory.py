"""open_store(): which store a URL, the environment or the config names."""

from __future__ import annotations

from pathlib import Path

import pytest

import palimpsest
from palimpsest.config import settings_from_dict
from palimpsest.errors import ConfigError, StorageError
from palimpsest.storage import SessionStore, Store
from palimpsest.storage.factory import DATABASE_URL_ENV, open_store, store_url


def test_the_default_is_the_sqlite_file_in_home(isolated_home: Path) -> None:
    with open_store() as store:
        assert isinstance(store, SessionStore) and isinstance(store, Store)
        assert store.backend == "sqlite"
        assert store.path == isolated_home / "state.db"
        assert store.location == str(isolated_home / "state.db")


def test_a_path_argument_and_a_sqlite_url(tmp_path: Path) -> None:
    with open_store(tmp_path / "a.db") as store:
        assert store.path == tmp_path / "a.db"
    with open_store(f"sqlite:///{tmp_path / 'b.db'}") as store:
        assert store.path == tmp_path / "b.db"


def test_argument_beats_environment_beats_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = settings_from_dict({"store": {"url": str(tmp_path / "config.db")}})
    assert store_url(settings=settings) == str(tmp_path / "config.db")
    monkeypatch.setenv(DATABASE_URL_ENV, str(tmp_path / "env.db"))
    assert store_url(settings=settings) == str(tmp_path / "env.db")
    assert store_url(tmp_path / "arg.db", settings=settings) == str(tmp_path / "arg.db")
    with open_store(settings=settings) as store:
        assert store.path == tmp_path / "env.db"


def test_store_path_is_used_without_a_url(tmp_path: Path) -> None:
    settings = settings_from_dict({"store": {"path": str(tmp_path / "p.db")}})
    assert store_url(settings=settings) is None
    with open_store(settings=settings) as store:
        assert store.path == tmp_path / "p.db"


def test_an_unreachable_server_is_one_clear_error(tmp_path: Path) -> None:
    url = f"postgresql://nobody:s3cret@/nodb?host={tmp_path}&connect_timeout=1"
    with pytest.raises(StorageError) as caught:
        open_store(url, pool_size=1)
    message = str(caught.value)
    assert message.startswith("Session database not available: postgresql://nobody:***@")
    assert "s3cret" not in message and "\n" not in message


def test_open_store_is_exported_lazily() -> None:
    assert "open_store" in palimpsest.__all__ and "Store" in palimpsest.__all__
    assert palimpsest.open_store is open_store


def letter_counts(texts: list[str]) -> list[list[float]]:
    """A tiny embedding for the config test: how often each of a, b, c occurs (+1)."""
    return [[1.0 + t.count("a"), 1.0 + t.count("b"), 1.0 + t.count("c")] for t in texts]


def test_store_embedder_turns_on_search_by_meaning(tmp_path: Path) -> None:
    own = settings_from_dict({"store": {"embedder": f"{__name__}:letter_counts"}})
    with open_store(tmp_path / "own.db", settings=own) as store:
        assert isinstance(store, SessionStore) and store.vectors is not None
        store.create_session("s", source="cli")
        store.append_messages("s", [{"role": "user", "content": "aaa bbb"}])
        store.vectors.catch_up()
        assert store.vectors.model.name == f"custom:{__name__}:letter_counts"
        assert store.search_messages("bbb")  # words still find it; meaning is fused in
    bundled = settings_from_dict({"store": {"embedder": "bundled"}})
    with open_store(tmp_path / "bundled.db", settings=bundled) as store:
        assert isinstance(store, SessionStore) and store.vectors is not None
    with open_store(tmp_path / "plain.db", settings=settings_from_dict({})) as store:
        assert isinstance(store, SessionStore) and store.vectors is None


@pytest.mark.parametrize("spec", ["minilm", "no_such_module_x:f", f"{__name__}:missing"])
def test_a_bad_embedder_is_one_config_error(tmp_path: Path, spec: str) -> None:
    settings = settings_from_dict({"store": {"embedder": spec}})
    with pytest.raises(ConfigError) as caught:
        open_store(tmp_path / "x.db", settings=settings)
    assert caught.value.key == "store.embedder" and spec in str(caught.value)


def test_a_bad_embedder_with_a_postgres_url_fails_before_connecting() -> None:
    settings = settings_from_dict({"store": {"embedder": "minilm"}})
    with pytest.raises(ConfigError) as caught:
        open_store("postgresql://nobody@127.0.0.1:1/none", settings=settings)
    assert caught.value.key == "store.embedder"


def test_store_embedder_works_with_a_postgres_url(pg_url: str) -> None:
    own = settings_from_dict({"store": {"embedder": f"{__name__}:letter_counts"}})
    with open_store(pg_url, settings=own) as store:
        assert store.backend == "postgresql" and store.vectors is not None
        assert store.vectors.model.name == f"custom:{__name__}:letter_counts"
    with open_store(pg_url, settings=settings_from_dict({})) as store:
        assert store.vectors is None


def test_background_upkeep_off_in_the_config_turns_off_the_postgresql_keeper(
    pg_url: str,
) -> None:
    from palimpsest.storage.pg_store import PostgresSessionStore

    off = settings_from_dict({"store": {"background_upkeep": False}})
    with open_store(pg_url, settings=off) as store:
        store.create_session("s", source="cli")
        store.append_messages("s", [{"role": "user", "content": "password=Kq7vN2pLx9Rw"}])
        assert isinstance(store, PostgresSessionStore) and not store.secrets.running
        assert store.keep_secrets() is True
        assert store.session_secrets(["s"])["s"] == frozenset({"Kq7vN2pLx9Rw"})
