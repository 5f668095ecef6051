"""Files a shell command writes, edits, deletes or reads, and where it cds to."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from palimpsest.summarizers.shell import _parse, parse_once, shell_effects, split_command


@pytest.mark.parametrize(
    ("command", "writes", "simple"),
    [
        ("cat > app.py <<'EOF'\nif a > b: pass\nEOF", [("app.py", "created")], "write"),
        ("echo hi >> notes.md", [("notes.md", "modified")], "write"),
        ("python run.py 2>&1 | tee log.txt", [("log.txt", "created")], None),
        ("sed -i 's/a -> b/c/' src/x.py", [("src/x.py", "modified")], "edit"),
        ("sed -i.bak -e 's/x/y/' conf.ini", [("conf.ini", "modified")], "edit"),
        ("touch a.txt b.txt", [("a.txt", "created"), ("b.txt", "created")], "write"),
        ("rm -rf build dist", [("build", "deleted"), ("dist", "deleted")], None),
        ("mv old.py new.py", [("new.py", "created")], None),
        ("make > /dev/null 2>&1", [], None),
        ("grep -r 'a > b' src", [], None),
        ("FOO=1 ./configure > config.log", [("config.log", "created")], None),
    ],
)
def test_writes(command: str, writes: list[tuple[str, str]], simple: str | None) -> None:
    effects = shell_effects(command)
    assert effects.writes == writes
    assert effects.simple_write == simple


def test_cd_reads_and_heredoc() -> None:
    effects = shell_effects("cd /srv/app && cat README.md setup.cfg | head -5")
    assert effects.cwd == "/srv/app"
    assert effects.reads == ["README.md", "setup.cfg"]
    assert shell_effects("python - <<EOF\nopen('x','w')\nEOF").heredoc is True


def test_split_command_strips_quotes() -> None:
    assert split_command("git commit -m 'a message'\nnext") == ["git", "commit", "-m", "a message"]


def test_empty_command() -> None:
    effects = shell_effects("")
    assert effects.writes == [] and effects.cwd is None


_WORDS = st.sampled_from(
    [
        "ls",
        "pytest",
        "git",
        "status",
        "cat",
        "rm",
        "cd",
        "sed",
        "-i",
        "x.py",
        "a/b.txt",
        "FOO=1",
        "python",
        "-m",
        "tee",
        "touch",
        "mv",
        "cp",
        ">",
        ">>",
        "|",
        "&&",
        ";",
        "'q q'",
        '"d"',
        "<<EOF",
        "EOF",
        "\n",
        "2>&1",
        "src/",
        "head",
        "-n",
        "5",
        "$HOME",
        "make",
        "echo",
        "hi",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_WORDS, min_size=1, max_size=8))
def test_the_cheap_path_agrees_with_the_full_parse(words: list[str]) -> None:
    """Commands answered without tokenizing (issue 27) get what the full parse gives."""
    command = " ".join(words)
    assert shell_effects(command) == _parse(command)


def test_each_distinct_command_is_parsed_once_per_run_only() -> None:
    command = "sed -i 's/a/b/' src/x.py && cat src/y.py"
    with parse_once():
        first = shell_effects(command)
        assert shell_effects(command) is first  # the run's memo
        assert shell_effects("touch z.txt") is not first
    assert shell_effects(command) is not first  # nothing outlives the run
    assert shell_effects(command) == first and first.writes == [("src/x.py", "modified")]
