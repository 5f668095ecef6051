"""Writing a user-named file (palimpsest/files.py): atomic replacement, and what the target is.

Every kind of target is tried for real: new and existing regular files (their modes), a
symlink, a dangling symlink, a directory, a FIFO, a socket, ``/dev/null`` and ``/dev/full``
(never written: the refusal comes first, so root cannot clobber them either) and the
standard-stream paths.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from palimpsest.errors import OutputTargetError, UserError
from palimpsest.files import output_target, replace_bytes, replace_file


@pytest.fixture
def umask() -> Iterator[None]:
    """Run with a known umask (the test process's own is restored after)."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _names(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def test_the_new_text_replaces_the_old_and_no_temp_file_is_left(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_text("old\n")
    replace_file(target, "new\n", temp_prefix=".out.json.")
    assert target.read_text() == "new\n"
    assert _names(tmp_path) == ["out.json"]


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_a_new_file_gets_the_umask_default_not_0600(
    tmp_path: Path, mask: int, expected: int
) -> None:
    old = os.umask(mask)
    try:
        replace_file(tmp_path / "new.txt", "x", temp_prefix=".new.")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == expected


@pytest.mark.parametrize("mode", [0o755, 0o640, 0o600, 0o444])
def test_an_existing_file_keeps_its_mode(tmp_path: Path, umask: None, mode: int) -> None:
    target = tmp_path / "script.sh"
    target.write_text("old")
    target.chmod(mode)
    if mode == 0o444 and os.geteuid() != 0:
        pytest.skip("a read-only file is refused for a non-root user (tested below)")
    replace_file(target, "new", temp_prefix=".s.")
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == mode


@pytest.mark.skipif(os.geteuid() != 0, reason="only root may give a file to another owner")
def test_an_existing_file_keeps_its_owner_when_root_writes_it(tmp_path: Path) -> None:
    target = tmp_path / "theirs.txt"
    target.write_text("old")
    os.chown(target, 12345, 54321)
    replace_file(target, "new", temp_prefix=".t.")
    info = target.stat()
    assert (info.st_uid, info.st_gid, target.read_text()) == (12345, 54321, "new")


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write a read-only file")
def test_a_read_only_file_is_refused_for_a_user_who_cannot_write_it(tmp_path: Path) -> None:
    target = tmp_path / "locked.txt"
    target.write_text("old")
    target.chmod(0o444)
    with pytest.raises(OutputTargetError, match="not writable"):
        replace_file(target, "new", temp_prefix=".l.")
    assert target.read_text() == "old"


def test_a_symlink_is_written_through_and_stays_a_link(tmp_path: Path, umask: None) -> None:
    real_dir = tmp_path / "real"
    real_dir.mkdir()
    real = real_dir / "data.json"
    real.write_text("old")
    real.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(Path("real") / "data.json")  # relative, resolved from the link's directory
    replace_file(link, "new", temp_prefix=".link.json.")
    assert link.is_symlink() and os.readlink(link) == os.path.join("real", "data.json")
    assert real.read_text() == "new"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert _names(tmp_path) == ["link.json", "real"]
    assert _names(real_dir) == ["data.json"]


def test_a_chain_of_symlinks_is_followed_to_the_file(tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("old")
    (tmp_path / "one").symlink_to(real)
    (tmp_path / "two").symlink_to(tmp_path / "one")
    replace_file(tmp_path / "two", "new", temp_prefix=".t.")
    assert real.read_text() == "new" and (tmp_path / "two").is_symlink()


def test_a_dangling_symlink_creates_the_file_it_points_to(tmp_path: Path, umask: None) -> None:
    link = tmp_path / "link.txt"
    link.symlink_to(tmp_path / "later.txt")
    replace_file(link, "made", temp_prefix=".l.")
    assert link.is_symlink()
    assert (tmp_path / "later.txt").read_text() == "made"
    assert stat.S_IMODE((tmp_path / "later.txt").stat().st_mode) == 0o644


def test_a_dangling_symlink_into_a_missing_directory_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "link.txt"
    link.symlink_to(tmp_path / "nowhere" / "file.txt")
    with pytest.raises(OutputTargetError, match="does not exist") as caught:
        replace_file(link, "x", temp_prefix=".l.")
    assert caught.value.target == str(link)
    assert _names(tmp_path) == ["link.txt"]


def test_a_symlink_loop_is_refused_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(OutputTargetError) as caught:
        output_target(tmp_path / "a")
    assert str(caught.value).startswith(str(tmp_path / "a") + ": ")


def test_a_directory_is_refused_and_left_alone(tmp_path: Path) -> None:
    target = tmp_path / "a-directory"
    target.mkdir()
    (target / "keep").write_text("x")
    with pytest.raises(OutputTargetError, match="is a directory") as caught:
        replace_file(target, "text", temp_prefix=".tmp-")
    assert isinstance(caught.value, UserError)
    assert caught.value.target == str(target)
    assert (target / "keep").read_text() == "x"
    assert _names(tmp_path) == ["a-directory"]


def test_a_fifo_is_refused_without_opening_it(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    # Opening a FIFO for writing would block with no reader: refusing must not open it.
    with pytest.raises(OutputTargetError, match="FIFO"):
        replace_file(fifo, "x", temp_prefix=".p.")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert _names(tmp_path) == ["pipe"]


def test_a_socket_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(path))
        with pytest.raises(OutputTargetError, match="socket"):
            replace_file(path, "x", temp_prefix=".s.")
        assert stat.S_ISSOCK(os.lstat(path).st_mode)
    finally:
        server.close()


@pytest.mark.parametrize("device", ["/dev/null", "/dev/full"])
def test_a_character_device_is_refused_and_stays_a_device(device: str) -> None:
    if not os.path.exists(device):
        pytest.skip(f"{device} does not exist here")
    before = os.stat(device)
    # The refusal comes before any temporary file, so even root cannot replace it.
    with pytest.raises(OutputTargetError, match="character device") as caught:
        replace_file(device, "x", temp_prefix=".null.")
    assert str(caught.value) == f"{device}: is a character device; give a regular file"
    after = os.stat(device)
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev
    assert after.st_ino == before.st_ino


def test_a_symlink_to_a_device_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "sink"
    link.symlink_to("/dev/null")
    with pytest.raises(OutputTargetError, match="character device"):
        replace_file(link, "x", temp_prefix=".s.")
    assert link.is_symlink() and stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.parametrize(
    "path", ["/dev/stdout", "/dev/stderr", "/dev/fd/1", "/proc/self/fd/1", "/dev/./stdout"]
)
def test_standard_stream_paths_are_refused(path: str) -> None:
    with pytest.raises(OutputTargetError, match="standard stream"):
        output_target(path)


def test_a_symlink_to_a_standard_stream_is_refused(tmp_path: Path) -> None:
    (tmp_path / "out").symlink_to("/dev/stdout")
    (tmp_path / "out2").symlink_to(tmp_path / "out")
    for name in ("out", "out2"):
        with pytest.raises(OutputTargetError, match="standard stream"):
            output_target(tmp_path / name)


def test_a_missing_directory_is_named_not_a_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "out.json"
    with pytest.raises(OutputTargetError) as caught:
        replace_file(target, "x", temp_prefix=".o.")
    assert str(caught.value) == f"{target}: directory {target.parent} does not exist"


def test_a_path_through_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputTargetError, match=r"(?i)not a directory"):
        output_target(tmp_path / "file" / "out.json")


def test_output_target_returns_the_resolved_file_and_creates_nothing(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("x")
    (tmp_path / "link").symlink_to("real.txt")
    assert output_target(tmp_path / "link") == (tmp_path / "real.txt").resolve()
    assert output_target(tmp_path / "new.txt") == (tmp_path / "new.txt").resolve()
    assert _names(tmp_path) == ["link", "real.txt"]


def test_a_failed_write_names_the_target_and_leaves_it_as_it_was(tmp_path: Path) -> None:
    """A real write failure (the file-size limit, EFBIG) in a child process: the error's
    filename is the target, the target keeps its text and the temporary file is gone."""
    target = tmp_path / "big.bin"
    target.write_bytes(b"old")
    script = textwrap.dedent(
        f"""
        import resource, signal, sys
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        from palimpsest.files import replace_bytes
        try:
            replace_bytes({str(target)!r}, b"x" * 100_000, temp_prefix=".big.")
        except OSError as exc:
            print(exc.filename, exc.errno)
            sys.exit(0)
        sys.exit(1)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    filename, _errno = proc.stdout.split()
    assert filename == str(target)
    assert target.read_bytes() == b"old"
    assert _names(tmp_path) == ["big.bin"]


def test_bytes_and_text_share_the_checks(tmp_path: Path) -> None:
    with pytest.raises(OutputTargetError):
        replace_bytes(tmp_path, b"x", temp_prefix=".b.")
    replace_bytes(tmp_path / "b.bin", b"\x00\xff", temp_prefix=".b.")
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\xff"
