"""urls: which backend a URL names, and URLs shown without their password."""

from __future__ import annotations

from palimpsest.storage.urls import is_postgres_url, redacted_url


def test_passwords_never_show() -> None:
    assert redacted_url("postgresql://ann:pw@db:5432/x?sslmode=require") == (
        "postgresql://ann:***@db:5432/x?sslmode=require"
    )
    assert redacted_url("postgresql://ann@/x?host=/tmp") == "postgresql://ann@/x?host=/tmp"


def test_postgres_urls_are_recognised() -> None:
    assert is_postgres_url("postgresql://u@h/db")
    assert is_postgres_url(" POSTGRES://u@h/db")
    assert not is_postgres_url("/var/lib/state.db")
    assert not is_postgres_url("sqlite:///x.db")
