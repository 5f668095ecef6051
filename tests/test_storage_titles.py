"""Title sanitizing and lineage numbering (spec SS-32, SS-33)."""

from __future__ import annotations

import pytest

from palimpsest.storage.titles import pick_next_title, sanitize_title, title_base


@pytest.mark.parametrize(
    ("existing", "title", "expected"),
    [
        ([], "my project", "my project"),
        (["my project"], "my project", "my project #2"),
        (["my project", "my project #2", "my project #3"], "my project", "my project #4"),
        (["my project", "my project #2"], "my project #2", "my project #3"),
        (["testXproject #2"], "test_project", "test_project"),
        (["a #2"], "a", "a #3"),
    ],
)
def test_next_title(existing: list[str], title: str, expected: str) -> None:
    assert pick_next_title(title_base(title), existing) == expected


def test_sanitize_title() -> None:
    assert sanitize_title("  hello\x00  world  ") == "hello world"
    assert sanitize_title("\u200b") is None
    assert sanitize_title("") is None and sanitize_title(None) is None
    assert sanitize_title("tab\there\nnew 数据 ✨") == "tab here new 数据 ✨"
    assert sanitize_title("x" * 100) == "x" * 100
    with pytest.raises(ValueError, match="too long"):
        sanitize_title("x" * 101)


def test_next_title_escapes_like_wildcards(tmp_path: object) -> None:
    from palimpsest.storage.sessions import SessionStore

    with SessionStore() as store:
        store.create_session("a", title="test_project")
        store.create_session("b", title="testXproject #2")
        store.create_session("c", title="100% done")
        with store.connection_for_reads() as con:
            from palimpsest.storage.titles import next_title_in_lineage

            assert next_title_in_lineage(con, "test_project") == "test_project #2"
            assert next_title_in_lineage(con, "100% done") == "100% done #2"
            assert next_title_in_lineage(con, "fresh") == "fresh"
