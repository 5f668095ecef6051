"""Make directories unwritable for real, also for root (tests run as root on CI machines).

``chmod 0o500`` stops an ordinary user but not root; for root the immutable attribute
(``chattr +i``) does, and a read-only tmpfs mount gives the error a read-only disk gives
(``EROFS``). A test that cannot get either is skipped with the reason.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def read_only(*directories: Path) -> Iterator[None]:
    """The directories refuse new entries for the block's duration (whoever runs it)."""
    if os.geteuid() != 0:
        for directory in directories:
            directory.chmod(0o500)
        try:
            yield
        finally:
            for directory in directories:
                directory.chmod(0o700)
        return
    locked: list[Path] = []
    try:
        for directory in directories:
            done = subprocess.run(
                ["chattr", "+i", str(directory)], capture_output=True, check=False
            )
            if done.returncode != 0:
                pytest.skip(f"cannot make {directory} read-only for root: {done.stderr!r}")
            locked.append(directory)
        yield
    finally:
        for directory in locked:
            subprocess.run(["chattr", "-i", str(directory)], capture_output=True, check=False)


@contextmanager
def read_only_disk(mount_point: Path) -> Iterator[Path]:
    """An empty read-only filesystem at ``mount_point`` (root only; skipped otherwise)."""
    mount_point.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(mount_point)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a read-only filesystem here: {done.stderr!r}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", str(mount_point)], capture_output=True, check=False)
