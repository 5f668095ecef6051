"""The SQLite store's migrations: named forward steps and their bookkeeping.

Every change to the schema is a small function registered under a unique name with
:func:`migration`. Opening a store runs, in order, each migration whose name is not yet in
the ``migrations`` table; the function, its ``migrations`` row and the new
``schema_version`` commit in one transaction, so a crash never leaves a half-applied
step and two processes opening the same old file never both apply it (the second one
re-checks inside its own ``BEGIN IMMEDIATE``).

Names are permanent: a migration is never renamed or removed, only added at the end.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import apsw

from .fts_layout import (
    DEFAULT_FTS_LAYOUT,
    TRIGRAM_TABLE,
    WORD_TABLE,
    configure_merging,
    create_index,
    drop_index,
    file_layout,
    fts_support,
    install_fts,
    table_exists,
)
from .session_index import install_session_index, session_index_exists

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
    drop_index(con, TRIGRAM_TABLE)
    create_index(con, TRIGRAM_TABLE, layout)


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
        drop_index(con, WORD_TABLE)
        create_index(con, WORD_TABLE, layout)
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
        return  # no FTS5 in this build: create_index applies the settings when it appears
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


_RESET_SECRETS = """
        INSERT INTO session_secrets (session_id, generation) SELECT {side}.session_id, 1
        WHERE {when}
        ON CONFLICT (session_id) DO UPDATE SET generation = generation + 1, through_id = 0,
            covered = 0, secret_values = '[]';"""


@migration
def m012_session_secrets(con: apsw.Connection) -> None:
    """The secret values each session revealed, kept for the readers (:mod:`.session_secrets`).

    Filled off the append path from the first message on (the watermark in ``state_meta``
    starts at 0, so an existing file is read once, in the background). A change to a
    message's text, or its deletion, resets its session's row and bumps its
    ``generation``.
    """
    con.execute(
        f"""
        CREATE TABLE IF NOT EXISTS session_secrets (
            session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
            generation INTEGER NOT NULL DEFAULT 0,
            through_id INTEGER NOT NULL DEFAULT 0,
            covered INTEGER NOT NULL DEFAULT 0,
            secret_values TEXT NOT NULL DEFAULT '[]'
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS idx_session_secrets_reset
            ON session_secrets(session_id) WHERE through_id = 0;
        CREATE TRIGGER IF NOT EXISTS session_secrets_edited
        AFTER UPDATE OF session_id, content, content_json, tool_name, tool_calls ON messages
        WHEN old.session_id IS NOT new.session_id OR old.content IS NOT new.content
            OR old.content_json IS NOT new.content_json OR old.tool_name IS NOT new.tool_name
            OR old.tool_calls IS NOT new.tool_calls
        BEGIN{_RESET_SECRETS.format(side="old", when="1")}{
            _RESET_SECRETS.format(side="new", when="old.session_id IS NOT new.session_id")
        }
        END;
        CREATE TRIGGER IF NOT EXISTS session_secrets_deleted AFTER DELETE ON messages
        BEGIN{_RESET_SECRETS.format(side="old", when="1")}
        END;
        """
    )
