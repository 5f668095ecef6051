"""Recovering rows from a store SQLite can no longer open, into a new file beside it.

``repair`` (:mod:`.damage`) rebuilds what is derived from the rows, which needs a file
SQLite can open. When the structure itself is damaged (the schema page, the b-tree of a
table), the only help left is SQLite's recovery extension, which reads every page it can
and writes out the rows it finds. Python's bindings do not expose it; the ``sqlite3``
command-line shell does (``.recover``; some builds ship it broken, and then ``.dump``,
which reads table by table and steps over damaged pages, is the fallback), so it is used
when it is installed, and the report says plainly when it is not. The damaged file is never changed: the rows go to a
new ``<name>.recovered.db`` and the user decides whether to swap it in.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import apsw

__all__ = ["Recovery", "recover_rows"]

RECOVER_TIMEOUT = 600.0
"""Seconds the shell may take to read a damaged store before the attempt is abandoned."""


@dataclass(frozen=True)
class Recovery:
    """The outcome: ``target`` holds ``sessions`` and ``messages`` rows (and ``lost`` rows
    whose table could not be told, in SQLite's ``lost_and_found`` table), or ``target`` is
    ``None`` and ``reason`` says why nothing could be recovered."""

    target: Path | None
    sessions: int = 0
    messages: int = 0
    lost: int = 0
    reason: str = ""


def _free_name(path: Path) -> Path:
    target = path.with_name(f"{path.stem}.recovered{path.suffix}")
    n = 2
    while target.exists():
        target = path.with_name(f"{path.stem}.recovered-{n}{path.suffix}")
        n += 1
    return target


def _count(con: apsw.Connection, table: str) -> int:
    try:
        row = con.execute(f"SELECT count(*) FROM {table}").fetchone()
    except apsw.Error:
        return 0
    return int(row[0]) if row else 0


def recover_rows(path: Path, *, shell: str | None = None) -> Recovery:
    """Copy what SQLite can still read from ``path`` into a new file beside it.

    ``shell`` is the ``sqlite3`` executable (default: the one on ``PATH``).
    """
    exe = shell or shutil.which("sqlite3")
    if exe is None:
        return Recovery(
            None,
            reason="the sqlite3 command-line shell is not installed, and it is the only "
            "tool that reads rows out of a file SQLite cannot open (install it, e.g. "
            "'apt install sqlite3', and run this again)",
        )
    target = _free_name(path)
    # .recover writes scratch tables, so it reads a copy: the damaged file stays as it is.
    scratch = target.with_name(target.name + ".reading")
    try:
        shutil.copyfile(path, scratch)
        for command in (".recover", ".dump"):
            dump = subprocess.run(
                [exe, str(scratch), command],
                capture_output=True,
                timeout=RECOVER_TIMEOUT,
                check=False,
            )
            if b"INSERT" in dump.stdout:
                break
        else:
            why = dump.stderr.decode("utf-8", "replace").strip() or "no rows could be read"
            return Recovery(None, reason=f"sqlite3 .recover and .dump found no rows ({why})")
        subprocess.run(
            [exe, str(target)],
            input=dump.stdout,
            capture_output=True,
            timeout=RECOVER_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        target.unlink(missing_ok=True)
        return Recovery(None, reason=f"sqlite3 .recover failed: {exc}")
    finally:
        scratch.unlink(missing_ok=True)
    try:
        con = apsw.Connection(str(target), flags=apsw.SQLITE_OPEN_READONLY)
    except apsw.Error as exc:
        target.unlink(missing_ok=True)
        return Recovery(None, reason=f"the recovered rows do not form a database: {exc}")
    try:
        sessions, messages = _count(con, "sessions"), _count(con, "messages")
        lost = _count(con, "lost_and_found")
    finally:
        con.close()
    if not (sessions or messages or lost):
        target.unlink(missing_ok=True)
        return Recovery(None, reason="no row could be read")
    return Recovery(target, sessions, messages, lost)
