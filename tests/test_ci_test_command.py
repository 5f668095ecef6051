"""The README's test command is the one CI runs (.ci/run), so the two cannot drift apart."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _readme_pytest_command() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("Run the tests:", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    found = re.search(r"python -m pytest[^\n&|;]*", block)
    assert found is not None, block
    return found.group(0).strip()


def test_ci_runs_the_readme_test_command() -> None:
    command = _readme_pytest_command()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    runs = [line.strip() for line in ci.splitlines() if "python -m pytest" in line]
    runs = [line for line in runs if not line.startswith("#")]
    assert runs == [line for line in runs if f".ci/with-postgres {command} " in f"{line} "]
    assert len(runs) == 1, runs


def test_the_command_runs_in_parallel_workers() -> None:
    assert "-n auto" in _readme_pytest_command()
