"""Object files: spooling with a hash, placing once, scanning, and disk errors."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from palimpsest.errors import StorageError
from palimpsest.outputs.objects import object_path, place, scan_objects, spool
from readonly import read_only


def test_spool_hashes_and_place_links_once(tmp_path: Path) -> None:
    data = [b"abc", b"def"]
    digest = hashlib.sha256(b"abcdef").hexdigest()
    with spool(tmp_path, iter(data)) as spooled:
        assert (spooled.digest, spooled.size_bytes) == (digest, 6)
        path, new = place(tmp_path, spooled, "txt")
    assert new and path == object_path(tmp_path, digest, "txt") and path.read_bytes() == b"abcdef"
    assert list((tmp_path / "tmp").iterdir()) == []  # the temp name is gone
    with spool(tmp_path, iter(data)) as spooled:
        before = path.stat().st_ino
        assert place(tmp_path, spooled, "txt") == (path, False)
    assert path.stat().st_ino == before and oct(path.stat().st_mode)[-3:] == "600"


def test_a_damaged_copy_gives_way(tmp_path: Path) -> None:
    digest = hashlib.sha256(b"abcdef").hexdigest()
    target = object_path(tmp_path, digest, "txt")
    target.parent.mkdir(parents=True)
    target.write_bytes(b"abc")  # truncated by hand
    with spool(tmp_path, iter([b"abcdef"])) as spooled:
        assert place(tmp_path, spooled, "txt") == (target, True)
    assert target.read_bytes() == b"abcdef"


def test_a_failing_source_leaves_nothing_and_keeps_its_error(tmp_path: Path) -> None:
    def pieces() -> Iterator[bytes]:
        yield b"partial"
        raise OSError("source vanished")

    with pytest.raises(OSError, match="source vanished") as caught, spool(tmp_path, pieces()):
        pass
    assert not isinstance(caught.value, StorageError)
    assert list((tmp_path / "tmp").iterdir()) == []


def test_a_read_only_directory_is_a_storage_error(tmp_path: Path) -> None:
    with (
        read_only(tmp_path),
        pytest.raises(StorageError) as caught,
        spool(tmp_path / "store", iter([b"x"])),
    ):
        pass
    assert "cannot save the tool output" in str(caught.value) and caught.value.path


def test_scan_ignores_strangers_and_symlinks(tmp_path: Path) -> None:
    digest = hashlib.sha256(b"x").hexdigest()
    good = object_path(tmp_path, digest, "bin")
    good.parent.mkdir(parents=True)
    good.write_bytes(b"x")
    (good.parent / "notes.txt").write_text("hi")
    wrong_bucket = tmp_path / "objects" / "zz"
    wrong_bucket.mkdir()
    (wrong_bucket / f"{digest}.txt").write_text("misplaced")
    other = "ab" + digest[2:]
    (tmp_path / "objects" / "ab").mkdir(exist_ok=True)
    (tmp_path / "objects" / "ab" / f"{other}.txt").symlink_to("/etc/hostname")
    found = scan_objects(tmp_path)
    assert [(f.digest, f.suffix, f.size_bytes) for f in found] == [(digest, "bin", 1)]
    assert scan_objects(tmp_path, digest[:9]) == found and scan_objects(tmp_path, "ff" * 5) == []
    assert scan_objects(tmp_path / "missing") == []
