"""IdentifierTally: the names an agent worked with, ranked by use, never a secret."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from palimpsest.summarizers.identifiers import _TOKEN, SCAN_CHARS, IdentifierTally


def _ranked(*texts: str, focus: list[str] | None = None) -> list[str]:
    tally = IdentifierTally()
    for text in texts:
        tally.add(text)
    return tally.ranked(focus)


def test_code_shaped_names_count_and_prose_does_not() -> None:
    names = _ranked(
        "The bug is in TimeDelta._serialize: it calls int() where round_half_even() is needed. "
        "See #1867 and PROJ-42; the key compression.threshold and MAX_RETRIES matter, "
        "and so does `precision`. Then run test_timedelta_precision. Edit fields.py too."
    )
    for name in (
        "TimeDelta._serialize",
        "round_half_even",
        "#1867",
        "PROJ-42",
        "compression.threshold",
        "MAX_RETRIES",
        "precision",
        "test_timedelta_precision",
    ):
        assert name in names, name
    assert "fields.py" not in names  # files are listed under Relevant Files
    assert not {"The", "bug", "calls", "needed", "int", "Then"} & set(names)


def test_a_method_called_on_a_call_result_is_a_name() -> None:
    names = _ranked(
        "ds.FloatPixelData = pixel_array.flatten().tobytes()\n"
        "shape = arr.reshape(2, 3).shape; text = load().strip(); v = get().to_dict\n"
        "flag.append(chr(model[b].as_long()))"
    )
    assert "tobytes" in names and "pixel_array.flatten" in names and "as_long" in names
    assert "to_dict" in names  # code-shaped, called or not
    assert not {"shape", "strip"} & set(names)  # a plain word, a common call


def test_ranked_by_use_then_first_use() -> None:
    names = _ranked("alpha_one beta_two", "beta_two gamma_three", "beta_two")
    assert names == ["beta_two", "alpha_one", "gamma_three"]


def test_focus_matches_come_first() -> None:
    texts = ("parse_header parse_header load_config", "load_config_file")
    assert _ranked(*texts)[0] == "parse_header"
    assert _ranked(*texts, focus=["config"])[:2] == ["load_config", "load_config_file"]


def test_secrets_are_not_names() -> None:
    names = _ranked(
        "export GITHUB_TOKEN=ghp_FAKE1234567890abcdefghijABCDEFGHIJ",
        "mysql --password cliPassw0rd -h db_host",
        "curl https://api.example.com/v1?token=qT0ken123abc",
    )
    assert "GITHUB_TOKEN" in names and "db_host" in names
    assert not any("FAKE" in n or "Passw0rd" in n or "T0ken" in n for n in names)


def test_a_piece_of_a_long_key_is_judged_with_the_whole_key() -> None:
    """``sk-ant-...-xRcLilAS_k7M1tgxAA``: the tail after the last hyphen is code-shaped, and
    60 characters around it no longer show the ``sk-ant-`` start redaction knows."""
    key = (
        "sk-ant-api03-" + "iYLEGf3eTuzXf4kQkSK78OKhvPA0adau2nHQOoR5tJL1MmnVBaqjXBq5yac" + "-xRc_Lil"
    )
    names = _ranked(f"ANTHROPIC_API_KEY={key} and then `build_index` ran")
    assert "build_index" in names
    assert not any(n in key for n in names)


def test_only_the_start_of_a_long_text_is_read() -> None:
    assert _ranked("x " * SCAN_CHARS + "late_name") == []


# The token pattern with plain (backtracking) quantifiers: the possessive one must match
# exactly the same spans and groups.
_BACKTRACKING_TOKEN = re.compile(
    r"`([A-Za-z_][\w.]*)(?:\(\))?`"
    r"|(?<![\w#-])(#\d{1,7}|[A-Z][A-Z0-9]{1,9}-\d{1,6})\b"
    r"|(?:(?<![\w.])|(?<=[)\]]\.))([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[A-Za-z]*_\w*|[a-z]+[A-Z]\w*"
    r"|[A-Z]+[a-z0-9]+[A-Z]\w*|[A-Za-z]\w*(?=\())"
)


@settings(max_examples=400)
@given(st.text(alphabet="aZb_Q9.#-`() \né", max_size=60))
def test_token_pattern_matches_like_its_backtracking_form(text: str) -> None:
    def spans(pattern: re.Pattern[str]) -> list[object]:
        return [(m.span(), m.groups()) for m in pattern.finditer(text)]

    assert spans(_TOKEN) == spans(_BACKTRACKING_TOKEN)
