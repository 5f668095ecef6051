"""``fold`` against its definition, character by character (issue 27 made it work on the
distinct non-ASCII characters instead; the result must not change)."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from palimpsest.safety.threats.normalize import _fold_table, fold, is_invisible

_LOOKALIKES = sorted(chr(code) for code in _fold_table())[::7]


def _by_definition(text: str) -> str:
    """NFKC, every invisible character dropped, every look-alike replaced by its letter."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(ch for ch in text if ch.isascii() or not is_invisible(ch))
    return text.translate(_fold_table())


def test_fold_examples() -> None:
    assert fold("plain ascii") == "plain ascii"
    assert fold("\uff49\uff47\uff4e\uff4f\uff52\uff45 all") == "ignore all"  # fullwidth
    assert fold("ign\u200bore") == "ignore"  # zero-width space
    assert fold("ign\u043ere") == "ignore"  # Cyrillic o
    assert fold("a note \u2014 kept") == "a note \u2014 kept"


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(max_size=8),
            st.sampled_from(_LOOKALIKES),
            st.sampled_from(list("\u200b\u200d\u2063\ufe0f\ufe00\u3164\u00ad\u2014\u212a\u017f")),
        ),
        max_size=20,
    )
)
def test_fold_is_its_definition(parts: list[str]) -> None:
    text = "".join(parts)
    assert fold(text) == _by_definition(text)
