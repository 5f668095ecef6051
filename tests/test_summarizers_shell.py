"""Files a shell command writes, edits, deletes or reads, and where it cds to."""

from __future__ import annotations

import pytest

from palimpsest.summarizers.shell import shell_effects, split_command


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
