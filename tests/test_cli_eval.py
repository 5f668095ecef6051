"""``palimpsest eval continuity``: table, JSON, directories and user errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from conftest import DATA
from palimpsest.cli.app import app
from palimpsest.cli.eval import format_ratio

runner = CliRunner()
SAMPLE = DATA / "transcripts" / "swe-agent" / "marshmallow-1867__xml_command_tags.traj"
PYDICOM = DATA / "transcripts" / "swe-agent" / "pydicom-1458__gpt4_default.traj"
HUMANEVAL = DATA / "transcripts" / "swe-agent" / "humanevalfix-python-0.traj"


def test_json_output_has_cases_and_aggregate() -> None:
    out = runner.invoke(app, ["eval", "continuity", str(SAMPLE), "--depths", "0.9", "--json"])
    assert out.exit_code == 0, out.output
    payload = json.loads(out.stdout)
    (case,) = payload["cases"]
    assert case["depth"] == 0.9 and case["compacted"]
    assert [s["system"] for s in case["systems"]] == ["palimpsest", "masking", "truncation"]
    assert set(payload["aggregate"]) == {"palimpsest", "masking", "truncation"}
    assert payload["errors"] == []


def test_table_walks_directories_and_prints_aggregate_lines(tmp_path: Path) -> None:
    shutil.copy(SAMPLE, tmp_path / SAMPLE.name)
    (tmp_path / "README.md").write_text("not a transcript")
    out = runner.invoke(app, ["eval", "continuity", str(tmp_path), "--depths", "0.9"])
    assert out.exit_code == 0, out.output
    assert "mmand_tags.traj" in out.stdout
    for system in ("palimpsest:", "masking:", "truncation:"):
        assert system in out.stdout


def test_bad_depths_and_missing_files_are_one_line_exit_2(tmp_path: Path) -> None:
    bad = runner.invoke(app, ["eval", "continuity", str(SAMPLE), "--depths", "0,2"])
    assert bad.exit_code == 2 and "--depths" in bad.output
    missing = runner.invoke(app, ["eval", "continuity", str(tmp_path / "nope.traj")])
    assert missing.exit_code == 2 and "no such file" in missing.output


def test_an_unreadable_file_is_named_and_the_exit_is_non_zero(tmp_path: Path) -> None:
    shutil.copy(SAMPLE, tmp_path / SAMPLE.name)
    broken = tmp_path / "broken.json"
    broken.write_text('[{"content": "no role here"}]')
    out = runner.invoke(app, ["eval", "continuity", str(tmp_path), "--depths", "0.9"])
    assert out.exit_code == 2
    assert f"{broken}: could not be read" in out.stderr.replace("\n", "")
    assert "mmand_tags.traj" in out.stdout  # the readable one is scored
    as_json = runner.invoke(app, ["eval", "continuity", str(tmp_path), "--depths", "0.9", "--json"])
    assert as_json.exit_code == 2
    payload = json.loads(as_json.stdout)
    assert [e["file"] for e in payload["errors"]] == [str(broken)]
    assert len(payload["cases"]) == 1


def test_the_table_is_one_line_per_file_within_80_columns() -> None:
    out = runner.invoke(app, ["eval", "continuity", str(SAMPLE), str(PYDICOM)])
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    rows = [line for line in lines if line.startswith(("marshmallow", "pydicom"))]
    assert len(rows) == 2
    assert all(len(line) <= 80 for line in lines)
    assert "fail" in lines[1] and "names" in lines[1]


def test_a_file_with_nothing_to_probe_says_so() -> None:
    out = runner.invoke(app, ["eval", "continuity", str(HUMANEVAL)])
    assert out.exit_code == 0, out.output
    assert "humanevalfix-python-0.traj: nothing to probe" in out.stdout


def test_format_ratio() -> None:
    assert format_ratio(None) == "n/a"
    assert format_ratio((1, 4)) == "25% (1/4)"
