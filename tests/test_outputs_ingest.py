"""Ingest: sniffing, byte-exact text, line-aligned redaction, character counts."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from palimpsest.outputs.ingest import (
    BINARY_KIND,
    SNIFF_BYTES,
    TEXT_KIND,
    TEXT_NOT_UTF8_KIND,
    Ingest,
    encode_text,
    measure_file,
    sniff_binary,
)

SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"


def run(
    data: bytes, *, chunk: int, redact: bool = True, feed: int | None = None
) -> tuple[bytes, Ingest]:
    ingest = Ingest(redact=redact, chunk_size=chunk)
    step = feed or chunk
    out = b""
    for i in range(0, len(data), step):
        out += b"".join(ingest.feed(data[i : i + step]))
    out += b"".join(ingest.finish())
    return out, ingest


@pytest.mark.parametrize(
    ("head", "kind"),
    [
        (b"\x89PNG\r\n\x1a\n....", "PNG image"),
        (b"\x1f\x8b\x08\x00", "gzip archive"),
        (b"BZh91AY&SY", "bzip2 archive"),
        (b"%PDF-1.7\n", "PDF document"),
        (b"abc\x00def", BINARY_KIND),
        (b"plain text\n", None),
        (b"BZhang wrote this", None),
        ("caf\u00e9".encode(), None),
    ],
)
def test_sniff_binary(head: bytes, kind: str | None) -> None:
    assert sniff_binary(head) == kind


def test_a_nul_after_the_sniffed_head_does_not_make_text_binary() -> None:
    data = b"x" * SNIFF_BYTES + b"\x00tail"
    out, ingest = run(data, chunk=1000, redact=False)
    assert ingest.kind == TEXT_KIND and out == data


def test_binary_is_stored_raw_and_never_redacted() -> None:
    data = b"\x89PNG\r\n\x1a\n" + f"password={SECRET}\n".encode() * 10
    out, ingest = run(data, chunk=16)
    assert out == data and ingest.kind == "PNG image" and ingest.is_binary
    assert ingest.chars is None


@settings(max_examples=150, deadline=None)
@given(data=st.binary(max_size=3000), chunk=st.integers(1, 700), feed=st.integers(1, 900))
def test_without_redaction_every_byte_comes_back(data: bytes, chunk: int, feed: int) -> None:
    out, _ = run(data, chunk=chunk, redact=False, feed=feed)
    assert out == data


@settings(max_examples=100, deadline=None)
@given(
    lines=st.lists(
        st.one_of(
            st.text(alphabet=st.characters(blacklist_characters="\n\x00"), max_size=40),
            st.just(f"key={SECRET}"),
        ),
        max_size=40,
    ),
    chunk=st.integers(60, 500),
)
def test_redaction_does_not_depend_on_the_chunk_size(lines: list[str], chunk: int) -> None:
    # Lines are shorter than the chunk, so every piece ends at a newline: the stored bytes
    # are those of redacting the whole text at once.
    data = encode_text("\n".join(lines) + "\n")
    whole, _ = run(data, chunk=1 << 20)
    out, ingest = run(data, chunk=chunk, feed=7)
    assert out == whole
    assert SECRET.encode() not in out
    assert ingest.chars == len(out.decode("utf-8", "surrogateescape"))


def test_a_secret_is_never_split_at_a_chunk_edge() -> None:
    # A naive cut every 64 characters would land inside the key on line 2.
    text = "a" * 40 + "\n" + f"export OPENAI_API_KEY={SECRET}\n" + "b" * 30 + "\n"
    out, _ = run(text.encode(), chunk=64, feed=5)
    assert SECRET[:10].encode() not in out and b"[REDACTED]" in out


def test_a_line_longer_than_the_chunk_is_cut_at_a_space() -> None:
    text = ("word " * 30 + SECRET + " tail") * 3
    out, _ = run(text.encode(), chunk=200)
    assert SECRET.encode() not in out and out.count(b"[REDACTED]") == 3


def test_a_private_key_block_moves_whole_into_the_next_piece() -> None:
    body = "\n".join(["MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ"] * 6)
    text = (
        "x" * 100
        + "\n-----BEGIN PRIVATE KEY-----\n"
        + body
        + "\n-----END PRIVATE KEY-----\nafter\n"
    )
    # The block (~360 characters) fits a 420-character piece but not after the x line.
    out, _ = run(text.encode(), chunk=420)
    assert b"MIIEvQIBADAN" not in out
    assert b"-----BEGIN PRIVATE KEY-----" in out and out.endswith(b"after\n")


def test_invalid_utf8_is_kept_byte_for_byte_and_named() -> None:
    data = b"caf\xe9 ok\n" + "\u00e9\u4e2d\n".encode() + b"\xff\xfe end password=hunter22\n"
    out, ingest = run(data, chunk=40, feed=3)
    assert ingest.kind == TEXT_NOT_UTF8_KIND
    assert out.startswith(b"caf\xe9 ok\n") and b"\xff\xfe end" in out
    assert b"hunter22" not in out
    assert ingest.chars == len(out.decode("utf-8", "surrogateescape"))


def test_a_character_split_across_feeds_is_valid_text() -> None:
    data = "\u4e2d\u6587\u00e9\U0001f600\n".encode() * 5
    out, ingest = run(data, chunk=3, feed=1, redact=False)
    assert out == data and ingest.kind == TEXT_KIND and ingest.chars == 25


def test_empty_input_is_empty_text() -> None:
    out, ingest = run(b"", chunk=10)
    assert out == b"" and ingest.kind == TEXT_KIND and ingest.chars == 0


def test_encode_text_keeps_escaped_bytes_and_a_lone_surrogate() -> None:
    assert encode_text(b"a\xff".decode("utf-8", "surrogateescape")) == b"a\xff"
    assert encode_text("\ud800x") == b"\xed\xa0\x80x"


def test_chunk_size_must_be_positive() -> None:
    with pytest.raises(ValueError):
        Ingest(chunk_size=0)


def test_measure_file(tmp_path: Path) -> None:
    text = tmp_path / "a.txt"
    text.write_bytes("\u00e9t\u00e9\n".encode() * 100)
    assert measure_file(text, chunk_size=7) == (TEXT_KIND, 400)
    bad = tmp_path / "b.txt"
    bad.write_bytes(b"ok\xff")
    assert measure_file(bad) == (TEXT_NOT_UTF8_KIND, 3)
    binary = tmp_path / "c.bin"
    binary.write_bytes(b"\x1f\x8b\x08rest")
    assert measure_file(binary) == ("gzip archive", None)
