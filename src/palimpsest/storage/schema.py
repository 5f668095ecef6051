"""The store's schema: named forward migrations and the two full-text indexes.

Every change to the schema is a small function registered under a unique name with
:func:`migration`. Opening a store runs, in order, each migration whose name is not yet in
the ``migrations`` table; the function, its ``migrations`` row and the new
``schema_version`` commit in one transaction, so a crash never leaves a half-applied
step and two processes opening the same old file never both apply it (the second one
re-checks inside its own ``BEGIN IMMEDIATE``).

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

import time
from collections.abc import Callable
from functools import partial
from typing import Literal

import apsw

from ..errors import StorageError
from .db import Database, read_only_error
from .fts_query import CJK_RANGES
from .session_index import WORD_TOKENIZER, install_session_index, session_index_exists

__all__ = [
    "CJK_GLOB",
    "DEFAULT_FTS_LAYOUT",
    "FTS_LAYOUTS",
    "FTS_WRITE_SETTINGS",
    "INDEXED_TEXT",
    "IS_CJK_ROW",
    "MIGRATIONS",
    "TRIGRAM_TABLE",
    "WORD_TABLE",
    "FtsLayout",
    "applied_migrations",
    "cjk_condition",
    "file_layout",
    "fts_support",
    "install_fts",
    "migration",
    "open_schema",
    "pending_migrations",
    "schema_version",
]

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

Migration = Callable[[apsw.Connection], None]

#: Registered migrations in the order they run. Names are permanent: never rename one.
MIGRATIONS: dict[str, Migration] = {}


def migration(fn: Migration) -> Migration:
    """Register ``fn`` under its ``__name__``; a second function with that name is refused."""
    name = fn.__name__
    if name in MIGRATIONS:
        raise ValueError(f"duplicate migration name {name!r}")
    MIGRATIONS[name] = fn
    return fn


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


# -- bookkeeping tables ---------------------------------------------------------------


def _ensure_bookkeeping(con: apsw.Connection) -> None:
    con.execute(
        "CREATE TABLE IF NOT EXISTS migrations ("
        " name TEXT PRIMARY KEY, applied_at REAL NOT NULL);"
        "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);"
    )


def applied_migrations(con: apsw.Connection) -> list[str]:
    """Names of the migrations already applied to this database, in order."""
    exists = con.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'migrations'"
    ).fetchall()
    if not exists:
        return []
    return [r[0] for r in con.execute("SELECT name FROM migrations ORDER BY rowid")]


def pending_migrations(con: apsw.Connection) -> list[str]:
    done = set(applied_migrations(con))
    return [name for name in MIGRATIONS if name not in done]


def schema_version(con: apsw.Connection) -> int:
    """The number in ``schema_version`` (0 for a blank database)."""
    exists = con.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ).fetchall()
    if not exists:
        return 0
    found = con.execute("SELECT max(version) FROM schema_version").fetchall()
    return int(found[0][0] or 0)


def apply_migration(con: apsw.Connection, *, name: str) -> bool:
    """Apply one migration inside the caller's transaction; False when it already ran."""
    _ensure_bookkeeping(con)
    if name in applied_migrations(con):
        return False
    MIGRATIONS[name](con)
    con.execute("INSERT INTO migrations (name, applied_at) VALUES (?, ?)", (name, time.time()))
    version = list(MIGRATIONS).index(name) + 1
    con.execute("DELETE FROM schema_version")
    con.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
    return True


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


def _drop_index(con: apsw.Connection, table: str) -> None:
    for event in ("insert", "delete", "update"):
        con.execute(f"DROP TRIGGER IF EXISTS {table}_{event}")
    con.execute(f"DROP TABLE IF EXISTS {table}")
    con.execute(f"DROP VIEW IF EXISTS {_SOURCE_VIEWS[table]}")


def _create_index(con: apsw.Connection, table: str, layout: FtsLayout) -> None:
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


def configure_merging(con: apsw.Connection, table: str) -> None:
    """Apply :data:`FTS_WRITE_SETTINGS` to ``table`` (stored in the file, so persistent)."""
    for key, value in FTS_WRITE_SETTINGS:
        con.execute(f"INSERT INTO {table} ({table}, rank) VALUES (?, ?)", (key, value))


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
        _drop_index(con, table)
    _create_index(con, WORD_TABLE, layout)
    if with_trigram:
        _create_index(con, TRIGRAM_TABLE, layout)
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


# -- opening a store -------------------------------------------------------------------


def open_schema(db: Database, wanted: FtsLayout | None = None) -> tuple[bool, bool]:
    """Migrate ``db`` to the current schema and set up its FTS layout.

    Returns ``(has_fts5, has_trigram)``. ``wanted`` switches the FTS layout; ``None`` keeps
    the file's. A database written by a newer palimpsest is refused untouched.

    Everything is first checked on a read snapshot, which never waits for another
    process's writer; a write transaction is opened only when a migration or an index
    change is due (and then re-checked inside it). So opening a current file beside a
    busy writer costs no lock at all. A read-only file opens when nothing is due; one
    that needs a migration raises :class:`DatabaseReadOnlyError`, and a missing or
    differently laid out FTS index is left as it is (search falls back to ``LIKE``
    without it).
    """
    has_fts5, has_trigram = fts_support(db.writer)  # temp schema only: takes no lock

    def check(con: apsw.Connection) -> list[str]:
        done = applied_migrations(con)
        version = schema_version(con)
        if any(name not in MIGRATIONS for name in done) or version > len(MIGRATIONS):
            raise StorageError(
                f"{db.path}: the database was written by a newer palimpsest "
                f"(schema version {version}); upgrade palimpsest to open it",
                path=db.path,
            )
        return done

    def fts_due(con: apsw.Connection) -> bool:
        if not has_fts5 or not table_exists(con, "state_meta"):
            return has_fts5
        current = file_layout(con)
        layout = wanted or current or DEFAULT_FTS_LAYOUT
        missing = not table_exists(con, WORD_TABLE) or (
            has_trigram and not table_exists(con, TRIGRAM_TABLE)
        )
        return missing or current != layout

    with db.reader() as con:
        due = [name for name in MIGRATIONS if name not in check(con)]
        index_due = fts_due(con)

    if db.read_only:
        if due:
            raise read_only_error(
                db.path,
                f"{db.read_only_reason}; it needs {len(due)} migration(s) to schema version "
                f"{len(MIGRATIONS)} before this palimpsest can read it",
            )
        with db.reader() as con:
            return (
                has_fts5 and table_exists(con, WORD_TABLE),
                has_trigram and table_exists(con, TRIGRAM_TABLE),
            )

    if due:
        done = db.write(check)
        for name in MIGRATIONS:
            if name not in done:
                db.write(partial(apply_migration, name=name))

    def ensure_fts(con: apsw.Connection) -> None:
        if fts_due(con):
            layout = wanted or file_layout(con) or DEFAULT_FTS_LAYOUT
            install_fts(con, layout, with_trigram=has_trigram)

    if has_fts5 and (due or index_due):
        db.write(ensure_fts)
    return has_fts5, has_trigram


# -- the migrations -------------------------------------------------------------------


@migration
def m001_initial(con: apsw.Connection) -> None:
    """Sessions, messages, key/value meta and the indexes of SS-02..SS-05."""
    con.execute(
        """
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            source TEXT NOT NULL,
            user_id TEXT,
            model TEXT,
            model_config TEXT,
            system_prompt TEXT,
            parent_session_id TEXT REFERENCES sessions(id),
            started_at REAL NOT NULL,
            ended_at REAL,
            end_reason TEXT,
            message_count INTEGER DEFAULT 0,
            tool_call_count INTEGER DEFAULT 0,
            input_tokens INTEGER DEFAULT 0,
            output_tokens INTEGER DEFAULT 0,
            cache_read_tokens INTEGER DEFAULT 0,
            cache_write_tokens INTEGER DEFAULT 0,
            reasoning_tokens INTEGER DEFAULT 0,
            billing_provider TEXT,
            billing_base_url TEXT,
            billing_mode TEXT,
            estimated_cost_usd REAL,
            actual_cost_usd REAL,
            cost_status TEXT,
            cost_source TEXT,
            pricing_version TEXT,
            title TEXT,
            api_call_count INTEGER DEFAULT 0
        );
        CREATE TABLE messages (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL REFERENCES sessions(id),
            role TEXT NOT NULL,
            content TEXT,
            tool_call_id TEXT,
            tool_calls TEXT,
            tool_name TEXT,
            timestamp REAL NOT NULL,
            token_count INTEGER,
            finish_reason TEXT,
            reasoning TEXT,
            reasoning_content TEXT,
            reasoning_details TEXT,
            codex_reasoning_items TEXT,
            codex_message_items TEXT
        );
        CREATE TABLE IF NOT EXISTS state_meta (key TEXT PRIMARY KEY, value TEXT);
        CREATE INDEX idx_sessions_source ON sessions(source);
        CREATE INDEX idx_sessions_parent ON sessions(parent_session_id);
        CREATE INDEX idx_sessions_started ON sessions(started_at DESC);
        CREATE INDEX idx_messages_session ON messages(session_id, timestamp);
        CREATE UNIQUE INDEX idx_sessions_title_unique ON sessions(title)
            WHERE title IS NOT NULL;
        """
    )


@migration
def m002_full_text(con: apsw.Connection) -> None:
    """Both FTS5 indexes and their triggers, backfilled from existing messages (SS-06)."""
    has_fts5, has_trigram = fts_support(con)
    if has_fts5:
        install_fts(con, DEFAULT_FTS_LAYOUT, with_trigram=has_trigram)


@migration
def m003_compaction_guards(con: apsw.Connection) -> None:
    """Inert columns and the lock table that compaction guards use (SS-10)."""
    con.execute(
        """
        ALTER TABLE sessions ADD COLUMN compression_failure_cooldown_until REAL;
        ALTER TABLE sessions ADD COLUMN compression_failure_error TEXT;
        ALTER TABLE sessions ADD COLUMN compression_fallback_streak INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE sessions ADD COLUMN compression_ineffective_count INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE messages ADD COLUMN _compressed_summary INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE messages ADD COLUMN active INTEGER NOT NULL DEFAULT 1;
        ALTER TABLE messages ADD COLUMN compacted INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE messages ADD COLUMN display_kind TEXT;
        CREATE TABLE compression_locks (
            session_id TEXT PRIMARY KEY,
            holder TEXT NOT NULL,
            acquired_at REAL NOT NULL,
            expires_at REAL NOT NULL
        );
        CREATE INDEX idx_compression_locks_expires ON compression_locks(expires_at);
        """
    )


@migration
def m004_message_round_trip(con: apsw.Connection) -> None:
    """Columns that let any OpenAI-format message come back out exactly as it went in.

    ``content_json`` marks content that was a list of parts (stored as JSON text);
    ``extra`` holds the message's keys that have no column of their own, as JSON.
    """
    con.execute(
        """
        ALTER TABLE messages ADD COLUMN content_json INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE messages ADD COLUMN extra TEXT;
        """
    )


@migration
def m005_trigram_cjk_only(con: apsw.Connection) -> None:
    """Keep only CJK rows in the trigram index; replace its triggers accordingly.

    Before this, every message went into ``messages_fts_trigram``: about one token per
    character, the bulk of the insert cost and of the file, for an index that only
    queries with 3+ CJK characters ever reach. The trigram table is dropped and rebuilt
    from the CJK rows in the file's layout; ``messages`` and ``messages_fts`` are not
    touched. The freed pages stay in the file until ``VACUUM``.
    """
    if not table_exists(con, TRIGRAM_TABLE) or not fts_support(con)[1]:
        return  # open_schema creates the index (already CJK-only) once the build has trigram
    layout = file_layout(con) or DEFAULT_FTS_LAYOUT
    _drop_index(con, TRIGRAM_TABLE)
    _create_index(con, TRIGRAM_TABLE, layout)


def _word_index_stems(con: apsw.Connection) -> bool:
    found = con.execute("SELECT sql FROM sqlite_master WHERE name = ?", (WORD_TABLE,)).fetchall()
    return bool(found) and "porter" in str(found[0][0] or "")


@migration
def m006_stemmed_words_and_session_index(con: apsw.Connection) -> None:
    """Stem the word index (``porter`` over ``unicode61``) and index session metadata.

    Without stemming "research" missed "Researching" and "donate" missed "donated", the
    largest recall loss users measured. The word index is dropped, recreated with the
    stemming tokenizer in the file's layout and refilled from ``messages`` (the trigram
    index is not touched). ``sessions_fts`` (title, start date as words, source) is
    created and filled. A file whose word index already stems (a new file: m002 built it
    so) only gets the session index when it lacks one.
    """
    if not fts_support(con)[0]:
        return  # no FTS5: search runs as LIKE; open_schema installs both when FTS5 appears
    if table_exists(con, WORD_TABLE) and not _word_index_stems(con):
        layout = file_layout(con) or DEFAULT_FTS_LAYOUT
        _drop_index(con, WORD_TABLE)
        _create_index(con, WORD_TABLE, layout)
    if not session_index_exists(con):
        install_session_index(con)


@migration
def m007_merging_off_the_write_path(con: apsw.Connection) -> None:
    """Stop appends from merging full-text segments (:data:`FTS_WRITE_SETTINGS`).

    FTS5's automerge ran inside whichever append crossed a 64-page boundary: single
    appends stalled for up to 170 ms at 200,000 messages. The settings live in each
    index's ``_config`` table, so this only writes two rows per index; nothing is
    rebuilt and the layout is kept. Merging is then done by the store's background
    upkeep or ``palimpsest sessions maintain``.
    """
    if not fts_support(con)[0]:
        return  # no FTS5 in this build: _create_index applies the settings when it appears
    for table in (WORD_TABLE, TRIGRAM_TABLE):
        if table_exists(con, table):
            configure_merging(con, table)


@migration
def m008_unreported_usage(con: apsw.Connection) -> None:
    """Count the calls whose provider reported no usage (``sessions.unreported_calls``).

    Such a call adds one to ``api_call_count`` and nothing to the token counters, so the
    counters are exact when this is 0 and a lower bound otherwise; before this column an
    unreported call could only be recorded as zero tokens or as a guess.
    """
    columns = {row[1] for row in con.execute("PRAGMA table_info(sessions)")}
    if "unreported_calls" not in columns:
        con.execute("ALTER TABLE sessions ADD COLUMN unreported_calls INTEGER DEFAULT 0")


@migration
def m009_history_imports(con: apsw.Connection) -> None:
    """Remember how much of each agent history file was imported (``history_imports``).

    ``palimpsest sessions import --from claude-code|codex`` reads whole trees of session
    files that keep growing. One row per conversation taken from a file (``key`` is empty
    for the file's own, else a sub-agent sidechain inside it) records the bytes consumed,
    their SHA-256, the file's mtime, and how many messages went into ``session_id`` with
    the digest of those messages, so a second run skips unchanged files without reading
    them, appends only what a grown file gained (or rewrites the conversation when the
    new lines changed a message already stored), and notices a file rewritten in place
    (its consumed prefix no longer hashes the same). ``agent_session_id`` / ``parent_agent_session_id`` are the agent's own ids,
    which link sub-agent sessions to their parent in whichever order files arrive.
    """
    con.execute(
        """
        CREATE TABLE IF NOT EXISTS history_imports (
            path TEXT NOT NULL,
            key TEXT NOT NULL DEFAULT '',
            agent TEXT NOT NULL,
            session_id TEXT,
            agent_session_id TEXT,
            parent_agent_session_id TEXT,
            size INTEGER NOT NULL,
            mtime REAL NOT NULL,
            sha256 TEXT NOT NULL,
            records INTEGER NOT NULL,
            messages INTEGER NOT NULL,
            messages_sha256 TEXT NOT NULL,
            imported_at REAL NOT NULL,
            PRIMARY KEY (path, key)
        );
        CREATE INDEX IF NOT EXISTS idx_history_imports_agent_session
            ON history_imports(agent, agent_session_id);
        """
    )


@migration
def m010_in_place_compaction(con: apsw.Connection) -> None:
    """What in-place compaction (``compression.in_place``, SS-38) keeps beside the rows.

    An in-place compaction marks the session's live rows archived (``active = 0,
    compacted = 1``, still searchable) and writes the compacted list as new live rows of the
    same session. ``messages.archived_in`` / ``written_in`` name the compaction (its number
    within the session) that archived a row or wrote it, and ``in_place_compactions``
    holds one row per compaction: what ``/undo`` needs to put it back after a restart (the
    system prompt and compaction count from before it) and when it was undone.
    """
    columns = {row[1] for row in con.execute("PRAGMA table_info(messages)")}
    for column in ("archived_in", "written_in"):
        if column not in columns:
            con.execute(f"ALTER TABLE messages ADD COLUMN {column} INTEGER")
    con.execute(
        """
        CREATE TABLE IF NOT EXISTS in_place_compactions (
            session_id TEXT NOT NULL,
            number INTEGER NOT NULL,
            compacted_at REAL NOT NULL,
            archived INTEGER NOT NULL,
            written INTEGER NOT NULL,
            compression_count_before INTEGER NOT NULL DEFAULT 0,
            system_prompt_before TEXT,
            undone_at REAL,
            PRIMARY KEY (session_id, number)
        );
        CREATE INDEX IF NOT EXISTS idx_messages_archived_in
            ON messages(session_id, archived_in) WHERE archived_in IS NOT NULL;
        """
    )


@migration
def m011_message_vectors(con: apsw.Connection) -> None:
    """One embedding per message and model for search by meaning (:mod:`.vectors`).

    Empty until a store is opened with an embedding model (the ``vectors`` extra, or the
    caller's own function); a plain table of float32 blobs, so the file opens with or
    without ``sqlite-vec``. A message's vector goes with it (``ON DELETE CASCADE``) and is
    dropped when its text changes, to be made again.
    """
    con.execute(
        """
        CREATE TABLE IF NOT EXISTS message_vectors (
            message_id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            vector BLOB NOT NULL
        );
        CREATE TRIGGER IF NOT EXISTS message_vectors_stale AFTER UPDATE OF content ON messages
        WHEN COALESCE(old.content, '') <> COALESCE(new.content, '')
        BEGIN
            DELETE FROM message_vectors WHERE message_id = new.id;
        END;
        """
    )
