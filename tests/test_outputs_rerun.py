"""classify_command: read-only lines are repeatable, anything doubtful is kept."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.outputs.rerun import NOT_REPEATABLE, call_text, classify_command, repeatable_call


@pytest.mark.parametrize(
    "command",
    [
        "grep -rn 'def main' src",
        "grep -rn foo src 2>&1 | head -50",
        "rg -n TODO --type py",
        "ls -la",
        "ls 2>/dev/null",
        "find . -name '*.py' | wc -l",
        "cat setup.cfg && wc -l README.md",
        "git log --oneline -20 | head",
        "git diff HEAD~1 -- src/app.py",
        "cd src && grep -c import *.py",
        "sed -n '10,40p' src/app.py",
        "FOO=1 rg needle",
        "timeout 5 grep x y",
        "head -c 100 data.bin | xxd",
        "env LANG=C sort names.txt | uniq -c",
        "cat x # a comment > y",
    ],
)
def test_read_only_lines_are_repeatable(command: str) -> None:
    verdict = classify_command(command)
    assert verdict.repeatable, verdict
    assert verdict.how is not None and command.replace('"', '\\"') in verdict.how
    assert verdict.reason.startswith("read-only command (")


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("pytest -q tests/", "test run (pytest)"),
        ("python -m pytest -x", "test run"),
        ("npm test", "test run (npm)"),
        ("cargo build --release", "build or package command (cargo)"),
        ("make", "build"),
        ("curl -s https://api.example.com/v1/items", "network call (curl)"),
        ("git pull --rebase", "network call (git pull)"),
        ("git commit -am wip", "may change the repository"),
        ("ls > listing.txt", "writes a file"),
        ("grep foo src >> hits.txt", "writes a file"),
        ("find . -name '*.pyc' -delete", "deletes"),
        ("sed -i 's/a/b/' f.py", "sed -i"),
        ("sort -o out.txt in.txt", "sort -o"),
        ("python script.py", "not a known read-only command (python)"),
        ("cat f | tee copy.txt", "tee"),
        ("ls; echo $(whoami)", "command substitution"),
        ("echo `date`", "command substitution"),
        ("sudo cat /etc/shadow", "another user"),
        ("env rm -rf build", "rm"),
        ("awk '{ print > \"out\" }' f", "awk"),
        ("cat <<EOF\nhello\nEOF", "not a known"),
        ("   ", "empty"),
        ("echo 'unterminated", "could not be read"),
    ],
)
def test_doubtful_lines_are_kept(command: str, why: str) -> None:
    verdict = classify_command(command)
    assert not verdict.repeatable
    assert verdict.how is None
    assert why in verdict.reason


def test_call_text_is_a_call_the_model_can_copy() -> None:
    text = call_text("read_file", {"path": "src/a b.py", "offset": 1, "limit": 200})
    assert text == 'read_file(path="src/a b.py", offset=1, limit=200)'
    assert repeatable_call("read_file", {"path": "x"}, "file unchanged").how == (
        'read_file(path="x")'
    )
    assert not NOT_REPEATABLE.repeatable


@given(st.text(max_size=200))
def test_any_text_gets_a_verdict_and_substitution_is_never_repeatable(command: str) -> None:
    verdict = classify_command(command)
    assert verdict.reason
    assert (verdict.how is not None) == verdict.repeatable
    if "$(" in command or "`" in command:
        assert not verdict.repeatable
