"""The full-text layer of the SQLite store: its two FTS5 indexes, their layouts, and the
text they index.

The full-text layer (spec SS-06, SS-07, SS-11) is two FTS5 tables, ``messages_fts``
(``porter`` over ``unicode61``: stemmed words) and ``messages_fts_trigram``, each with the single column ``content`` and
``rowid = messages.id``, kept current by triggers over the indexed text
``content || ' ' || tool_name || ' ' || tool_calls``. ``messages_fts`` holds every
message; ``messages_fts_trigram`` only those whose indexed text contains a CJK character
(:data:`CJK_GLOB`, built from the router's own :data:`~.fts_query.CJK_RANGES`). The
router sends a query to the trigram index only when it has 3+ CJK characters, so a
Latin-only row could match there only through a mixed ``OR``; in exchange the trigram
index -- about one token per character, most of the insert cost and of the file --
shrinks to the few rows that need it. Two layouts exist:

* ``inline`` (the seed design's): each FTS table stores its own copy of the text;
* ``external`` (the default for new files since issue 11): the tables read the text
  from the views ``messages_fts_src`` (every message) and ``messages_fts_trigram_src``
  (the CJK ones), so message text is stored once; triggers feed FTS5's ``'delete'``
  command with the old text, and only for rows the index holds (a ``'delete'`` of text
  that was never indexed corrupts the index).

An existing file keeps the layout recorded in its ``state_meta``; only an explicit
request (``store.fts_layout``, :meth:`SessionStore.rebuild_fts`) switches it. Switching
layout, or finding the trigram table missing on a build that supports it, drops the FTS
tables and triggers, recreates them and backfills from ``messages``
(:func:`install_fts`). The FTS5 or trigram support of the SQLite build is probed, and a
build without them still opens (search then falls back to ``LIKE``; SS-09). Session
titles, dates and sources have their own small index, ``sessions_fts``
(:mod:`.session_index`), rebuilt with the others.

"""

from __future__ import annotations

from typing import Literal

import apsw

from .fts_query import CJK_RANGES
from .session_index import WORD_TOKENIZER, install_session_index

FtsLayout = Literal["inline", "external"]
FTS_LAYOUTS: tuple[FtsLayout, ...] = ("inline", "external")
#: The layout of a new file. An existing file keeps the one recorded in its ``state_meta``
#: (never rebuilt on open) unless a layout is asked for explicitly.
DEFAULT_FTS_LAYOUT: FtsLayout = "external"

#: FTS5 settings that keep segment merging out of the write path. ``automerge`` 0: a write
#: never merges segments (FTS5's default merges whenever a write crosses a 64-page
#: boundary, up to 64 pages per index level, inside the committing append: the stalls
#: users measured); the store's background upkeep or ``palimpsest sessions maintain``
#: merges instead (:mod:`.maintenance`). ``crisismerge`` 16 (FTS5's default, set
#: explicitly) still bounds each index level to 16 segments when no upkeep ever runs.
FTS_WRITE_SETTINGS: tuple[tuple[str, int], ...] = (("automerge", 0), ("crisismerge", 16))
#: FTS5's ``crisismerge`` without a running upkeep (the persistent value above).
IDLE_CRISIS_MERGE = dict(FTS_WRITE_SETTINGS)["crisismerge"]


def _indexed_text(row: str) -> str:
    # SS-07: tool names and tool-call arguments are searchable, not just chat text.
    return (
        f"COALESCE({row}.content, '') || ' ' || COALESCE({row}.tool_name, '') "
        f"|| ' ' || COALESCE({row}.tool_calls, '')"
    )


#: The indexed text of a ``messages`` row aliased ``m`` (the same expression the triggers use).
INDEXED_TEXT = _indexed_text("m")

#: GLOB pattern matching text with at least one character in :data:`CJK_RANGES`. SQLite's
#: GLOB compares ``[a-b]`` ranges by code point, so this is exactly ``cjk_count(text) > 0``
#: (for text without NUL characters, where GLOB stops).
CJK_GLOB = "*[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in CJK_RANGES) + "]*"
_CJK_GLOB_SQL = "'" + CJK_GLOB.replace("'", "''") + "'"


def cjk_condition(row: str) -> str:
    """SQL true when the indexed text of the row aliased ``row`` holds a CJK character."""
    text = f"({_indexed_text(row)})"
    # GLOB with a leading '*' re-parses the class at every character (~25 us for a
    # 400-byte message, a quarter of an insert). Text whose byte length equals its
    # character length is pure ASCII and cannot hold CJK, so GLOB only runs on the rest.
    # CAST AS BLOB, not octet_length(): a 3.40 sqlite3 shell lacks that function and
    # could then not compile the triggers, so could not write to messages at all.
    return f"(length(CAST({text} AS BLOB)) != length({text}) AND {text} GLOB {_CJK_GLOB_SQL})"


#: SQL condition: the ``messages`` row aliased ``m`` belongs in the trigram index.
IS_CJK_ROW = cjk_condition("m")


# -- FTS support and layout -----------------------------------------------------------


def fts_support(con: apsw.Connection) -> tuple[bool, bool]:
    """``(has_fts5, has_trigram)`` for this SQLite build, probed in a temp schema."""
    has_fts5 = has_trigram = False
    try:
        con.execute("CREATE VIRTUAL TABLE temp._probe_fts5 USING fts5(x)")
        con.execute("DROP TABLE temp._probe_fts5")
        has_fts5 = True
        con.execute("CREATE VIRTUAL TABLE temp._probe_tri USING fts5(x, tokenize='trigram')")
        con.execute("DROP TABLE temp._probe_tri")
        has_trigram = True
    except apsw.Error:
        pass
    return has_fts5, has_trigram


WORD_TABLE = "messages_fts"
TRIGRAM_TABLE = "messages_fts_trigram"
_SOURCE_VIEWS = {WORD_TABLE: "messages_fts_src", TRIGRAM_TABLE: "messages_fts_trigram_src"}


def drop_index(con: apsw.Connection, table: str) -> None:
    for event in ("insert", "delete", "update"):
        con.execute(f"DROP TRIGGER IF EXISTS {table}_{event}")
    con.execute(f"DROP TABLE IF EXISTS {table}")
    con.execute(f"DROP VIEW IF EXISTS {_SOURCE_VIEWS[table]}")


def create_index(con: apsw.Connection, table: str, layout: FtsLayout) -> None:
    """One FTS table in ``layout``, its three triggers, and the backfill from ``messages``.

    The trigram table only ever sees CJK rows: its insert trigger fires for CJK text, its
    update trigger removes the old entry only if the old text was CJK and adds the new one
    only if the new text is, its delete trigger fires only for CJK text. So the index holds
    exactly the rows ``IS_CJK_ROW`` selects, which the external layout's ``'delete'``
    command relies on: it must be given only rows the index holds, with their indexed text.
    """
    cjk_only = table == TRIGRAM_TABLE
    # The word index stems (porter over unicode61): "researching" finds "research".
    tokenize = ", tokenize='trigram'" if cjk_only else f", tokenize='{WORD_TOKENIZER}'"
    new, old = _indexed_text("new"), _indexed_text("old")
    if layout == "external":
        view = _SOURCE_VIEWS[table]
        where = f" WHERE {IS_CJK_ROW}" if cjk_only else ""
        con.execute(
            f"CREATE VIEW {view} AS SELECT m.id AS id, {INDEXED_TEXT} AS content"
            f" FROM messages AS m{where}"
        )
        con.execute(
            f"CREATE VIRTUAL TABLE {table} USING fts5(content,"
            f" content='{view}', content_rowid='id'{tokenize})"
        )
        # External content: FTS5 must be told the exact old text to remove its tokens.
        remove = f"INSERT INTO {table} ({table}, rowid, content) SELECT 'delete', old.id, {old}"
        remove_if_cjk = f"{remove} WHERE {cjk_condition('old')}"
    else:
        con.execute(f"CREATE VIRTUAL TABLE {table} USING fts5(content{tokenize})")
        remove = f"DELETE FROM {table} WHERE rowid = old.id"
        remove_if_cjk = f"{remove} AND {cjk_condition('old')}"
    add = f"INSERT INTO {table} (rowid, content) VALUES (new.id, {new})"
    add_if_cjk = (
        f"INSERT INTO {table} (rowid, content) SELECT new.id, {new} WHERE {cjk_condition('new')}"
    )
    if cjk_only:
        on_insert = f" WHEN {cjk_condition('new')} BEGIN {add}; END"
        on_delete = f" WHEN {cjk_condition('old')} BEGIN {remove}; END"
        on_update = f" BEGIN {remove_if_cjk}; {add_if_cjk}; END"
    else:
        on_insert, on_delete = f" BEGIN {add}; END", f" BEGIN {remove}; END"
        on_update = f" BEGIN {remove}; {add}; END"
    con.execute(
        f"CREATE TRIGGER {table}_insert AFTER INSERT ON messages{on_insert};"
        f"CREATE TRIGGER {table}_delete AFTER DELETE ON messages{on_delete};"
        f"CREATE TRIGGER {table}_update AFTER UPDATE ON messages"
        f" WHEN ({old}) IS NOT ({new}){on_update};"
    )
    configure_merging(con, table)
    if layout == "external":
        con.execute(f"INSERT INTO {table} ({table}) VALUES ('rebuild')")
    else:
        where = f" WHERE {IS_CJK_ROW}" if cjk_only else ""
        con.execute(
            f"INSERT INTO {table} (rowid, content)"
            f" SELECT m.id, {INDEXED_TEXT} FROM messages AS m{where}"
        )


def crisis_merge(con: apsw.Connection, table: str) -> int:
    """The ``crisismerge`` FTS5 applies to ``table`` (its default, 16, when none is stored)."""
    row = con.execute(f"SELECT v FROM {table}_config WHERE k = 'crisismerge'").fetchone()
    return int(row[0]) if row is not None else IDLE_CRISIS_MERGE


def set_fts_option(con: apsw.Connection, table: str, key: str, value: int) -> None:
    """Store FTS5's configuration option ``key`` = ``value`` for ``table`` (persistent)."""
    con.execute(f"INSERT INTO {table} ({table}, rank) VALUES (?, ?)", (key, value))


def set_crisis_merge(con: apsw.Connection, table: str, segments: int) -> None:
    """Store ``crisismerge`` = ``segments`` for ``table``: the count of segments on one
    index level at which the committing write merges them all itself."""
    set_fts_option(con, table, "crisismerge", segments)


def configure_merging(con: apsw.Connection, table: str) -> None:
    """Apply :data:`FTS_WRITE_SETTINGS` to ``table`` (stored in the file, so persistent)."""
    for key, value in FTS_WRITE_SETTINGS:
        set_fts_option(con, table, key, value)


def file_layout(con: apsw.Connection) -> FtsLayout | None:
    """The layout this file's word index has: from ``state_meta``, else read from the
    table's definition (external content names its source view); ``None`` when there is
    no word index yet."""
    if table_exists(con, "state_meta"):
        recorded = get_meta(con, "fts_layout")
        if recorded == "external":
            return "external"
        if recorded == "inline":
            return "inline"
    found = con.execute("SELECT sql FROM sqlite_master WHERE name = ?", (WORD_TABLE,)).fetchall()
    if not found:
        return None
    return "external" if "content=" in str(found[0][0] or "").replace(" ", "") else "inline"


def install_fts(con: apsw.Connection, layout: FtsLayout, *, with_trigram: bool) -> None:
    """(Re)create both FTS tables and their six triggers in ``layout``, then backfill
    (the trigram table with the CJK rows only).

    Runs inside the caller's transaction. Existing FTS tables, triggers and the source
    view are dropped first, so this is also the repair for a damaged index. The session
    metadata index (:mod:`.session_index`) is rebuilt with them.
    """
    if layout not in FTS_LAYOUTS:
        raise ValueError(f"unknown FTS layout {layout!r}; expected one of {FTS_LAYOUTS}")
    for table in (WORD_TABLE, TRIGRAM_TABLE):
        drop_index(con, table)
    create_index(con, WORD_TABLE, layout)
    if with_trigram:
        create_index(con, TRIGRAM_TABLE, layout)
    if table_exists(con, "sessions"):
        install_session_index(con)
    set_meta(con, "fts_layout", layout)


def get_meta(con: apsw.Connection, key: str) -> str | None:
    found = con.execute("SELECT value FROM state_meta WHERE key = ?", (key,)).fetchall()
    return None if not found or found[0][0] is None else str(found[0][0])


def set_meta(con: apsw.Connection, key: str, value: str) -> None:
    con.execute(
        "INSERT INTO state_meta (key, value) VALUES (?, ?)"
        " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def table_exists(con: apsw.Connection, name: str) -> bool:
    found = con.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchall()
    return bool(found)
