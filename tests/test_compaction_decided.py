"""Manual compaction verdicts never say "under the threshold" or "fits" over the exact count."""

from __future__ import annotations

from pathlib import Path

import pytest

from palimpsest.compaction.compressor import ContextCompressor
from palimpsest.compaction.decided import UNDER_THRESHOLD, compact_decided
from palimpsest.messages import load_transcript
from palimpsest.tokens import ExactCounter, RoughCounter

HERE = Path(__file__).parent
DATA = HERE / "data" / "transcripts"
SHARED = HERE.resolve().parents[1] / "shared" / "data" / "transcripts"
FILES = sorted(
    p
    for root in (DATA, SHARED)
    if root.is_dir()
    for p in root.rglob("*")
    if p.is_file() and p.suffix in (".traj", ".json", ".jsonl") and "fixtures" not in p.parts
)
EXACT = ExactCounter("o200k_base")


@pytest.mark.parametrize("path", FILES, ids=lambda p: "/".join(p.parts[-3:]))
@pytest.mark.parametrize("share", [0.6, 0.95, 1.05, 3.0])
def test_no_false_fits_or_under_threshold_verdict(path: Path, share: float) -> None:
    messages = load_transcript(path)
    exact = EXACT.count_messages(messages)
    # A window whose threshold sits at ``share`` of the exact count (explicit ratio 0.5).
    window = max(64, int(exact * share * 2))
    compressor = ContextCompressor(window, threshold_percent=0.5, quiet_mode=True)
    run = compact_decided(compressor, messages)
    if run.stats.reason == UNDER_THRESHOLD:
        assert exact <= compressor.threshold_tokens
    else:
        assert exact > compressor.threshold_tokens or exact > compressor.fit_target_tokens
    if run.stats.fits:
        assert EXACT.count_messages(run.result) <= compressor.fit_target_tokens
    assert run.after.method in ("exact", "bound")


def test_sympy_like_output_is_compressed_where_the_rough_count_said_no() -> None:
    messages = load_transcript(DATA / "dense" / "sympy-math-output.json")
    rough = RoughCounter().count_messages(messages)
    exact = EXACT.count_messages(messages)
    window = int((rough + exact) / 2 / 0.5)  # the threshold sits between the two counts
    compressor = ContextCompressor(window, threshold_percent=0.5, quiet_mode=True)
    assert not compressor.should_compress(rough)  # what the old rough-count decision saw
    run = compact_decided(compressor, messages)
    assert run.before.method == "exact" and run.before.tokens == exact
    assert run.stats.reason != UNDER_THRESHOLD
    assert isinstance(compressor.token_counter, ExactCounter)


def test_a_proven_small_input_is_not_tokenized() -> None:
    messages = load_transcript(DATA / "mini-swe-agent" / "local.traj.json")
    compressor = ContextCompressor(200_000, quiet_mode=True)
    run = compact_decided(compressor, messages)
    assert run.stats.reason == UNDER_THRESHOLD and run.stats.fits
    assert run.before.method == "bound" and isinstance(compressor.token_counter, RoughCounter)


def test_force_counts_exactly_and_reports_a_fit_on_the_exact_count() -> None:
    messages = load_transcript(DATA / "dense" / "base64-blobs.json")
    compressor = ContextCompressor(200_000, quiet_mode=True)
    run = compact_decided(compressor, messages, force=True)
    assert run.before.method == run.after.method == "exact"
    assert run.after.tokens == EXACT.count_messages(run.result)
