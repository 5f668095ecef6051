"""preview.py: previews (from text and from huge files), the persisted block and file names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from palimpsest.outputs.preview import (
    DEFAULT_READ_HINT,
    PERSISTED_CLOSE,
    PERSISTED_OPEN,
    RECOVERY_LINE,
    SAVED_PREFIX,
    extract_persisted_path,
    format_size,
    generate_preview,
    head_tail_preview,
    omission_line,
    persisted_block,
    preview_from_file,
    safe_result_filename,
    truncation_fallback,
)

OMISSION = re.compile(r"^\.\.\. \[([\d,]+) (characters|bytes) omitted\] \.\.\.$", re.MULTILINE)
lines_text = st.lists(st.text(max_size=30).map(lambda s: s.replace("\n", "")), max_size=80).map(
    "\n".join
)
any_text = st.one_of(st.text(max_size=400), lines_text)


def split_head_tail(preview: str) -> tuple[str, int, str]:
    """(head, omitted count, tail) of a cut head-and-tail preview."""
    match = OMISSION.search(preview)
    assert match is not None, preview
    head = preview[: match.start()]
    tail = preview[match.end() + 1 :]
    return head, int(match.group(1).replace(",", "")), tail


class TestGeneratePreview:
    def test_cut_after_a_late_newline(self) -> None:
        preview, more = generate_preview("a" * 1000 + "\n" + "b" * 1000, 1500)
        assert (len(preview), more) == (1001, True)
        assert preview.endswith("\n")

    def test_early_newline_is_ignored(self) -> None:
        content = "a" * 700 + "\n" + "b" * 2000  # newline at 700 <= 750
        assert generate_preview(content, 1500) == (content[:1500], True)

    def test_newline_exactly_at_half_is_not_past_it(self) -> None:
        content = "a" * 750 + "\n" + "b" * 2000
        assert generate_preview(content, 1500) == (content[:1500], True)

    def test_newline_at_max_chars_is_not_before_it(self) -> None:
        content = "a" * 1500 + "\n" + "b"
        assert generate_preview(content, 1500) == ("a" * 1500, True)

    @pytest.mark.parametrize("content", ["", "x", "y" * 1500])
    def test_fitting_content_is_unchanged(self, content: str) -> None:
        assert generate_preview(content, 1500) == (content, False)

    def test_bad_max_chars(self) -> None:
        with pytest.raises(ValueError, match="max_chars"):
            generate_preview("abc", 0)

    @given(any_text, st.integers(min_value=1, max_value=120))
    def test_invariants(self, content: str, max_chars: int) -> None:
        preview, more = generate_preview(content, max_chars)
        assert content.startswith(preview)
        assert more == (len(content) > max_chars)
        assert len(preview) <= max_chars
        if more and len(preview) < max_chars:
            assert preview.endswith("\n") and len(preview) - 1 > max_chars // 2


class TestHeadTailPreview:
    def test_log_keeps_its_summary_line(self) -> None:
        content = "".join(f"test {i} ok\n" for i in range(5000)) + "FAILED: 3 of 5000\n"
        preview, more = head_tail_preview(content, 1500)
        assert more
        head, omitted, tail = split_head_tail(preview)
        assert content.startswith(head) and head.endswith("\n")
        assert content.endswith(tail) and tail.endswith("FAILED: 3 of 5000\n")
        assert tail.startswith("test ")  # aligned to a line start
        assert omitted == len(content) - len(head) - len(tail)
        assert f"[{omitted:,} characters omitted]" in preview
        assert len(preview) <= 1500 + 200

    def test_tail_already_at_a_line_start_is_not_shortened(self) -> None:
        # 600 chars of tail budget; the character before the last 600 is a newline.
        content = "h" * 5000 + "\n" + "t" * 600
        preview, _ = head_tail_preview(content, 1500)
        assert split_head_tail(preview)[2] == "t" * 600

    def test_no_newline_anywhere(self) -> None:
        content = "x" * 10_000
        preview, more = head_tail_preview(content, 1000)
        head, omitted, tail = split_head_tail(preview)
        assert (len(head), len(tail), omitted, more) == (600 + 1, 400, 9_000, True)
        assert head == "x" * 600 + "\n"  # the separator newline before the omission line

    @pytest.mark.parametrize("content", ["", "short", "z" * 1500])
    def test_fitting_content_is_unchanged(self, content: str) -> None:
        assert head_tail_preview(content, 1500) == (content, False)

    @given(any_text, st.integers(min_value=2, max_value=120))
    def test_invariants(self, content: str, max_chars: int) -> None:
        preview, more = head_tail_preview(content, max_chars)
        assert more == (len(content) > max_chars)
        if not more:
            assert preview == content
            return
        head, omitted, tail = split_head_tail(preview)
        assert content.endswith(tail)
        # The head either ends with its own newline or got one as separator.
        shown = [h for h in (head, head[:-1]) if content.startswith(h)]
        shown_head = next(h for h in shown if omitted == len(content) - len(h) - len(tail))
        assert omitted > 0
        assert len(shown_head) + len(tail) <= max_chars
        assert len(preview) <= max_chars + len(omission_line(omitted)) + 2


class TestPreviewFromFile:
    @settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=150)
    @given(any_text, st.integers(min_value=2, max_value=60), st.sampled_from(["head", "head_tail"]))
    def test_equals_the_text_preview(
        self, tmp_path: Path, content: str, max_chars: int, mode: str
    ) -> None:
        # Small files are read whole; larger ones only at both ends. Valid UTF-8 gives the
        # same preview either way when the character count is known.
        path = tmp_path / "out.txt"
        path.write_bytes(content.encode("utf-8", "surrogatepass"))
        text = path.read_bytes().decode("utf-8", "replace")
        expected = (head_tail_preview if mode == "head_tail" else generate_preview)(text, max_chars)
        got = preview_from_file(path, max_chars, mode, total_chars=len(text))  # type: ignore[arg-type]
        assert got == expected

    @settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.binary(max_size=300), st.sampled_from(["head", "head_tail"]))
    def test_small_files_of_any_bytes(self, tmp_path: Path, data: bytes, mode: str) -> None:
        path = tmp_path / "out.bin"
        path.write_bytes(data)
        text = data.decode("utf-8", "replace")
        expected = (head_tail_preview if mode == "head_tail" else generate_preview)(text, 100)
        assert preview_from_file(path, 100, mode) == expected  # type: ignore[arg-type]

    def test_characters_cut_at_a_read_boundary_are_dropped(self, tmp_path: Path) -> None:
        # 3-byte characters with a 1-byte shift: both read boundaries fall inside one.
        path = tmp_path / "wide.txt"
        path.write_bytes(b"a" + "€".encode() * 10_000)
        for mode in ("head", "head_tail"):
            preview, more = preview_from_file(path, 100, mode)
            assert more and "\ufffd" not in preview
        preview, _ = preview_from_file(path, 100, "head_tail")
        head, omitted, tail = split_head_tail(preview)
        assert head == "a" + "€" * 59 + "\n" and tail == "€" * 40
        assert omitted == 10_001 * 3 - 2 - (1 + 59 * 3) - 40 * 3  # bytes: no total given

    def test_omitted_characters_when_the_total_is_given(self, tmp_path: Path) -> None:
        path = tmp_path / "wide.txt"
        content = "ü" * 50_000
        path.write_text(content, encoding="utf-8")
        preview, _ = preview_from_file(path, 1500, "head_tail", total_chars=len(content))
        assert preview == head_tail_preview(content, 1500)[0]
        assert "[48,500 characters omitted]" in preview

    def test_other_encodings(self, tmp_path: Path) -> None:
        path = tmp_path / "latin.txt"
        content = "café\n" * 2000
        path.write_bytes(content.encode("latin-1"))
        assert preview_from_file(path, 300, "head", encoding="latin-1") == generate_preview(
            content, 300
        )

    def test_a_gigabyte_file_is_read_only_at_its_ends(self, tmp_path: Path) -> None:
        io_stats = Path("/proc/self/io")
        if not io_stats.exists():
            pytest.skip("needs /proc/self/io to count bytes read")
        path = tmp_path / "huge.log"
        size = 1 << 30
        with open(path, "wb") as handle:
            handle.write(b"first line\n" * 200)
            handle.truncate(size)  # sparse: no gigabyte on disk
            end = b"\nsummary: all passed\n"
            handle.seek(size - len(end))
            handle.write(end)

        def bytes_read() -> int:
            stats = dict(line.split(": ") for line in io_stats.read_text().splitlines())
            return int(stats["rchar"])

        before = bytes_read()
        preview, more = preview_from_file(path, 1500, "head_tail")
        used = bytes_read() - before
        assert more and used < 64 * 1024, used
        assert preview.startswith("first line\n")
        assert preview.endswith("\nsummary: all passed\n")
        assert path.stat().st_size == size
        assert "bytes omitted" in preview

    def test_bad_mode(self, tmp_path: Path) -> None:
        path = tmp_path / "f.txt"
        path.write_text("x")
        with pytest.raises(ValueError, match="mode"):
            preview_from_file(path, 10, "tail")  # type: ignore[arg-type]

    def test_missing_file(self, tmp_path: Path) -> None:
        with pytest.raises(FileNotFoundError):
            preview_from_file(tmp_path / "nope.txt", 10)


@pytest.mark.parametrize(
    ("chars", "expected"),
    [
        (0, "0.0 KB"),
        (1024, "1.0 KB"),
        (150_000, "146.5 KB"),
        (1024 * 1024 - 1, "1024.0 KB"),
        (1024 * 1024, "1.0 MB"),
        (2_000_000, "1.9 MB"),
    ],
)
def test_format_size(chars: int, expected: str) -> None:
    assert format_size(chars) == expected


class TestPersistedBlock:
    def test_exact_layout(self) -> None:
        block = persisted_block(
            path="/tmp/tool-results/tc_1.txt", total_chars=150_000, preview="abc\n", has_more=True
        )
        lines = block.split("\n")
        assert lines[0] == PERSISTED_OPEN
        assert "150,000 characters, 146.5 KB" in lines[1] and "too large" in lines[1]
        assert lines[2] == SAVED_PREFIX + "/tmp/tool-results/tc_1.txt"
        assert lines[3] == DEFAULT_READ_HINT
        assert "read_file" in lines[3] and "offset" in lines[3] and "limit" in lines[3]
        assert lines[4:] == ["", "Preview (first 4 chars):", "abc", "...", PERSISTED_CLOSE]

    def test_no_ellipsis_without_more_and_newline_added(self) -> None:
        block = persisted_block(path="/p", total_chars=3, preview="abc", has_more=False)
        assert block.endswith("Preview (first 3 chars):\nabc\n" + PERSISTED_CLOSE)

    def test_recovery_and_note_lines(self) -> None:
        block = persisted_block(
            path="/p",
            total_chars=9,
            preview="x",
            has_more=True,
            recovery=True,
            note="binary output (PNG image)",
            read_hint="Use read_output.",
        )
        lines = block.split("\n")
        assert lines[3:7] == ["Use read_output.", RECOVERY_LINE, "binary output (PNG image)", ""]
        assert "read_file" in RECOVERY_LINE and "code execution" in RECOVERY_LINE

    def test_head_tail_heading(self) -> None:
        preview, more = head_tail_preview("x\n" * 5000, 1500)
        block = persisted_block(
            path="/p", total_chars=10_000, preview=preview, has_more=more, preview_mode="head_tail"
        )
        assert f"Preview (first and last parts, {len(preview)} chars):" in block
        assert block.endswith(preview + PERSISTED_CLOSE)  # the preview already ends at the end

    @pytest.mark.parametrize("field", ["path", "note", "read_hint"])
    def test_multi_line_values_are_refused(self, field: str) -> None:
        kwargs: dict[str, str] = {"path": "/p", field: "one\ntwo"}
        with pytest.raises(ValueError, match=field):
            persisted_block(total_chars=1, preview="x", has_more=False, **kwargs)  # type: ignore[arg-type]


def test_truncation_fallback_wording() -> None:
    assert truncation_fallback("head", 150_000) == (
        "head\n\n[Truncated: tool response was 150,000 chars. "
        "Full output could not be saved to sandbox.]"
    )


class TestExtractPersistedPath:
    def test_round_trip(self) -> None:
        path = "/tmp/a b/$(x)/tool-results/tc_1.txt"
        block = persisted_block(path=path, total_chars=5, preview="hello", has_more=True)
        assert extract_persisted_path(block) == path
        assert extract_persisted_path("before\n" + block + "\nafter") == path

    @pytest.mark.parametrize(
        "text",
        [
            "",
            "ordinary output",
            "Full output saved to: /etc/passwd",  # not inside a block
            f"{PERSISTED_OPEN}\nFull output saved to: /x",  # never closed
            f"{PERSISTED_OPEN}\nno path here\n{PERSISTED_CLOSE}",
        ],
    )
    def test_none_outside_a_block(self, text: str) -> None:
        assert extract_persisted_path(text) is None

    def test_a_path_quoted_in_the_preview_is_ignored(self) -> None:
        block = persisted_block(
            path="/real.txt", total_chars=5, preview=f"{SAVED_PREFIX}/fake.txt", has_more=False
        )
        assert extract_persisted_path(block) == "/real.txt"
        headerless = f"{PERSISTED_OPEN}\nline\n\n{SAVED_PREFIX}/fake.txt\n{PERSISTED_CLOSE}"
        assert extract_persisted_path(headerless) is None

    def test_second_block_is_found_when_the_first_has_no_path(self) -> None:
        block = persisted_block(path="/two.txt", total_chars=1, preview="x", has_more=False)
        text = f"{PERSISTED_OPEN}\nnothing\n{PERSISTED_CLOSE}\n{block}"
        assert extract_persisted_path(text) == "/two.txt"


class TestSafeResultFilename:
    @pytest.mark.parametrize(
        ("tool_use_id", "expected"),
        [
            ("tc_456", "tc_456.txt"),
            ("call.ABC-9", "call.ABC-9.txt"),
            ("", "tool_result.txt"),
            (None, "tool_result.txt"),
            (0, "tool_result.txt"),
            (42, "42.txt"),
        ],
    )
    def test_clean_ids(self, tool_use_id: object, expected: str) -> None:
        assert safe_result_filename(tool_use_id) == expected

    def test_hostile_id(self) -> None:
        name = safe_result_filename("../outside/$(whoami);x")
        assert re.fullmatch(r"outside_whoami_x_[0-9a-f]{12}\.txt", name)

    def test_long_id_is_cut_and_hashed(self) -> None:
        name = safe_result_filename("a" * 200)
        assert re.fullmatch(r"a{120}_[0-9a-f]{12}\.txt", name)
        assert safe_result_filename("a" * 120) == "a" * 120 + ".txt"

    def test_only_unsafe_characters(self) -> None:
        assert re.fullmatch(r"tool_result_[0-9a-f]{12}\.txt", safe_result_filename("$$$"))

    def test_ids_that_clean_alike_stay_apart(self) -> None:
        assert safe_result_filename("a/b") != safe_result_filename("a;b")

    @given(st.text(max_size=300))
    def test_always_a_plain_file_name(self, tool_use_id: str) -> None:
        name = safe_result_filename(tool_use_id)
        assert re.fullmatch(r"[A-Za-z0-9_.-]+\.txt", name)
        assert not name.startswith((".", "-", "_"))
        assert len(name) <= 120 + 1 + 12 + 4
